// Getting the base tarball: from the content store by its pinned hash, over HTTP, from a local
// file, or from mmdebstrap, whose output is cached under the hash of its parameters.
#include "fetch/base_source.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>

#include "fs/tar_tree.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"
#include "util/subprocess.hpp"

namespace rootlock::fetch {

namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

util::Result<std::shared_ptr<const fs::FileTree>> open_tarball(const std::string& path) {
    fs::TarOptions options;
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
        auto tree = open_tarball(path);
        ROOTLOCK_TRY(actual, digest.get());
        if (actual != base.sha256)
            return util::make_error(location, "sha256 mismatch: the recipe pins " + base.sha256 +
                                                  ", the file has " + actual);
        if (!tree.ok())
            return tree.error();
        out.host_path = path;
        out.record.size = file_size(out.host_path);
        out.tree = std::move(*tree);
        return out;
    }
    out.record.size = file_size(out.host_path);
    ROOTLOCK_TRY(tree, open_tarball(out.host_path));
    out.tree = std::move(tree);
    return out;
}

util::Result<AcquiredBase> debian_base(const recipe::DebianBase& debian, const BaseOptions& options,
                                       index::ContentStore& store, index::PageCache& pages) {
    const std::string path = store.root() + "/bases/debian-" + debian_base_key(debian) + ".tar";
    if (!file_size(path).has_value()) {
        if (options.offline)
            return util::make_network_error(
                "base.debian",
                "the Debian base is not in the cache and --offline forbids the network");
        ROOTLOCK_TRY(made, util::make_directories(store.root() + "/bases"));
        (void)made;
        const std::string temp = path + ".tmp";
        ::unlink(temp.c_str());
        std::vector<std::string> argv{"mmdebstrap", "--quiet", "--variant=" + debian.variant,
                                      "--format=tar"};
        if (!debian.include.empty()) {
            std::string include = "--include=";
            for (size_t i = 0; i < debian.include.size(); ++i)
                include += (i == 0 ? "" : ",") + debian.include[i];
            argv.push_back(include);
        }
        argv.push_back(debian.suite);
        argv.push_back(temp);
        if (!debian.mirror.empty())
            argv.push_back(debian.mirror);
        ROOTLOCK_TRY(result,
                     util::run_process(argv, {{"SOURCE_DATE_EPOCH", options.debian_epoch}}));
        if (result.exit_code != 0) {
            ::unlink(temp.c_str());
            std::string hint = ::geteuid() == 0
                                   ? ""
                                   : " (making a Debian base needs root, or unprivileged user "
                                     "namespaces for mmdebstrap's unshare mode)";
            return util::make_error("mmdebstrap", "failed with exit code " +
                                                      std::to_string(result.exit_code) + ": " +
                                                      util::last_line(result.output) + hint);
        }
        if (::rename(temp.c_str(), path.c_str()) != 0)
            return util::make_error(path, "cannot move the new Debian base into the cache");
    }
    AcquiredBase out;
    out.record.kind = "debian";
    out.record.suite = debian.suite;
    out.record.mirror = debian.mirror;
    out.record.variant = debian.variant;
    out.record.include = debian.include;
    std::sort(out.record.include.begin(), out.record.include.end());
    auto digest =
        std::async(std::launch::async, [&pages, path] { return remembered_sha256(path, pages); });
    auto tree = open_tarball(path);
    ROOTLOCK_TRY(hex, digest.get());
    out.record.sha256 = hex;
    out.record.size = file_size(path);
    out.host_path = path;
    if (!tree.ok())
        return tree.error();
    out.tree = std::move(*tree);
    return out;
}

}  // namespace

std::string debian_base_key(const recipe::DebianBase& debian) {
    std::vector<std::string> include = debian.include;
    std::sort(include.begin(), include.end());
    std::string text = "suite=" + debian.suite + "\nmirror=" + debian.mirror +
                       "\nvariant=" + debian.variant + "\ninclude=";
    for (const auto& name : include)
        text += name + ",";
    return util::sha256_hex(text).substr(0, 32);
}

util::Result<std::string> remembered_sha256(const std::string& path, index::PageCache& pages) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        return util::make_error(path, std::strerror(errno));
    auto nanoseconds = [](const timespec& time) {
        return std::to_string(time.tv_sec) + "." + std::to_string(time.tv_nsec);
    };
    const std::string key = "file-sha256\n" + path + "\n" + std::to_string(info.st_dev) + ":" +
                            std::to_string(info.st_ino) + ":" + std::to_string(info.st_size) + ":" +
                            nanoseconds(info.st_mtim) + ":" + nanoseconds(info.st_ctim);
    auto cached = pages.get(key);
    if (cached.ok() && cached->has_value() && util::is_sha256_hex((*cached)->body))
        return (*cached)->body;
    ROOTLOCK_TRY(digest, util::sha256_file(path));
    std::string hex = util::Sha256::to_hex(digest);
    (void)pages.put(key, index::CachedPage{path, "text/plain", "", "", hex});
    return hex;
}

util::Result<AcquiredBase> acquire_base(const recipe::BaseSection& base, const BaseOptions& options,
                                        index::HttpClient& http, index::ContentStore& store,
                                        index::PageCache& pages) {
    if (base.tarball.has_value())
        return tarball_base(base, options, http, store, pages);
    if (base.debian.has_value())
        return debian_base(*base.debian, options, store, pages);
    return util::make_error("base", "the recipe names no base");
}

}  // namespace rootlock::fetch
