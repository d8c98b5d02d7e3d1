// HidingTree: every query first asks whether the path or one of its ancestors is hidden (one set
// lookup per path component), then forwards to the base tree unchanged.
#include "fs/hiding_tree.hpp"

#include "fs/path_resolve.hpp"
#include "fs/tree_errors.hpp"

namespace rootlock::fs {

HidingTree::HidingTree(const FileTree& base, std::set<std::string> hidden_paths) : m_base(base) {
    for (const auto& path : hidden_paths) {
        std::string norm = normalize(path);
        if (norm != "/")
            m_hidden.insert(std::move(norm));
    }
}

bool HidingTree::is_hidden(std::string_view path) const {
    if (m_hidden.empty())
        return false;
    // Check "/a", "/a/b", ... up to the path itself: a hidden directory hides all below it.
    for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
        std::string_view prefix = path.substr(0, slash);
        if (!prefix.empty() && m_hidden.find(prefix) != m_hidden.end())
            return true;
        if (slash == std::string_view::npos)
            return false;
    }
}

std::string HidingTree::describe() const {
    return m_base.describe();
}

std::optional<NodeStat> HidingTree::lstat(std::string_view path) const {
    if (is_hidden(path))
        return std::nullopt;
    return m_base.lstat(path);
}

util::Result<std::string> HidingTree::readlink(std::string_view path) const {
    if (is_hidden(path))
        return no_such_path(path);
    return m_base.readlink(path);
}

template <typename Entry>
std::vector<Entry> HidingTree::visible_entries(std::string_view path,
                                               std::vector<Entry> entries) const {
    if (m_hidden.empty())
        return entries;
    std::vector<Entry> visible;
    visible.reserve(entries.size());
    std::string prefix(path);
    if (prefix != "/")
        prefix += '/';
    for (auto& entry : entries) {
        if (m_hidden.find(prefix + entry.name) == m_hidden.end())
            visible.push_back(std::move(entry));
    }
    return visible;
}

util::Result<std::vector<DirEntry>> HidingTree::list(std::string_view path) const {
    if (is_hidden(path))
        return no_such_path(path);
    auto entries = m_base.list(path);
    if (!entries.ok())
        return entries;
    return visible_entries(path, std::move(entries).value());
}

util::Result<std::vector<StatEntry>> HidingTree::list_stats(std::string_view path) const {
    if (is_hidden(path))
        return no_such_path(path);
    auto entries = m_base.list_stats(path);
    if (!entries.ok())
        return entries;
    return visible_entries(path, std::move(entries).value());
}

util::Result<std::string> HidingTree::read_file(std::string_view path, uint64_t max_size) const {
    if (is_hidden(path))
        return no_such_path(path);
    return m_base.read_file(path, max_size);
}

ElfProbe HidingTree::probe_elf(std::string_view path, bool symbols) const {
    if (is_hidden(path))
        return ElfProbe{.outcome = ElfProbe::Outcome::missing, .info = {}, .error = {}};
    return m_base.probe_elf(path, symbols);
}

ElfProbe HidingTree::probe_regular_elf(std::string_view path, bool symbols) const {
    if (is_hidden(path))
        return ElfProbe{.outcome = ElfProbe::Outcome::missing, .info = {}, .error = {}};
    return m_base.probe_regular_elf(path, symbols);
}

std::vector<ElfProbe> HidingTree::probe_regular_elf_batch(std::string_view dir,
                                                          std::span<const std::string_view> names,
                                                          bool symbols) const {
    // The visible names go to the base in one batch; hidden ones are missing.
    std::vector<std::string_view> visible;
    std::vector<size_t> visible_at;
    for (size_t i = 0; i < names.size(); ++i) {
        if (!is_hidden(join_path(dir, names[i]))) {
            visible.push_back(names[i]);
            visible_at.push_back(i);
        }
    }
    std::vector<ElfProbe> probes(names.size());
    auto base_probes = m_base.probe_regular_elf_batch(dir, visible, symbols);
    for (size_t v = 0; v < visible.size(); ++v)
        probes[visible_at[v]] = std::move(base_probes[v]);
    return probes;
}

util::Result<std::unique_ptr<util::ByteSource>> HidingTree::open(std::string_view path) const {
    if (is_hidden(path))
        return util::make_error(std::string(path), "hidden by --without");
    return m_base.open_bytes(path);
}

}  // namespace rootlock::fs
