// diff_locks: two locks compared by meaning, see lock_diff.hpp. The renderers live in
// lock_diff_render.cpp and a Debian base's archives and .debs in deb_diff.cpp.
#include "diff/lock_diff.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "check/cuda_family.hpp"
#include "diff/deb_diff.hpp"
#include "python/pep440.hpp"
#include "python/wheel_filename.hpp"

namespace rootlock::diff {

namespace {

using StringSet = std::set<std::string>;

constexpr std::array<std::string_view, 4> k_torch_group{"torch", "torchaudio", "torchvision",
                                                        "triton"};

void add_field(std::vector<FieldChange>& out, std::string field, const std::string& before,
               const std::string& after) {
    if (before != after)
        out.push_back(FieldChange{std::move(field), before, after});
}

std::string cuda_major(const std::string& cuda) {
    return cuda.substr(0, cuda.find('.'));
}

std::vector<FieldChange> diff_target(const pylock::LockTarget& b, const pylock::LockTarget& a) {
    std::vector<FieldChange> out;
    const bool full = !b.python_full.empty() && !a.python_full.empty();
    add_field(out, "python", full ? b.python_full : b.python, full ? a.python_full : a.python);
    add_field(out, "glibc", b.glibc, a.glibc);
    add_field(out, "arch", b.arch, a.arch);
    add_field(out, "cuda-major", cuda_major(b.cuda), cuda_major(a.cuda));
    add_field(out, "driver", b.driver, a.driver);
    add_field(out, "torch", b.torch, a.torch);
    add_field(out, "gpus", fmt::format("{}", fmt::join(b.gpus, ", ")),
              fmt::format("{}", fmt::join(a.gpus, ", ")));
    return out;
}

std::vector<FieldChange> diff_base(const pylock::LockBase& b, const pylock::LockBase& a) {
    std::vector<FieldChange> out;
    add_field(out, "kind", b.kind, a.kind);
    add_field(out, "url", b.url, a.url);
    add_field(out, "path", b.path, a.path);
    add_field(out, "sha256", b.sha256, a.sha256);
    add_field(out, "suite", b.suite, a.suite);
    add_field(out, "mirror", b.mirror, a.mirror);
    add_field(out, "variant", b.variant, a.variant);
    // A Debian base's lock names its architecture only when it is not amd64.
    auto architecture = [](const pylock::LockBase& base) {
        return base.kind == "debian" && base.architecture.empty() ? std::string("amd64")
                                                                  : base.architecture;
    };
    add_field(out, "architecture", architecture(b), architecture(a));
    add_field(out, "include", fmt::format("{}", fmt::join(b.include, " ")),
              fmt::format("{}", fmt::join(a.include, " ")));
    diff_archives(b, a, out);
    return out;
}

// PEP 440 order, or plain text order when either side is not a PEP 440 version.
int compare_versions(const std::string& b, const std::string& a) {
    auto pb = python::parse_version(b);
    auto pa = python::parse_version(a);
    if (pb.ok() && pa.ok()) {
        const auto order = *pb <=> *pa;
        return order < 0 ? -1 : (order > 0 ? 1 : 0);
    }
    return b.compare(a) < 0 ? -1 : (b == a ? 0 : 1);
}

// The wheel's file name: its name key, else the last segment of its URL (percent-decoded, as uv
// writes "%2B" for the "+" of a local version) or path.
std::string wheel_name(const pylock::LockWheel& wheel) {
    if (!wheel.name.empty())
        return wheel.name;
    std::string_view where = wheel.url.empty() ? wheel.path : wheel.url;
    where = where.substr(0, where.find_first_of("?#"));
    if (const size_t slash = where.find_last_of('/'); slash != std::string_view::npos)
        where = where.substr(slash + 1);
    // As the index gave it, when the escapes do not decode (nothing to match it with anyway).
    auto decoded = python::percent_decode(where);
    return decoded.ok() ? *decoded : std::string(where);
}

std::map<std::string, const pylock::LockWheel*> wheels_by_name(const pylock::LockPackage& package) {
    std::map<std::string, const pylock::LockWheel*> out;
    for (const auto& wheel : package.wheels)
        out.emplace(wheel_name(wheel), &wheel);
    return out;
}

using Hashes = std::map<std::string, std::string>;

// sha256 when both have it, else the first algorithm in common, else "".
std::string common_algorithm(const Hashes& b, const Hashes& a) {
    if (b.count("sha256") != 0 && a.count("sha256") != 0)
        return "sha256";
    for (const auto& [candidate, digest] : b) {
        if (a.count(candidate) != 0)
            return candidate;
    }
    return "";
}

std::optional<RebuiltWheel> compare_hashes(const std::string& name, const Hashes& b,
                                           const Hashes& a, std::string kind) {
    const std::string algorithm = common_algorithm(b, a);
    if (algorithm.empty())
        return std::nullopt;  // nothing in common to compare
    const std::string& before = b.at(algorithm);
    const std::string& after = a.at(algorithm);
    if (before == after)
        return std::nullopt;
    return RebuiltWheel{name, algorithm, before, after, std::move(kind)};
}

std::optional<RebuiltWheel> compare_digests(const std::string& name, const pylock::LockWheel& b,
                                            const pylock::LockWheel& a) {
    return compare_hashes(name, b.hashes, a.hashes, "wheel");
}

// ---- the other sources: vcs, directory, archive, sdist ----

// "wheels", "sdist, wheels", "vcs", ...: the kinds of source an entry names, "" for none.
std::string source_of(const pylock::LockPackage& package) {
    std::vector<std::string_view> kinds;
    if (package.vcs)
        kinds.push_back("vcs");
    if (package.directory)
        kinds.push_back("directory");
    if (package.archive)
        kinds.push_back("archive");
    if (package.sdist)
        kinds.push_back("sdist");
    if (!package.wheels.empty())
        kinds.push_back("wheels");
    return fmt::format("{}", fmt::join(kinds, ", "));
}

// A kind of source was swapped for another; an entry without any (freeze's) is no change.
bool source_swapped(const PackageChange& change) {
    return !change.source_before.empty() && !change.source_after.empty() &&
           change.source_before != change.source_after;
}

class SourceFields {
  public:
    SourceFields(PackageChange& change, std::string source)
        : m_change(change), m_source(std::move(source)) {}

    void add(std::string field, const std::string& before, const std::string& after) {
        if (before == after)
            return;
        m_change.source_fields.push_back(
            SourceFieldChange{m_source, std::move(field), before, after});
        m_any = true;
    }
    void add(std::string field, const std::optional<std::string>& before,
             const std::optional<std::string>& after) {
        add(std::move(field), before.value_or(""), after.value_or(""));
    }
    bool any() const { return m_any; }

  private:
    PackageChange& m_change;
    std::string m_source;
    bool m_any = false;
};

std::string text_of(const std::optional<uint64_t>& size) {
    return size ? std::to_string(*size) : "";
}

std::string text_of(const std::optional<bool>& flag) {
    return flag ? (*flag ? "true" : "false") : "";
}

std::string algorithms(const Hashes& hashes) {
    std::vector<std::string> names;
    for (const auto& [algorithm, digest] : hashes)
        names.push_back(algorithm);
    return fmt::format("{}", fmt::join(names, " "));
}

// The file name of an sdist, or what names an archive: its name key, else the last segment of
// its URL or path, percent-decoded.
std::string archive_name(const pylock::LockArchive& archive) {
    pylock::LockWheel as_file;
    as_file.name = archive.name;
    as_file.url = archive.url;
    as_file.path = archive.path;
    return wheel_name(as_file);
}

void diff_archive(const pylock::LockArchive& b, const pylock::LockArchive& a,
                  const std::string& source, PackageChange& change) {
    SourceFields fields(change, source);
    const std::string name_b = archive_name(b);
    const std::string name_a = archive_name(a);
    if (source == "sdist")
        fields.add("name", name_b, name_a);
    fields.add("url", b.url, a.url);
    fields.add("path", b.path, a.path);
    // An archive has no file name to tell two artifacts apart: the same version with another
    // digest is a rebuild wherever it lives. An sdist, like a wheel, needs its file name kept.
    std::optional<RebuiltWheel> rebuilt;
    if (source == "archive" || name_b == name_a)
        rebuilt = compare_hashes(name_a, b.hashes, a.hashes, source);
    if (rebuilt)
        change.rebuilt.push_back(std::move(*rebuilt));
    else
        fields.add("size", text_of(b.size), text_of(a.size));
    if (common_algorithm(b.hashes, a.hashes).empty())
        fields.add("hashes", algorithms(b.hashes), algorithms(a.hashes));
    if (source == "archive")
        fields.add("subdirectory", b.subdirectory, a.subdirectory);
    if (fields.any())
        change.kinds.push_back(source == "sdist" ? PackageChangeKind::sdist_changed
                                                 : PackageChangeKind::archive_changed);
}

void diff_vcs(const pylock::LockVcs& b, const pylock::LockVcs& a, PackageChange& change) {
    SourceFields fields(change, "vcs");
    fields.add("type", b.type, a.type);
    fields.add("url", b.url, a.url);
    fields.add("path", b.path, a.path);
    fields.add("requested-revision", b.requested_revision, a.requested_revision);
    fields.add("commit-id", b.commit_id, a.commit_id);
    fields.add("subdirectory", b.subdirectory, a.subdirectory);
    if (fields.any())
        change.kinds.push_back(PackageChangeKind::vcs_changed);
}

void diff_directory(const pylock::LockDirectory& b, const pylock::LockDirectory& a,
                    PackageChange& change) {
    SourceFields fields(change, "directory");
    fields.add("path", b.path, a.path);
    fields.add("editable", text_of(b.editable), text_of(a.editable));
    fields.add("subdirectory", b.subdirectory, a.subdirectory);
    if (fields.any())
        change.kinds.push_back(PackageChangeKind::directory_changed);
}

// The sources both entries of one version have, field by field; `kinds` is kept in enum order
// by the caller, which sorts it.
void diff_sources(const pylock::LockPackage& b, const pylock::LockPackage& a,
                  PackageChange& change) {
    if (b.vcs && a.vcs)
        diff_vcs(*b.vcs, *a.vcs, change);
    if (b.directory && a.directory)
        diff_directory(*b.directory, *a.directory, change);
    if (b.archive && a.archive)
        diff_archive(*b.archive, *a.archive, "archive", change);
    if (b.sdist && a.sdist)
        diff_archive(*b.sdist, *a.sdist, "sdist", change);
}

PackageChange start_change(const pylock::LockPackage* b, const pylock::LockPackage* a) {
    PackageChange change;
    change.name = b != nullptr ? b->name : a->name;
    if (b != nullptr) {
        change.before = b->version;
        change.before_index = b->index;
        change.source_before = source_of(*b);
    }
    if (a != nullptr) {
        change.after = a->version;
        change.after_index = a->index;
        change.source_after = source_of(*a);
    }
    return change;
}

// Same version on both sides: index, wheel names and digests.
std::optional<PackageChange> diff_same_version(const pylock::LockPackage& b,
                                               const pylock::LockPackage& a) {
    PackageChange change = start_change(&b, &a);
    if (b.index != a.index)
        change.kinds.push_back(PackageChangeKind::index_moved);
    if (source_swapped(change))
        change.kinds.push_back(PackageChangeKind::source_changed);
    // wheels -> vcs says so once (source-changed), not again as every wheel gone.
    const bool only_one_has_wheels = b.wheels.empty() != a.wheels.empty();
    const bool compare_wheels = !(source_swapped(change) && only_one_has_wheels);
    using Wheels = std::map<std::string, const pylock::LockWheel*>;
    const Wheels wb = compare_wheels ? wheels_by_name(b) : Wheels{};
    const Wheels wa = compare_wheels ? wheels_by_name(a) : Wheels{};
    for (const auto& [name, wheel] : wb) {
        auto found = wa.find(name);
        if (found == wa.end()) {
            change.wheels_removed.push_back(name);
        } else if (auto rebuilt = compare_digests(name, *wheel, *found->second)) {
            change.rebuilt.push_back(std::move(*rebuilt));
        }
    }
    for (const auto& [name, wheel] : wa) {
        if (wb.count(name) == 0)
            change.wheels_added.push_back(name);
    }
    diff_sources(b, a, change);
    if (!change.rebuilt.empty())
        change.kinds.push_back(PackageChangeKind::rebuilt);
    if (!change.wheels_removed.empty() || !change.wheels_added.empty())
        change.kinds.push_back(PackageChangeKind::wheel_changed);
    std::sort(change.kinds.begin(), change.kinds.end());
    if (change.kinds.empty())
        return std::nullopt;
    return change;
}

bool same_version(const std::string& b, const std::string& a) {
    return b == a || (!b.empty() && !a.empty() && compare_versions(b, a) == 0);
}

// The entries of one name on both sides (several only in foreign locks, one per marker): equal
// versions pair first; a single leftover on each side is an upgrade or a downgrade.
void diff_name(const std::vector<const pylock::LockPackage*>& before,
               const std::vector<const pylock::LockPackage*>& after,
               std::vector<PackageChange>& out) {
    std::vector<const pylock::LockPackage*> left_before;
    std::vector<bool> used(after.size(), false);
    for (const pylock::LockPackage* b : before) {
        bool paired = false;
        for (size_t i = 0; i < after.size() && !paired; ++i) {
            if (used[i] || !same_version(b->version, after[i]->version))
                continue;
            used[i] = true;
            paired = true;
            if (auto change = diff_same_version(*b, *after[i]))
                out.push_back(std::move(*change));
        }
        if (!paired)
            left_before.push_back(b);
    }
    std::vector<const pylock::LockPackage*> left_after;
    for (size_t i = 0; i < after.size(); ++i) {
        if (!used[i])
            left_after.push_back(after[i]);
    }
    if (left_before.size() == 1 && left_after.size() == 1) {
        PackageChange change = start_change(left_before[0], left_after[0]);
        change.kinds.push_back(compare_versions(left_before[0]->version, left_after[0]->version) < 0
                                   ? PackageChangeKind::upgraded
                                   : PackageChangeKind::downgraded);
        if (source_swapped(change))
            change.kinds.push_back(PackageChangeKind::source_changed);
        out.push_back(std::move(change));
        return;
    }
    for (const pylock::LockPackage* b : left_before) {
        PackageChange change = start_change(b, nullptr);
        change.kinds.push_back(PackageChangeKind::removed);
        out.push_back(std::move(change));
    }
    for (const pylock::LockPackage* a : left_after) {
        PackageChange change = start_change(nullptr, a);
        change.kinds.push_back(PackageChangeKind::added);
        out.push_back(std::move(change));
    }
}

using ByName = std::map<std::string, std::vector<const pylock::LockPackage*>>;

ByName by_name(const pylock::Lock& lock) {
    ByName out;
    for (const auto& package : lock.packages)
        out[package.name].push_back(&package);
    return out;
}

void diff_packages(const pylock::Lock& before, const pylock::Lock& after, LockDiff& diff) {
    const ByName b = by_name(before);
    const ByName a = by_name(after);
    StringSet names;
    for (const auto& [name, list] : b)
        names.insert(name);
    for (const auto& [name, list] : a)
        names.insert(name);
    const std::vector<const pylock::LockPackage*> none;
    for (const auto& name : names) {
        auto fb = b.find(name);
        auto fa = a.find(name);
        std::vector<PackageChange>& group =
            std::find(k_torch_group.begin(), k_torch_group.end(), name) != k_torch_group.end()
                ? diff.torch
                : (name.rfind("nvidia-", 0) == 0 ? diff.nvidia : diff.packages);
        diff_name(fb == b.end() ? none : fb->second, fa == a.end() ? none : fa->second, group);
    }
}

// ---- sonames ----

struct SonameTables {
    std::map<std::string, StringSet> providers;  // soname -> distributions
    std::map<std::string, StringSet> needers;
    std::vector<uint64_t> glibc, glibcxx;  // highest components; empty when none
    std::string glibc_text, glibcxx_text;
    std::set<int> cuda_majors;
};

// "GLIBC_2.17" with prefix "GLIBC_" -> {2, 17}; nullopt for anything else ("GLIBC_PRIVATE").
std::optional<std::vector<uint64_t>> version_components(std::string_view text,
                                                        std::string_view prefix) {
    if (text.substr(0, prefix.size()) != prefix || text.size() == prefix.size())
        return std::nullopt;
    std::vector<uint64_t> out;
    std::string_view rest = text.substr(prefix.size());
    while (true) {
        const size_t dot = rest.find('.');
        const std::string_view part = rest.substr(0, dot);
        uint64_t value = 0;
        auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
        if (part.empty() || error != std::errc() || end != part.data() + part.size())
            return std::nullopt;
        out.push_back(value);
        if (dot == std::string_view::npos)
            return out;
        rest = rest.substr(dot + 1);
    }
}

void keep_highest(const std::string& text, std::string_view prefix, std::vector<uint64_t>& best,
                  std::string& best_text) {
    auto components = version_components(text, prefix);
    if (components && (best_text.empty() || best < *components)) {
        best = std::move(*components);
        best_text = text;
    }
}

SonameTables soname_tables(const pylock::Lock& lock) {
    SonameTables t;
    for (const auto& package : lock.packages) {
        if (!package.rootlock)
            continue;
        for (const auto& soname : package.rootlock->provides) {
            t.providers[soname].insert(package.name);
            if (auto member = check::cuda_membership(soname))
                t.cuda_majors.insert(member->cuda_major);
        }
        for (const auto& soname : package.rootlock->needs)
            t.needers[soname].insert(package.name);
        for (const auto& version : package.rootlock->needs_versions) {
            keep_highest(version, "GLIBC_", t.glibc, t.glibc_text);
            keep_highest(version, "GLIBCXX_", t.glibcxx, t.glibcxx_text);
        }
    }
    return t;
}

std::vector<std::string> listed(const StringSet& set) {
    return {set.begin(), set.end()};
}

void diff_table(const std::map<std::string, StringSet>& b,
                const std::map<std::string, StringSet>& a, SonameChangeKind added,
                SonameChangeKind removed, bool report_moves, std::vector<SonameChange>& out) {
    for (const auto& [soname, who] : b) {
        auto found = a.find(soname);
        if (found == a.end())
            out.push_back(SonameChange{soname, removed, listed(who), {}});
        else if (report_moves && found->second != who)
            out.push_back(SonameChange{soname, SonameChangeKind::provider_moved, listed(who),
                                       listed(found->second)});
    }
    for (const auto& [soname, who] : a) {
        if (b.count(soname) == 0)
            out.push_back(SonameChange{soname, added, {}, listed(who)});
    }
}

SonameDiff diff_sonames(const pylock::Lock& before, const pylock::Lock& after) {
    const SonameTables b = soname_tables(before);
    const SonameTables a = soname_tables(after);
    SonameDiff out;
    diff_table(b.providers, a.providers, SonameChangeKind::provided_added,
               SonameChangeKind::provided_removed, true, out.changes);
    diff_table(b.needers, a.needers, SonameChangeKind::needed_added,
               SonameChangeKind::needed_removed, false, out.changes);
    std::sort(out.changes.begin(), out.changes.end(),
              [](const SonameChange& x, const SonameChange& y) {
                  return std::tie(x.soname, x.kind) < std::tie(y.soname, y.kind);
              });
    if (b.glibc_text != a.glibc_text)
        out.glibc = FieldChange{"GLIBC", b.glibc_text, a.glibc_text};
    if (b.glibcxx_text != a.glibcxx_text)
        out.glibcxx = FieldChange{"GLIBCXX", b.glibcxx_text, a.glibcxx_text};
    std::set_difference(a.cuda_majors.begin(), a.cuda_majors.end(), b.cuda_majors.begin(),
                        b.cuda_majors.end(), std::back_inserter(out.cuda_majors_added));
    std::set_difference(b.cuda_majors.begin(), b.cuda_majors.end(), a.cuda_majors.begin(),
                        a.cuda_majors.end(), std::back_inserter(out.cuda_majors_removed));
    return out;
}

// ---- GPU architectures ----

bool records_architectures(const pylock::Lock& lock) {
    return std::any_of(lock.packages.begin(), lock.packages.end(), [](const auto& package) {
        return package.rootlock && !package.rootlock->architectures.empty();
    });
}

// name -> (version, architectures) of the packages that carry rootlock's data.
std::map<std::string, std::pair<std::string, std::vector<std::string>>> architectures_by_name(
    const pylock::Lock& lock) {
    std::map<std::string, std::pair<std::string, std::vector<std::string>>> out;
    for (const auto& package : lock.packages) {
        if (package.rootlock)
            out[package.name] = {package.version, package.rootlock->architectures};
    }
    return out;
}

// Names in the order of `order` (one side's SmName-ordered list) that `other` lacks.
std::vector<std::string> missing_from(const std::vector<std::string>& order,
                                      const std::vector<std::string>& other) {
    std::vector<std::string> out;
    for (const auto& name : order) {
        if (std::find(other.begin(), other.end(), name) == other.end())
            out.push_back(name);
    }
    return out;
}

std::vector<ArchitectureChange> diff_architectures(const pylock::Lock& before,
                                                   const pylock::Lock& after) {
    std::vector<ArchitectureChange> out;
    if (!records_architectures(before) || !records_architectures(after))
        return out;
    const auto b = architectures_by_name(before);
    const auto a = architectures_by_name(after);
    for (const auto& [name, was] : b) {
        auto found = a.find(name);
        if (found == a.end())
            continue;
        const auto& now = found->second;
        ArchitectureChange change{name, was.first, now.first, missing_from(now.second, was.second),
                                  missing_from(was.second, now.second)};
        if (!change.added.empty() || !change.removed.empty())
            out.push_back(std::move(change));
    }
    return out;
}

// ---- recipe ----

void diff_sets(std::string field, const StringSet& b, const StringSet& a,
               std::vector<RecipeChange>& out) {
    RecipeChange change;
    change.field = std::move(field);
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(change.added));
    std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(change.removed));
    if (!change.added.empty() || !change.removed.empty())
        out.push_back(std::move(change));
}

StringSet environment_set(const pylock::LockRootlockData& data) {
    StringSet out;
    for (const auto& [name, value] : data.environment)
        out.insert(name + "=" + value);
    return out;
}

void diff_files(const pylock::LockRootlockData& b, const pylock::LockRootlockData& a,
                std::vector<RecipeChange>& out) {
    const std::map<std::string, std::string> fb(b.files.begin(), b.files.end());
    const std::map<std::string, std::string> fa(a.files.begin(), a.files.end());
    RecipeChange change;
    change.field = "files";
    for (const auto& [path, content] : fb) {
        auto found = fa.find(path);
        if (found == fa.end())
            change.removed.push_back(path);
        else if (found->second != content)
            change.changed.push_back(path);
    }
    for (const auto& [path, content] : fa) {
        if (fb.count(path) == 0)
            change.added.push_back(path);
    }
    if (!change.added.empty() || !change.removed.empty() || !change.changed.empty())
        out.push_back(std::move(change));
}

// Library paths are searched in order, so a kept path at another position is a change.
void diff_library_paths(const std::vector<std::string>& b, const std::vector<std::string>& a,
                        std::vector<RecipeChange>& out) {
    const StringSet sb(b.begin(), b.end());
    const StringSet sa(a.begin(), a.end());
    RecipeChange change;
    change.field = "library-paths";
    auto kept = [](const std::vector<std::string>& list, const StringSet& other) {
        std::vector<std::string> result;
        StringSet seen;
        for (const auto& path : list) {
            if (other.count(path) != 0 && seen.insert(path).second)
                result.push_back(path);
        }
        return result;
    };
    const std::vector<std::string> kb = kept(b, sa);
    const std::vector<std::string> ka = kept(a, sb);
    for (size_t i = 0; i < ka.size(); ++i) {
        if (kb[i] != ka[i])
            change.changed.push_back(ka[i]);
    }
    for (const auto& path : a) {
        if (sb.count(path) == 0 &&
            std::find(change.added.begin(), change.added.end(), path) == change.added.end())
            change.added.push_back(path);
    }
    for (const auto& path : b) {
        if (sa.count(path) == 0 &&
            std::find(change.removed.begin(), change.removed.end(), path) == change.removed.end())
            change.removed.push_back(path);
    }
    if (!change.added.empty() || !change.removed.empty() || !change.changed.empty())
        out.push_back(std::move(change));
}

std::vector<RecipeChange> diff_recipe(const pylock::LockRootlockData& b,
                                      const pylock::LockRootlockData& a) {
    std::vector<RecipeChange> out;
    diff_sets("requirements", StringSet(b.requirements.begin(), b.requirements.end()),
              StringSet(a.requirements.begin(), a.requirements.end()), out);
    diff_sets("environment", environment_set(b), environment_set(a), out);
    diff_library_paths(b.library_paths, a.library_paths, out);
    diff_files(b, a, out);
    return out;
}

}  // namespace

std::string to_string(PackageChangeKind kind) {
    switch (kind) {
        case PackageChangeKind::added:
            return "added";
        case PackageChangeKind::removed:
            return "removed";
        case PackageChangeKind::upgraded:
            return "upgraded";
        case PackageChangeKind::downgraded:
            return "downgraded";
        case PackageChangeKind::index_moved:
            return "index-moved";
        case PackageChangeKind::source_changed:
            return "source-changed";
        case PackageChangeKind::rebuilt:
            return "rebuilt";
        case PackageChangeKind::wheel_changed:
            return "wheel-changed";
        case PackageChangeKind::vcs_changed:
            return "vcs-changed";
        case PackageChangeKind::directory_changed:
            return "directory-changed";
        case PackageChangeKind::archive_changed:
            return "archive-changed";
        case PackageChangeKind::sdist_changed:
            return "sdist-changed";
    }
    return "unknown";
}

std::string to_string(SonameChangeKind kind) {
    switch (kind) {
        case SonameChangeKind::provided_added:
            return "provided-added";
        case SonameChangeKind::provided_removed:
            return "provided-removed";
        case SonameChangeKind::needed_added:
            return "needed-added";
        case SonameChangeKind::needed_removed:
            return "needed-removed";
        case SonameChangeKind::provider_moved:
            return "provider-moved";
    }
    return "unknown";
}

LockDiff diff_locks(const pylock::Lock& before, const pylock::Lock& after) {
    const pylock::LockRootlockData empty;
    const pylock::LockRootlockData& b = before.rootlock ? *before.rootlock : empty;
    const pylock::LockRootlockData& a = after.rootlock ? *after.rootlock : empty;
    LockDiff diff;
    diff.target = diff_target(b.target, a.target);
    diff.base = diff_base(b.base, a.base);
    diff.debian = diff_debs(b.base, a.base);
    diff_packages(before, after, diff);
    diff.sonames = diff_sonames(before, after);
    diff.gpu_architectures = diff_architectures(before, after);
    diff.recipe = diff_recipe(b, a);
    return diff;
}

}  // namespace rootlock::diff
