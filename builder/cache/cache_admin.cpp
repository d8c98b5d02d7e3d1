// The cache's layout is each module's own (index/content_store, image/frame_cache and
// layer_cache, fetch/file_digest, python/wheel_scan, index/page_cache); this file walks it as
// they write it, and checks each kind the way ARCHITECTURE.md's table says.
#include "cache/cache_admin.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>
#include <system_error>

#include "image/cache_listing.hpp"
#include "image/frame_cache.hpp"
#include "image/frame_codec.hpp"
#include "image/layer_cache.hpp"
#include "util/atomic_file.hpp"
#include "util/cache_lock.hpp"
#include "util/leftovers.hpp"
#include "util/sealed_text.hpp"
#include "util/sha256.hpp"

namespace rootlock::cache {

namespace {

namespace fs = std::filesystem;

const char* const k_kinds[] = {"blobs", "frames", "bases", "pages", "scans", "layers", "other"};

size_t kind_index(const std::string& first_component) {
    for (size_t i = 0; i + 1 < std::size(k_kinds); ++i)
        if (first_component == k_kinds[i])
            return i;
    return std::size(k_kinds) - 1;
}

std::vector<KindUsage> empty_usage() {
    std::vector<KindUsage> out;
    for (const char* kind : k_kinds)
        out.push_back(KindUsage{kind, 0, 0});
    return out;
}

// Every regular file below `dir` (none when it does not exist).
std::vector<fs::path> files_below(const fs::path& dir) {
    std::vector<fs::path> out;
    std::error_code error;
    for (auto it = fs::recursive_directory_iterator(dir, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error))
        if (it->is_regular_file(error))
            out.push_back(it->path());
    return out;
}

uint64_t size_of(const fs::path& path) {
    std::error_code error;
    const uint64_t size = fs::file_size(path, error);
    return error ? 0 : size;
}

// Removes `paths`, counting what went.
void remove_counted(const std::vector<fs::path>& paths, PruneReport& report) {
    for (const auto& path : paths) {
        const uint64_t size = size_of(path);
        std::error_code error;
        if (fs::remove(path, error)) {
            ++report.removed_entries;
            report.removed_bytes += size;
        }
    }
}

// The CRC-64 the frame cache keeps for a frame, over the file read in pieces.
util::Result<uint64_t> checksum_of_file(const std::string& path, uint64_t& bytes_read) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return util::make_io_error(path, std::strerror(errno));
    std::vector<std::byte> buffer(size_t{1} << 20);
    uint64_t sum = 0;
    for (;;) {
        const ssize_t got = ::read(fd, buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            const int saved = errno;
            ::close(fd);
            return util::make_io_error(path, std::strerror(saved));
        }
        if (got == 0)
            break;
        sum = image::frame_checksum(sum, std::span(buffer.data(), static_cast<size_t>(got)));
        bytes_read += static_cast<uint64_t>(got);
    }
    ::close(fd);
    return sum;
}

// What verify_cache carries from kind to kind.
struct Verifier {
    VerifyReport report;
    std::vector<KindUsage> checked = empty_usage();

    void count(size_t kind, uint64_t bytes) {
        ++checked[kind].entries;
        checked[kind].bytes += bytes;
        report.bytes_read += bytes;
    }
    // The entry `paths.front()` is damaged: it and what goes with it are removed.
    void damaged(const std::vector<std::string>& paths, const std::string& what) {
        report.damaged.push_back(paths.front() + ": " + what);
        for (const auto& path : paths)
            ::unlink(path.c_str());
    }
};

util::Status verify_blobs(const std::string& cache_dir, Verifier& v) {
    for (const auto& path : files_below(fs::path(cache_dir) / "blobs" / "sha256")) {
        const std::string name = path.parent_path().filename().string() + path.filename().string();
        ROOTLOCK_TRY(digest, util::sha256_file(path.string()));
        v.count(0, size_of(path));
        const std::string actual = util::Sha256::to_hex(digest);
        if (actual != name)
            v.damaged({path.string()}, "damaged: its sha256 is " + actual);
    }
    return util::ok_status();
}

util::Status verify_frames(const std::string& cache_dir, Verifier& v) {
    const fs::path root = fs::path(cache_dir) / "frames";
    for (const char* codec : {"zstd", "gzip"}) {
        for (const auto& path : files_below(root / codec)) {
            const std::string key = path.filename().string();
            if (!image::is_cache_key(key))
                continue;  // a temporary: the next build's pruner removes it
            const std::string sum_path = (root / "sums" / key.substr(0, 2) / key).string();
            auto recorded = util::read_host_file(sum_path);
            uint64_t read = 0;
            ROOTLOCK_TRY(actual, checksum_of_file(path.string(), read));
            v.count(1, read);
            uint64_t expected = 0;
            const bool parsed =
                recorded.ok() && recorded->size() == 17 &&
                std::from_chars(recorded->data(), recorded->data() + 16, expected, 16).ptr ==
                    recorded->data() + 16;
            if (!parsed || expected != actual)
                v.damaged({path.string(), sum_path},
                          parsed ? "damaged: its bytes are not the ones the frame cache stored"
                                 : "damaged: stored without its checksum");
        }
    }
    return util::ok_status();
}

util::Status verify_bases(const std::string& cache_dir, Verifier& v) {
    for (const auto& path : files_below(fs::path(cache_dir) / "bases")) {
        if (path.extension() != ".tar")
            continue;
        const std::string record_path = path.string() + ".sha256";
        auto record = util::read_host_file(record_path);
        ROOTLOCK_TRY(digest, util::sha256_file(path.string()));
        v.count(2, size_of(path));
        const std::string actual = util::Sha256::to_hex(digest);
        if (!record.ok())
            v.damaged({path.string()}, "damaged: made without a record of its digest");
        else if (record->substr(0, 64) != actual)
            v.damaged({path.string(), record_path}, "damaged: its sha256 is " + actual +
                                                        ", it was made with " +
                                                        util::printable(record->substr(0, 64)));
    }
    return util::ok_status();
}

// Pages and scans: sealed files; an earlier version's unsealed page is left alone.
util::Status verify_sealed(const fs::path& dir, size_t kind, Verifier& v) {
    for (const auto& path : files_below(dir)) {
        if (path.extension() != ".json")
            continue;
        ROOTLOCK_TRY(text, util::read_host_file(path.string()));
        v.count(kind, text.size());
        if (!text.empty() && text.front() == '{')
            continue;
        if (!util::unseal_text(text))
            v.damaged({path.string()},
                      "damaged: its content does not match the digest it was written with");
    }
    return util::ok_status();
}

util::Status verify_layers(const std::string& cache_dir, Verifier& v) {
    const fs::path root = fs::path(cache_dir) / "layers";
    for (const auto& meta : files_below(root / "meta")) {
        const std::string key = meta.filename().string();
        if (!image::is_cache_key(key))
            continue;
        const std::string blob = (root / "blobs" / key.substr(0, 2) / key).string();
        if (::access(blob.c_str(), F_OK) != 0)
            continue;
        ROOTLOCK_TRY(text, util::read_host_file(meta.string()));
        std::istringstream in(text);
        std::string digest;
        in >> digest;
        ROOTLOCK_TRY(hashed, util::sha256_file(blob));
        v.count(5, size_of(blob));
        const std::string actual = "sha256:" + util::Sha256::to_hex(hashed);
        if (actual != digest)
            v.damaged({blob, meta.string()}, "damaged: its digest is " + actual +
                                                 ", it was stored as " +
                                                 util::printable(digest.substr(0, 71)));
    }
    return util::ok_status();
}

}  // namespace

util::Result<std::vector<KindUsage>> cache_usage(const std::string& cache_dir) {
    std::vector<KindUsage> usage = empty_usage();
    std::error_code error;
    if (!fs::is_directory(cache_dir, error))
        return util::make_error(cache_dir, "no such cache directory");
    for (const auto& path : files_below(cache_dir)) {
        const fs::path relative = path.lexically_relative(cache_dir);
        KindUsage& kind = usage[kind_index(relative.begin()->string())];
        ++kind.entries;
        kind.bytes += size_of(path);
    }
    return usage;
}

util::Result<VerifyReport> verify_cache(const std::string& cache_dir) {
    std::error_code error;
    if (!fs::is_directory(cache_dir, error))
        return util::make_error(cache_dir, "no such cache directory");
    util::CacheLock lock(cache_dir, /*exclusive=*/true);
    Verifier v;
    ROOTLOCK_TRY(blobs, verify_blobs(cache_dir, v));
    ROOTLOCK_TRY(frames, verify_frames(cache_dir, v));
    ROOTLOCK_TRY(bases, verify_bases(cache_dir, v));
    ROOTLOCK_TRY(pages, verify_sealed(fs::path(cache_dir) / "pages", 3, v));
    ROOTLOCK_TRY(scans, verify_sealed(fs::path(cache_dir) / "scans", 4, v));
    ROOTLOCK_TRY(layers, verify_layers(cache_dir, v));
    (void)blobs, (void)frames, (void)bases, (void)pages, (void)scans, (void)layers;
    v.checked.pop_back();  // "other" holds nothing to check
    v.report.checked = std::move(v.checked);
    return std::move(v.report);
}

util::Result<PruneReport> prune_cache(const std::string& cache_dir,
                                      const std::vector<pylock::Lock>& keep) {
    std::error_code error;
    if (!fs::is_directory(cache_dir, error))
        return util::make_error(cache_dir, "no such cache directory");
    std::set<std::string> kept;  // sha256 of every blob a kept lock needs
    bool debian_base = false;
    for (const auto& lock : keep) {
        for (const auto& package : lock.packages)
            for (const auto& wheel : package.wheels)
                if (auto sha = wheel.hashes.find("sha256"); sha != wheel.hashes.end())
                    kept.insert(sha->second);
        if (!lock.rootlock)
            continue;
        const auto& base = lock.rootlock->base;
        if (!base.sha256.empty())
            kept.insert(base.sha256);
        for (const auto& deb : base.debs)
            kept.insert(deb.sha256);
        debian_base = debian_base || base.kind == "debian";
    }
    util::CacheLock lock(cache_dir, /*exclusive=*/true);
    PruneReport report;
    const fs::path root(cache_dir);
    std::vector<fs::path> doomed;
    for (const auto& path : files_below(root / "blobs" / "sha256"))
        if (!kept.contains(path.parent_path().filename().string() + path.filename().string()))
            doomed.push_back(path);
    for (const auto& path : files_below(root / "scans")) {
        const fs::path relative = path.lexically_relative(root / "scans");
        const std::string sha = path.parent_path().filename().string() + path.stem().string();
        if (relative.begin()->string() != "v2" || !kept.contains(sha))
            doomed.push_back(path);
    }
    for (const auto& path : files_below(root / "bases")) {
        const std::string name = path.filename().string();
        const bool plain = name.rfind("plain-", 0) == 0 && name.size() >= 6 + 64 &&
                           kept.contains(name.substr(6, 64));
        const bool debian = name.rfind("debian-", 0) == 0 && debian_base;
        if (!plain && !debian)
            doomed.push_back(path);
    }
    remove_counted(doomed, report);
    for (const auto& path : files_below(root / "debian-repos"))  // staging, made per assembly
        remove_counted({path}, report);
    fs::remove_all(root / "debian-repos", error);
    report.removed_entries += util::remove_dead_leftovers((root / "tmp").string(), "part-");
    for (const auto& count :
         {image::FrameCache(cache_dir, image::FrameCodec::zstd).prune_gone_images(),
          image::LayerCache(cache_dir).prune_gone_images()}) {
        report.removed_entries += count.files;
        report.removed_bytes += count.bytes;
    }
    return report;
}

}  // namespace rootlock::cache
