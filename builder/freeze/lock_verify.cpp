// compare_with_lock: names paired after PEP 503 normalisation (both sides are normalised
// already), versions by PEP 440 equality so that 1.0 and 1.0.0 agree.
#include "freeze/lock_verify.hpp"

#include <algorithm>
#include <map>

#include "python/pep440.hpp"

namespace rootlock::freeze {

namespace {

bool same_version(const std::string& a, const std::string& b) {
    if (a == b)
        return true;
    auto left = python::parse_version(a);
    auto right = python::parse_version(b);
    return left.ok() && right.ok() && *left == *right;
}

}  // namespace

std::vector<LockMismatch> compare_with_lock(const FreezeResult& live, const pylock::Lock& lock) {
    std::map<std::string, std::string> installed;
    for (const pylock::LockPackage& package : live.lock.packages)
        installed.emplace(package.name, package.version);
    std::map<std::string, std::string> locked;
    for (const pylock::LockPackage& package : lock.packages)
        locked.emplace(package.name, package.version);
    std::vector<LockMismatch> out;
    for (const auto& [name, version] : locked) {
        auto it = installed.find(name);
        if (it == installed.end())
            out.push_back({name, "missing", "locked " + version + ", not installed"});
        else if (!same_version(it->second, version))
            out.push_back({name, "version", "installed " + it->second + ", locked " + version});
    }
    for (const auto& [name, version] : installed) {
        if (!locked.contains(name))
            out.push_back({name, "extra", version + " installed, not in the lock"});
    }
    for (const RecordProblem& problem : live.problems)
        out.push_back({problem.distribution, "damaged", problem.path + ": " + problem.problem});
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace rootlock::freeze
