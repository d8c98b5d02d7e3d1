// In-process gzip (zlib) and zstd (libzstd) for OCI layers; see stream_compressor.hpp.
#include "image/stream_compressor.hpp"

#include <zlib.h>
#include <zstd.h>

#include <fmt/format.h>

namespace rootlock::image {

namespace {

constexpr size_t k_out_block = size_t{1} << 20;

}  // namespace

struct StreamCompressor::State {
    z_stream deflate{};
    bool deflate_open = false;
    ZSTD_CCtx* zstd = nullptr;

    ~State() {
        if (deflate_open)
            deflateEnd(&deflate);
        ZSTD_freeCCtx(zstd);
    }
};

StreamCompressor::StreamCompressor(StreamCodec codec, std::string where)
    : m_codec(codec),
      m_where(std::move(where)),
      m_state(std::make_unique<State>()),
      m_out(k_out_block) {}

StreamCompressor::~StreamCompressor() = default;

util::Result<std::unique_ptr<StreamCompressor>> StreamCompressor::create(StreamCodec codec,
                                                                         int level, int threads,
                                                                         std::string where) {
    if (threads < 1)
        return util::make_error(where, fmt::format("threads must be at least 1, not {}", threads));
    std::unique_ptr<StreamCompressor> out(new StreamCompressor(codec, std::move(where)));
    State& state = *out->m_state;
    if (codec == StreamCodec::gzip) {
        if (level < 1 || level > 9)
            return util::make_error(out->m_where,
                                    fmt::format("gzip level {} is not in 1..9", level));
        // windowBits 15 + 16: a gzip wrapper whose header has no name and mtime 0.
        if (deflateInit2(&state.deflate, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return util::make_error(out->m_where, "cannot start zlib's deflate");
        state.deflate_open = true;
        return out;
    }
    if (level < 1 || level > 22)
        return util::make_error(out->m_where, fmt::format("zstd level {} is not in 1..22", level));
    state.zstd = ZSTD_createCCtx();
    if (state.zstd == nullptr)
        return util::make_error(out->m_where, "out of memory");
    const bool set =
        !ZSTD_isError(ZSTD_CCtx_setParameter(state.zstd, ZSTD_c_compressionLevel, level)) &&
        !ZSTD_isError(ZSTD_CCtx_setParameter(state.zstd, ZSTD_c_nbWorkers, threads)) &&
        !ZSTD_isError(ZSTD_CCtx_setParameter(state.zstd, ZSTD_c_checksumFlag, 1));
    if (!set)
        return util::make_error(out->m_where,
                                "libzstd refused its parameters (built without "
                                "multithreading?)");
    return out;
}

util::Status StreamCompressor::write(std::span<const std::byte> bytes, OutputSink& out) {
    if (m_finished)
        return util::make_error(m_where, "the stream is already finished");
    m_hash.update(bytes);
    return pump(bytes, false, out);
}

util::Status StreamCompressor::finish(OutputSink& out) {
    if (m_finished)
        return util::make_error(m_where, "the stream is already finished");
    m_finished = true;
    m_uncompressed = m_hash.digest();
    return pump({}, true, out);
}

util::Status StreamCompressor::pump(std::span<const std::byte> bytes, bool end, OutputSink& out) {
    State& state = *m_state;
    if (m_codec == StreamCodec::gzip) {
        z_stream& z = state.deflate;
        // zlib takes a non-const pointer but does not write through it.
        z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(bytes.data()));
        z.avail_in = static_cast<uInt>(bytes.size());
        while (true) {
            z.next_out = reinterpret_cast<Bytef*>(m_out.data());
            z.avail_out = static_cast<uInt>(m_out.size());
            const int status = ::deflate(&z, end ? Z_FINISH : Z_NO_FLUSH);
            if (status == Z_STREAM_ERROR)
                return util::make_error(m_where, "zlib's deflate failed");
            const size_t produced = m_out.size() - z.avail_out;
            if (produced > 0)
                if (auto written = out.write(std::span(m_out.data(), produced)); !written.ok())
                    return written;
            if (end ? status == Z_STREAM_END : (z.avail_in == 0 && z.avail_out != 0))
                return util::ok_status();
        }
    }
    ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
    while (true) {
        ZSTD_outBuffer chunk{m_out.data(), m_out.size(), 0};
        const size_t left =
            ZSTD_compressStream2(state.zstd, &chunk, &in, end ? ZSTD_e_end : ZSTD_e_continue);
        if (ZSTD_isError(left))
            return util::make_error(m_where, std::string("zstd: ") + ZSTD_getErrorName(left));
        if (chunk.pos > 0)
            if (auto written = out.write(std::span(m_out.data(), chunk.pos)); !written.ok())
                return written;
        if (end ? left == 0 : in.pos == in.size)
            return util::ok_status();
    }
}

}  // namespace rootlock::image
