// Resolving and assembling a Debian base per package. apt decides what a variant resolves to
// (mmdebstrap --simulate), the signed indexes say what each chosen package is, and the build
// installs exactly those files with mmdebstrap from a local repository.
#include "fetch/debian_base.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "debian/apt_simulation.hpp"
#include "debian/dpkg_status.hpp"
#include "debian/release.hpp"
#include "debian/signature.hpp"
#include "fetch/debian_archive.hpp"
#include "fetch/emulation.hpp"
#include "fetch/file_digest.hpp"
#include "fs/tar_tree.hpp"
#include "index/page_cache.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"
#include "util/subprocess.hpp"

namespace rootlock::fetch {

namespace {

constexpr const char* k_default_mirror = "http://deb.debian.org/debian";

// apt fetches and verifies as _apt, which cannot read a keyring or a cache under a private home
// (~/.cache is in /root, mode 0700); as root it can. mmdebstrap writes the option into the
// root's apt.conf.d/99mmdebstrap, which the customize hook removes again.
constexpr const char* k_apt_as_root = "--aptopt=APT::Sandbox::User \"root\"";

bool file_exists(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0;
}

// `path` made absolute against the working directory: apt's signed-by and copy:// take only
// absolute paths, and gpgv looks a bare file name up in its home.
std::string absolute(const std::string& path) {
    if (path.empty() || path.front() == '/')
        return path;
    char here[4096];
    if (::getcwd(here, sizeof here) == nullptr)
        return path;
    return std::string(here) + "/" + path;
}

std::string host_keyring(const std::string& keyring, const std::string& recipe_dir) {
    if (keyring.empty())
        return debian::k_debian_archive_keyring;
    if (keyring.front() == '/')
        return keyring;
    return absolute(recipe_dir.empty() ? keyring : recipe_dir + "/" + keyring);
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
    std::string out;
    for (const auto& item : items)
        out += (out.empty() ? "" : separator) + item;
    return out;
}

// A shell word, for the command a user is told to rerun.
std::string shell_quoted(const std::string& word) {
    if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
                                                "WXYZ0123456789-_=+,./:") == std::string::npos)
        return word;
    std::string out = "'";
    for (char c : word)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string command_line(const std::vector<std::string>& argv) {
    std::vector<std::string> words;
    for (const auto& word : argv)
        words.push_back(shell_quoted(word));
    return joined(words, " ");
}

util::Error process_failure(const std::string& what, const std::vector<std::string>& argv,
                            const util::ProcessResult& result) {
    std::string hint = ::geteuid() == 0 ? ""
                                        : " (making a Debian base needs root, or unprivileged "
                                          "user namespaces for mmdebstrap's unshare mode)";
    return util::make_network_error(
        what, "failed with exit code " + std::to_string(result.exit_code) + hint + ":\n" +
                  apt_complaints(result.output) + "\nrerun: " + command_line(argv));
}

// "deb [signed-by=K] URL SUITE COMPONENTS" for mmdebstrap's mirror arguments.
std::string deb_line(const std::string& url, const std::string& suite,
                     const std::vector<std::string>& components, const std::string& keyring) {
    return "deb [signed-by=" + keyring + "] " + url + " " + suite + " " + joined(components, " ");
}

}  // namespace

std::string apt_complaints(const std::string& output) {
    std::vector<std::string> errors, warnings;
    size_t start = 0;
    while (start < output.size()) {
        size_t end = output.find('\n', start);
        if (end == std::string::npos)
            end = output.size();
        std::string line = output.substr(start, end - start);
        if ((line.rfind("E: ", 0) == 0 || line.rfind("Err:", 0) == 0) && errors.size() < 8)
            errors.push_back(line);
        else if (line.rfind("W: ", 0) == 0 && warnings.size() < 8)
            warnings.push_back(line);
        start = end + 1;
    }
    if (!errors.empty()) {
        // apt's own E: lines come before mmdebstrap's closing "E: ... failed"; show them all.
        for (const auto& warning : warnings) {
            if (warning.find("Failed to fetch") != std::string::npos ||
                warning.find("Temporary failure") != std::string::npos)
                errors.insert(errors.begin(), warning);
        }
        return "  " + joined(errors, "\n  ");
    }
    if (!warnings.empty())
        return "  " + joined(warnings, "\n  ");
    return "  " + util::last_line(output);
}

util::Result<std::vector<pylock::LockDebArchive>> debian_archives(const recipe::DebianBase& debian,
                                                                  const DebianOptions& options) {
    std::vector<pylock::LockDebArchive> out;
    auto add = [&](const std::string& name, const std::string& url, const std::string& suite,
                   const std::vector<std::string>& components, const std::string& keyring,
                   const std::string& snapshot) -> util::Status {
        pylock::LockDebArchive archive;
        archive.name = name;
        archive.url = url;
        archive.suite = suite;
        archive.components = components;
        archive.snapshot = snapshot;
        archive.keyring = keyring;
        if (!keyring.empty()) {
            const std::string path = host_keyring(keyring, options.recipe_dir);
            auto bytes = util::read_host_file(path);
            if (!bytes.ok())
                return util::make_error("base.debian.keyring", bytes.error().text());
            archive.keyring_sha256 = util::sha256_hex(*bytes);
            // Kept by hash too, so a build here finds it even when the recipe's folder moves.
            if (!options.cache_dir.empty())
                (void)index::ContentStore(options.cache_dir).put_bytes(*bytes);
        }
        out.push_back(std::move(archive));
        return util::ok_status();
    };
    std::string mirror = debian.mirror.empty() ? k_default_mirror : debian.mirror;
    while (!mirror.empty() && mirror.back() == '/')
        mirror.pop_back();
    if (auto s =
            add("debian", mirror, debian.suite, debian.components, debian.keyring, debian.snapshot);
        !s.ok())
        return s.error();
    for (const auto& archive : debian.archives) {
        if (auto s = add(archive.name, archive.url, archive.suite, archive.components,
                         archive.keyring, archive.snapshot);
            !s.ok())
            return s.error();
    }
    return out;
}

util::Result<pylock::LockBase> resolve_debian_base(const recipe::DebianBase& debian,
                                                   const DebianOptions& options,
                                                   index::HttpClient& http,
                                                   index::ContentStore& store) {
    if (options.offline)
        return util::make_network_error(
            "base.debian",
            "resolving the Debian base needs its archives; --offline forbids "
            "the network (relock without --upgrade to keep the locked packages)");
    // mmdebstrap refuses to simulate a variant it could not run: said first, in rootlock's words.
    ROOTLOCK_TRY(runnable, check_emulation(options.architecture, debian.variant, host_machine()));
    (void)runnable;
    ROOTLOCK_TRY(archives, debian_archives(debian, options));
    std::vector<LoadedArchive> loaded;
    for (auto& archive : archives) {
        ArchiveSpec spec{
            archive.name, archive.url, archive.suite, archive.components,
            archive.keyring.empty() ? "" : host_keyring(archive.keyring, options.recipe_dir)};
        ROOTLOCK_TRY(index, load_archive(spec, options.architecture, http, store));
        archive.date = std::to_string(index.date);
        loaded.push_back(std::move(index));
    }

    // apt's answer for the variant and includes, over exactly these archives.
    std::vector<std::string> argv{"mmdebstrap",
                                  "--simulate",
                                  "--verbose",
                                  k_apt_as_root,
                                  "--variant=" + debian.variant,
                                  "--architectures=" + options.architecture};
    if (!debian.include.empty())
        argv.push_back("--include=" + joined(debian.include, ","));
    argv.push_back(debian.suite);
    argv.push_back("/dev/null");
    for (const auto& archive : loaded)
        argv.push_back(deb_line(archive.spec.url, archive.spec.suite, archive.spec.components,
                                archive.spec.keyring.empty() ? debian::k_debian_archive_keyring
                                                             : archive.spec.keyring));
    ROOTLOCK_TRY(ran, util::run_process(argv, {{"SOURCE_DATE_EPOCH", options.epoch}}));
    if (ran.exit_code != 0)
        return process_failure("mmdebstrap", argv, ran);
    ROOTLOCK_TRY(installs, debian::parse_apt_simulation(ran.output));
    if (installs.empty())
        return util::make_error("mmdebstrap", "apt would install nothing:\n" +
                                                  apt_complaints(ran.output) +
                                                  "\nrerun: " + command_line(argv));

    // Each chosen package as the first archive (in the recipe's order) lists it.
    const OfferedPackages offered(loaded);
    pylock::LockBase base;
    base.kind = "debian";
    base.suite = debian.suite;
    base.mirror = debian.mirror;
    base.variant = debian.variant;
    // amd64 is left out, so that every lock made before architectures were named keeps its bytes.
    base.architecture = debian.architecture == "amd64" ? "" : debian.architecture;
    base.include = debian.include;
    std::sort(base.include.begin(), base.include.end());
    base.archives = archives;
    std::vector<std::string> unlisted;
    for (const auto& install : installs) {
        auto deb = offered.pin(install.name, install.version, install.architecture);
        if (!deb.has_value()) {
            unlisted.push_back(install.name + " " + install.version + " (" + install.architecture +
                               ")");
            continue;
        }
        base.debs.push_back(std::move(*deb));
    }
    if (!unlisted.empty())
        return util::make_error("mmdebstrap",
                                "apt chose packages that no archive of the recipe "
                                "lists: " +
                                    joined(unlisted, ", "));
    std::sort(base.debs.begin(), base.debs.end(), [](const auto& a, const auto& b) {
        return std::tie(a.name, a.architecture) < std::tie(b.name, b.architecture);
    });
    return base;
}

util::Status fetch_debs(const pylock::LockBase& base, index::HttpClient& http,
                        index::ContentStore& store, bool offline) {
    std::map<std::string, const pylock::LockDebArchive*> archives;
    for (const auto& archive : base.archives)
        archives[archive.name] = &archive;
    std::vector<const pylock::LockDeb*> wanted;
    for (const auto& deb : base.debs) {
        ROOTLOCK_TRY(found, store.find(deb.sha256));
        if (!found.has_value())
            wanted.push_back(&deb);
    }
    std::map<const pylock::LockDeb*, std::vector<std::string>> tried;
    for (int round = 0; round < 2 && !wanted.empty() && !offline; ++round) {
        std::vector<index::DownloadRequest> requests;
        std::vector<const pylock::LockDeb*> asked;
        for (const auto* deb : wanted) {
            auto archive = archives.find(deb->archive);
            if (archive == archives.end())
                return util::make_error(deb->name, "names archive \"" + deb->archive +
                                                       "\", which the lock does not list");
            std::string url;
            if (round == 0) {
                url = archive->second->url + "/" + deb->filename;
            } else {
                if (archive->second->snapshot.empty())
                    continue;
                char* end = nullptr;
                const long long date = std::strtoll(archive->second->date.c_str(), &end, 10);
                url = archive->second->snapshot + "/" + debian::snapshot_timestamp(date) + "/" +
                      deb->filename;
            }
            tried[deb].push_back(url);
            requests.push_back({url, deb->sha256, deb->size});
            asked.push_back(deb);
        }
        auto results = http.download(requests, store);
        std::vector<const pylock::LockDeb*> still;
        for (size_t i = 0; i < results.size(); ++i) {
            if (results[i].ok())
                continue;
            const util::Error& error = results[i].error();
            if (error.kind == util::ErrorKind::integrity) {
                util::Error refused = error;  // the bytes arrived and are not the locked ones
                refused.message = asked[i]->name + " " + asked[i]->version + ": " + error.message;
                return refused;
            }
            tried[asked[i]].back() += " (" + error.message + ")";
            still.push_back(asked[i]);
        }
        // Those never asked in this round (no snapshot) stay missing too.
        for (const auto* deb : wanted) {
            if (std::find(asked.begin(), asked.end(), deb) == asked.end())
                still.push_back(deb);
        }
        wanted = std::move(still);
    }
    if (wanted.empty())
        return util::ok_status();
    std::string message = std::to_string(wanted.size()) + " of the lock's .debs cannot be had:";
    for (const auto* deb : wanted) {
        message += "\n  " + deb->name + " " + deb->version + " (" + deb->architecture + "): ";
        if (offline)
            message += "not in the cache, and --offline forbids the network";
        else
            message += "tried " + joined(tried[deb], ", ");
    }
    return util::make_network_error("base.debian", message);
}

std::string debian_architecture(const pylock::LockBase& base) {
    return base.architecture.empty() ? "amd64" : base.architecture;
}

std::string apt_sources(const pylock::LockBase& base) {
    std::string out = "# Written by rootlock from the lock's archives.\n";
    for (const auto& archive : base.archives) {
        out += "deb ";
        if (!archive.keyring.empty())
            out += "[signed-by=/etc/apt/keyrings/rootlock-" + archive.name + ".gpg] ";
        out += archive.url + " " + archive.suite + " " + joined(archive.components, " ") + "\n";
    }
    return out;
}

namespace {

// Step 1: a local repository of exactly the locked .debs (hard links into the content store),
// indexed by apt-ftparchive. Returns the package names, for mmdebstrap's --include.
util::Result<std::vector<std::string>> stage_local_repository(const pylock::LockBase& base,
                                                              const std::string& repo,
                                                              index::ContentStore& store) {
    if (auto s = util::make_directories(repo + "/pool"); !s.ok())
        return s.error();
    std::vector<std::string> names;
    for (const auto& deb : base.debs) {
        std::string version = deb.version;
        std::replace(version.begin(), version.end(), ':', '%');
        const std::string link =
            repo + "/pool/" + deb.name + "_" + version + "_" + deb.architecture + ".deb";
        const std::string blob = store.blob_path(deb.sha256);
        if (!file_exists(link) && ::link(blob.c_str(), link.c_str()) != 0 &&
            ::symlink(blob.c_str(), link.c_str()) != 0)
            return util::make_error(link, "cannot link the .deb into the local repository");
        names.push_back(deb.name);
    }
    const std::vector<std::string> index_argv{
        "sh",
        "-c",
        "cd \"$1\" && apt-ftparchive packages pool > Packages && apt-ftparchive "
        "-o APT::FTPArchive::Release::Suite=\"$2\" -o APT::FTPArchive::Release::Codename=\"$2\" "
        "release . > Release",
        "sh",
        repo,
        base.suite};
    ROOTLOCK_TRY(indexed, util::run_process(index_argv, {}));
    if (indexed.exit_code != 0)
        return util::make_error("apt-ftparchive", "failed: " + util::last_line(indexed.output) +
                                                      " (it comes with apt-utils)");

    return names;
}

// Step 2: the archives' own keys for the image's apt, from the store by hash, else beside the
// recipe; each becomes a hook that installs it as /etc/apt/keyrings/rootlock-NAME.gpg.
util::Result<std::vector<std::string>> keyring_hooks(const pylock::LockBase& base,
                                                     const DebianOptions& options,
                                                     const std::string& repo,
                                                     index::ContentStore& store) {
    std::vector<std::string> hooks;
    for (const auto& archive : base.archives) {
        if (archive.keyring.empty())
            continue;
        std::string path = store.blob_path(archive.keyring_sha256);
        if (!file_exists(path)) {
            path = host_keyring(archive.keyring, options.recipe_dir);
            auto bytes = util::read_host_file(path);
            if (!bytes.ok() || util::sha256_hex(*bytes) != archive.keyring_sha256)
                return util::make_error(archive.keyring,
                                        "the keyring of archive " + archive.name + " (sha256 " +
                                            archive.keyring_sha256 +
                                            ") is not here: the image's apt sources need it");
        }
        const std::string named = repo + "/rootlock-" + archive.name + ".gpg";
        ::unlink(named.c_str());
        if (::link(path.c_str(), named.c_str()) != 0 && ::symlink(path.c_str(), named.c_str()) != 0)
            return util::make_error(named, "cannot stage the archive's keyring");
        // bookworm's apt does not ship /etc/apt/keyrings, so copy-in cannot be used.
        hooks.push_back("--customize-hook=install -m 0644 -D '" + named +
                        "' \"$1/etc/apt/keyrings/rootlock-" + archive.name + ".gpg\"");
    }
    return hooks;
}

// Step 4: the assembled root must hold exactly the lock's packages. The extract variant unpacks
// and registers nothing (its dpkg status is empty): there the repository, which holds the locked
// .debs alone, each named by --include, is the guarantee.
util::Status check_installed_set(const pylock::LockBase& base, const std::string& tarball) {
    if (base.variant == "extract")
        return util::ok_status();
    fs::TarOptions tar_options;
    tar_options.retained_patterns.push_back("/var/lib/dpkg/status");
    ROOTLOCK_TRY(tree, fs::TarTree::open(tarball, tar_options));
    ROOTLOCK_TRY(status_text, tree->read_file("/var/lib/dpkg/status"));
    ROOTLOCK_TRY(installed, debian::parse_dpkg_status(status_text, "/var/lib/dpkg/status"));
    std::set<std::string> want, have;
    for (const auto& deb : base.debs)
        want.insert(deb.name + " " + deb.version);
    for (const auto& package : installed) {
        if (package.installed())
            have.insert(package.name + " " + package.version);
    }
    if (want != have) {
        std::vector<std::string> extra, missing;
        std::set_difference(have.begin(), have.end(), want.begin(), want.end(),
                            std::back_inserter(extra));
        std::set_difference(want.begin(), want.end(), have.begin(), have.end(),
                            std::back_inserter(missing));
        return util::make_error("mmdebstrap",
                                "the assembled base is not the locked package set: installed "
                                "but not locked: " +
                                    (extra.empty() ? "none" : joined(extra, ", ")) +
                                    "; locked but not installed: " +
                                    (missing.empty() ? "none" : joined(missing, ", ")));
    }
    return util::ok_status();
}

}  // namespace

util::Result<std::string> assemble_debian_base(const pylock::LockBase& base,
                                               const DebianOptions& options,
                                               index::HttpClient& http,
                                               index::ContentStore& store) {
    // The key is what goes in; the same .debs give the same base on every machine.
    // "assembly" names how the base is made here; it changes whenever the hooks do. The
    // sources.list the image gets is in it too: the same .debs from another mirror make another
    // /etc/apt/sources.list.
    const std::string sources = apt_sources(base);
    std::string key_text = "assembly=4\nvariant=" + base.variant + "\nepoch=" + options.epoch +
                           "\narch=" + options.architecture + "\nsuite=" + base.suite + "\n";
    for (const auto& deb : base.debs)
        key_text += deb.sha256 + " " + deb.name + "\n";
    for (const auto& archive : base.archives)
        key_text += "keyring " + archive.name + " " + archive.keyring_sha256 + "\n";
    key_text += "sources\n" + sources;
    const std::string key = util::sha256_hex(key_text).substr(0, 32);
    const std::string tarball = store.root() + "/bases/debian-" + key + ".tar";
    // Checked against the digest it was assembled with (remembered, so hashed only when the
    // file changed): a damaged base is assembled again from its verified .debs.
    index::PageCache pages(store.root());
    pages.set_offline(options.offline);
    ROOTLOCK_TRY(whole, check_made_file(tarball, pages, options.offline));
    if (whole)
        return tarball;

    // A foreign architecture's maintainer scripts need emulation: said before any download.
    ROOTLOCK_TRY(runnable, check_emulation(options.architecture, base.variant, host_machine()));
    (void)runnable;

    // Step 1 and 2, after the .debs themselves.
    if (auto fetched = fetch_debs(base, http, store, options.offline); !fetched.ok())
        return fetched.error();
    const std::string repo = absolute(store.root()) + "/debian-repos/" + key;
    ROOTLOCK_TRY(names, stage_local_repository(base, repo, store));
    ROOTLOCK_TRY(hooks, keyring_hooks(base, options, repo, store));

    // Step 3: mmdebstrap over that repository alone.
    const std::string temp = tarball + ".tmp";
    ::unlink(temp.c_str());
    if (auto s = util::make_directories(store.root() + "/bases"); !s.ok())
        return s.error();
    // Every locked package by name: the repository offers one version of each, so apt's choice
    // is the lock's, and a package the variant would not pick by priority is installed too.
    std::vector<std::string> argv{
        "mmdebstrap", "--quiet", k_apt_as_root,
        // dpkg's fsyncs cost a minute on a plain disk and buy nothing: a base half-written is
        // never renamed into the cache.
        "--dpkgopt=force-unsafe-io", "--variant=" + base.variant,
        "--architectures=" + options.architecture, "--format=tar",
        "--include=" + joined(names, ","),
        // Nothing of the build machine: mmdebstrap copies these from the host.
        "--customize-hook=rm -f \"$1/etc/hostname\" \"$1/etc/resolv.conf\" "
        "\"$1/etc/apt/apt.conf.d/99mmdebstrap\" \"$1/etc/dpkg/dpkg.cfg.d/99mmdebstrap\"; "
        "printf '%s' \"$ROOTLOCK_APT_SOURCES\" > \"$1/etc/apt/sources.list\"",
        base.suite, temp, "deb [trusted=yes] copy://" + repo + " ./"};
    argv.insert(argv.end() - 3, hooks.begin(), hooks.end());
    ROOTLOCK_TRY(ran, util::run_process(argv, {{"SOURCE_DATE_EPOCH", options.epoch},
                                               {"ROOTLOCK_APT_SOURCES", sources}}));
    if (ran.exit_code != 0) {
        ::unlink(temp.c_str());
        return process_failure("mmdebstrap", argv, ran);
    }

    if (auto checked = check_installed_set(base, temp); !checked.ok()) {
        ::unlink(temp.c_str());
        return checked.error();
    }
    auto digest = util::sha256_file(temp);
    if (!digest.ok()) {
        ::unlink(temp.c_str());
        return digest.error();
    }
    const std::string sha256 = util::Sha256::to_hex(*digest);
    if (auto recorded = record_made_file(tarball, sha256); !recorded.ok()) {
        ::unlink(temp.c_str());
        return recorded.error();
    }
    if (::rename(temp.c_str(), tarball.c_str()) != 0)
        return util::make_io_error(tarball, std::string("cannot move the new Debian base into the "
                                                        "cache: ") +
                                                std::strerror(errno));
    remember_sha256(tarball, sha256, pages);
    return tarball;
}

}  // namespace rootlock::fetch
