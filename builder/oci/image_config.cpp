// The config blob's fields that say where an image runs and what its environment is, read from
// untrusted JSON with every type checked; and the platform choice in a multi-arch index.
#include "oci/image_config.hpp"

#include <nlohmann/json.hpp>

#include "oci/image_source.hpp"
#include "util/quote.hpp"

namespace rootlock::oci {

namespace {

// A string member, or "" when absent; false when present and not a string.
bool optional_string(const nlohmann::json& object, const char* key, std::string& out) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null())
        return true;
    if (!it->is_string())
        return false;
    out = it->get<std::string>();
    return true;
}

}  // namespace

util::Result<ImageConfig> parse_image_config(const std::string& text, const std::string& where) {
    auto document = nlohmann::json::parse(text, nullptr, false);
    if (document.is_discarded() || !document.is_object())
        return util::make_error(where, "not a JSON object");
    ImageConfig out;
    if (!optional_string(document, "architecture", out.architecture) ||
        !optional_string(document, "os", out.os) ||
        !optional_string(document, "variant", out.variant))
        return util::make_error(where, "architecture, os or variant is not a string");
    auto config = document.find("config");
    if (config == document.end() || config->is_null())
        return out;
    if (!config->is_object())
        return util::make_error(where, "\"config\" is not an object");
    if (!optional_string(*config, "WorkingDir", out.working_dir))
        return util::make_error(where, "config.WorkingDir is not a string");
    if (auto env = config->find("Env"); env != config->end() && !env->is_null()) {
        if (!env->is_array())
            return util::make_error(where, "config.Env is not an array of strings");
        for (const auto& item : *env) {
            if (!item.is_string())
                return util::make_error(where, "config.Env is not an array of strings");
            out.env.push_back(item.get<std::string>());
        }
    }
    if (auto labels = config->find("Labels"); labels != config->end() && !labels->is_null()) {
        if (!labels->is_object())
            return util::make_error(where, "config.Labels is not an object of strings");
        for (const auto& [key, value] : labels->items()) {
            if (!value.is_string())
                return util::make_error(where, "config.Labels is not an object of strings");
            out.labels[key] = value.get<std::string>();
        }
    }
    return out;
}

std::string env_value(const ImageConfig& config, std::string_view name) {
    std::string value;
    for (const auto& item : config.env) {
        // The last assignment wins, as in a shell's environment.
        if (item.size() > name.size() && item.compare(0, name.size(), name) == 0 &&
            item[name.size()] == '=')
            value = item.substr(name.size() + 1);
    }
    return value;
}

util::Result<Platform> parse_platform(std::string_view text) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        size_t slash = text.find('/', start);
        parts.emplace_back(text.substr(start, slash - start));
        if (slash == std::string_view::npos)
            break;
        start = slash + 1;
    }
    bool empty_part = false;
    for (const auto& part : parts)
        empty_part = empty_part || part.empty();
    if (parts.size() < 2 || parts.size() > 3 || empty_part)
        return util::make_error("--image-platform",
                                util::quote(text) + " is not OS/ARCH[/VARIANT]");
    Platform out;
    out.os = parts[0];
    out.architecture = parts[1];
    out.variant = parts.size() == 3 ? parts[2] : "";
    return out;
}

std::string to_string(const Platform& platform) {
    std::string out = platform.os + "/" + platform.architecture;
    if (!platform.variant.empty())
        out += "/" + platform.variant;
    return out;
}

util::Result<std::vector<PlatformEntry>> parse_platform_index(const std::string& text,
                                                              const std::string& where) {
    ROOTLOCK_TRY(entries, parse_index(text, where));
    // parse_index has checked the document and every descriptor; the platforms are read from
    // the same array, in the same order.
    auto document = nlohmann::json::parse(text, nullptr, false);
    const auto& manifests = document["manifests"];
    std::vector<PlatformEntry> out;
    for (size_t i = 0; i < entries.size() && i < manifests.size(); ++i) {
        PlatformEntry entry;
        entry.descriptor = entries[i].descriptor;
        entry.platform = Platform{"", "", ""};
        auto platform = manifests[i].find("platform");
        if (platform != manifests[i].end() && !platform->is_null()) {
            if (!platform->is_object() || !optional_string(*platform, "os", entry.platform.os) ||
                !optional_string(*platform, "architecture", entry.platform.architecture) ||
                !optional_string(*platform, "variant", entry.platform.variant))
                return util::make_error(where,
                                        "a manifest's platform is not an object of "
                                        "strings");
        }
        out.push_back(std::move(entry));
    }
    return out;
}

util::Result<Descriptor> pick_platform(const std::vector<PlatformEntry>& entries,
                                       const Platform& want, const std::string& where) {
    std::string there;
    for (const auto& entry : entries) {
        const Platform& have = entry.platform;
        if (have.os == want.os && have.architecture == want.architecture &&
            (want.variant.empty() || have.variant == want.variant))
            return entry.descriptor;
        if (have.os.empty() || have.os == "unknown")
            continue;  // attestations and other artifacts
        there += (there.empty() ? "" : ", ") + util::printable(to_string(have));
    }
    return util::make_error(where, "no " + util::printable(to_string(want)) + " image" +
                                       (there.empty() ? "" : " (there are " + there + ")"));
}

}  // namespace rootlock::oci
