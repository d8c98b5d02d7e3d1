// Getting the base tarball: from the content store by its pinned hash, over HTTP, from a local
// file, or from mmdebstrap, whose output is cached under the hash of its parameters.
#include "fetch/base_source.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>

#include "fetch/debian_base.hpp"
#include "fetch/file_digest.hpp"
#include "fs/tar_tree.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"
#include "util/subprocess.hpp"

namespace rootlock::fetch {

namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

util::Result<std::shared_ptr<const fs::FileTree>> open_tarball(const std::string& path,
                                                               const BaseOptions& base_options) {
    fs::TarOptions options;
    options.observe_elf = base_options.observe_elf;
    // The closure check binds every undefined symbol, the base's included.
    options.symbols = true;
    // The target's Python full version comes from the package database.
    options.retained_patterns.push_back("/var/lib/dpkg/status");
    // What pct reads to detect the distribution, for the image's pct rules.
    for (const char* pattern : {"/etc/*-release", "/etc/*_version", "/usr/lib/os-release",
                                "/etc/machine-id", "/etc/lsb-release"})
        options.retained_patterns.push_back(pattern);
    ROOTLOCK_TRY(tree, fs::TarTree::open(path, options));
    return std::shared_ptr<const fs::FileTree>(std::move(tree));
}

std::optional<uint64_t> file_size(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        return std::nullopt;
    return static_cast<uint64_t>(info.st_size);
}

util::Result<AcquiredBase> tarball_base(const recipe::BaseSection& base, const BaseOptions& options,
                                        index::HttpClient& http, index::ContentStore& store,
                                        index::PageCache& pages) {
    const std::string& location = *base.tarball;
    AcquiredBase out;
    out.record.kind = "tarball";
    out.record.sha256 = base.sha256;
    if (starts_with(location, "http://") || starts_with(location, "https://")) {
        out.record.url = location;
        const std::string blob = store.blob_path(base.sha256);
        auto remembered = file_size(blob).has_value() ? remembered_sha256(blob, pages)
                                                      : util::Result<std::string>(std::string());
        if (remembered.ok() && *remembered == base.sha256) {
            out.host_path = blob;
        } else {
            if (remembered.ok() && !remembered->empty()) {
                // Stored under its digest, now of other bytes: damaged on disk.
                ROOTLOCK_TRY(kept, store.find(base.sha256));
                (void)kept;  // removed and reported (offline: refused, named)
            }
            if (options.offline)
                return util::make_network_error(
                    location, "not in the cache and --offline forbids the network");
            auto results =
                http.download({index::DownloadRequest{location, base.sha256, std::nullopt}}, store);
            if (!results[0].ok())
                return results[0].error();
            out.host_path = results[0]->path;
        }
    } else {
        std::string path = starts_with(location, "file://") ? location.substr(7) : location;
        out.record.path = location;
        if (!path.empty() && path[0] != '/' && !options.recipe_dir.empty())
            path = options.recipe_dir + "/" + path;
        // Hashing and reading the tarball are independent passes over the same (cached)
        // bytes: one on each core. The tree is used only once the hash has matched.
        auto digest = std::async(std::launch::async,
                                 [&pages, path] { return remembered_sha256(path, pages); });
        auto tree = open_tarball(path, options);
        ROOTLOCK_TRY(actual, digest.get());
        if (actual != base.sha256)
            return util::make_integrity_error(
                location,
                "sha256 mismatch: the recipe pins " + base.sha256 + ", the file has " + actual);
        if (!tree.ok())
            return tree.error();
        out.host_path = path;
        out.record.size = file_size(out.host_path);
        out.tree = std::move(*tree);
        return out;
    }
    out.record.size = file_size(out.host_path);
    ROOTLOCK_TRY(tree, open_tarball(out.host_path, options));
    out.tree = std::move(tree);
    return out;
}

// True when the previous lock's base answers the same request: then its packages are kept.
bool same_debian_request(const pylock::LockBase& previous, const recipe::DebianBase& debian,
                         const std::vector<pylock::LockDebArchive>& archives) {
    std::vector<std::string> include = debian.include;
    std::sort(include.begin(), include.end());
    if (previous.kind != "debian" || previous.debs.empty() || previous.suite != debian.suite ||
        previous.mirror != debian.mirror || previous.variant != debian.variant ||
        fetch::debian_architecture(previous) != debian.architecture ||
        previous.include != include || previous.archives.size() != archives.size())
        return false;
    for (size_t i = 0; i < archives.size(); ++i) {
        pylock::LockDebArchive before = previous.archives[i];
        before.date = archives[i].date;  // the archive's date is an answer, not the request
        if (!(before == archives[i]))
            return false;
    }
    return true;
}

fetch::DebianOptions debian_options(const BaseOptions& options) {
    fetch::DebianOptions out;
    out.recipe_dir = options.recipe_dir;
    out.cache_dir = options.cache_dir;
    out.offline = options.offline;
    out.epoch = options.debian_epoch;
    return out;
}

util::Result<AcquiredBase> assembled_base(pylock::LockBase record, const BaseOptions& options,
                                          index::HttpClient& http, index::ContentStore& store) {
    fetch::DebianOptions dopts = debian_options(options);
    dopts.architecture = fetch::debian_architecture(record);
    ROOTLOCK_TRY(path, assemble_debian_base(record, dopts, http, store));
    AcquiredBase out;
    ROOTLOCK_TRY(tree, open_tarball(path, options));
    out.tree = std::move(tree);
    out.host_path = path;
    out.record = std::move(record);
    return out;
}

util::Result<AcquiredBase> debian_base(const recipe::DebianBase& debian, const BaseOptions& options,
                                       index::HttpClient& http, index::ContentStore& store) {
    fetch::DebianOptions dopts = debian_options(options);
    dopts.architecture = debian.architecture;
    ROOTLOCK_TRY(archives, debian_archives(debian, dopts));
    pylock::LockBase record;
    if (options.previous != nullptr && !options.upgrade &&
        same_debian_request(*options.previous, debian, archives)) {
        record = *options.previous;
    } else {
        ROOTLOCK_TRY(resolved, resolve_debian_base(debian, dopts, http, store));
        record = std::move(resolved);
    }
    return assembled_base(std::move(record), options, http, store);
}

}  // namespace

util::Result<AcquiredBase> acquire_base(const recipe::BaseSection& base, const BaseOptions& options,
                                        index::HttpClient& http, index::ContentStore& store,
                                        index::PageCache& pages) {
    if (base.tarball.has_value())
        return tarball_base(base, options, http, store, pages);
    if (base.debian.has_value())
        return debian_base(*base.debian, options, http, store);
    return util::make_error("base", "the recipe names no base");
}

util::Result<AcquiredBase> acquire_locked_base(const pylock::LockBase& base,
                                               const BaseOptions& options, index::HttpClient& http,
                                               index::ContentStore& store,
                                               index::PageCache& pages) {
    if (base.kind == "debian") {
        if (base.debs.empty())
            return util::make_error(
                "tool.rootlock.base",
                "relock it: this lock pins its Debian base only by the tarball made on the "
                "machine that locked it");
        return assembled_base(base, options, http, store);
    }
    recipe::BaseSection section;
    section.tarball = base.url.empty() ? base.path : base.url;
    section.sha256 = base.sha256;
    return tarball_base(section, options, http, store, pages);
}

}  // namespace rootlock::fetch
