// The scan cache's JSON form: every WheelScan field, ElfInfo in full (symbols as compact rows),
// and a reader that checks each field's shape rather than trusting a file anyone could edit.
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpu/compute_capability.hpp"
#include "python/wheel_scan.hpp"
#include "util/hex.hpp"
#include "util/json_text.hpp"
#include "util/quote.hpp"
namespace rootlock::python {

namespace {

using Json = nlohmann::ordered_json;

Json strings_json(const std::vector<std::string>& items) {
    Json out = Json::array();
    for (const auto& item : items)
        out.push_back(item);
    return out;
}

Json elf_json(const elf::ElfInfo& info) {
    Json out;
    out["class"] = static_cast<int>(info.elf_class);
    out["byte_order"] = static_cast<int>(info.byte_order);
    out["os_abi"] = info.os_abi;
    out["type"] = info.type;
    out["machine"] = info.machine;
    out["has_dynamic"] = info.has_dynamic;
    out["interpreter"] = info.interpreter;
    out["soname"] = info.soname;
    out["needed"] = strings_json(info.needed);
    out["rpath"] = info.rpath ? strings_json(*info.rpath) : Json();
    out["runpath"] = info.runpath ? strings_json(*info.runpath) : Json();
    out["flags"] = info.flags;
    out["flags_1"] = info.flags_1;
    out["version_needs"] = Json::array();
    for (const auto& need : info.version_needs) {
        Json versions = Json::array();
        for (const auto& version : need.versions) {
            versions.push_back(
                Json::array({version.name, version.hash, version.index, version.weak}));
        }
        out["version_needs"].push_back(Json{{"file", need.file}, {"versions", versions}});
    }
    out["version_defs"] = Json::array();
    for (const auto& def : info.version_defs) {
        out["version_defs"].push_back(Json{{"name", def.name},
                                           {"index", def.index},
                                           {"flags", def.flags},
                                           {"hash", def.hash},
                                           {"parents", strings_json(def.parents)}});
    }
    out["symbols_read"] = info.symbols_read;
    out["relocations_read"] = info.relocations_read;
    // [name, version, defined, hidden, binding, type, lazy]: libtorch has ~10^5 symbols.
    out["symbols"] = Json::array();
    for (const auto& symbol : info.symbols) {
        out["symbols"].push_back(
            Json::array({symbol.name, symbol.version, symbol.defined, symbol.hidden, symbol.binding,
                         symbol.type, symbol.lazy}));
    }
    return out;
}

// Reads fields of a parsed document, naming the first one of the wrong shape by its JSON path.
class Reader {
  public:
    util::Error fail(const std::string& where, const std::string& what) const {
        return util::make_error("scan cache", where + ": " + what);
    }

    const Json* field(const Json& object, const std::string& where, const char* key) {
        if (!object.is_object()) {
            m_error = fail(where, "expected an object");
            return nullptr;
        }
        auto found = object.find(key);
        if (found == object.end()) {
            m_error = fail(where + "." + key, "missing");
            return nullptr;
        }
        return &*found;
    }

    bool text(const Json& value, const std::string& where, std::string& out) {
        if (!value.is_string())
            return set(fail(where, "expected a string"));
        out = value.get<std::string>();
        return true;
    }

    bool flag(const Json& value, const std::string& where, bool& out) {
        if (!value.is_boolean())
            return set(fail(where, "expected a boolean"));
        out = value.get<bool>();
        return true;
    }

    template <class T>
    bool number(const Json& value, const std::string& where, T& out) {
        if (!value.is_number_unsigned() ||
            value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
            return set(
                fail(where, fmt::format("expected an unsigned integer of at most {}",
                                        static_cast<uint64_t>(std::numeric_limits<T>::max()))));
        }
        out = static_cast<T>(value.get<uint64_t>());
        return true;
    }

    bool strings(const Json& value, const std::string& where, std::vector<std::string>& out) {
        if (!value.is_array())
            return set(fail(where, "expected an array"));
        out.clear();
        for (size_t i = 0; i < value.size(); ++i) {
            std::string item;
            if (!text(value[i], fmt::format("{}[{}]", where, i), item))
                return false;
            out.push_back(std::move(item));
        }
        return true;
    }

    bool array(const Json& value, const std::string& where, size_t length = 0) {
        if (!value.is_array() || (length != 0 && value.size() != length)) {
            return set(fail(where, length == 0 ? "expected an array"
                                               : fmt::format("expected an array of {}", length)));
        }
        return true;
    }

    // field() then one of the readers above.
    template <class T, class Read>
    bool get(const Json& object, const std::string& where, const char* key, T& out, Read read) {
        const Json* value = field(object, where, key);
        return value != nullptr && (this->*read)(*value, where + "." + key, out);
    }

    bool set(util::Error error) {
        m_error = std::move(error);
        return false;
    }

    const util::Error& error() const { return m_error; }

  private:
    util::Error m_error;
};

bool read_elf(Reader& r, const Json& json, const std::string& where, elf::ElfInfo& info) {
    uint8_t elf_class = 0;
    uint8_t byte_order = 0;
    if (!r.get(json, where, "class", elf_class, &Reader::number<uint8_t>) ||
        !r.get(json, where, "byte_order", byte_order, &Reader::number<uint8_t>)) {
        return false;
    }
    if (elf_class < 1 || elf_class > 2)
        return r.set(r.fail(where + ".class", "expected 1 or 2"));
    if (byte_order < 1 || byte_order > 2)
        return r.set(r.fail(where + ".byte_order", "expected 1 or 2"));
    info.elf_class = static_cast<elf::ElfClass>(elf_class);
    info.byte_order = static_cast<elf::ByteOrder>(byte_order);
    if (!r.get(json, where, "os_abi", info.os_abi, &Reader::number<uint8_t>) ||
        !r.get(json, where, "type", info.type, &Reader::number<uint16_t>) ||
        !r.get(json, where, "machine", info.machine, &Reader::number<uint16_t>) ||
        !r.get(json, where, "has_dynamic", info.has_dynamic, &Reader::flag) ||
        !r.get(json, where, "interpreter", info.interpreter, &Reader::text) ||
        !r.get(json, where, "soname", info.soname, &Reader::text) ||
        !r.get(json, where, "needed", info.needed, &Reader::strings) ||
        !r.get(json, where, "flags", info.flags, &Reader::number<uint32_t>) ||
        !r.get(json, where, "flags_1", info.flags_1, &Reader::number<uint32_t>) ||
        !r.get(json, where, "symbols_read", info.symbols_read, &Reader::flag) ||
        !r.get(json, where, "relocations_read", info.relocations_read, &Reader::flag)) {
        return false;
    }
    for (auto [key, out] : {std::pair{"rpath", &info.rpath}, std::pair{"runpath", &info.runpath}}) {
        const Json* value = r.field(json, where, key);
        if (value == nullptr)
            return false;
        if (value->is_null())
            continue;
        std::vector<std::string> parts;
        if (!r.strings(*value, where + "." + key, parts))
            return false;
        *out = std::move(parts);
    }
    const Json* needs = r.field(json, where, "version_needs");
    if (needs == nullptr || !r.array(*needs, where + ".version_needs"))
        return false;
    for (size_t i = 0; i < needs->size(); ++i) {
        std::string at = fmt::format("{}.version_needs[{}]", where, i);
        elf::VersionNeed need;
        if (!r.get((*needs)[i], at, "file", need.file, &Reader::text))
            return false;
        const Json* versions = r.field((*needs)[i], at, "versions");
        if (versions == nullptr || !r.array(*versions, at + ".versions"))
            return false;
        for (size_t j = 0; j < versions->size(); ++j) {
            std::string vat = fmt::format("{}.versions[{}]", at, j);
            const Json& row = (*versions)[j];
            elf::NeededVersion version;
            if (!r.array(row, vat, 4) || !r.text(row[0], vat + "[0]", version.name) ||
                !r.number(row[1], vat + "[1]", version.hash) ||
                !r.number(row[2], vat + "[2]", version.index) ||
                !r.flag(row[3], vat + "[3]", version.weak)) {
                return false;
            }
            need.versions.push_back(std::move(version));
        }
        info.version_needs.push_back(std::move(need));
    }
    const Json* defs = r.field(json, where, "version_defs");
    if (defs == nullptr || !r.array(*defs, where + ".version_defs"))
        return false;
    for (size_t i = 0; i < defs->size(); ++i) {
        std::string at = fmt::format("{}.version_defs[{}]", where, i);
        elf::VersionDef def;
        if (!r.get((*defs)[i], at, "name", def.name, &Reader::text) ||
            !r.get((*defs)[i], at, "index", def.index, &Reader::number<uint16_t>) ||
            !r.get((*defs)[i], at, "flags", def.flags, &Reader::number<uint16_t>) ||
            !r.get((*defs)[i], at, "hash", def.hash, &Reader::number<uint32_t>) ||
            !r.get((*defs)[i], at, "parents", def.parents, &Reader::strings)) {
            return false;
        }
        info.version_defs.push_back(std::move(def));
    }
    const Json* symbols = r.field(json, where, "symbols");
    if (symbols == nullptr || !r.array(*symbols, where + ".symbols"))
        return false;
    info.symbols.reserve(symbols->size());
    for (size_t i = 0; i < symbols->size(); ++i) {
        std::string at = fmt::format("{}.symbols[{}]", where, i);
        const Json& row = (*symbols)[i];
        elf::Symbol symbol;
        if (!r.array(row, at, 7) || !r.text(row[0], at + "[0]", symbol.name) ||
            !r.text(row[1], at + "[1]", symbol.version) ||
            !r.flag(row[2], at + "[2]", symbol.defined) ||
            !r.flag(row[3], at + "[3]", symbol.hidden) ||
            !r.number(row[4], at + "[4]", symbol.binding) ||
            !r.number(row[5], at + "[5]", symbol.type) ||
            !r.flag(row[6], at + "[6]", symbol.lazy)) {
            return false;
        }
        info.symbols.push_back(std::move(symbol));
    }
    return true;
}

bool read_entry(Reader& r, const Json& json, const std::string& at, WheelEntry& entry) {
    if (!r.get(json, at, "path", entry.path, &Reader::text) ||
        !r.get(json, at, "size", entry.size, &Reader::number<uint64_t>) ||
        !r.get(json, at, "mode", entry.mode, &Reader::number<uint32_t>) ||
        !r.get(json, at, "executable", entry.executable, &Reader::flag) ||
        !r.get(json, at, "sha256", entry.sha256_base64, &Reader::text) ||
        !r.get(json, at, "elf_error", entry.elf_error, &Reader::text) ||
        !r.get(json, at, "device_code_error", entry.device_code_error, &Reader::text)) {
        return false;
    }
    const Json* architectures = r.field(json, at, "architectures");
    if (architectures == nullptr ||
        !r.strings(*architectures, at + ".architectures", entry.architectures))
        return false;
    for (const std::string& name : entry.architectures) {
        if (!gpu::parse_sm_name(name).ok())
            return r.set(r.fail(at + ".architectures", "not an nvcc architecture name"));
    }
    const Json* info = r.field(json, at, "elf");
    if (info == nullptr)
        return false;
    if (!info->is_null()) {
        entry.elf.emplace();
        if (!read_elf(r, *info, at + ".elf", *entry.elf))
            return false;
    }
    const Json* content = r.field(json, at, "content_hex");
    if (content == nullptr)
        return false;
    if (!content->is_null()) {
        std::string hex;
        if (!r.text(*content, at + ".content_hex", hex))
            return false;
        entry.content = util::from_hex(hex);
        if (!entry.content)
            return r.set(r.fail(at + ".content_hex", "expected lowercase hex digits"));
    }
    return true;
}

}  // namespace

std::string scan_to_json(const WheelScan& scan) {
    Json out;
    out["schema"] = k_scan_schema;
    out["wheel_sha256"] = scan.wheel_sha256;
    out["wheel_size"] = scan.wheel_size;
    out["filename"] = scan.filename.filename;
    out["dist_info"] = scan.dist_info;
    out["data_dir"] = scan.data_dir;
    out["metadata"] = scan.metadata;
    out["wheel"] = scan.wheel;
    out["record"] = scan.record;
    out["entry_points"] = scan.entry_points;
    out["entries"] = Json::array();
    for (const auto& entry : scan.entries) {
        Json item;
        item["path"] = entry.path;
        item["size"] = entry.size;
        item["mode"] = entry.mode;
        item["executable"] = entry.executable;
        item["sha256"] = entry.sha256_base64;
        item["elf"] = entry.elf ? elf_json(*entry.elf) : Json();
        item["elf_error"] = entry.elf_error;
        item["architectures"] = strings_json(entry.architectures);
        item["device_code_error"] = entry.device_code_error;
        item["content_hex"] = entry.content ? Json(util::to_hex(*entry.content)) : Json();
        out["entries"].push_back(std::move(item));
    }
    out["provides"] = strings_json(scan.provides);
    out["needs"] = strings_json(scan.needs);
    // Every string is UTF-8: scan_wheel refuses other paths and dist-info texts, and script
    // bytes are hex. The handler only keeps a hand-made scan from throwing.
    return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

util::Result<WheelScan> scan_from_json(std::string_view json) {
    Json doc = Json::parse(json.begin(), json.end(), nullptr, false);
    if (doc.is_discarded())
        return util::make_error("scan cache", "not valid JSON");
    Reader r;
    const Json* schema_field = r.field(doc, "$", "schema");
    if (schema_field == nullptr)
        return r.error();
    if (!schema_field->is_number_integer() || schema_field->get<int64_t>() != k_scan_schema) {
        return util::make_error(
            "scan cache",
            fmt::format("schema {} is not {}", util::printable(util::json_text(*schema_field)),
                        k_scan_schema));
    }
    WheelScan scan;
    std::string filename;
    if (!r.get(doc, "$", "wheel_sha256", scan.wheel_sha256, &Reader::text) ||
        !r.get(doc, "$", "wheel_size", scan.wheel_size, &Reader::number<uint64_t>) ||
        !r.get(doc, "$", "filename", filename, &Reader::text) ||
        !r.get(doc, "$", "dist_info", scan.dist_info, &Reader::text) ||
        !r.get(doc, "$", "data_dir", scan.data_dir, &Reader::text) ||
        !r.get(doc, "$", "metadata", scan.metadata, &Reader::text) ||
        !r.get(doc, "$", "wheel", scan.wheel, &Reader::text) ||
        !r.get(doc, "$", "record", scan.record, &Reader::text) ||
        !r.get(doc, "$", "entry_points", scan.entry_points, &Reader::text) ||
        !r.get(doc, "$", "provides", scan.provides, &Reader::strings) ||
        !r.get(doc, "$", "needs", scan.needs, &Reader::strings)) {
        return r.error();
    }
    auto parsed = parse_wheel_filename(filename);
    if (!parsed.ok())
        return r.fail("$.filename", parsed.error().text());
    scan.filename = std::move(parsed).value();
    const Json* entries = r.field(doc, "$", "entries");
    if (entries == nullptr || !r.array(*entries, "$.entries"))
        return r.error();
    scan.entries.reserve(entries->size());
    for (size_t i = 0; i < entries->size(); ++i) {
        WheelEntry entry;
        if (!read_entry(r, (*entries)[i], fmt::format("$.entries[{}]", i), entry))
            return r.error();
        if (!scan.entries.empty() && !(scan.entries.back().path < entry.path))
            return r.fail(fmt::format("$.entries[{}].path", i), "not sorted after the one before");
        scan.entries.push_back(std::move(entry));
    }
    return scan;
}

}  // namespace rootlock::python
