// MemoryTree: nodes in an ordered map keyed by canonical path, directories holding their sorted
// child names, hard links sharing one content buffer and one identity.
#include "fs/memory_tree.hpp"

#include <cstring>
#include <stdexcept>

#include "fs/path_resolve.hpp"
#include "fs/tree_errors.hpp"

namespace rootlock::fs {

namespace {

std::vector<std::byte> to_bytes(std::string_view text) {
    std::vector<std::byte> bytes(text.size());
    if (!text.empty())
        std::memcpy(bytes.data(), text.data(), text.size());
    return bytes;
}

}  // namespace

MemoryTree::MemoryTree() {
    Node root;
    root.kind = NodeKind::directory;
    root.mode = 0755;
    root.identity = m_next_identity++;
    m_nodes.emplace("/", std::move(root));
}

const MemoryTree::Node* MemoryTree::find(std::string_view path) const {
    auto found = m_nodes.find(path);
    if (found == m_nodes.end())
        return nullptr;
    return &found->second;
}

std::string MemoryTree::ensure_directory(const std::string& path, int depth) {
    if (path == "/")
        return path;
    if (depth > k_max_symlink_hops) {
        throw std::invalid_argument("MemoryTree: too many symlinks creating " + path);
    }
    std::string parent = ensure_directory(dirname(path), depth);
    std::string candidate = join(parent, basename(path));
    const Node* node = find(candidate);
    if (node == nullptr) {
        Node dir;
        dir.kind = NodeKind::directory;
        dir.mode = 0755;
        insert(candidate, std::move(dir));
        return candidate;
    }
    if (node->kind == NodeKind::directory)
        return candidate;
    if (node->kind == NodeKind::symlink) {
        auto resolved = fs::resolve(*this, candidate);
        if (resolved && resolved->stat.kind == NodeKind::directory)
            return resolved->path;
        // A dangling link to a directory not added yet (/lib -> usr/lib before /usr/lib):
        // create the target, as a test would expect of a merged-/usr layout.
        if (!resolved && !symlink_escapes(candidate, node->target)) {
            return ensure_directory(join(parent, node->target), depth + 1);
        }
    }
    throw std::invalid_argument("MemoryTree: " + candidate + " is not a directory");
}

std::string MemoryTree::place(std::string_view path) {
    std::string norm = normalize(path);
    if (norm == "/")
        throw std::invalid_argument("MemoryTree: cannot replace the root");
    return join(ensure_directory(dirname(norm)), basename(norm));
}

void MemoryTree::insert(const std::string& path, Node node) {
    if (find(path) != nullptr)
        remove(path);
    if (node.identity == 0)
        node.identity = m_next_identity++;
    m_nodes.insert_or_assign(path, std::move(node));
    m_nodes.find(dirname(path))->second.children.insert(basename(path));
}

void MemoryTree::add_file(std::string_view path, std::string_view content, uint32_t mode) {
    add_file(path, to_bytes(content), mode);
}

void MemoryTree::add_file(std::string_view path, std::vector<std::byte> content, uint32_t mode) {
    std::string where = place(path);
    Node node;
    node.kind = NodeKind::regular;
    node.mode = mode;
    node.content = std::make_shared<const std::vector<std::byte>>(std::move(content));
    insert(where, std::move(node));
}

void MemoryTree::add_dir(std::string_view path, uint32_t mode) {
    std::string norm = normalize(path);
    if (norm == "/")
        return;
    std::string where = ensure_directory(norm);
    m_nodes.find(where)->second.mode = mode;
}

void MemoryTree::add_symlink(std::string_view path, std::string_view target) {
    std::string where = place(path);
    Node node;
    node.kind = NodeKind::symlink;
    node.mode = 0777;
    node.target = std::string(target);
    insert(where, std::move(node));
}

void MemoryTree::add_hardlink(std::string_view path, std::string_view existing_path) {
    auto existing = fs::resolve(*this, existing_path, false);
    if (!existing || existing->stat.kind == NodeKind::directory) {
        throw std::invalid_argument("MemoryTree: no file to link at " + std::string(existing_path));
    }
    Node copy = *find(existing->path);
    std::string where = place(path);
    if (where == existing->path)
        return;
    insert(where, std::move(copy));
}

bool MemoryTree::remove(std::string_view path) {
    std::string norm = normalize(path);
    auto found = m_nodes.find(norm);
    if (norm == "/" || found == m_nodes.end())
        return false;
    // Everything under a directory sorts right after "DIR/", before "DIR0" ('/' + 1 == '0').
    std::string prefix = norm + "/";
    auto below = m_nodes.lower_bound(prefix);
    while (below != m_nodes.end() && below->first.compare(0, prefix.size(), prefix) == 0) {
        below = m_nodes.erase(below);
    }
    m_nodes.erase(norm);
    m_nodes.find(dirname(norm))->second.children.erase(basename(norm));
    return true;
}

std::optional<NodeStat> MemoryTree::lstat(std::string_view path) const {
    const Node* node = find(path);
    if (node == nullptr)
        return std::nullopt;
    NodeStat stat;
    stat.kind = node->kind;
    stat.mode = node->mode;
    stat.identity = node->identity;
    if (node->kind == NodeKind::regular)
        stat.size = node->content->size();
    if (node->kind == NodeKind::symlink)
        stat.size = node->target.size();
    return stat;
}

util::Result<std::string> MemoryTree::readlink(std::string_view path) const {
    const Node* node = find(path);
    if (node == nullptr)
        return no_such_path(path);
    if (node->kind != NodeKind::symlink)
        return not_symlink(path);
    return node->target;
}

util::Result<std::vector<DirEntry>> MemoryTree::list(std::string_view path) const {
    const Node* node = find(path);
    if (node == nullptr)
        return no_such_path(path);
    if (node->kind != NodeKind::directory)
        return not_directory(path);
    std::string dir(path);
    std::vector<DirEntry> entries;
    entries.reserve(node->children.size());
    for (const auto& name : node->children) {
        entries.push_back(DirEntry{name, find(join(dir, name))->kind});
    }
    return entries;
}

util::Result<std::string> MemoryTree::read_file(std::string_view path, uint64_t max_size) const {
    const Node* node = find(path);
    if (node == nullptr)
        return no_such_path(path);
    if (node->kind != NodeKind::regular)
        return not_regular_file(path);
    if (node->content->size() > max_size) {
        return file_too_large(path, node->content->size(), max_size);
    }
    return std::string(reinterpret_cast<const char*>(node->content->data()), node->content->size());
}

util::Result<std::unique_ptr<util::ByteSource>> MemoryTree::open(std::string_view path) const {
    const Node* node = find(path);
    if (node == nullptr)
        return no_such_path(path);
    if (node->kind != NodeKind::regular)
        return not_regular_file(path);
    return std::unique_ptr<util::ByteSource>(
        std::make_unique<util::MemorySource>(std::string(path), *node->content));
}

}  // namespace rootlock::fs
