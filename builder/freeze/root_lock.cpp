// lock_of_root: the venv of a root frozen as `freeze` does (its hashing problems dropped: only
// names, versions and sonames are compared), the dpkg database's packages as a base's .debs.
#include "freeze/root_lock.hpp"

#include "debian/dpkg_status.hpp"
#include "freeze/freeze.hpp"
#include "fs/tar_tree.hpp"
#include "python/environment.hpp"

namespace rootlock::freeze {

namespace {

constexpr const char* k_dpkg_status = "/var/lib/dpkg/status";

util::Result<std::string> find_venv(const fs::FileTree& tree, const std::string& hint) {
    if (!hint.empty() && tree.lstat(hint).has_value())
        return hint;
    ROOTLOCK_TRY(found, python::find_environments(tree, {"/"}));
    std::vector<std::string> venvs;
    for (const auto& env : found)
        if (env.is_venv)
            venvs.push_back(env.prefix);
    if (venvs.size() <= 1)
        return venvs.empty() ? std::string() : venvs.front();
    std::string list;
    for (const auto& venv : venvs)
        list += (list.empty() ? "" : ", ") + venv;
    return util::make_error(tree.describe(),
                            std::to_string(venvs.size()) + " virtual environments (" + list + ")");
}

}  // namespace

std::vector<std::string> root_lock_patterns() {
    std::vector<std::string> patterns = fs::default_retained_patterns();
    patterns.emplace_back(k_dpkg_status);
    return patterns;
}

util::Result<RootLock> lock_of_root(const fs::FileTree& tree, const RootLockOptions& options) {
    RootLock out;
    ROOTLOCK_TRY(venv, find_venv(tree, options.venv));
    if (venv.empty()) {
        out.notes.push_back(tree.describe() + ": no virtual environment");
        out.lock.rootlock.emplace();
    } else {
        FreezeOptions freeze_options;
        freeze_options.venv = venv;
        freeze_options.threads = options.threads;
        ROOTLOCK_TRY(frozen, freeze_environment(tree, freeze_options));
        out.lock = std::move(frozen.lock);
        out.notes = std::move(frozen.notes);
    }
    if (tree.lstat(k_dpkg_status).has_value()) {
        ROOTLOCK_TRY(text, tree.read_file(k_dpkg_status));
        ROOTLOCK_TRY(packages, debian::parse_dpkg_status(text, k_dpkg_status));
        pylock::LockBase& base = out.lock.rootlock->base;
        base.kind = "debian";
        for (const auto& package : packages) {
            if (!package.installed())
                continue;
            pylock::LockDeb deb;
            deb.name = package.name;
            deb.version = package.version;
            deb.architecture = package.architecture;
            deb.source = package.source;
            deb.source_version = package.source_version;
            base.debs.push_back(std::move(deb));
        }
    }
    return out;
}

}  // namespace rootlock::freeze
