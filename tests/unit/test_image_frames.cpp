// Tests for images written in independent frames: where the plan cuts and what its keys cover,
// that frames concatenate into streams every reader takes, and that the frame cache changes how
// much is compressed but never a byte of the image.
#include <doctest/doctest.h>

#include <archive.h>
#include <archive_entry.h>
#include <zlib.h>
#include <zstd.h>

#include <clocale>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "image/frame_cache.hpp"
#include "image/frame_codec.hpp"
#include "image/frame_plan.hpp"
#include "image/tar_writer.hpp"
#include "support/host.hpp"
#include "support/temp_dir.hpp"
#include "util/byte_source.hpp"
#include "util/cache_damage.hpp"

namespace ROOTLOCK_UNIT_ID {

using namespace rootlock;
using namespace rootlock::image;
using rootlock::testing::files_under;
using rootlock::testing::have_tool;
using rootlock::testing::pseudo_text;
using rootlock::testing::read_host_text;
using rootlock::testing::run_shell;
using rootlock::testing::TempDir;

namespace {

constexpr uint64_t k_frame = 1U << 20;  // small frames, so a test image has many

// One member, its content, and the source it comes from.
struct Member {
    TarEntry entry;
    std::string content;
    std::string group;  // "" for directories
    std::string content_id;
};

Member directory(std::string path) {
    Member member;
    member.entry.path = std::move(path);
    member.entry.kind = EntryKind::directory;
    member.entry.mode = 0755;
    member.entry.mtime = 1700000000;
    return member;
}

Member file(std::string path, std::string group, std::string content) {
    Member member;
    member.entry.path = std::move(path);
    member.entry.size = content.size();
    member.entry.mtime = 1700000000;
    member.group = group;
    member.content_id = group + " " + member.entry.path + " " + std::to_string(content.size()) +
                        " " + std::to_string(std::hash<std::string>{}(content));
    member.content = std::move(content);
    return member;
}

// An image of three sources: "a" (five small files, more than a frame), "b" (one file) and "c"
// (a 2.5-frame file). Entries: 0 "/", 1 "/a", 2..6 a's files, 7 "/b", 8 "/b/only", 9 "/c",
// 10 "/c/big".
std::vector<Member> sample(uint32_t b_seed = 2) {
    std::vector<Member> members;
    members.push_back(directory("/"));
    members.push_back(directory("/a"));
    for (int i = 0; i < 5; ++i)
        members.push_back(file("/a/f" + std::to_string(i), "a",
                               pseudo_text(300U << 10, static_cast<uint32_t>(10 + i))));
    members.push_back(directory("/b"));
    members.push_back(file("/b/only", "b", pseudo_text(200U << 10, b_seed)));
    members.push_back(directory("/c"));
    members.push_back(file("/c/big", "c", pseudo_text((5 * k_frame) / 2, 3)));
    return members;
}

std::vector<FramedEntry> framed(const std::vector<Member>& members) {
    std::vector<FramedEntry> out;
    for (const auto& member : members)
        out.push_back(FramedEntry{&member.entry, member.content_id, member.group});
    return out;
}

std::vector<FrameCut> plan(const std::vector<Member>& members, std::string identity = "test") {
    FramePlanOptions options;
    options.frame_bytes = k_frame;
    options.identity = std::move(identity);
    return plan_frames(framed(members), options);
}

// A stream over `text` that counts how often content was opened.
class CountedStream final : public util::ByteStream {
  public:
    explicit CountedStream(const std::string& text) : m_text(text) {}
    util::Result<size_t> read(std::span<std::byte> out) override {
        const size_t count = std::min(out.size(), m_text.size() - m_at);
        std::memcpy(out.data(), m_text.data() + m_at, count);
        m_at += count;
        return count;
    }

  private:
    const std::string& m_text;
    size_t m_at = 0;
};

struct Written {
    std::string bytes;
    uint64_t frames = 0;
    uint64_t reused = 0;
    std::map<std::string, int> opened;  // path -> times its content was opened
};

Written write_framed(const std::string& path, const std::vector<Member>& members,
                     Compression compression, const FrameCache* cache, int threads = 2) {
    std::setlocale(LC_ALL, "C.UTF-8");
    const auto cuts = plan(members);
    TarWriterOptions options;
    options.compression = compression;
    options.threads = threads;
    options.frame_cuts = &cuts;
    options.frame_cache = cache;
    auto writer = TarWriter::create(path, options);
    REQUIRE(writer.ok());
    Written written;
    for (const auto& member : members) {
        auto added = (*writer)->add_lazily(
            member.entry, [&]() -> util::Result<std::unique_ptr<util::ByteStream>> {
                ++written.opened[member.entry.path];
                return std::unique_ptr<util::ByteStream>(
                    std::make_unique<CountedStream>(member.content));
            });
        if (!added.ok())
            FAIL(added.error().text());
    }
    auto finished = (*writer)->finish();
    if (!finished.ok())
        FAIL(finished.error().text());
    written.frames = (*writer)->frames();
    written.reused = (*writer)->frames_reused();
    writer->reset();
    written.bytes = read_host_text(path);
    return written;
}

// A framed write that may fail: its status and the frame the writer found damaged, if any.
std::pair<util::Status, std::optional<std::string>> try_write_framed(
    const std::string& path, const std::vector<Member>& members, const FrameCache* cache) {
    const auto cuts = plan(members);
    TarWriterOptions options;
    options.compression = Compression::zstd;
    options.threads = 2;
    options.frame_cuts = &cuts;
    options.frame_cache = cache;
    auto writer = TarWriter::create(path, options);
    REQUIRE(writer.ok());
    auto write_all = [&]() -> util::Status {
        for (const auto& member : members) {
            auto added = (*writer)->add_lazily(
                member.entry, [&]() -> util::Result<std::unique_ptr<util::ByteStream>> {
                    return std::unique_ptr<util::ByteStream>(
                        std::make_unique<CountedStream>(member.content));
                });
            if (!added.ok())
                return added;
        }
        return (*writer)->finish();
    };
    util::Status status = write_all();
    return {status, (*writer)->damaged_frame()};
}

// Every member's name and content, read back with libarchive.
std::vector<std::pair<std::string, std::string>> read_back(const std::string& path) {
    struct archive* in = archive_read_new();
    archive_read_support_filter_gzip(in);
    archive_read_support_filter_zstd(in);
    archive_read_support_format_tar(in);
    REQUIRE(archive_read_open_filename(in, path.c_str(), 65536) == ARCHIVE_OK);
    std::vector<std::pair<std::string, std::string>> out;
    struct archive_entry* entry = nullptr;
    int status = ARCHIVE_OK;
    while ((status = archive_read_next_header(in, &entry)) == ARCHIVE_OK) {
        std::string content;
        char buffer[65536];
        la_ssize_t count = 0;
        while ((count = archive_read_data(in, buffer, sizeof(buffer))) > 0)
            content.append(buffer, static_cast<size_t>(count));
        out.emplace_back(archive_entry_pathname(entry), std::move(content));
    }
    CHECK(status == ARCHIVE_EOF);
    archive_read_free(in);
    return out;
}

std::vector<std::string> keys_of(const std::vector<FrameCut>& cuts) {
    std::vector<std::string> keys;
    for (const auto& cut : cuts)
        keys.push_back(cut.key);
    return keys;
}

// Where a padded frame's own bytes end: zstd measures its frame, zlib inflates one member.
size_t own_size(FrameCodec codec, const std::vector<std::byte>& frame) {
    if (codec == FrameCodec::zstd)
        return ZSTD_findFrameCompressedSize(frame.data(), frame.size());
    z_stream stream{};
    REQUIRE(inflateInit2(&stream, 15 + 16) == Z_OK);
    std::vector<Bytef> out(1U << 20);
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(frame.data()));
    stream.avail_in = static_cast<uInt>(frame.size());
    int status = Z_OK;
    while (status == Z_OK) {
        stream.next_out = out.data();
        stream.avail_out = static_cast<uInt>(out.size());
        status = ::inflate(&stream, Z_NO_FLUSH);
    }
    REQUIRE(status == Z_STREAM_END);
    const size_t own = stream.total_in;
    inflateEnd(&stream);
    return own;
}

}  // namespace

TEST_SUITE("rootlock::image") {
    TEST_CASE("frames: a cut at each change of source and every frame_bytes inside a member") {
        const auto members = sample();
        const auto cuts = plan(members);
        std::vector<std::pair<size_t, uint64_t>> at;
        for (const auto& cut : cuts)
            at.emplace_back(cut.entry, cut.offset);
        // "/", "/a" and a's 300 KiB files: the fifth starts past 1 MiB, so a new frame; "/b"
        // joins that run, "/b/only" is b's; "/c" joins b's run, "/c/big" is cut at 1 and 2 MiB.
        const std::vector<std::pair<size_t, uint64_t>> expected = {
            {0, 0}, {6, 0}, {8, 0}, {10, 0}, {10, k_frame}, {10, 2 * k_frame}};
        CHECK(at == expected);
        for (const auto& cut : cuts)
            CHECK(util::is_sha256_hex(cut.key));
        CHECK(keys_of(plan(members)) == keys_of(cuts));  // the same plan every time
    }

    TEST_CASE("frames: the tail of a member cut inside ends its frame") {
        // A generated file after /c/big (as the venv's pyvenv.cfg follows the last wheel), dated
        // by the lock's epoch: a new epoch must not change the frame holding big's tail, which
        // only inflating all of big again could produce.
        auto with_generated = [](int64_t epoch) {
            auto members = sample();
            members.push_back(file("/c/pyvenv.cfg", "", "home = /usr/bin\n"));
            members.back().entry.mtime = epoch;
            return members;
        };
        const auto before_members = with_generated(1704412800);
        const auto cuts = plan(before_members);
        std::vector<std::pair<size_t, uint64_t>> at;
        for (const auto& cut : cuts)
            at.emplace_back(cut.entry, cut.offset);
        const std::vector<std::pair<size_t, uint64_t>> expected = {
            {0, 0}, {6, 0}, {8, 0}, {10, 0}, {10, k_frame}, {10, 2 * k_frame}, {11, 0}};
        CHECK(at == expected);
        const auto before = keys_of(cuts);
        const auto after = keys_of(plan(with_generated(1704499200)));
        REQUIRE(after.size() == before.size());
        for (size_t i = 0; i + 1 < before.size(); ++i)
            CHECK(after[i] == before[i]);
        CHECK(after[5] == before[5]);  // big's tail, named on its own
        CHECK(after.back() != before.back());
    }

    TEST_CASE("frames: one source changed changes only the frames that hold it") {
        const auto before = keys_of(plan(sample(2)));
        const auto after = keys_of(plan(sample(99)));
        REQUIRE(before.size() == after.size());
        std::vector<size_t> changed;
        for (size_t i = 0; i < before.size(); ++i)
            if (before[i] != after[i])
                changed.push_back(i);
        CHECK(changed == std::vector<size_t>{2});  // b's frame alone
    }

    TEST_CASE("frames: a key covers the identity and every field of every member in it") {
        const auto base = keys_of(plan(sample()));
        CHECK(keys_of(plan(sample(), "other codec")) != base);
        auto check_changed = [&](auto edit, const char* what) {
            CAPTURE(what);
            auto members = sample();
            edit(members[8].entry);  // /b/only, in frame 2
            const auto keys = keys_of(plan(members));
            REQUIRE(keys.size() == base.size());
            CHECK(keys[2] != base[2]);
            CHECK(keys[0] == base[0]);
        };
        check_changed([](TarEntry& e) { e.mode = 0600; }, "mode");
        check_changed([](TarEntry& e) { e.uid = 7; }, "uid");
        check_changed([](TarEntry& e) { e.gid = 7; }, "gid");
        check_changed([](TarEntry& e) { e.mtime = 1; }, "mtime");
        check_changed([](TarEntry& e) { e.path = "/b/renamed"; }, "path");
        check_changed([](TarEntry& e) { e.xattrs = {{"user.x", "1"}}; }, "xattrs");
        auto members = sample();
        members[8].content_id += " other";
        CHECK(keys_of(plan(members))[2] != base[2]);
    }

    TEST_CASE("framed zstd and gzip images read back whole, by libarchive and the command line") {
        TempDir tmp;
        const auto members = sample();
        for (auto [compression, name] : {std::pair{Compression::zstd, "i.tar.zst"},
                                         std::pair{Compression::gzip, "i.tar.gz"}}) {
            CAPTURE(name);
            const std::string path = tmp / name;
            const auto written = write_framed(path, members, compression, nullptr);
            CHECK(written.frames == plan(members).size() + 1);  // and the end of the archive
            CHECK(written.reused == 0);
            const auto entries = read_back(path);
            REQUIRE(entries.size() == members.size());
            for (size_t i = 0; i < members.size(); ++i) {
                CHECK(entries[i].first == "." + members[i].entry.path +
                                              (members[i].entry.kind == EntryKind::directory &&
                                                       members[i].entry.path != "/"
                                                   ? "/"
                                                   : ""));
                CHECK(entries[i].second == members[i].content);
            }
            if (have_tool("tar")) {
                const std::string flag = compression == Compression::zstd ? "--zstd" : "-z";
                auto [out, code] = run_shell("tar " + flag + " -xOf " + path + " ./c/big | cksum");
                const std::string want_path = tmp.write_file("want", members[10].content);
                auto [want, want_code] = run_shell("cksum < " + want_path);
                CHECK(code == 0);
                CHECK(want_code == 0);
                CHECK(out == want);
            }
            const std::string test = compression == Compression::zstd ? "zstd -q -t " : "gzip -t ";
            if (have_tool(compression == Compression::zstd ? "zstd" : "gzip"))
                CHECK(run_shell(test + path).second == 0);
        }
    }

    TEST_CASE("framed: the same bytes with no cache, a cold one, a warm one, any thread count") {
        TempDir tmp;
        const auto members = sample();
        for (auto [compression, codec] : {std::pair{Compression::zstd, FrameCodec::zstd},
                                          std::pair{Compression::gzip, FrameCodec::gzip}}) {
            CAPTURE(frame_codec_name(codec));
            FrameCache cache(tmp / (std::string("cache-") + frame_codec_name(codec)), codec);
            const auto plain = write_framed(tmp / "plain", members, compression, nullptr, 1);
            const auto cold = write_framed(tmp / "cold", members, compression, &cache, 3);
            const auto warm = write_framed(tmp / "warm", members, compression, &cache, 2);
            CHECK(cold.bytes == plain.bytes);
            CHECK(warm.bytes == plain.bytes);
            CHECK(cold.reused == 0);
            CHECK(warm.reused == warm.frames - 1);  // all but the end of the archive
            CHECK(warm.opened.empty());             // nothing had to be read
        }
    }

    TEST_CASE("framed: a rebuild after one source changed compresses only its frames") {
        TempDir tmp;
        FrameCache cache(tmp / "cache", FrameCodec::zstd);
        write_framed(tmp / "first", sample(2), Compression::zstd, &cache);
        const auto changed = write_framed(tmp / "second", sample(99), Compression::zstd, &cache);
        const auto clean = write_framed(tmp / "clean", sample(99), Compression::zstd, nullptr);
        CHECK(changed.bytes == clean.bytes);
        CHECK(changed.reused == changed.frames - 2);  // b's frame and the end are new
        CHECK(changed.opened == std::map<std::string, int>{{"/b/only", 1}});
    }

    TEST_CASE("framed: a lost or torn frame is compressed again, reading past what is cached") {
        TempDir tmp;
        const auto members = sample();
        const auto cuts = plan(members);
        FrameCache cache(tmp / "cache", FrameCodec::zstd);
        const auto first = write_framed(tmp / "first", members, Compression::zstd, &cache);
        // The middle third of /c/big lost, its last third torn: both made again from the
        // content, which is read from its start (a wheel member cannot seek) and skipped.
        const std::string folder = tmp / "cache/frames/zstd/";
        const std::string lost = folder + cuts[4].key.substr(0, 2) + "/" + cuts[4].key;
        const std::string torn = folder + cuts[5].key.substr(0, 2) + "/" + cuts[5].key;
        REQUIRE(std::filesystem::remove(lost));
        const std::string whole = read_host_text(torn);
        tmp.write_file(std::filesystem::relative(torn, tmp.path()).string(),
                       whole.substr(0, whole.size() / 2));
        const auto again = write_framed(tmp / "again", members, Compression::zstd, &cache);
        CHECK(again.bytes == first.bytes);
        CHECK(again.reused == again.frames - 3);
        CHECK(again.opened == std::map<std::string, int>{{"/c/big", 1}});
        CHECK(read_host_text(torn) == whole);  // stored again, whole
    }

    TEST_CASE("frame cache: a frame changed in place fails its checksum, then is made again") {
        TempDir tmp;
        const auto members = sample();
        const auto cuts = plan(members);
        FrameCache cache(tmp / "cache", FrameCodec::zstd);
        const auto first = write_framed(tmp / "first", members, Compression::zstd, &cache);
        // One byte inside /c/big's middle frame, past its headers: still a whole frame by its
        // structure, so only the checksum can tell.
        const std::string path =
            tmp / ("cache/frames/zstd/" + cuts[4].key.substr(0, 2) + "/" + cuts[4].key);
        std::string bytes = read_host_text(path);
        REQUIRE(bytes.size() > 4096);
        bytes[bytes.size() / 3] = static_cast<char>(bytes[bytes.size() / 3] ^ 0x20);
        tmp.write_file(std::filesystem::relative(path, tmp.path()).string(), bytes);
        REQUIRE(is_whole_frame(FrameCodec::zstd, std::as_bytes(std::span(bytes))));
        (void)util::take_cache_damage();

        // Offline: the frame is refused at the write that reads it, and stays.
        FrameCache offline(tmp / "cache", FrameCodec::zstd);
        offline.set_offline(true);
        auto [refused, named] = try_write_framed(tmp / "offline", members, &offline);
        REQUIRE_FALSE(refused.ok());
        CHECK(refused.error().kind == util::ErrorKind::integrity);
        CHECK(refused.error().where == path);
        CHECK(named == path);

        // The build's way: the damaged frame named, discarded, the write done again with every
        // frame checked as it loads; the bytes are the first build's.
        auto [failed, damaged] = try_write_framed(tmp / "again", members, &cache);
        REQUIRE_FALSE(failed.ok());
        REQUIRE(damaged == path);
        cache.discard(*damaged);
        CHECK_FALSE(std::filesystem::exists(path));
        cache.check_on_load();
        const auto again = write_framed(tmp / "again", members, Compression::zstd, &cache);
        CHECK(again.bytes == first.bytes);
        CHECK(again.opened == std::map<std::string, int>{{"/c/big", 1}});
        auto damage = util::take_cache_damage();
        REQUIRE(damage.size() == 1);
        CHECK(damage[0].find(path + ": damaged") == 0);

        // Damage found at load (check_on_load): discarded there, the frame compressed again.
        bytes = read_host_text(path);
        bytes[bytes.size() / 3] = static_cast<char>(bytes[bytes.size() / 3] ^ 0x20);
        tmp.write_file(std::filesystem::relative(path, tmp.path()).string(), bytes);
        const auto checked = write_framed(tmp / "checked", members, Compression::zstd, &cache);
        CHECK(checked.bytes == first.bytes);
        CHECK(util::take_cache_damage().size() == 1);
        CHECK(read_host_text(path) != bytes);  // stored again, whole
    }

    TEST_CASE("frame cache: a frame stored without its checksum is not used") {
        TempDir tmp;
        const auto members = sample();
        FrameCache cache(tmp / "cache", FrameCodec::zstd);
        write_framed(tmp / "first", members, Compression::zstd, &cache);
        std::filesystem::remove_all(tmp / "cache/frames/sums");
        const auto again = write_framed(tmp / "again", members, Compression::zstd, &cache);
        CHECK(again.reused == 0);
    }

    TEST_CASE("frame cache: frames no recorded image uses are deleted after a build") {
        TempDir tmp;
        FrameCache cache(tmp / "cache", FrameCodec::zstd);
        write_framed(tmp / "one", sample(2), Compression::zstd, &cache);
        const auto first = plan(sample(2));
        const size_t stored = files_under(tmp / "cache/frames/zstd");
        CHECK(stored == first.size());  // the end-of-archive frame is never stored
        cache.keep_only_used(tmp / "one", keys_of(first));
        CHECK(files_under(tmp / "cache/frames/zstd") == stored);
        cache.keep_only_used(tmp / "two", keys_of(first));  // another image, the same frames
        // Image one rebuilt from another lock: b's old frame stays while image two lists it,
        // and goes once no image does.
        write_framed(tmp / "one", sample(99), Compression::zstd, &cache);
        CHECK(files_under(tmp / "cache/frames/zstd") == stored + 1);
        cache.keep_only_used(tmp / "one", keys_of(plan(sample(99))));
        CHECK(files_under(tmp / "cache/frames/zstd") == stored + 1);
        cache.keep_only_used(tmp / "two", keys_of(plan(sample(99))));
        CHECK(files_under(tmp / "cache/frames/zstd") == stored);
    }

    TEST_CASE("frame codec: whole frames are recognised, torn and foreign ones are not") {
        const std::string text = pseudo_text(100000, 5);
        const auto bytes = std::as_bytes(std::span(text.data(), text.size()));
        for (auto codec : {FrameCodec::zstd, FrameCodec::gzip}) {
            CAPTURE(frame_codec_name(codec));
            auto frame = compress_frame(codec, 3, bytes, "x");
            REQUIRE(frame.ok());
            CHECK(is_whole_frame(codec, *frame));
            CHECK_FALSE(is_whole_frame(codec, std::span(*frame).first(frame->size() - 1)));
            CHECK_FALSE(is_whole_frame(codec, std::span(*frame).first(frame->size() / 2)));
            CHECK_FALSE(is_whole_frame(codec, {}));
            auto flipped = *frame;
            flipped[flipped.size() - 6] ^= std::byte{0x40};  // inside gzip's CRC32
            if (codec == FrameCodec::gzip)
                CHECK_FALSE(is_whole_frame(codec, flipped));
            auto doubled = *frame;
            doubled.insert(doubled.end(), frame->begin(), frame->end());
            CHECK_FALSE(is_whole_frame(codec, doubled));
            const auto other = codec == FrameCodec::zstd ? FrameCodec::gzip : FrameCodec::zstd;
            CHECK_FALSE(is_whole_frame(other, *frame));
            // The same input, the same frame: nothing of time or machine in it.
            CHECK(*compress_frame(codec, 3, bytes, "x") == *frame);
        }
        CHECK(frame_codec_identity(FrameCodec::zstd, 3).rfind("zstd-3-", 0) == 0);
        CHECK(frame_codec_identity(FrameCodec::gzip, 6).rfind("gzip-6-", 0) == 0);
        CHECK(frame_codec_identity(FrameCodec::zstd, 3) !=
              frame_codec_identity(FrameCodec::zstd, 4));
    }

    TEST_CASE("frame padding: every frame ends on a block boundary, padding readers skip") {
        for (const FrameCodec codec : {FrameCodec::zstd, FrameCodec::gzip}) {
            CAPTURE(frame_codec_name(codec));
            const size_t header = codec == FrameCodec::zstd ? 8 : 26;
            for (size_t size = 0; size < 3 * k_frame_alignment; size += 7) {
                CAPTURE(size);
                const auto padding = frame_padding(codec, size);
                CHECK((size + padding.size()) % k_frame_alignment == 0);
                // The fewest bytes that hold the padding's header: nothing, or less than one
                // block more than the header needs.
                if (size % k_frame_alignment == 0)
                    CHECK(padding.empty());
                else
                    CHECK(
                        (padding.size() >= header && padding.size() < header + k_frame_alignment));
                if (padding.empty())
                    continue;
                if (codec == FrameCodec::zstd) {
                    // A skippable frame: zstd decodes it to nothing.
                    std::vector<std::byte> out(16);
                    CHECK(ZSTD_findFrameCompressedSize(padding.data(), padding.size()) ==
                          padding.size());
                    CHECK(ZSTD_decompress(out.data(), out.size(), padding.data(), padding.size()) ==
                          0);
                } else {
                    // An empty gzip member whose extra field fills the gap: zlib checks it.
                    z_stream stream{};
                    REQUIRE(inflateInit2(&stream, 15 + 16) == Z_OK);
                    std::vector<Bytef> out(16);
                    stream.next_in =
                        reinterpret_cast<Bytef*>(const_cast<std::byte*>(padding.data()));
                    stream.avail_in = static_cast<uInt>(padding.size());
                    stream.next_out = out.data();
                    stream.avail_out = static_cast<uInt>(out.size());
                    CHECK(::inflate(&stream, Z_FINISH) == Z_STREAM_END);
                    CHECK(stream.total_in == padding.size());
                    CHECK(stream.total_out == 0);
                    inflateEnd(&stream);
                }
            }
        }
    }

    TEST_CASE("frame padding: a cached frame must hold exactly its own padding") {
        const std::string text = pseudo_text(100000, 5);
        const auto bytes = std::as_bytes(std::span(text.data(), text.size()));
        for (const FrameCodec codec : {FrameCodec::zstd, FrameCodec::gzip}) {
            CAPTURE(frame_codec_name(codec));
            auto frame = compress_frame(codec, 3, bytes, "x");
            REQUIRE(frame.ok());
            REQUIRE(frame->size() % k_frame_alignment == 0);
            REQUIRE(is_whole_frame(codec, *frame));
            const size_t own = own_size(codec, *frame);
            REQUIRE(own + frame_padding(codec, own).size() == frame->size());
            REQUIRE(own < frame->size());  // 100000 bytes do not compress to whole blocks
            const std::span<const std::byte> whole(*frame);
            CHECK_FALSE(is_whole_frame(codec, whole.first(own)));                // no padding
            CHECK_FALSE(is_whole_frame(codec, whole.first(frame->size() - 1)));  // torn
            auto changed = *frame;
            changed.back() ^= std::byte{1};  // a padding byte
            CHECK_FALSE(is_whole_frame(codec, changed));
            auto longer = *frame;
            longer.resize(longer.size() + k_frame_alignment);  // a block too many
            CHECK_FALSE(is_whole_frame(codec, longer));
            if (codec == FrameCodec::zstd) {
                // The image reads back whole through zstd, padding and all.
                std::vector<std::byte> out(text.size() + 1);
                CHECK(ZSTD_decompress(out.data(), out.size(), frame->data(), frame->size()) ==
                      text.size());
                // Padding alone is not a frame.
                CHECK_FALSE(is_whole_frame(codec, whole.subspan(own)));
            }
        }
    }

    TEST_CASE("framed: only zstd and gzip tarballs, and gzip levels 1..9") {
        TempDir tmp;
        const std::vector<FrameCut> cuts;
        TarWriterOptions options;
        options.frame_cuts = &cuts;
        options.compression = Compression::xz;
        auto xz = TarWriter::create(tmp / "x.tar.xz", options);
        REQUIRE_FALSE(xz.ok());
        CHECK(xz.error().text() ==
              tmp / "x.tar.xz" + ": only gzip and zstd tarballs are written in frames");
        options.compression = Compression::gzip;
        options.gzip_level = 10;
        auto gzip = TarWriter::create(tmp / "x.tar.gz", options);
        REQUIRE_FALSE(gzip.ok());
        CHECK(gzip.error().text() == tmp / "x.tar.gz" + ": gzip level 10 is not in 1..9");
        CHECK_FALSE(std::filesystem::exists(tmp / "x.tar.gz"));
    }
}

}  // namespace ROOTLOCK_UNIT_ID
