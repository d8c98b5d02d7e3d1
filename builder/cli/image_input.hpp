// What check, diff and the other root-reading commands accept as a root: a directory, a rootfs
// tarball, an OCI image (layout or archive, "PATH:REF", "PATH@sha256:..."), read in place, or
// an image in a registry ("docker://host[:port]/name:tag"), its blobs pulled into the cache.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fs/file_tree.hpp"
#include "fs/tar_tree.hpp"
#include "util/byte_source.hpp"
#include "util/result.hpp"

namespace rootlock::cli {

struct InputOptions {
    std::string platform;  // "OS/ARCH[/VARIANT]" for a multi-arch index; "" = linux/amd64
    bool symbols = true;   // read ELF symbol tables while streaming (check needs them)
    std::vector<std::string> retained = fs::default_retained_patterns();
    bool insecure = false;  // a registry over plain HTTP
    std::string cache_dir;  // where pulled blobs go; "" = the download cache
    // Shown each ELF member of a tarball or image as it streams (fs::TarOptions::observe_elf).
    std::function<std::unique_ptr<util::StreamObserver>(const std::string&, uint64_t)> observe_elf;
};

struct OpenedInput {
    std::unique_ptr<fs::FileTree> tree;
    std::string venv;  // an image's VIRTUAL_ENV from its config; "" otherwise
    bool image = false;
};

// True when `text` names an OCI layout or archive (with or without :REF / @DIGEST), or is a
// docker:// registry reference.
bool is_image_input(const std::string& text);

// Opens `text` as one root. Errors are one line: "PATH: no such file or directory", the OCI
// reader's (oci/image_select.hpp, oci/oci_tree.hpp), the tarball reader's, the registry's
// (registry/pull.hpp: exit 3 for the network and refused credentials).
util::Result<OpenedInput> open_input(const std::string& text, const InputOptions& options);

}  // namespace rootlock::cli
