// TarTree: the tree's queries over its path-keyed map (built by TarLoader in one pass over a
// tarball, or over an image's layers in order), and the patterns of files it keeps.
#include "fs/tar_tree.hpp"

#include "fs/archive_reader.hpp"
#include "fs/tar_loader.hpp"
#include "fs/tree_errors.hpp"

namespace rootlock::fs {

namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

// The matcher behind path_matches: "**" may cross "/", "*" and "?" may not.
bool glob_match(std::string_view pattern, std::string_view path) {
    while (!pattern.empty()) {
        if (starts_with(pattern, "**")) {
            std::string_view rest = pattern.substr(2);
            for (size_t skip = 0; skip <= path.size(); ++skip) {
                if (glob_match(rest, path.substr(skip)))
                    return true;
            }
            return false;
        }
        if (pattern.front() == '*') {
            std::string_view rest = pattern.substr(1);
            for (size_t skip = 0; skip <= path.size(); ++skip) {
                if (glob_match(rest, path.substr(skip)))
                    return true;
                if (skip < path.size() && path[skip] == '/')
                    break;
            }
            return false;
        }
        if (path.empty())
            return false;
        bool one = pattern.front() == '?' && path.front() != '/';
        if (!one && pattern.front() != path.front())
            return false;
        pattern.remove_prefix(1);
        path.remove_prefix(1);
    }
    return path.empty();
}

}  // namespace

std::vector<std::string> default_retained_patterns() {
    // /etc/os-release is a symlink to ../usr/lib/os-release on Debian, so both are named.
    return {"/etc/ld.so.cache",     "/etc/ld.so.conf",         "/etc/ld.so.conf.d/*",
            "/etc/os-release",      "/usr/lib/os-release",     "/etc/environment",
            "**/pyvenv.cfg",        "**/*.dist-info/RECORD",   "**/*.dist-info/METADATA",
            "**/*.dist-info/WHEEL", "**/*.dist-info/INSTALLER"};
}

bool path_matches(std::string_view pattern, std::string_view path) {
    // Every non-ELF file of a rootfs is matched against every pattern: reject on the literal
    // tail first ("**/*.dist-info/RECORD" needs a path ending in ".dist-info/RECORD").
    size_t wild = pattern.find_last_of("*?");
    std::string_view tail = wild == std::string_view::npos ? pattern : pattern.substr(wild + 1);
    if (path.size() < tail.size() || path.substr(path.size() - tail.size()) != tail)
        return false;
    return glob_match(pattern, path);
}

TarTree::TarTree(std::string name, TarOptions options)
    : m_name(std::move(name)), m_options(std::move(options)) {
    Node root;
    root.kind = NodeKind::directory;
    root.mode = 0755;
    root.identity = m_next_identity++;
    m_nodes.emplace("/", std::move(root));
}

util::Result<std::unique_ptr<TarTree>> TarTree::open(const std::string& host_path,
                                                     const TarOptions& options) {
    auto reader = ArchiveReader::open(host_path);
    if (!reader.ok())
        return reader.error();
    std::unique_ptr<TarTree> tree(new TarTree(host_path, options));
    TarLoader loader(*tree);
    auto status = loader.run(**reader);
    if (!status.ok())
        return status.error();
    return tree;
}

util::Result<std::unique_ptr<TarTree>> TarTree::open_layers(std::string name,
                                                            const std::vector<TarLayer>& layers,
                                                            const TarOptions& options) {
    std::unique_ptr<TarTree> tree(new TarTree(std::move(name), options));
    TarLoader loader(*tree);
    for (size_t i = 0; i < layers.size(); ++i) {
        const TarLayer& layer = layers[i];
        auto opened = ArchiveReader::open_range(layer.name, layer.range, layer.compression);
        if (!opened.ok()) {
            // Opening already decompresses the first block: damage there is named by digest too.
            auto digest = hash_range(layer.range);
            if (digest.ok() && !layer.sha256.empty() && *digest != layer.sha256)
                return util::make_integrity_error(
                    layer.name, "its sha256 differs from the descriptor's digest");
            return opened.error();
        }
        auto& reader = opened.value();
        auto status = loader.run(*reader, static_cast<uint32_t>(i + 1));
        // A damaged blob is named by its digest first: a gzip or tar error is only the symptom.
        auto digest = reader->finish_range();
        if (digest.ok() && !layer.sha256.empty() && *digest != layer.sha256)
            return util::make_integrity_error(layer.name,
                                              "its sha256 differs from the descriptor's digest");
        if (!status.ok())
            return status.error();
        if (!digest.ok())
            return digest.error();
    }
    return tree;
}

const TarTree::Node* TarTree::find(std::string_view path) const {
    auto found = m_nodes.find(path);
    return found == m_nodes.end() ? nullptr : &found->second;
}

std::optional<NodeStat> TarTree::lstat(std::string_view path) const {
    const Node* node = find(path);
    if (node == nullptr)
        return std::nullopt;
    return NodeStat{node->kind, node->size, node->mode, node->identity};
}

util::Result<std::string> TarTree::readlink(std::string_view path) const {
    const Node* node = find(path);
    if (node == nullptr)
        return no_such_path(path);
    if (node->kind != NodeKind::symlink)
        return not_symlink(path);
    return node->target;
}

util::Result<std::vector<DirEntry>> TarTree::list(std::string_view path) const {
    const Node* node = find(path);
    if (node == nullptr)
        return no_such_path(path);
    if (node->kind != NodeKind::directory)
        return not_directory(path);
    std::string prefix(path);
    if (prefix != "/")
        prefix += '/';
    std::vector<DirEntry> entries;
    // Keys under "DIR/" sort bytewise, so children come in name order; a child's own subtree
    // ("DIR/c/...") sorts before "DIR/c0" ('0' follows '/'), which is where the search resumes.
    auto it = m_nodes.lower_bound(prefix);
    while (it != m_nodes.end() && starts_with(it->first, prefix)) {
        std::string_view rest = std::string_view(it->first).substr(prefix.size());
        size_t slash = rest.find('/');
        if (rest.empty()) {
            ++it;
        } else if (slash == std::string_view::npos) {
            entries.push_back(DirEntry{std::string(rest), it->second.kind});
            ++it;
        } else {
            it = m_nodes.lower_bound(prefix + std::string(rest.substr(0, slash)) + '0');
        }
    }
    return entries;
}

util::Result<std::string> TarTree::read_file(std::string_view path, uint64_t max_size) const {
    const Node* node = find(path);
    if (node == nullptr)
        return no_such_path(path);
    if (node->kind != NodeKind::regular)
        return not_regular_file(path);
    if (!node->retained)
        return util::make_error(std::string(path), "not retained from the tarball");
    if (node->size > max_size)
        return file_too_large(path, node->size, max_size);
    return *node->retained;
}

ElfProbe TarTree::probe_elf(std::string_view path, bool symbols) const {
    const Node* node = find(path);
    if (node == nullptr)
        return ElfProbe{ElfProbe::Outcome::missing, {}, {}};
    if (node->kind != NodeKind::regular)
        return ElfProbe{ElfProbe::Outcome::not_regular, {}, {}};
    switch (node->head) {
        case Head::too_short:
            return ElfProbe{ElfProbe::Outcome::too_short, {}, "file too short"};
        case Head::not_elf:
            return ElfProbe{ElfProbe::Outcome::not_elf, {}, "invalid ELF header"};
        case Head::elf:
            break;
    }
    return FileTree::probe_elf(path, symbols && m_options.symbols);
}

util::Result<std::unique_ptr<util::ByteSource>> TarTree::open(std::string_view path) const {
    return util::make_error(std::string(path), "not retained from the tarball");
}

}  // namespace rootlock::fs
