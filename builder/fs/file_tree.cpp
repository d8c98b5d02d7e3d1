// FileTree's shared behaviour: the ELF probe cache and the open_verify-style classification of
// a candidate file, so that every kind of tree answers "is this a loadable object?" the same way.
#include "fs/file_tree.hpp"

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "elf/elf_reader.hpp"
#include "fs/tree_errors.hpp"

namespace rootlock::fs {

namespace {

// glibc's open_verify reads sizeof(ElfW(Ehdr)) bytes before anything else and stops with "file
// too short" when fewer arrive. Every target rootlock checks runs a 64-bit ld.so, whose header
// is 64 bytes (an ELF32 header is 52), so a 60-byte file is "too short" there, not "invalid".

}  // namespace

util::Error file_too_large(std::string_view path, uint64_t size, uint64_t max_size) {
    return util::make_error(
        std::string(path), fmt::format("file is {} bytes, over the {}-byte limit", size, max_size));
}

std::string errno_text(int error_number) {
    switch (error_number) {
        case ENOENT:
            return "no such file or directory";
        case ENOTDIR:
            return "not a directory";
        case EACCES:
            return "permission denied";
        case EPERM:
            return "operation not permitted";
        case ELOOP:
            return "too many levels of symbolic links";
        case EISDIR:
            return "is a directory";
        case EINVAL:
            return "invalid argument";
        case ENAMETOOLONG:
            return "file name too long";
        case EIO:
            return "input/output error";
        case EMFILE:
            return "too many open files";
        case ENFILE:
            return "too many open files in system";
        case ENOMEM:
            return "out of memory";
        case ENOSPC:
            return "no space left on device";
        case EDQUOT:
            return "disk quota exceeded";
        case EROFS:
            return "read-only file system";
        case EFBIG:
            return "file too large";
        default:
            return fmt::format("error {}", error_number);
    }
}

uint8_t ident_class_of(std::span<const std::byte> head) {
    if (head.size() < 5 || !elf::has_elf_magic(head))
        return 0;
    return static_cast<uint8_t>(head[4]);
}

std::optional<ElfProbe> classify_head(std::span<const std::byte> head) {
    ElfProbe probe;
    if (head.size() < k_elf_header_size) {
        probe.outcome = ElfProbe::Outcome::too_short;
        probe.error = "file too short";
        return probe;
    }
    if (!elf::has_elf_magic(head)) {
        probe.outcome = ElfProbe::Outcome::not_elf;
        probe.error = "invalid ELF header";
        return probe;
    }
    return std::nullopt;
}

ElfProbe probe_source(const util::ByteSource& source, bool symbols) {
    ElfProbe probe;
    std::array<std::byte, k_elf_header_size> magic{};
    if (source.size() < magic.size())  // the length settles it, nothing need be read
        return *classify_head(std::span(magic).first(static_cast<size_t>(source.size())));
    if (auto status = source.read_at(0, magic); !status.ok()) {
        probe.outcome = ElfProbe::Outcome::malformed;
        probe.error = status.error().text();
        return probe;
    }
    if (auto settled = classify_head(magic))
        return *std::move(settled);
    probe.ident_class = ident_class_of(magic);
    auto info = elf::read_elf(source, elf::ReadOptions{.symbols = symbols});
    if (!info.ok()) {
        probe.outcome = ElfProbe::Outcome::malformed;
        probe.error = info.error().text();
        return probe;
    }
    probe.outcome = ElfProbe::Outcome::elf;
    probe.info = std::make_shared<const elf::ElfInfo>(std::move(info).value());
    return probe;
}

util::Result<std::vector<StatEntry>> FileTree::list_stats(std::string_view path) const {
    auto entries = list(path);
    if (!entries.ok())
        return entries.error();
    const std::string prefix = path == "/" ? "/" : std::string(path) + "/";
    std::vector<StatEntry> stats;
    stats.reserve(entries->size());
    for (auto& entry : *entries) {
        if (auto stat = lstat(prefix + entry.name))
            stats.push_back(StatEntry{std::move(entry.name), *stat});
    }
    return stats;
}

std::optional<ElfProbe> FileTree::cached_elf(std::string_view path, bool symbols) const {
    std::lock_guard lock(m_cache_mutex);
    auto found = m_elf_cache.find(std::string(path));
    // Only a parsed object can lack symbols; every other outcome is final.
    if (found != m_elf_cache.end() && (!symbols || found->second.with_symbols ||
                                       found->second.probe.outcome != ElfProbe::Outcome::elf)) {
        return found->second.probe;
    }
    return std::nullopt;
}

ElfProbe FileTree::probe_regular_elf(std::string_view path, bool symbols) const {
    return probe_elf(path, symbols);
}

std::vector<ElfProbe> FileTree::probe_regular_elf_batch(std::string_view dir,
                                                        std::span<const std::string_view> names,
                                                        bool symbols) const {
    std::vector<ElfProbe> probes;
    probes.reserve(names.size());
    for (std::string_view name : names)
        probes.push_back(probe_regular_elf(join_path(dir, name), symbols));
    return probes;
}

std::string join_path(std::string_view dir, std::string_view name) {
    std::string path;
    path.reserve(dir.size() + 1 + name.size());
    path.append(dir);
    if (path.empty() || path.back() != '/')
        path.push_back('/');
    path.append(name);
    return path;
}

ElfProbe FileTree::probe_elf(std::string_view path, bool symbols) const {
    if (auto cached = cached_elf(path, symbols))
        return *std::move(cached);
    // Missing paths and directories are not cached: the loader probes many of them (hwcaps
    // subdirectories of every search directory) and an lstat is cheaper than the memory.
    auto stat = lstat(path);
    if (!stat)
        return ElfProbe{.outcome = ElfProbe::Outcome::missing, .info = {}, .error = {}};
    if (stat->kind != NodeKind::regular) {
        return ElfProbe{.outcome = ElfProbe::Outcome::not_regular, .info = {}, .error = {}};
    }
    return probe_opened(path, open(path), symbols);
}

ElfProbe FileTree::probe_opened(std::string_view path,
                                const util::Result<std::unique_ptr<util::ByteSource>>& source,
                                bool symbols) const {
    ElfProbe probe;
    if (source.ok()) {
        probe = probe_source(**source, symbols);
    } else {
        probe.outcome = ElfProbe::Outcome::malformed;
        probe.error = source.error().text();
    }
    // A file that is not ELF at all is cheap to classify again and is probed again rarely
    // (a checker walking a root meets tens of thousands): only objects are cached.
    if (probe.outcome == ElfProbe::Outcome::elf || probe.outcome == ElfProbe::Outcome::malformed) {
        remember_elf(std::string(path), probe, symbols);
    }
    return probe;
}

void FileTree::remember_elf(const std::string& path, ElfProbe probe, bool with_symbols) const {
    std::lock_guard lock(m_cache_mutex);
    // Two threads may parse the same file at once; the later result is as good as the earlier.
    m_elf_cache.insert_or_assign(path, CachedProbe{std::move(probe), with_symbols});
}

}  // namespace rootlock::fs
