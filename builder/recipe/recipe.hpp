// The recipe: a declarative TOML description of one image (base, Python, torch build, CUDA
// driver, indexes, requirements). parse_recipe() reads it and reports every problem at once.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.hpp"

namespace rootlock::recipe {

struct ImageSection {
    std::string name;    // kebab-case
    std::string output;  // image file; default "images/<name>.tar.zst"
    // An OCI image's config Entrypoint and Cmd, as written; empty: not set (the base's shell).
    std::vector<std::string> entrypoint;
    std::vector<std::string> cmd;
};

// A further archive a Debian base draws from (bookworm-security, bookworm-updates, a vendor's).
struct DebianArchive {
    std::string name;                             // kebab-case, unique within the base
    std::string url;                              // the mirror root (holds dists/ and pool/)
    std::string suite;                            // e.g. "bookworm-security"
    std::vector<std::string> components{"main"};  // e.g. ["main", "non-free-firmware"]
    std::string keyring;   // OpenPGP keyring file (binary, as gpgv reads it); "" = Debian's
    std::string snapshot;  // snapshot base ("https://snapshot.debian.org/archive/debian"), or ""
};

// A Debian base: resolved at lock time into exact .debs, assembled with mmdebstrap from them.
struct DebianBase {
    std::string suite;                // e.g. "bookworm"
    std::string mirror;               // empty: mmdebstrap's default mirror
    std::string variant = "minbase";  // an mmdebstrap variant
    // The Debian architecture of the root ("amd64", "arm64"); a foreign one needs qemu-user for
    // every variant but extract (fetch/emulation.hpp says what to enable).
    std::string architecture = "amd64";
    // Every architecture the recipe names (`arch = ["amd64", "arm64"]`), in its order, distinct;
    // `architecture` is the first. A lock is made for one: expand_architectures()
    // (recipe_architectures.hpp) gives one recipe per entry, each naming only its own.
    std::vector<std::string> architectures{"amd64"};
    std::vector<std::string> include;  // extra Debian packages, "name" or "name=version"
    std::vector<std::string> components{"main"};
    std::string keyring;   // the primary archive's keyring; "" = Debian's archive keyring
    std::string snapshot;  // the primary archive's snapshot base, or ""
    std::vector<DebianArchive> archives;  // further archives, in priority order
};

// Exactly one of `tarball` (with its sha256) and `debian` is set in a parsed recipe.
struct BaseSection {
    std::optional<std::string> tarball;  // http(s):// or file:// URL, or a local path
    std::string sha256;                  // 64 lowercase hex digits when tarball is set
    std::optional<DebianBase> debian;
};

struct PythonSection {
    std::string version;             // "3.N"
    std::string venv = "/opt/venv";  // absolute path inside the image
    // compile-bytecode: .pyc files for the venv's site-packages, as unchecked-hash pycs.
    bool compile_bytecode = false;
};

struct TorchSection {
    std::string version;  // e.g. "2.8.0", no local version
    std::string cuda;     // "MAJOR.MINOR", e.g. "12.8" -> the +cu128 build
};

struct CudaSection {
    std::string driver;  // the host's driver, e.g. "570.133.07"
    // The GPUs the image must run on, as compute capabilities ("8.6", "9.0") in the order
    // written, unique: declared, never probed, so that `lock` proves the device code covers
    // them before any host exists.
    std::vector<std::string> gpus;
};

struct IndexSection {
    std::string name;                   // kebab-case, unique
    std::string url;                    // http://, https:// or file://
    std::vector<std::string> packages;  // normalised names with '*' globs; empty: any package
};

struct Recipe {
    ImageSection image;
    BaseSection base;
    PythonSection python;
    std::optional<TorchSection> torch;
    std::optional<CudaSection> cuda;        // required when torch is set
    std::vector<IndexSection> indexes;      // in the order written; earlier wins
    std::vector<std::string> requirements;  // [packages] requires, as written
    std::vector<std::pair<std::string, std::string>> environment;  // sorted by variable name
    std::vector<std::string> host_provides;  // sonames beyond the default host-provided set
    // [loader] library-paths: directories for /etc/ld.so.conf.d/rootlock.conf, in the order
    // written (it is ldconfig's order); absolute and canonical, unique.
    std::vector<std::string> library_paths;
    // [files]: absolute canonical path -> content, sorted by path; written 0644, owned by root.
    std::vector<std::pair<std::string, std::string>> files;
};

// Every problem of one recipe: each error's where is "file:line:col", sorted by position.
struct RecipeParse {
    std::optional<Recipe> recipe;  // set only when errors is empty
    std::vector<util::Error> errors;
};

// Parses and validates a recipe, collecting all errors. `file_name` goes into every location.
RecipeParse parse_recipe_all(std::string_view text, const std::string& file_name);

// The same as one Result: on failure, the Error's where is the first error's location and
// text() is every error's "file:line:col: problem", one per line.
util::Result<Recipe> parse_recipe(std::string_view text, const std::string& file_name);

// Reads `path` and parses it; an unreadable file is one error located at the path.
RecipeParse parse_recipe_file(const std::string& path);

}  // namespace rootlock::recipe
