// Two locks compared by meaning (issue 5, `rootlock diff A B`): target, base, the base's .debs,
// torch, the nvidia-* set, other packages, sonames and the recipe, each sorted; three renderings.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pylock/pylock.hpp"

namespace rootlock::diff {

// One changed scalar of [tool.rootlock]: a target or base field. "" stands for absent.
struct FieldChange {
    std::string field;  // target: python, glibc, arch, cuda-major, driver, torch (the build), gpus;
                        // base: kind, url, path, sha256, suite, mirror, variant, include, then
                        // "archive NAME" (added or removed) and "archive NAME url" and the like
    std::string before;
    std::string after;

    bool operator==(const FieldChange&) const = default;
};

// In the order a package's kinds are listed and rendered.
enum class PackageChangeKind {
    added,
    removed,
    upgraded,
    downgraded,
    index_moved,     // same version, another index URL
    source_changed,  // another kind of source (wheels -> vcs), whatever the versions
    // same version, same wheel or sdist file name (or the archive), another digest: the loud one
    rebuilt,
    wheel_changed,      // same version, another set of wheel file names (another platform tag)
    vcs_changed,        // same version, a [packages.vcs] field differs (commit-id, url, ...)
    directory_changed,  // same version, a [packages.directory] field differs
    archive_changed,    // same version, a [packages.archive] field differs (url, path, size, ...)
    sdist_changed,      // same version, a [packages.sdist] field differs (name, url, size, ...)
};

// "added", "removed", "upgraded", "downgraded", "index-moved", "source-changed", "rebuilt",
// "wheel-changed", "vcs-changed", "directory-changed", "archive-changed", "sdist-changed".
std::string to_string(PackageChangeKind kind);

// A wheel or sdist with the same file name in both locks, or the archive of both, and a
// different digest.
struct RebuiltWheel {
    std::string wheel;      // file name (an archive's: the last segment of its url or path)
    std::string algorithm;  // "sha256" when both locks have it, else the first algorithm in common
    std::string before;     // lowercase hex
    std::string after;
    std::string kind = "wheel";  // "wheel", "sdist" or "archive"

    bool operator==(const RebuiltWheel&) const = default;
};

// One field of a package's vcs, directory, archive or sdist that differs between two entries of
// the same version. "" stands for absent; editable reads "true" or "false".
struct SourceFieldChange {
    std::string source;  // "vcs", "directory", "archive", "sdist"
    // vcs: type, url, path, requested-revision, commit-id, subdirectory; directory: path,
    // editable, subdirectory; archive: url, path, size, hashes, subdirectory; sdist: name, url,
    // path, size, hashes. `hashes` (the algorithms, joined by spaces) only when the two share
    // none, so that no digest can be compared; size only when the digest did not change.
    std::string field;
    std::string before;
    std::string after;

    bool operator==(const SourceFieldChange&) const = default;
};

struct PackageChange {
    std::string name;
    std::optional<std::string> before;      // version; nullopt when added
    std::optional<std::string> after;       // version; nullopt when removed
    std::vector<PackageChangeKind> kinds;   // never empty, in enum order
    std::string before_index, after_index;  // the entries' index URLs ("" when absent)
    std::vector<std::string> wheels_removed, wheels_added;  // file names; for wheel_changed
    std::vector<RebuiltWheel> rebuilt;                      // for rebuilt
    // The sources of each side ("wheels", "sdist, wheels", "vcs", "directory", "archive"; ""
    // for a side without the package or an entry with no source, as freeze writes them).
    std::string source_before, source_after;
    std::vector<SourceFieldChange> source_fields;  // for vcs-, directory-, archive-, sdist-changed

    bool operator==(const PackageChange&) const = default;
};

enum class SonameChangeKind {
    provided_added,    // no package provided it before
    provided_removed,  // no package provides it now
    needed_added,
    needed_removed,
    provider_moved,  // provided in both, by another set of distributions
};

// "provided-added", "provided-removed", "needed-added", "needed-removed", "provider-moved".
std::string to_string(SonameChangeKind kind);

struct SonameChange {
    std::string soname;
    SonameChangeKind kind = SonameChangeKind::provided_added;
    // The distributions providing (provided-*, provider-moved) or needing (needed-*) the soname,
    // sorted; empty on the side where it is absent.
    std::vector<std::string> before;
    std::vector<std::string> after;

    bool operator==(const SonameChange&) const = default;
};

// The soname tables of the packages carrying [packages.tool.rootlock] (foreign locks have none).
struct SonameDiff {
    std::vector<SonameChange> changes;  // sorted by (soname, kind)
    // The highest "GLIBC_x.y" / "GLIBCXX_x.y.z" over every package's needs_versions, compared by
    // numeric components; set only when it changed ("" stands for none needed).
    std::optional<FieldChange> glibc;    // field "GLIBC"
    std::optional<FieldChange> glibcxx;  // field "GLIBCXX"
    // CUDA majors of the provided sonames (check::cuda_membership) that appear or vanish.
    std::vector<int> cuda_majors_added;
    std::vector<int> cuda_majors_removed;

    bool empty() const {
        return changes.empty() && !glibc && !glibcxx && cuda_majors_added.empty() &&
               cuda_majors_removed.empty();
    }
    bool operator==(const SonameDiff&) const = default;
};

// A [tool.rootlock] list of the recipe that differs: requirements and environment as sets
// ("NAME=value" entries), files by path, library-paths in order.
struct RecipeChange {
    std::string field;  // "requirements", "environment", "library-paths", "files"
    std::vector<std::string> added;
    std::vector<std::string> removed;
    // files: paths whose content changed; library-paths: paths kept at another position among
    // the kept ones. Always empty for requirements and environment.
    std::vector<std::string> changed;

    bool operator==(const RecipeChange&) const = default;
};

// In the order a .deb's kinds are listed in docs/diff.md; each change has exactly one.
enum class DebChangeKind {
    added,
    removed,
    upgraded,    // by dpkg's version order
    downgraded,  // by dpkg's version order
    rebuilt,     // same name, architecture and version, another sha256: the loud one
    moved,       // same version and sha256, another archive or pool file name: minor
};

// "added", "removed", "upgraded", "downgraded", "rebuilt", "moved".
std::string to_string(DebChangeKind kind);

// One .deb of a Debian base that differs. Fields of a side the .deb is absent from are "" (the
// version nullopt).
struct DebChange {
    std::string name;
    std::string architecture;
    DebChangeKind kind = DebChangeKind::added;
    std::optional<std::string> before;          // version; nullopt when added
    std::optional<std::string> after;           // version; nullopt when removed
    std::string archive_before, archive_after;  // the .deb's archive name
    // That archive's suite, as the same lock's [tool.rootlock.base] archives list it; "" when the
    // lock does not list the archive.
    std::string suite_before, suite_after;
    std::string filename_before, filename_after;  // pool paths
    std::string sha256_before, sha256_after;
    // The after side comes from an archive whose suite ends in "-security": a security update is
    // known by the suite it came from, not by its version text.
    bool security = false;

    bool operator==(const DebChange&) const = default;
};

// A package in both locks whose device code covers other GPU architectures ("torch 2.10.0 ->
// 2.11.0 drops sm_70"), from [packages.tool.rootlock] architectures. Compared only where both
// locks record architectures (locks before they were recorded have none anywhere).
struct ArchitectureChange {
    std::string name;
    std::string before;                // version
    std::string after;                 // version
    std::vector<std::string> added;    // nvcc names ("sm_120", "compute_120"), in SmName order
    std::vector<std::string> removed;  // likewise

    bool operator==(const ArchitectureChange&) const = default;
};

struct LockDiff {
    std::vector<FieldChange> target;    // python, glibc, arch, cuda-major, driver, torch, gpus
    std::vector<FieldChange> base;      // kind, url, path, sha256, suite, mirror, variant, include,
                                        // then the archives by name
    std::vector<DebChange> debian;      // the base's .debs; by (name, architecture)
    std::vector<PackageChange> torch;   // torch, torchvision, torchaudio, triton; by name
    std::vector<PackageChange> nvidia;  // names starting with "nvidia-"; by name
    std::vector<PackageChange> packages;  // every other package; by name
    SonameDiff sonames;
    std::vector<ArchitectureChange> gpu_architectures;  // by name
    std::vector<RecipeChange> recipe;  // requirements, environment, library-paths, files

    bool same() const {
        return target.empty() && base.empty() && debian.empty() && torch.empty() &&
               nvidia.empty() && packages.empty() && sonames.empty() && gpu_architectures.empty() &&
               recipe.empty();
    }
    bool operator==(const LockDiff&) const = default;
};

// Never fails: a part missing from a lock (foreign locks have no [tool.rootlock]) reads as empty.
// Package order, dependency order, formatting and wheel URLs (when the name and digest agree)
// make no difference; neither do an archive's Release date (it changes with every relock) nor the
// order of .debs.
LockDiff diff_locks(const pylock::Lock& before, const pylock::Lock& after);

// For a terminal: a header per non-empty group (target, base, debian, torch, nvidia, packages,
// sonames, gpu architectures, recipe; the torch build is shown under torch), one line per change,
// "+" added, "-" removed, "~" changed, "!" rebuilt. ANSI colours only when `colour`. Equal locks
// give the single line "no difference in meaning".
std::string render_diff_text(const LockDiff& diff, bool colour);

// The stable JSON shape documented in docs/diff.md, 2-space indent, ending in "\n".
std::string render_diff_json(const LockDiff& diff);

// For a pull request: "### Lock changes" and a table per non-empty group, rebuilt artifacts (wheels
// and .debs) in bold under a warning line.
std::string render_diff_markdown(const LockDiff& diff);

}  // namespace rootlock::diff
