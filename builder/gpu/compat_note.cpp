// The compat libcuda's forward-compatibility note found, its JSON read as the enable-cuda-compat
// hook reads it, and the hook's decision; see compat_note.hpp.
#include "gpu/compat_note.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "elf/elf_sections.hpp"

namespace rootlock::gpu {

using util::Result;

namespace {

using CompatJson = nlohmann::ordered_json;

// Go's encoding/json matches a key to a field by exact name first, then case-insensitively.
bool compat_key_is(std::string_view key, std::string_view field) {
    return key.size() == field.size() &&
           std::equal(key.begin(), key.end(), field.begin(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) ==
                      std::tolower(static_cast<unsigned char>(b));
           });
}

util::Error compat_error(std::string message) {
    return util::make_error("", std::move(message));
}

// A JSON integer that fits an int; nullopt for anything else (Go refuses 535.0 for an int).
std::optional<int> compat_int(const CompatJson& value) {
    if (value.is_number_unsigned()) {
        auto number = value.get<uint64_t>();
        if (number > static_cast<uint64_t>(INT_MAX))
            return std::nullopt;
        return static_cast<int>(number);
    }
    if (value.is_number_integer()) {
        auto number = value.get<int64_t>();
        if (number < INT_MIN || number > INT_MAX)
            return std::nullopt;
        return static_cast<int>(number);
    }
    return std::nullopt;
}

Result<std::vector<int>> compat_int_array(const CompatJson& value, std::string_view field) {
    std::vector<int> out;
    if (value.is_null())
        return out;  // Go leaves a nil slice
    auto error = [&] {
        return compat_error(fmt::format("\"{}\" is not an array of integers", field));
    };
    if (!value.is_array())
        return error();
    for (const CompatJson& item : value) {
        std::optional<int> number = compat_int(item);
        if (!number)
            return error();
        out.push_back(*number);
    }
    return out;
}

// "13.1" or "12.10.2": one to three numbers (Masterminds semver would take more forms; the notes
// hold MAJOR.MINOR). The missing parts are 0.
std::optional<std::array<uint64_t, 3>> compat_version(std::string_view text) {
    std::array<uint64_t, 3> parts{};
    size_t index = 0;
    size_t start = 0;
    while (true) {
        size_t dot = text.find('.', start);
        std::string_view part =
            text.substr(start, dot == std::string_view::npos ? dot : dot - start);
        if (part.empty() || part.size() > 9 || index == parts.size())
            return std::nullopt;
        uint64_t value = 0;
        for (char c : part) {
            if (c < '0' || c > '9')
                return std::nullopt;
            value = value * 10 + static_cast<uint64_t>(c - '0');
        }
        parts[index++] = value;
        if (dot == std::string_view::npos)
            return parts;
        start = dot + 1;
    }
}

}  // namespace

Result<CompatNote> parse_compat_note(std::string_view json) {
    while (!json.empty() && json.back() == '\0')
        json.remove_suffix(1);
    while (!json.empty() && json.front() == '\0')
        json.remove_prefix(1);
    // No exceptions: a parse failure is a discarded value.
    CompatJson document = CompatJson::parse(json, nullptr, false);
    if (document.is_discarded())
        return compat_error("the descriptor is not valid JSON");
    if (!document.is_object()) {
        return compat_error(fmt::format("the descriptor is JSON but not an object (it is {})",
                                        document.type_name()));
    }
    CompatNote note;
    for (const auto& [key, value] : document.items()) {
        if (compat_key_is(key, "format")) {
            if (value.is_null())
                continue;
            std::optional<int> format = compat_int(value);
            if (!format)
                return compat_error("\"format\" is not an integer");
            note.format = *format;
        } else if (compat_key_is(key, "CUDA version")) {
            if (value.is_null())
                continue;
            if (!value.is_string())
                return compat_error("\"CUDA version\" is not a string");
            note.cuda_version = value.get<std::string>();
        } else if (compat_key_is(key, "driver")) {
            ROOTLOCK_TRY(branches, compat_int_array(value, "driver"));
            note.driver_branches = std::move(branches);
        } else if (compat_key_is(key, "device")) {
            ROOTLOCK_TRY(devices, compat_int_array(value, "device"));
            note.devices = std::move(devices);
        }
    }
    return note;
}

Result<std::optional<CompatNote>> read_compat_note(const util::ByteSource& source) {
    ROOTLOCK_TRY(section, elf::find_section(source, k_compat_note_section));
    if (!section || section->type != elf::k_sht_note)
        return std::optional<CompatNote>();
    ROOTLOCK_TRY(notes, elf::read_notes(source, *section, elf::NoteReading::clip_descriptor));
    // The hook reads the section's first note only.
    if (notes.empty() || notes.front().owner != k_compat_note_owner ||
        notes.front().descriptor.empty()) {
        return std::optional<CompatNote>();
    }
    const elf::ElfNote& first = notes.front();
    std::string_view json(reinterpret_cast<const char*>(first.descriptor.data()),
                          first.descriptor.size());
    auto parsed = parse_compat_note(json);
    if (!parsed) {
        return util::make_error(
            util::at_offset(source.name(), first.offset),
            fmt::format("{}: {}", k_compat_note_section, parsed.error().message));
    }
    return std::optional<CompatNote>(std::move(parsed.value()));
}

bool compat_allows(const CompatNote& note, int host_branch) {
    return std::find(note.driver_branches.begin(), note.driver_branches.end(), host_branch) !=
           note.driver_branches.end();
}

bool compat_newer_cuda(const CompatNote& note, std::string_view host_cuda_version) {
    auto compat = compat_version(note.cuda_version);
    auto host = compat_version(host_cuda_version);
    return compat && host && *compat > *host;
}

}  // namespace rootlock::gpu
