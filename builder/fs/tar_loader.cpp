// TarLoader: entries placed with tar's extraction semantics (names confined, files classified
// and ELF parsed as they stream by), and an OCI layer's whiteouts applied to the layers below.
#include "fs/tar_loader.hpp"

#include <array>
#include <cstring>

#include "elf/elf_reader.hpp"
#include "fs/path_resolve.hpp"

namespace rootlock::fs {

namespace {

// As in probe_source: a 64-bit ld.so reads a 64-byte header before it looks at anything.
constexpr size_t k_head_size = 64;

// image-spec layer.md: ".wh.NAME" hides NAME of the layers below; ".wh..wh..opq" hides every
// entry of its directory there. Other ".wh..wh." names are aufs's bookkeeping, never content.
constexpr std::string_view k_whiteout = ".wh.";
constexpr std::string_view k_opaque = ".wh..wh..opq";

// A member's bytes, each also shown to an observer when there is one.
class ObservedStream final : public util::ByteStream {
  public:
    ObservedStream(util::ByteStream& inner, util::StreamObserver* observer)
        : m_inner(inner), m_observer(observer) {}
    util::Result<size_t> read(std::span<std::byte> out) override {
        auto count = m_inner.read(out);
        if (count.ok() && m_observer != nullptr && *count > 0)
            m_observer->feed(std::span<const std::byte>(out.data(), *count));
        return count;
    }

  private:
    util::ByteStream& m_inner;
    util::StreamObserver* m_observer;
};

// Reads a stream to its end, in 1 MiB reads.
util::Status drain(util::ByteStream& stream) {
    std::vector<std::byte> block(size_t{1} << 20);
    while (true) {
        auto count = stream.read(block);
        if (!count.ok())
            return count.error();
        if (*count == 0)
            return util::ok_status();
    }
}

// Serves the bytes already peeked from an entry, then the rest of the entry.
class PrefixStream final : public util::ByteStream {
  public:
    PrefixStream(std::span<const std::byte> head, util::ByteStream& rest)
        : m_head(head), m_rest(rest) {}
    util::Result<size_t> read(std::span<std::byte> out) override {
        if (m_offset < m_head.size()) {
            size_t count = std::min(out.size(), m_head.size() - m_offset);
            std::memcpy(out.data(), m_head.data() + m_offset, count);
            m_offset += count;
            return count;
        }
        return m_rest.read(out);
    }

  private:
    std::span<const std::byte> m_head;
    size_t m_offset = 0;
    util::ByteStream& m_rest;
};

// A member name made root-absolute: leading "/" and "./" dropped, "." and empty parts removed.
struct ConfinedName {
    std::string path;
    bool absolute = false;  // the stored name began with "/"
    bool climbs = false;    // some component is ".." (the name is then unusable)
};

ConfinedName confine(std::string_view name) {
    ConfinedName out;
    out.absolute = !name.empty() && name.front() == '/';
    out.path = "/";
    size_t pos = 0;
    while (pos <= name.size()) {
        size_t slash = name.find('/', pos);
        if (slash == std::string_view::npos)
            slash = name.size();
        std::string_view part = name.substr(pos, slash - pos);
        pos = slash + 1;
        if (part.empty() || part == ".")
            continue;
        if (part == "..")
            out.climbs = true;
        if (out.path.size() > 1)
            out.path += '/';
        out.path += part;
    }
    return out;
}

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

util::Status TarLoader::run(ArchiveReader& reader, uint32_t layer) {
    m_reader = &reader;
    m_layer = layer;
    m_last_parent = "/";
    while (true) {
        auto next = reader.next();
        if (!next.ok())
            return next.error();
        if (!next->has_value())
            return util::ok_status();
        auto status = add(**next);
        if (!status.ok())
            return status;
    }
}

void TarLoader::issue(const std::string& name, std::string problem, bool kept) {
    m_tree.m_issues.push_back(TreeIssue{name, std::move(problem), kept});
}

bool TarLoader::apply_whiteout(const std::string& path) {
    std::string base = basename(path);
    if (!starts_with(base, k_whiteout))
        return false;
    std::string parent = dirname(path);
    if (base == k_opaque) {
        remove_lower(parent, false);
    } else if (!starts_with(base, std::string(k_whiteout) + std::string(k_whiteout))) {
        std::string hidden = parent == "/" ? "/" : parent + "/";
        hidden += base.substr(k_whiteout.size());
        remove_lower(hidden, true);
    }
    m_last_parent = "/";
    return true;
}

void TarLoader::erase_node(const std::string& path) {
    auto found = m_tree.m_nodes.find(path);
    if (found == m_tree.m_nodes.end())
        return;
    if (found->second.retained)
        m_tree.m_retained_bytes -= found->second.retained->size();
    m_tree.m_nodes.erase(found);
}

void TarLoader::remove_lower(const std::string& path, bool self) {
    auto& nodes = m_tree.m_nodes;
    if (self && path != "/") {
        auto found = nodes.find(path);
        if (found != nodes.end() && found->second.layer < m_layer)
            erase_node(path);
    }
    std::string prefix = path == "/" ? "/" : path + "/";
    auto it = nodes.lower_bound(prefix);
    while (it != nodes.end() && starts_with(it->first, prefix)) {
        if (it->second.layer < m_layer) {
            if (it->second.retained)
                m_tree.m_retained_bytes -= it->second.retained->size();
            it = nodes.erase(it);
        } else {
            ++it;
        }
    }
}

util::Status TarLoader::add(const ArchiveEntry& entry) {
    ConfinedName name = confine(entry.path);
    if (name.climbs) {
        issue(entry.path, "entry escapes the root with '..'", false);
        return util::ok_status();
    }
    if (name.path == "/") {
        // "./" itself: the root's own metadata.
        if (entry.type == ArchiveEntryType::directory)
            m_tree.m_nodes["/"].mode = entry.mode;
        return util::ok_status();
    }
    // GNU tar and bsdtar both strip the leading "/" when extracting, so the entry lands in
    // the root and stays in the tree; it is noted because no ordinary rootfs tarball has it.
    if (name.absolute)
        issue(entry.path, "absolute entry name taken relative to the root", true);
    if (m_layer > 0 && apply_whiteout(name.path))
        return util::ok_status();
    Node node;
    node.mode = entry.mode;
    node.size = entry.size;
    switch (entry.type) {
        case ArchiveEntryType::regular:
            return add_regular(entry, name.path, std::move(node));
        case ArchiveEntryType::hardlink:
            add_hardlink(entry, name.path);
            break;
        case ArchiveEntryType::directory:
            node.kind = NodeKind::directory;
            node.size = 0;
            place(entry.path, name.path, std::move(node));
            break;
        case ArchiveEntryType::symlink:
            node.kind = NodeKind::symlink;
            node.target = entry.link_target;
            node.size = node.target.size();
            if (symlink_escapes(name.path, node.target)) {
                issue(entry.path, "symlink target escapes the root: " + node.target, true);
            }
            place(entry.path, name.path, std::move(node));
            break;
        case ArchiveEntryType::device:
            // /dev holds device nodes in an ordinary rootfs (mmdebstrap writes them);
            // anywhere else one signals a hostile or broken archive.
            if (!starts_with(name.path, "/dev/")) {
                issue(entry.path, "device node outside /dev", true);
            }
            node.kind = NodeKind::other;
            place(entry.path, name.path, std::move(node));
            break;
        case ArchiveEntryType::other:
            node.kind = NodeKind::other;
            place(entry.path, name.path, std::move(node));
            break;
    }
    return util::ok_status();
}

// Creates missing parents as directories; false (and an issue) when one is not a directory,
// since extracting through a symlink or a file is how archives write outside their root.
bool TarLoader::make_parents(const std::string& name, const std::string& path) {
    std::string parent = dirname(path);
    if (parent == m_last_parent)
        return true;
    for (size_t slash = parent.find('/', 1);; slash = parent.find('/', slash + 1)) {
        std::string prefix = parent.substr(0, slash);
        auto found = m_tree.m_nodes.find(prefix);
        if (found == m_tree.m_nodes.end()) {
            Node dir;
            dir.kind = NodeKind::directory;
            dir.mode = 0755;
            dir.identity = m_tree.m_next_identity++;
            dir.layer = m_layer;
            m_tree.m_nodes.emplace(prefix, std::move(dir));
        } else if (found->second.kind != NodeKind::directory) {
            issue(name, "parent " + prefix + " is not a directory", false);
            return false;
        } else {
            found->second.layer = m_layer;  // this layer's entry keeps it from a whiteout
        }
        if (slash == std::string::npos)
            break;
    }
    m_last_parent = parent;
    return true;
}

// Enters `node` at `path` with tar's extraction semantics: a later entry replaces an earlier
// one, except that nothing replaces a directory that has entries under it. A layer's
// non-directory replaces a lower layer's directory whole, as overlayfs shows it.
bool TarLoader::place(const std::string& name, const std::string& path, Node node) {
    if (!make_parents(name, path))
        return false;
    auto found = m_tree.m_nodes.find(path);
    if (found != m_tree.m_nodes.end() && found->second.kind == NodeKind::directory) {
        if (node.kind == NodeKind::directory) {
            found->second.mode = node.mode;
            found->second.layer = m_layer;
            return true;
        }
        if (m_layer > 0)
            remove_lower(path, false);
        auto below = m_tree.m_nodes.lower_bound(path + "/");
        if (below != m_tree.m_nodes.end() && starts_with(below->first, path + "/")) {
            issue(name, "entry would replace a directory that is not empty", false);
            return false;
        }
    }
    if (found != m_tree.m_nodes.end() && found->second.retained) {
        m_tree.m_retained_bytes -= found->second.retained->size();
    }
    if (node.identity == 0)
        node.identity = m_tree.m_next_identity++;
    node.layer = m_layer;
    if (node.retained)
        m_tree.m_retained_bytes += node.retained->size();
    m_tree.m_nodes.insert_or_assign(path, std::move(node));
    return true;
}

util::Status TarLoader::add_regular(const ArchiveEntry& entry, const std::string& path, Node node) {
    node.kind = NodeKind::regular;
    std::array<std::byte, k_head_size> head{};
    size_t want = static_cast<size_t>(std::min<uint64_t>(entry.size, k_head_size));
    size_t got = 0;
    while (got < want) {
        auto count = m_reader->read(std::span(head).subspan(got, want - got));
        if (!count.ok())
            return count.error();
        if (*count == 0)
            break;
        got += *count;
    }
    std::span<const std::byte> bytes(head.data(), got);
    if (got < k_head_size) {
        node.head = Head::too_short;
    } else if (!elf::has_elf_magic(bytes)) {
        node.head = Head::not_elf;
    } else {
        node.head = Head::elf;
        ArchiveEntryStream archive_rest(*m_reader);
        std::unique_ptr<util::StreamObserver> observer;
        if (m_tree.m_options.observe_elf) {
            observer = m_tree.m_options.observe_elf(path, entry.size);
            if (observer)
                observer->feed(bytes);
        }
        ObservedStream rest(archive_rest, observer.get());
        PrefixStream stream(bytes, rest);
        bool symbols = m_tree.m_options.symbols;
        auto info = elf::read_elf_stream(stream, entry.size, path, {.symbols = symbols});
        if (archive_rest.failure())
            return *archive_rest.failure();
        if (observer) {
            // The observer sees the whole member: what the ELF reader left is read to the end.
            if (auto status = drain(rest); !status)
                return status.error();
            observer->end();
        }
        ElfProbe probe;
        probe.ident_class = ident_class_of(bytes);
        if (info.ok()) {
            probe.outcome = ElfProbe::Outcome::elf;
            probe.info = std::make_shared<const elf::ElfInfo>(std::move(info).value());
        } else {
            probe.outcome = ElfProbe::Outcome::malformed;
            probe.error = info.error().text();
        }
        if (!place(entry.path, path, std::move(node)))
            return util::ok_status();
        m_tree.remember_elf(path, std::move(probe), symbols);
        return util::ok_status();
    }
    if (entry.size <= m_tree.m_options.max_retained_size && retained(path)) {
        auto content = read_rest(bytes, entry.size);
        if (!content.ok())
            return content.error();
        node.retained = std::make_shared<const std::string>(std::move(content).value());
    }
    place(entry.path, path, std::move(node));
    return util::ok_status();
}

bool TarLoader::retained(const std::string& path) const {
    for (const auto& pattern : m_tree.m_options.retained_patterns) {
        if (path_matches(pattern, path))
            return true;
    }
    return false;
}

// The whole entry: the peeked head, then the remaining bytes (size is already bounded).
util::Result<std::string> TarLoader::read_rest(std::span<const std::byte> head, uint64_t size) {
    std::string content(static_cast<size_t>(size), '\0');
    if (!head.empty())
        std::memcpy(content.data(), head.data(), head.size());
    size_t got = head.size();
    while (got < content.size()) {
        auto count = m_reader->read(std::as_writable_bytes(std::span(content)).subspan(got));
        if (!count.ok())
            return count.error();
        if (*count == 0)
            break;
        got += *count;
    }
    content.resize(got);
    return content;
}

void TarLoader::add_hardlink(const ArchiveEntry& entry, const std::string& path) {
    ConfinedName target = confine(entry.link_target);
    if (target.climbs) {
        issue(entry.path, "hard link target escapes the root with '..'", false);
        return;
    }
    auto found = m_tree.m_nodes.find(target.path);
    if (found == m_tree.m_nodes.end()) {
        issue(entry.path, "hard link target " + entry.link_target + " is missing", false);
        return;
    }
    if (found->second.kind == NodeKind::directory) {
        issue(entry.path, "hard link to a directory", false);
        return;
    }
    if (target.path == path)
        return;
    Node copy = found->second;  // same identity, same retained bytes
    bool elf = copy.kind == NodeKind::regular && copy.head == Head::elf;
    if (!place(entry.path, path, std::move(copy)) || !elf)
        return;
    bool symbols = m_tree.m_options.symbols;
    m_tree.remember_elf(path, m_tree.probe_elf(target.path, symbols), symbols);
}

}  // namespace rootlock::fs
