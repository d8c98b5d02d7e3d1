// TarTree: a FileTree over a rootfs tarball read once, front to back, never extracted, or over
// an OCI image's layers streamed in order with their whiteouts applied. ELF objects are parsed
// while streaming; small configuration files named by TarOptions are kept.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fs/archive_reader.hpp"
#include "fs/file_tree.hpp"
#include "util/byte_source.hpp"

namespace rootlock::fs {

// The paths a rootfs check reads besides ELF objects: the loader's cache and configuration,
// the OS identity, and the Python environment's markers. Glob syntax of path_matches().
std::vector<std::string> default_retained_patterns();

// True when the canonical `path` matches `pattern`: "*" matches within one component, "**"
// across components ("**/pyvenv.cfg" matches "/venv/pyvenv.cfg" and "/pyvenv.cfg"), "?" one
// character other than "/", anything else itself. No locale is consulted (unlike fnmatch).
bool path_matches(std::string_view pattern, std::string_view path);

struct TarOptions {
    bool symbols = false;  // also read ELF dynamic symbol tables (probe_elf cannot re-read)
    std::vector<std::string> retained_patterns = default_retained_patterns();
    uint64_t max_retained_size = 16U << 20;  // larger matching files are not kept
    // When set, every ELF member's bytes are also shown to an observer made for it (path is
    // canonical, size the member's), all of them: the member is read to its end rather than
    // skipped past its metadata. Made by a module above fs/ that knows what to look for.
    std::function<std::unique_ptr<util::StreamObserver>(const std::string& path, uint64_t size)>
        observe_elf = nullptr;
};

// Something in the archive that a well-formed rootfs would not hold. `kept` tells whether the
// entry is still in the tree (an absolute name taken relative to the root, a device node, an
// escaping symlink that resolve() refuses) or was left out (a ".." name, a dangling hard link).
struct TreeIssue {
    std::string path;  // the member name as stored in the archive
    std::string problem;
    bool kept = false;
};

// One layer of an image: a tar stream in a byte range of a host file.
struct TarLayer {
    std::string name;  // for messages: "image.oci.tar: layer 2 (sha256:...)"
    FileRange range;
    StreamCompression compression = StreamCompression::none;
    std::string sha256;  // lowercase hex the range's bytes must hash to; "" not checked
};

class TarTree final : public FileTree {
  public:
    // Reads the whole archive once. A corrupt or truncated archive is one error naming the
    // archive and libarchive's message: "image.tar.zst: Truncated tar archive".
    static util::Result<std::unique_ptr<TarTree>> open(const std::string& host_path,
                                                       const TarOptions& options);
    // The layers applied in order into one tree (the flattened image), each streamed once:
    // ".wh.NAME" hides NAME of the layers below, ".wh..wh..opq" its directory's lower entries,
    // a non-directory replaces a lower directory whole. Each layer's bytes are hashed as they
    // are read: "LAYER: its sha256 differs from the descriptor's digest" (reported before any
    // decompression or tar error the damage caused), "LAYER: the blob ends early".
    static util::Result<std::unique_ptr<TarTree>> open_layers(std::string name,
                                                              const std::vector<TarLayer>& layers,
                                                              const TarOptions& options);

    const std::vector<TreeIssue>& issues() const { return m_issues; }
    // Bytes held for read_file(), for callers (and tests) watching memory.
    uint64_t retained_bytes() const { return m_retained_bytes; }

    std::string describe() const override { return m_name; }
    std::optional<NodeStat> lstat(std::string_view path) const override;
    util::Result<std::string> readlink(std::string_view path) const override;
    util::Result<std::vector<DirEntry>> list(std::string_view path) const override;
    // Only retained files can be read: "PATH: not retained from the tarball" otherwise.
    util::Result<std::string> read_file(std::string_view path,
                                        uint64_t max_size = 64U << 20) const override;
    // Answers from what was seen while streaming. A tarball cannot be re-read, so asking for
    // symbols that TarOptions::symbols did not collect gives the object without them
    // (info->symbols_read stays false).
    ElfProbe probe_elf(std::string_view path, bool symbols = false) const override;

  protected:
    // Always fails: nothing of a tarball is kept for random access.
    util::Result<std::unique_ptr<util::ByteSource>> open(std::string_view path) const override;

  private:
    friend class TarLoader;

    // How a regular file's first bytes classify it, as probe_source would.
    enum class Head : uint8_t { too_short, not_elf, elf };

    struct Node {
        NodeKind kind = NodeKind::other;
        Head head = Head::not_elf;
        uint32_t mode = 0;
        uint64_t size = 0;
        uint64_t identity = 0;
        uint32_t layer = 0;  // the image layer that placed it (0: a plain tarball)
        std::string target;  // symlinks
        std::shared_ptr<const std::string> retained;  // retained regular files
    };

    explicit TarTree(std::string name, TarOptions options);
    const Node* find(std::string_view path) const;

    std::string m_name;
    TarOptions m_options;
    std::map<std::string, Node, std::less<>> m_nodes;
    std::vector<TreeIssue> m_issues;
    uint64_t m_retained_bytes = 0;
    uint64_t m_next_identity = 1;
};

}  // namespace rootlock::fs
