// Freezing an environment: every hashed RECORD row becomes a hashing job, run largest first on a
// few threads (each with one 1 MiB buffer), then the ELF files give each package its sonames.
#include "freeze/freeze.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "fetch/base_facts.hpp"
#include "freeze/python_version.hpp"
#include "fs/directory_tree.hpp"
#include "fs/path_resolve.hpp"
#include "fs/tree_errors.hpp"
#include "python/environment.hpp"
#include "python/pep440.hpp"
#include "util/hex.hpp"
#include "util/sha256.hpp"

namespace rootlock::freeze {

namespace {

constexpr size_t k_chunk_size = size_t{1} << 20;
// Trees that only read whole files (memory, tarball) hold this much of one file at most.
constexpr uint64_t k_max_whole_read = uint64_t{256} << 20;
constexpr int k_max_threads = 64;

std::string child(const std::string& dir, std::string_view name) {
    return dir == "/" ? "/" + std::string(name) : dir + "/" + std::string(name);
}

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// True when `relative`, taken from the canonical directory `dir`, climbs above "/": join()
// would clamp it and name a different file, so such a row is reported instead of read.
bool climbs_above_root(std::string_view dir, std::string_view relative) {
    size_t depth = 0;
    if (relative.empty() || relative.front() != '/') {
        for (char c : dir)
            depth += c == '/' ? 1U : 0U;
        if (dir == "/")
            depth = 0;
    }
    size_t pos = 0;
    while (pos <= relative.size()) {
        size_t end = relative.find('/', pos);
        if (end == std::string_view::npos)
            end = relative.size();
        const std::string_view part = relative.substr(pos, end - pos);
        pos = end + 1;
        if (part.empty() || part == ".")
            continue;
        if (part == "..") {
            if (depth == 0)
                return true;
            --depth;
        } else {
            ++depth;
        }
    }
    return false;
}

// One RECORD algorithm: util::Sha256 for sha256 (nearly every RECORD), OpenSSL's EVP for the
// sha384 and sha512 the wheel spec also allows.
class RecordHasher {
  public:
    explicit RecordHasher(std::string_view algorithm) {
        if (algorithm == "sha256") {
            m_sha256.emplace();
            return;
        }
        const EVP_MD* md = algorithm == "sha384"   ? EVP_sha384()
                           : algorithm == "sha512" ? EVP_sha512()
                                                   : nullptr;
        if (md == nullptr)
            return;
        m_context = EVP_MD_CTX_new();
        if (m_context == nullptr || EVP_DigestInit_ex(m_context, md, nullptr) != 1)
            throw std::runtime_error("OpenSSL could not start a digest context");
    }
    ~RecordHasher() { EVP_MD_CTX_free(m_context); }
    RecordHasher(const RecordHasher&) = delete;
    RecordHasher& operator=(const RecordHasher&) = delete;

    bool supported() const { return m_sha256.has_value() || m_context != nullptr; }

    void update(std::span<const std::byte> bytes) {
        if (m_sha256)
            m_sha256->update(bytes);
        else if (!bytes.empty())
            EVP_DigestUpdate(m_context, bytes.data(), bytes.size());
    }

    std::vector<unsigned char> finish() {
        if (m_sha256) {
            const util::Sha256Digest digest = m_sha256->digest();
            return {digest.begin(), digest.end()};
        }
        std::vector<unsigned char> out(EVP_MAX_MD_SIZE);
        unsigned int length = 0;
        EVP_DigestFinal_ex(m_context, out.data(), &length);
        out.resize(length);
        return out;
    }

  private:
    std::optional<util::Sha256> m_sha256;
    EVP_MD_CTX* m_context = nullptr;
};

struct FdCloser {
    int fd = -1;
    ~FdCloser() {
        if (fd >= 0)
            ::close(fd);
    }
};

// One hashed RECORD row whose installed file resolved to a regular file of the right size.
struct HashJob {
    const python::RecordEntry* entry = nullptr;
    std::string canonical;  // the regular file it resolved to
    uint64_t size = 0;      // lstat size, for the largest-first order
    size_t problem = 0;     // index of its slot in the problem list (empty text: no problem)
    // Results.
    bool hashed = false;
    bool elf_magic = false;
    uint64_t bytes = 0;
};

struct Slot {
    RecordProblem problem;  // problem.problem empty: nothing wrong
};

bool has_elf_magic(std::span<const std::byte> head) {
    return head.size() >= 4 && head[0] == std::byte{0x7f} && head[1] == std::byte{'E'} &&
           head[2] == std::byte{'L'} && head[3] == std::byte{'F'};
}

// Hashes the job's file; returns the problem text, empty when the digest matches.
std::string hash_job(const fs::FileTree& tree, const fs::DirectoryTree* directory, HashJob& job,
                     std::vector<std::byte>& buffer) {
    const python::RecordEntry& entry = *job.entry;
    RecordHasher hasher(entry.hash_algorithm);
    if (!hasher.supported())
        return "unsupported hash " + entry.hash_algorithm;
    uint64_t total = 0;
    if (directory != nullptr) {
        // The canonical path has no symlink in its directory part, so the host path names the
        // same file; O_NOFOLLOW keeps a last component swapped for a link from being followed.
        const std::string host = directory->host_root() + job.canonical;
        FdCloser file{
            ::open(host.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
        if (file.fd < 0)
            return errno == ELOOP ? "not a regular file" : "unreadable: " + fs::errno_text(errno);
        struct stat st {};
        if (::fstat(file.fd, &st) != 0)
            return "unreadable: " + fs::errno_text(errno);
        if (!S_ISREG(st.st_mode))
            return "not a regular file";
        ::posix_fadvise(file.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        for (;;) {
            const ssize_t got = ::read(file.fd, buffer.data(), buffer.size());
            if (got < 0) {
                if (errno == EINTR)
                    continue;
                return "unreadable: " + fs::errno_text(errno);
            }
            if (got == 0)
                break;
            const std::span<const std::byte> piece(buffer.data(), static_cast<size_t>(got));
            if (total == 0)
                job.elf_magic = has_elf_magic(piece);
            hasher.update(piece);
            total += static_cast<uint64_t>(got);
        }
    } else {
        if (job.size > k_max_whole_read)
            return "too large to verify here";
        auto content = tree.read_file(job.canonical, k_max_whole_read);
        if (!content.ok())
            return "unreadable: " + content.error().message;
        const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(  // NOLINT
                                                   content->data()),
                                               content->size());
        job.elf_magic = has_elf_magic(bytes);
        hasher.update(bytes);
        total = content->size();
    }
    job.hashed = true;
    job.bytes = total;
    if (entry.size && *entry.size != total)
        return "size " + std::to_string(total) + ", RECORD says " + std::to_string(*entry.size);
    const std::vector<unsigned char> digest = hasher.finish();
    const std::string_view bytes(reinterpret_cast<const char*>(digest.data()), digest.size());
    const std::string spelled = entry.hash_is_hex ? util::to_hex(bytes) : util::to_base64url(bytes);
    if (spelled != entry.hash_value)
        return "modified (" + entry.hash_algorithm + " differs from RECORD)";
    return {};
}

void run_jobs(const fs::FileTree& tree, std::vector<HashJob>& jobs, std::vector<Slot>& slots,
              int threads) {
    // Largest first: the long files start at once and the small ones fill the gaps at the end.
    std::vector<size_t> order(jobs.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return jobs[a].size > jobs[b].size; });
    const auto* directory = dynamic_cast<const fs::DirectoryTree*>(&tree);
    std::atomic<size_t> next{0};
    auto work = [&] {
        std::vector<std::byte> buffer(directory != nullptr ? k_chunk_size : 0);
        for (;;) {
            const size_t i = next.fetch_add(1, std::memory_order_relaxed);
            if (i >= order.size())
                return;
            HashJob& job = jobs[order[i]];
            slots[job.problem].problem.problem = hash_job(tree, directory, job, buffer);
            if (job.elf_magic)
                (void)tree.probe_elf(job.canonical);  // parsed here, in parallel; cached
        }
    };
    const size_t count =
        std::min(jobs.size(), static_cast<size_t>(std::clamp(threads, 1, k_max_threads)));
    if (count <= 1) {
        work();
        return;
    }
    std::vector<std::thread> pool;
    pool.reserve(count);
    for (size_t i = 0; i < count; ++i)
        pool.emplace_back(work);
    for (std::thread& thread : pool)
        thread.join();
}

// A regular file one distribution installed, for the soname scan.
struct InstalledFile {
    std::string canonical;
    std::string name;  // the base name RECORD gives it
    std::optional<size_t> job;
};

pylock::PackageRootlockData scan_sonames(const fs::FileTree& tree,
                                         const std::vector<InstalledFile>& files,
                                         const std::vector<HashJob>& jobs) {
    std::vector<std::pair<std::string, std::shared_ptr<const elf::ElfInfo>>> objects;
    for (const InstalledFile& file : files) {
        if (file.job && jobs[*file.job].hashed && !jobs[*file.job].elf_magic)
            continue;  // its first bytes were seen: not ELF
        fs::ElfProbe probe = tree.probe_elf(file.canonical);
        if (probe.outcome == fs::ElfProbe::Outcome::elf && probe.info)
            objects.emplace_back(file.name, probe.info);
    }
    std::set<std::string> provides;
    for (const auto& [name, info] : objects) {
        if (info->type != elf::k_type_dyn)
            continue;
        if (!info->soname.empty())
            provides.insert(info->soname);
        else if (name.find(".so") != std::string::npos)
            provides.insert(name);
    }
    std::set<std::string> needs;
    std::set<std::string> versions;
    for (const auto& [name, info] : objects) {
        for (const std::string& soname : info->needed) {
            if (!provides.contains(soname))
                needs.insert(soname);
        }
        for (const elf::VersionNeed& need : info->version_needs) {
            if (provides.contains(need.file))
                continue;
            for (const elf::NeededVersion& version : need.versions) {
                if (!version.weak)
                    versions.insert(version.name);
            }
        }
    }
    pylock::PackageRootlockData data;
    data.provides.assign(provides.begin(), provides.end());
    data.needs.assign(needs.begin(), needs.end());
    data.needs_versions.assign(versions.begin(), versions.end());
    return data;
}

pylock::LockTarget read_target(const fs::FileTree& tree, const python::PythonEnvironment& env,
                               std::vector<std::string>& notes) {
    pylock::LockTarget target;
    target.python = env.version;
    if (env.version.empty()) {
        notes.push_back(env.site_packages + ": the environment's Python version is unknown");
        return target;
    }
    const std::string prefix = env.version + ".";
    // The environment's own interpreter first: a pyenv or conda prefix runs on its own Python,
    // and the root's /usr/bin/python3.N (which read_base_facts describes) may be another one.
    const EnvironmentPython own = environment_python(tree, env);
    target.python_full = own.version;
    auto facts = fetch::read_base_facts(tree, env.version, tree.describe());
    if (facts.ok() && !own.version.empty() && starts_with(facts->python_full, prefix) &&
        facts->python_full != own.version)
        notes.push_back(fmt::format("the environment's Python {} ({}) is not the root's {} {}",
                                    own.version, own.source, facts->python_interpreter,
                                    facts->python_full));
    // Does the environment run on the root's interpreter? Only then does its version (from
    // dpkg's database) describe the environment; else an unknown version stays unknown.
    const auto root_python =
        facts.ok() ? fs::resolve(tree, facts->python_interpreter) : std::nullopt;
    const bool on_root_python = own.prefix.empty() || (root_python && env.interpreter &&
                                                       root_python->path == *env.interpreter);
    if (own.version.empty() && !on_root_python)
        notes.push_back(fmt::format(
            "{}: the environment's Python {} names no full version (no "
            "include/python{}/patchlevel.h or conda-meta record): python-full left empty",
            *env.interpreter, env.version, env.version));
    if (!facts.ok()) {
        // The loader's errors already name the root: do not say it twice.
        std::string text = facts.error().text();
        const std::string twice = tree.describe() + ": " + tree.describe() + ": ";
        if (text.rfind(twice, 0) == 0)
            text.erase(0, tree.describe().size() + 2);
        notes.push_back(text + " (glibc and architecture unknown)");
        return target;
    }
    target.arch = facts->arch;
    target.glibc = facts->glibc();
    if (target.python_full.empty() && on_root_python && starts_with(facts->python_full, prefix))
        target.python_full = facts->python_full;
    return target;
}

bool is_regular(const fs::FileTree& tree, const std::string& path) {
    auto resolved = fs::resolve(tree, path);
    return resolved && resolved->stat.kind == fs::NodeKind::regular;
}

}  // namespace

util::Result<FreezeResult> freeze_environment(const fs::FileTree& tree,
                                              const FreezeOptions& options) {
    ROOTLOCK_TRY(found, python::find_environments(tree, {options.venv}));
    if (found.empty())
        return util::make_error(options.venv, "no Python environment here");
    if (found.size() > 1) {
        return util::make_error(options.venv, std::to_string(found.size()) +
                                                  " environments here; name one site-packages");
    }
    const python::PythonEnvironment& env = found.front();

    FreezeResult result;
    result.notes = env.problems;
    pylock::LockRootlockData data;
    data.target = read_target(tree, env, result.notes);
    data.venv = env.prefix;
    data.frozen_from = env.prefix;
    data.closure_ok = true;

    // Every row is classified here; the hashing jobs only get rows whose file is regular.
    const fs::Resolver resolver(tree);
    std::vector<Slot> slots;
    std::vector<HashJob> jobs;
    std::vector<std::vector<InstalledFile>> files(env.distributions.size());
    auto report = [&](const python::Distribution& dist, std::string path, std::string problem) {
        slots.push_back(Slot{RecordProblem{dist.name, std::move(path), std::move(problem)}});
        return slots.size() - 1;
    };
    for (size_t d = 0; d < env.distributions.size(); ++d) {
        const python::Distribution& dist = env.distributions[d];
        if (!dist.has_record) {
            const bool present = tree.lstat(child(dist.dist_info_path, "RECORD")).has_value();
            report(dist, dist.dist_info_path,
                   present ? "malformed RECORD: its files cannot be verified"
                           : "no RECORD: its files cannot be verified");
            continue;
        }
        std::set<std::string> seen;
        for (size_t i = 0; i < dist.record.size() && i < dist.installed_paths.size(); ++i) {
            const python::RecordEntry& entry = dist.record[i];
            const std::string& installed = dist.installed_paths[i];
            const bool hashed = !entry.hash_algorithm.empty();
            // pip records the .pyc files it compiled with their digests: so does a build with
            // python.compile-bytecode, which a rebuild from this lock should then repeat.
            if (hashed && ends_with(entry.path, ".pyc") &&
                entry.path.find("__pycache__/") != std::string::npos)
                data.compile_bytecode = true;
            if (climbs_above_root(env.site_packages, entry.path)) {
                report(dist, child(env.site_packages, entry.path), "outside the root");
                continue;
            }
            auto resolved = resolver.resolve(installed);
            const bool regular = resolved && resolved->stat.kind == fs::NodeKind::regular;
            std::optional<size_t> job;
            if (hashed) {
                if (!resolved) {
                    report(dist, installed, "missing");
                } else if (!regular) {
                    report(dist, installed, "not a regular file");
                } else if (entry.size && *entry.size != resolved->stat.size) {
                    report(dist, installed,
                           "size " + std::to_string(resolved->stat.size) + ", RECORD says " +
                               std::to_string(*entry.size));
                } else {
                    jobs.push_back(HashJob{&entry, resolved->path, resolved->stat.size,
                                           report(dist, installed, {})});
                    job = jobs.size() - 1;
                }
            }
            if (regular && !ends_with(entry.path, ".pyc") && seen.insert(resolved->path).second)
                files[d].push_back(InstalledFile{resolved->path, fs::basename(installed), job});
        }
    }

    run_jobs(tree, jobs, slots, options.threads);
    for (const HashJob& job : jobs) {
        if (!job.hashed)
            continue;
        ++result.files_hashed;
        result.bytes_hashed += job.bytes;
    }
    for (Slot& slot : slots) {
        if (!slot.problem.problem.empty())
            result.problems.push_back(std::move(slot.problem));
    }
    std::sort(result.problems.begin(), result.problems.end());

    pylock::Lock& lock = result.lock;
    if (!env.version.empty())
        lock.requires_python = "==" + env.version + ".*";
    for (size_t d = 0; d < env.distributions.size(); ++d) {
        const python::Distribution& dist = env.distributions[d];
        pylock::LockPackage package;
        package.name = dist.name;
        auto version = python::parse_version(dist.version);
        package.version = version.ok() ? python::to_string(*version) : dist.version;
        pylock::PackageRootlockData rootlock = scan_sonames(tree, files[d], jobs);
        rootlock.requested = is_regular(tree, child(dist.dist_info_path, "REQUESTED"));
        package.rootlock = std::move(rootlock);
        lock.packages.push_back(std::move(package));
    }
    std::sort(lock.packages.begin(), lock.packages.end(),
              [](const pylock::LockPackage& a, const pylock::LockPackage& b) {
                  return std::tie(a.name, a.version) < std::tie(b.name, b.version);
              });
    lock.rootlock = std::move(data);
    return result;
}

}  // namespace rootlock::freeze
