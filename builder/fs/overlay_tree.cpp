// OverlayTree: added nodes in a path-keyed map consulted first, the base tree behind them, and
// placement that resolves parents through both sides so that nothing lands behind a symlink.
#include "fs/overlay_tree.hpp"

#include <cstring>

#include "fs/path_resolve.hpp"
#include "fs/tree_errors.hpp"

namespace rootlock::fs {

namespace {

// Added identities start here: TarTree and MemoryTree count up from 1, and DirectoryTree's are
// hashes of (dev, inode), which meet these no more often than they meet each other.
constexpr uint64_t k_first_identity = uint64_t{1} << 62;

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

util::Error not_held(std::string_view path) {
    return util::make_error(std::string(path), "content not held in the overlay");
}

}  // namespace

OverlayTree::OverlayTree(std::shared_ptr<const FileTree> base)
    : m_base(std::move(base)), m_next_identity(k_first_identity) {}

std::string OverlayTree::describe() const {
    return m_base->describe() + " + overlay";
}

const OverlayTree::Node* OverlayTree::find_added(std::string_view path) const {
    auto found = m_nodes.find(path);
    return found == m_nodes.end() ? nullptr : &found->second;
}

std::vector<OverlayTree::Added> OverlayTree::added() const {
    std::vector<Added> out;
    out.reserve(m_nodes.size());
    for (const auto& [path, node] : m_nodes) {
        Added entry{path, node.kind, node.mode, node.size, nullptr, node.target};
        if (node.content.has_value())
            entry.content = &*node.content;
        out.push_back(std::move(entry));
    }
    return out;
}

bool OverlayTree::base_hidden(std::string_view path) const {
    if (m_opaque.empty())
        return false;
    for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
        std::string_view prefix = path.substr(0, slash);
        if (!prefix.empty() && m_opaque.find(prefix) != m_opaque.end())
            return true;
        if (slash == std::string_view::npos)
            return false;
    }
}

std::optional<NodeStat> OverlayTree::lstat(std::string_view path) const {
    if (const Node* node = find_added(path))
        return NodeStat{node->kind, node->size, node->mode, node->identity};
    if (base_hidden(path))
        return std::nullopt;
    return m_base->lstat(path);
}

util::Result<std::string> OverlayTree::readlink(std::string_view path) const {
    if (const Node* node = find_added(path)) {
        if (node->kind != NodeKind::symlink)
            return not_symlink(path);
        return node->target;
    }
    if (base_hidden(path))
        return no_such_path(path);
    return m_base->readlink(path);
}

util::Result<std::vector<DirEntry>> OverlayTree::list(std::string_view path) const {
    const Node* node = find_added(path);
    if (node != nullptr && node->kind != NodeKind::directory)
        return not_directory(path);
    std::map<std::string, NodeKind> merged;  // std::string orders bytewise, as list() promises
    if (!base_hidden(path)) {
        auto entries = m_base->list(path);
        if (entries.ok()) {
            for (auto& entry : *entries)
                merged.emplace(std::move(entry.name), entry.kind);
        } else if (node == nullptr) {
            return entries.error();
        }
        // An added directory over a base symlink or file has no base entries: the error of
        // listing those is the shadowed node's, not this directory's.
    }
    std::string prefix(path);
    if (prefix != "/")
        prefix += '/';
    // Added children sort right after "DIR/"; a child's own subtree ("DIR/c/...") sorts before
    // "DIR/c0" ('0' follows '/'), which is where the scan resumes.
    auto it = m_nodes.lower_bound(prefix);
    while (it != m_nodes.end() && starts_with(it->first, prefix)) {
        std::string_view rest = std::string_view(it->first).substr(prefix.size());
        size_t slash = rest.find('/');
        if (slash == std::string_view::npos) {
            merged.insert_or_assign(std::string(rest), it->second.kind);
            ++it;
        } else {
            it = m_nodes.lower_bound(prefix + std::string(rest.substr(0, slash)) + '0');
        }
    }
    std::vector<DirEntry> out;
    out.reserve(merged.size());
    for (auto& [name, kind] : merged)
        out.push_back(DirEntry{name, kind});
    return out;
}

util::Result<std::string> OverlayTree::read_file(std::string_view path, uint64_t max_size) const {
    if (const Node* node = find_added(path)) {
        if (node->kind != NodeKind::regular)
            return not_regular_file(path);
        if (!node->content)
            return not_held(path);
        if (node->size > max_size)
            return file_too_large(path, node->size, max_size);
        return *node->content;
    }
    if (base_hidden(path))
        return no_such_path(path);
    return m_base->read_file(path, max_size);
}

ElfProbe OverlayTree::probe_elf(std::string_view path, bool symbols) const {
    const Node* node = find_added(path);
    if (node == nullptr) {
        if (base_hidden(path))
            return ElfProbe{.outcome = ElfProbe::Outcome::missing, .info = {}, .error = {}};
        return m_base->probe_elf(path, symbols);
    }
    if (node->kind != NodeKind::regular)
        return ElfProbe{.outcome = ElfProbe::Outcome::not_regular, .info = {}, .error = {}};
    if (node->content)
        return FileTree::probe_elf(path, symbols);  // bytes in memory: the ordinary probe
    // A sized file answers from what the wheel scan saw while streaming, symbols as read then.
    ElfProbe probe;
    if (node->elf) {
        probe.outcome = ElfProbe::Outcome::elf;
        probe.info = node->elf;
        probe.ident_class = static_cast<uint8_t>(node->elf->elf_class);
    } else if (!node->elf_error.empty()) {
        probe.outcome = ElfProbe::Outcome::malformed;
        probe.error = node->elf_error;
    } else if (node->size < k_elf_header_size) {
        probe.outcome = ElfProbe::Outcome::too_short;
        probe.error = "file too short";
    } else {
        probe.outcome = ElfProbe::Outcome::not_elf;
        probe.error = "invalid ELF header";
    }
    return probe;
}

util::Result<std::unique_ptr<util::ByteSource>> OverlayTree::open(std::string_view path) const {
    const Node* node = find_added(path);
    if (node == nullptr && !base_hidden(path))
        return m_base->open_bytes(path);
    if (node != nullptr && node->kind == NodeKind::regular && !node->host_path.empty()) {
        ROOTLOCK_TRY(file, util::FileSource::open(node->host_path, std::string(path)));
        return std::unique_ptr<util::ByteSource>(std::move(file));
    }
    if (node == nullptr || node->kind != NodeKind::regular || !node->content)
        return not_held(path);
    std::vector<std::byte> bytes(node->content->size());
    if (!bytes.empty())
        std::memcpy(bytes.data(), node->content->data(), bytes.size());
    return std::unique_ptr<util::ByteSource>(
        std::make_unique<util::MemorySource>(std::string(path), std::move(bytes)));
}

util::Result<std::string> OverlayTree::ensure_directory(std::string_view spelled,
                                                        const std::string& path, int depth) {
    if (path == "/")
        return path;
    if (depth > k_max_symlink_hops)
        return util::make_error(std::string(spelled), "too many levels of symbolic links");
    auto parent = ensure_directory(spelled, dirname(path), depth);
    if (!parent.ok())
        return parent;
    std::string candidate = join(*parent, basename(path));
    auto stat = lstat(candidate);
    if (!stat) {
        Node dir;
        dir.kind = NodeKind::directory;
        dir.mode = 0755;
        dir.identity = m_next_identity++;
        m_nodes.emplace(candidate, std::move(dir));
        return candidate;
    }
    if (stat->kind == NodeKind::directory)
        return candidate;
    if (stat->kind == NodeKind::symlink) {
        auto resolved = fs::resolve(*this, candidate);
        if (resolved && resolved->stat.kind == NodeKind::directory)
            return resolved->path;
        auto target = readlink(candidate);
        if (target.ok() && symlink_escapes(candidate, *target)) {
            return util::make_error(std::string(spelled),
                                    candidate + " is a symlink escaping the root");
        }
        // A dangling link to a directory not made yet (lib64 -> lib before lib): made now,
        // where the link points, as extracting into the link would.
        if (!resolved && target.ok())
            return ensure_directory(spelled, join(*parent, *target), depth + 1);
    }
    return util::make_error(std::string(spelled), candidate + " is not a directory");
}

util::Result<std::string> OverlayTree::place(std::string_view path, Node node) {
    std::string norm = normalize(path);
    if (norm == "/")
        return util::make_error(std::string(path), "cannot replace the root");
    auto parent = ensure_directory(path, dirname(norm), 0);
    if (!parent.ok())
        return parent;
    std::string where = join(*parent, basename(norm));
    // Whatever was added there before goes, with everything added below it.
    std::string below = where + "/";
    for (auto it = m_nodes.lower_bound(below);
         it != m_nodes.end() && starts_with(it->first, below);) {
        it = m_nodes.erase(it);
    }
    for (auto it = m_opaque.lower_bound(below); it != m_opaque.end() && starts_with(*it, below);) {
        it = m_opaque.erase(it);
    }
    m_nodes.erase(where);
    m_opaque.erase(where);
    if (!base_hidden(where)) {
        auto base_stat = m_base->lstat(where);
        if (base_stat && base_stat->kind == NodeKind::directory)
            m_opaque.insert(where);
    }
    node.identity = m_next_identity++;
    m_nodes.emplace(where, std::move(node));
    return where;
}

util::Result<std::string> OverlayTree::add_dir(std::string_view path, uint32_t mode) {
    std::string norm = normalize(path);
    auto where = ensure_directory(path, norm, 0);
    if (!where.ok())
        return where;
    // Only a directory of the overlay takes the mode; the base is never changed.
    auto found = m_nodes.find(*where);
    if (found != m_nodes.end())
        found->second.mode = mode;
    return where;
}

util::Result<std::string> OverlayTree::add_file(std::string_view path, std::string content,
                                                uint32_t mode) {
    Node node;
    node.kind = NodeKind::regular;
    node.mode = mode;
    node.size = content.size();
    node.content = std::move(content);
    return place(path, std::move(node));
}

util::Result<std::string> OverlayTree::add_sized_file(std::string_view path, SizedFile file) {
    Node node;
    node.kind = NodeKind::regular;
    node.mode = file.mode;
    node.size = file.size;
    node.elf = std::move(file.elf);
    node.elf_error = std::move(file.elf_error);
    node.host_path = std::move(file.host_path);
    return place(path, std::move(node));
}

util::Result<std::string> OverlayTree::add_symlink(std::string_view path, std::string target) {
    Node node;
    node.kind = NodeKind::symlink;
    node.mode = 0777;
    node.size = target.size();
    node.target = std::move(target);
    return place(path, std::move(node));
}

}  // namespace rootlock::fs
