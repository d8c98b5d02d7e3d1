// dpkg's database as a frozen base: packages from /var/lib/dpkg/status, their files hashed with
// MD5 (what .md5sums holds) on threads, the set pinned by matching the root's archives.
#include "freeze/dpkg_freeze.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <thread>
#include <tuple>

#include "debian/armor.hpp"
#include "fetch/debian_archive.hpp"
#include "freeze/apt_sources.hpp"
#include "index/content_store.hpp"
#include "util/atomic_file.hpp"
#include "util/hex.hpp"

namespace rootlock::freeze {

namespace {

constexpr const char* k_status = "/var/lib/dpkg/status";

struct Md5Job {
    std::string package;
    std::string path;
    std::string expected;
    std::string problem;  // filled by the worker; "" when the file matches
};

std::string md5_hex(std::string_view bytes) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_md5(), nullptr);
    return util::to_hex(std::string_view(reinterpret_cast<const char*>(digest), length));
}

void check_file(const fs::FileTree& tree, Md5Job& job) {
    auto node = tree.lstat(job.path);
    if (!node.has_value()) {
        job.problem = "missing";
        return;
    }
    // Symlinked directories (usrmerge's /bin -> usr/bin) are followed as the loader would.
    auto bytes = tree.read_file(job.path, uint64_t{4} << 30);
    if (!bytes.ok()) {
        job.problem = "not a regular file";
        return;
    }
    if (md5_hex(*bytes) != job.expected)
        job.problem = "modified (md5 differs from .md5sums)";
}

}  // namespace

util::Result<DpkgFreeze> freeze_dpkg(const fs::FileTree& tree, int threads) {
    auto status_text = tree.read_file(k_status);
    if (!status_text.ok())
        return util::make_error(tree.describe(), "no /var/lib/dpkg/status");
    ROOTLOCK_TRY(packages, debian::parse_dpkg_status(*status_text, k_status));
    DpkgFreeze out;
    std::vector<Md5Job> jobs;
    for (auto& package : packages) {
        if (!package.installed())
            continue;
        const std::string info = "/var/lib/dpkg/info/" + debian::info_stem(package) + ".md5sums";
        auto text = tree.read_file(info);
        if (!text.ok()) {
            out.problems.push_back(
                {"deb:" + package.name, info, "no .md5sums: its files cannot be verified"});
        } else {
            auto entries = debian::parse_md5sums(*text, info);
            if (!entries.ok()) {
                out.problems.push_back({"deb:" + package.name, info,
                                        "malformed .md5sums: its files cannot be verified"});
            } else {
                for (auto& entry : *entries)
                    jobs.push_back({package.name, entry.path, entry.md5, ""});
            }
        }
        out.installed.push_back(std::move(package));
    }
    std::atomic<size_t> next{0};
    auto work = [&] {
        for (size_t i = next++; i < jobs.size(); i = next++)
            check_file(tree, jobs[i]);
    };
    std::vector<std::thread> workers;
    for (int i = 1; i < std::clamp(threads, 1, 64); ++i)
        workers.emplace_back(work);
    work();
    for (auto& worker : workers)
        worker.join();
    for (const auto& job : jobs) {
        if (!job.problem.empty())
            out.problems.push_back({"deb:" + job.package, job.path, job.problem});
    }
    out.files_checked = jobs.size();
    std::sort(out.problems.begin(), out.problems.end());
    return out;
}

util::Result<pylock::LockBase> match_debs(const fs::FileTree& tree, const DpkgFreeze& frozen,
                                          const DebMatchOptions& options) {
    ROOTLOCK_TRY(apt, read_apt_sources(tree));
    const auto& sources = apt.archives;
    // Named in errors: what apt reads that a frozen lock cannot pin.
    std::string flat_note;
    for (const auto& flat : apt.flat)
        flat_note += (flat_note.empty() ? " (flat repositories are not read: " : ", ") + flat;
    if (!flat_note.empty())
        flat_note += ")";
    if (sources.empty())
        return util::make_error("/etc/apt/sources.list",
                                "the root's apt sources (sources.list, sources.list.d/*.list and "
                                "*.sources) name no archive" +
                                    flat_note);
    index::HttpOptions http_options = options.http;
    http_options.offline = options.offline;
    index::HttpClient http(http_options);
    index::ContentStore store(options.cache_dir);
    store.set_offline(options.offline);  // a damaged entry cannot be fetched again
    pylock::LockBase base;
    base.kind = "debian";
    base.variant = "minbase";
    base.suite = sources.front().suite;
    base.mirror = sources.front().url;
    std::vector<fetch::LoadedArchive> loaded;
    for (size_t i = 0; i < sources.size(); ++i) {
        const auto& source = sources[i];
        fetch::ArchiveSpec spec;
        spec.name = i == 0 ? "debian" : "archive-" + std::to_string(i + 1);
        spec.url = source.url;
        spec.suite = source.suite;
        spec.components = source.components;
        pylock::LockDebArchive archive{spec.name, spec.url, spec.suite, spec.components,
                                       "",        "",       "",         ""};
        if (!source.signed_by.empty() || !source.signed_by_key.empty()) {
            // The key the root trusts, copied out (as packets: gpgv reads no armour) so gpgv
            // can read it; a key written in the .sources entry is known by that entry.
            std::string key = source.signed_by_key;
            if (key.empty()) {
                ROOTLOCK_TRY(read, tree.read_file(source.signed_by));
                key = std::move(read);
            }
            const std::string origin = source.signed_by.empty() ? source.from : source.signed_by;
            ROOTLOCK_TRY(packets, debian::dearmor_key(key, origin));
            ROOTLOCK_TRY(blob, store.put_bytes(packets));
            spec.keyring = blob.path;
            archive.keyring = origin;
            archive.keyring_sha256 = blob.sha256;
        }
        ROOTLOCK_TRY(index, fetch::load_archive(spec, options.architecture, http, store));
        archive.date = std::to_string(index.date);
        base.archives.push_back(std::move(archive));
        loaded.push_back(std::move(index));
    }
    const fetch::OfferedPackages offered(loaded);
    std::vector<std::string> unlisted;
    for (const auto& installed : frozen.installed) {
        auto deb = offered.pin(installed.name, installed.version, installed.architecture);
        if (deb.has_value())
            base.debs.push_back(std::move(*deb));
        else
            unlisted.push_back(installed.name + " " + installed.version);
    }
    if (!unlisted.empty()) {
        std::string names;
        for (const auto& name : unlisted)
            names += (names.empty() ? "" : ", ") + name;
        return util::make_error(
            "/var/lib/dpkg/status",
            std::to_string(unlisted.size()) +
                " installed packages are in no archive the root names: " + names + flat_note);
    }
    return base;
}

}  // namespace rootlock::freeze
