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

#include "fetch/debian_archive.hpp"
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

std::vector<SourceLine> parse_sources_list(std::string_view text) {
    std::vector<SourceLine> out;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos)
            end = text.size();
        std::string line(text.substr(start, end - start));
        start = end + 1;
        if (auto hash = line.find('#'); hash != std::string::npos)
            line.resize(hash);
        std::vector<std::string> words;
        std::string options;
        size_t i = 0;
        while (i < line.size()) {
            while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
                ++i;
            if (i >= line.size())
                break;
            if (line[i] == '[' && words.size() == 1) {
                const size_t close = line.find(']', i);
                if (close == std::string::npos)
                    break;
                options = line.substr(i + 1, close - i - 1);
                i = close + 1;
                continue;
            }
            const size_t word_end = line.find_first_of(" \t", i);
            words.push_back(
                line.substr(i, word_end == std::string::npos ? std::string::npos : word_end - i));
            i = word_end == std::string::npos ? line.size() : word_end;
        }
        if (words.size() < 4 || words[0] != "deb")
            continue;
        SourceLine source;
        source.url = words[1];
        while (!source.url.empty() && source.url.back() == '/')
            source.url.pop_back();
        source.suite = words[2];
        source.components.assign(words.begin() + 3, words.end());
        const size_t signed_by = options.find("signed-by=");
        if (signed_by != std::string::npos) {
            const size_t value = signed_by + 10;
            const size_t value_end = options.find_first_of(" \t", value);
            source.signed_by = options.substr(
                value, value_end == std::string::npos ? std::string::npos : value_end - value);
        }
        out.push_back(std::move(source));
    }
    return out;
}

util::Result<pylock::LockBase> match_debs(const fs::FileTree& tree, const DpkgFreeze& frozen,
                                          const DebMatchOptions& options) {
    auto sources_text = tree.read_file("/etc/apt/sources.list");
    const auto sources =
        parse_sources_list(sources_text.ok() ? std::string_view(*sources_text) : "");
    if (sources.empty())
        return util::make_error("/etc/apt/sources.list",
                                "the root's apt sources name no archive (one-line \"deb\" lines "
                                "are read)");
    index::HttpOptions http_options = options.http;
    http_options.offline = options.offline;
    index::HttpClient http(http_options);
    index::ContentStore store(options.cache_dir);
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
        if (!source.signed_by.empty()) {
            // The key the root trusts, copied out so gpgv can read it.
            ROOTLOCK_TRY(key, tree.read_file(source.signed_by));
            ROOTLOCK_TRY(blob, store.put_bytes(key));
            spec.keyring = blob.path;
            archive.keyring = source.signed_by;
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
                " installed packages are in no archive the root names: " + names);
    }
    return base;
}

}  // namespace rootlock::freeze
