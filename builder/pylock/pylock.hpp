// The PEP 751 lock (pylock.<name>.toml) as plain structs, with rootlock's own data under
// [tool.rootlock] and [packages.tool.rootlock]; the canonical writer and the toml++ reader.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.hpp"

namespace rootlock::pylock {

// One entry of [[packages]].wheels. PEP 751 asks for url or path, and hashes; the rest is optional.
struct LockWheel {
    std::string name;  // wheel file name, decoded ("torch-2.8.0+cu128-...whl"); "" when absent
    std::string url;   // absolute URL, or "" when path is set
    std::string path;  // local path alternative
    std::optional<uint64_t> size;  // at most INT64_MAX (TOML integers are signed 64-bit)
    // RFC 3339 as given by the index, kept verbatim; written as a TOML date-time literal (PEP 751
    // asks for one), so it must be one (is_toml_date_time), else the writer leaves it out.
    std::optional<std::string> upload_time;
    std::map<std::string, std::string> hashes;  // algorithm -> lowercase hex; never empty

    bool operator==(const LockWheel&) const = default;
};

// PEP 751's other sources of a package, kept so that `diff` can compare them; rootlock's own
// locks never write them. [packages.vcs]: a commit of a repository.
struct LockVcs {
    std::string type;                               // "git", "hg", "bzr", "svn"
    std::string url;                                // the repository, or "" when path is set
    std::string path;                               // a local repository
    std::optional<std::string> requested_revision;  // the branch or tag asked for
    std::string commit_id;                          // the exact commit (required)
    std::optional<std::string> subdirectory;

    bool operator==(const LockVcs&) const = default;
};

// [packages.directory]: a local source tree.
struct LockDirectory {
    std::string path;
    std::optional<bool> editable;
    std::optional<std::string> subdirectory;

    bool operator==(const LockDirectory&) const = default;
};

// [packages.archive] (a source or wheel archive at a URL, as a direct reference names one) and
// [packages.sdist]; `name` is the sdist's file name and is never set for an archive.
struct LockArchive {
    std::string name;  // sdist only: file name; "" when absent
    std::string url;
    std::string path;
    std::optional<uint64_t> size;            // at most INT64_MAX
    std::optional<std::string> upload_time;  // as for LockWheel
    // algorithm -> lowercase hex. PEP 751 forbids an empty table, but uv writes `hashes = {}`
    // for files from a find-links page: only read_pylock_lenient keeps such an entry.
    std::map<std::string, std::string> hashes;
    std::optional<std::string> subdirectory;  // archive only

    bool operator==(const LockArchive&) const = default;
};

// An entry of [[packages]].dependencies: enough to find the package entry it names.
struct PackageDependency {
    std::string name;
    std::optional<std::string> version;

    bool operator==(const PackageDependency&) const = default;
};

// [packages.tool.rootlock]
struct PackageRootlockData {
    std::vector<std::string> provides;  // sonames its wheel provides, sorted, unique
    std::vector<std::string> needs;     // sonames its ELF objects need from outside, sorted, unique
    bool requested = false;             // a direct requirement of the recipe
    // Symbol versions those objects need from outside ("GLIBC_2.17", "GLIBCXX_3.4.29"), sorted,
    // unique; empty in locks written before rootlock recorded them.
    std::vector<std::string> needs_versions;
    // The wheel was yanked (PEP 592) and chosen for an exact pin: the index's reason, "" when it
    // gave none; nullopt when not yanked. Written `yanked = "reason"` or `yanked = true` (PEP 751
    // has no field for it).
    std::optional<std::string> yanked;
    // The nvcc names of the device code its objects carry ("sm_75", "sm_90a", "compute_90"), in
    // gpu::SmName order, unique; empty for a wheel without any, and in locks written before
    // rootlock recorded them.
    std::vector<std::string> architectures;

    bool operator==(const PackageRootlockData&) const = default;
};

struct LockPackage {
    std::string name;     // normalised (PEP 503)
    std::string version;  // normalised PEP 440 text; "" when absent (PEP 751 allows that)
    std::optional<std::string> marker;
    std::optional<std::string> requires_python;
    std::vector<PackageDependency> dependencies;  // sorted by (name, version)
    std::string index;                            // the index URL it came from, or ""
    // PEP 751 allows one of vcs, directory and archive, or sdist and wheels; foreign locks only.
    std::optional<LockVcs> vcs;
    std::optional<LockDirectory> directory;
    std::optional<LockArchive> archive;
    std::optional<LockArchive> sdist;
    // rootlock locks exactly one wheel per package for the target; the reader accepts several.
    std::vector<LockWheel> wheels;
    std::optional<PackageRootlockData> rootlock;

    bool operator==(const LockPackage&) const = default;
};

struct LockTarget {
    std::string python;       // "3.11"
    std::string python_full;  // "3.11.2" when known, else ""
    std::string glibc;        // "2.36"
    std::string arch;         // "x86_64"
    std::string cuda;         // "12.8" or ""
    std::string driver;       // "570.133.07" or ""
    std::string torch;        // "2.8.0+cu128" or ""
    // The recipe's [cuda] gpus: compute capabilities the image must run on ("8.6"), in the
    // recipe's order; written only when there are some.
    std::vector<std::string> gpus;

    bool operator==(const LockTarget&) const = default;
};

// An archive a Debian base was resolved against: where its .debs are, and what its signed
// Release said when the lock was made (the date picks the snapshot that still has them).
struct LockDebArchive {
    std::string name;   // "debian" for the recipe's mirror, else the recipe's archive name
    std::string url;    // mirror root
    std::string suite;  // "bookworm"
    std::vector<std::string> components;
    std::string date;      // the Release's Date as seconds since the epoch, as text ("1762077600")
    std::string snapshot;  // snapshot base URL, or ""
    std::string keyring;   // the keyring file as the recipe named it, or "" (Debian's)
    std::string keyring_sha256;  // of its bytes, or ""

    bool operator==(const LockDebArchive&) const = default;
};

// One .deb of a Debian base, exactly as its archive's Packages index listed it.
struct LockDeb {
    std::string name, version, architecture;
    std::string archive;    // a LockDebArchive name
    std::string component;  // "main"
    std::string filename;   // pool path relative to the archive root
    uint64_t size = 0;      // at most INT64_MAX
    std::string sha256;
    std::string source, source_version;  // for the SBOM; "" when equal to name / version

    bool operator==(const LockDeb&) const = default;
};

struct LockBase {
    std::string kind;    // "tarball" or "debian"
    std::string url;     // tarball URL, or ""
    std::string path;    // tarball local path, or ""
    std::string sha256;  // of the tarball; lowercase hex or ""
    std::optional<uint64_t> size;
    std::string suite, mirror, variant;    // debian
    std::string architecture;              // debian: "" is amd64 (locks before issue 15)
    std::vector<std::string> include;      // debian, sorted
    std::vector<LockDebArchive> archives;  // debian, in priority order (the recipe's mirror first)
    std::vector<LockDeb> debs;             // debian, sorted by (name, architecture)

    bool operator==(const LockBase&) const = default;
};

struct LockIndex {
    std::string name, url;
    std::vector<std::string> packages;  // in the recipe's order

    bool operator==(const LockIndex&) const = default;
};

// A closure problem recorded by --allow-broken.
struct LockProblem {
    std::string kind;
    std::string subject;
    std::string message;

    auto operator<=>(const LockProblem&) const = default;
};

// [tool.rootlock]
struct LockRootlockData {
    std::string recipe;         // recipe file name as given on the command line, relative
    std::string recipe_sha256;  // digest of the recipe bytes, lowercase hex
    std::string image_name, output, venv;
    uint64_t source_date_epoch = 0;  // at most INT64_MAX
    LockTarget target;
    LockBase base;
    std::vector<LockIndex> indexes;         // in the recipe's order (it is the priority)
    std::vector<std::string> requirements;  // direct requirements, normalised PEP 508, in order
    std::vector<std::pair<std::string, std::string>> environment;  // sorted by name, then value
    std::vector<std::string> host_provides;                        // sorted, unique
    std::vector<std::string> library_paths;  // the recipe's [loader] library-paths, in order
    std::vector<std::pair<std::string, std::string>> files;  // [files]: path -> content, sorted
    bool compile_bytecode = false;                           // the recipe's python.compile-bytecode
    std::vector<std::string> entrypoint;  // the recipe's [image] entrypoint (OCI), as written
    std::vector<std::string> cmd;         // the recipe's [image] cmd (OCI), as written
    // Set by `rootlock freeze` (the environment's prefix): the lock describes a live environment,
    // so it has no recipe and no base.
    std::string frozen_from;
    bool closure_ok = true;
    uint64_t closure_objects = 0;       // at most INT64_MAX
    std::vector<LockProblem> problems;  // sorted, unique

    bool operator==(const LockRootlockData&) const = default;
};

struct Lock {
    std::string lock_version = "1.0";
    std::string created_by = "rootlock";
    std::optional<std::string> requires_python;  // "==3.11.*" for ours
    std::vector<std::string> environments;       // markers, e.g. the target's; in order
    std::vector<LockPackage> packages;           // sorted by (name, PEP 440 version)
    std::optional<LockRootlockData> rootlock;    // absent in foreign locks

    bool operator==(const Lock&) const = default;
};

// The lock with every "sorted"/"unique" promise above kept: what write_pylock writes, so that
// read_pylock(write_pylock(l)) == canonicalize(l).
Lock canonicalize(Lock lock);

// The canonical bytes of canonicalize(lock): a fixed header comment, PEP 751's key order, LF line
// ends, wheels and dependencies as multi-line arrays of inline tables (the layout uv writes).
// Never fails; an upload_time that is not a TOML date-time is left out.
std::string write_pylock(const Lock& lock);

// Reads a lock rootlock wrote, or a foreign PEP 751 lock (keeping what the model holds).
// Errors read "FILE:LINE:COL: problem"; the first problem in the file is reported, except that
// wheels, sdists and archives with `hashes = {}` are refused together, each named: "FILE:L:C: 2
// artifacts have an empty hashes table (PEP 751 requires a hash, and an unverified file is not
// installed): foo 1.0: wheel foo-1.0-py3-none-any.whl (6:33), bar 2.0: sdist bar-2.0.tar.gz
// (9:1)". Anything that installs from a lock reads it this way.
util::Result<Lock> read_pylock(std::string_view text, const std::string& file_name);

// A lock read by read_pylock_lenient, with what it let through.
struct LenientLock {
    Lock lock;
    // One per artifact with `hashes = {}` (uv writes them for wheels of a find-links page), in
    // file order: "FILE:L:C: foo 1.0: wheel foo-1.0-py3-none-any.whl has an empty hashes table
    // (PEP 751 requires a hash; it cannot be verified)". The artifact is kept, with no hashes.
    std::vector<std::string> warnings;
};

// As read_pylock, but for commands that only read a lock (diff, freeze --base-from, check
// --lock): an empty hashes table is a warning, not an error.
util::Result<LenientLock> read_pylock_lenient(std::string_view text, const std::string& file_name);

// Reads the file at `path` and parses it as above; an unreadable file is "PATH: strerror".
util::Result<Lock> read_pylock_file(const std::string& path);
util::Result<LenientLock> read_pylock_file_lenient(const std::string& path);

// An upload-time ("2025-08-06T18:30:12.345678Z", UTC) as seconds since the epoch, fractions
// dropped; nullopt for anything else (upload_time.cpp).
std::optional<uint64_t> upload_time_seconds(const std::string& text);

}  // namespace rootlock::pylock
