// CycloneDX 1.5 from the lock: the image, its base and one component per locked package, with
// purls, wheel hashes and the sonames rootlock recorded, in a fixed key and component order.
#include "image/sbom.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/sha256.hpp"

namespace rootlock::image {

namespace {

using Json = nlohmann::ordered_json;

// 9999-12-31T23:59:59Z: the last second RFC 3339's four-digit year can write.
constexpr uint64_t k_last_rfc3339_second = 253402300799ULL;

const std::string k_image_ref = "image";
const std::string k_base_ref = "base";

struct HashName {
    std::string_view hashlib;    // PEP 751 keys are hashlib's names
    std::string_view cyclonedx;  // CycloneDX's hash-alg enum
    size_t hex_digits;
};

constexpr std::array<HashName, 9> k_hash_names = {{
    {"md5", "MD5", 32},
    {"sha1", "SHA-1", 40},
    {"sha256", "SHA-256", 64},
    {"sha384", "SHA-384", 96},
    {"sha512", "SHA-512", 128},
    {"sha3_256", "SHA3-256", 64},
    {"sha3_384", "SHA3-384", 96},
    {"sha3_512", "SHA3-512", 128},
    {"blake2b", "BLAKE2b-512", 128},
}};

bool is_hex(std::string_view text) {
    return std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    });
}

std::string ascii_lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

// CycloneDX "hashes" for a PEP 751 hashes table, in CycloneDX's algorithm order.
Json hashes_json(const std::map<std::string, std::string>& hashes) {
    Json out = Json::array();
    for (const auto& name : k_hash_names) {
        auto found = hashes.find(std::string(name.hashlib));
        if (found == hashes.end() || found->second.size() != name.hex_digits ||
            !is_hex(found->second))
            continue;
        out.push_back(Json{{"alg", name.cyclonedx}, {"content", ascii_lower(found->second)}});
    }
    return out;
}

Json sha256_json(const std::string& hex) {
    Json out = Json::array();
    if (util::is_sha256_hex(hex))
        out.push_back(Json{{"alg", "SHA-256"}, {"content", hex}});
    return out;
}

void add_property(Json& properties, std::string_view name, std::string_view value) {
    properties.push_back(Json{{"name", name}, {"value", value}});
}

// Puts `value` under `key` unless it is empty: CycloneDX has no use for empty arrays here.
void set_if_any(Json& object, const char* key, Json value) {
    if (!value.empty())
        object[key] = std::move(value);
}

// The last segment of a URL or path, without query or fragment.
std::string file_name_of(std::string_view location) {
    location = location.substr(0, location.find_first_of("?#"));
    size_t slash = location.find_last_of('/');
    if (slash != std::string_view::npos)
        location.remove_prefix(slash + 1);
    return std::string(location);
}

Json image_json(const pylock::Lock& lock, const std::string& image_name,
                const std::string& image_sha256) {
    Json image;
    image["type"] = "container";
    image["bom-ref"] = k_image_ref;
    image["name"] = image_name;
    set_if_any(image, "hashes", sha256_json(image_sha256));
    Json properties = Json::array();
    if (lock.rootlock) {
        const pylock::LockTarget& target = lock.rootlock->target;
        const std::pair<std::string_view, const std::string*> fields[] = {
            {"rootlock:target-arch", &target.arch},
            {"rootlock:target-glibc", &target.glibc},
            {"rootlock:target-python",
             target.python_full.empty() ? &target.python : &target.python_full},
            {"rootlock:target-cuda", &target.cuda},
            {"rootlock:target-driver", &target.driver},
            {"rootlock:target-torch", &target.torch},
            {"rootlock:recipe-sha256", &lock.rootlock->recipe_sha256},
        };
        for (const auto& [name, value] : fields) {
            if (!value->empty())
                add_property(properties, name, *value);
        }
    }
    set_if_any(image, "properties", std::move(properties));
    return image;
}

Json base_json(const pylock::LockBase& base) {
    Json out;
    out["type"] = "operating-system";
    out["bom-ref"] = k_base_ref;
    if (base.kind == "debian") {
        out["name"] = "debian";
        if (!base.suite.empty())
            out["version"] = base.suite;
    } else {
        std::string name = file_name_of(base.url.empty() ? base.path : base.url);
        out["name"] = name.empty() ? "base" : name;
    }
    set_if_any(out, "hashes", sha256_json(base.sha256));
    if (!base.url.empty())
        out["externalReferences"] =
            Json::array({Json{{"type", "distribution"}, {"url", base.url}}});
    Json properties = Json::array();
    add_property(properties, "rootlock:base-kind", base.kind);
    if (!base.path.empty())
        add_property(properties, "rootlock:base-path", base.path);
    if (!base.mirror.empty())
        add_property(properties, "rootlock:debian-mirror", base.mirror);
    if (!base.variant.empty())
        add_property(properties, "rootlock:debian-variant", base.variant);
    for (const auto& package : base.include)
        add_property(properties, "rootlock:debian-include", package);
    out["properties"] = std::move(properties);
    return out;
}

Json package_json(const pylock::LockPackage& package, const std::string& ref,
                  const std::string& purl) {
    Json out;
    out["type"] = "library";
    out["bom-ref"] = ref;
    out["name"] = package.name;
    if (!package.version.empty())
        out["version"] = package.version;
    if (package.wheels.size() == 1)
        set_if_any(out, "hashes", hashes_json(package.wheels.front().hashes));
    out["purl"] = purl;
    Json references = Json::array();
    for (const auto& wheel : package.wheels) {
        if (wheel.url.empty())
            continue;
        Json reference{{"type", "distribution"}, {"url", wheel.url}};
        set_if_any(reference, "hashes", hashes_json(wheel.hashes));
        references.push_back(std::move(reference));
    }
    set_if_any(out, "externalReferences", std::move(references));
    Json properties = Json::array();
    if (package.rootlock) {
        // canonicalize() sorted and deduplicated both lists.
        for (const auto& soname : package.rootlock->provides)
            add_property(properties, "rootlock:provides", soname);
        for (const auto& soname : package.rootlock->needs)
            add_property(properties, "rootlock:needs", soname);
    }
    set_if_any(out, "properties", std::move(properties));
    return out;
}

Json refs_json(const std::set<std::string>& refs) {
    Json out = Json::array();
    for (const auto& ref : refs)
        out.push_back(ref);
    return out;
}

}  // namespace

namespace {

// A purl component: everything but A-Z a-z 0-9 . - _ ~ percent-encoded.
std::string purl_encode(std::string_view text) {
    std::string out;
    for (char c : text) {
        bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                          (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' || c == '~';
        if (unreserved)
            out += c;
        else
            out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    }
    return out;
}

// The purl distro qualifier of a Debian suite: "debian-12" for bookworm and its updates.
std::string debian_distro(std::string_view suite) {
    static const std::pair<std::string_view, std::string_view> k_releases[] = {{"buster", "10"},
                                                                               {"bullseye", "11"},
                                                                               {"bookworm", "12"},
                                                                               {"trixie", "13"},
                                                                               {"forky", "14"}};
    const std::string_view codename = suite.substr(0, suite.find('-'));
    for (const auto& [name, number] : k_releases) {
        if (codename == name)
            return "debian-" + std::string(number);
    }
    return "debian-" + std::string(codename);
}

}  // namespace

std::string deb_purl(std::string_view name, std::string_view version, std::string_view arch,
                     std::string_view suite) {
    return "pkg:deb/debian/" + purl_encode(name) + "@" + purl_encode(version) +
           "?arch=" + purl_encode(arch) + "&distro=" + debian_distro(suite);
}

std::string pypi_purl(std::string_view name, std::string_view version) {
    auto encode = [](std::string_view text) {
        std::string out;
        for (char c : text) {
            bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                              (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' ||
                              c == '~';
            if (unreserved)
                out += c;
            else
                out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
        }
        return out;
    };
    std::string normalised = ascii_lower(name);
    std::replace(normalised.begin(), normalised.end(), '_', '-');
    std::string purl = "pkg:pypi/" + encode(normalised);
    if (!version.empty())
        purl += "@" + encode(version);
    return purl;
}

std::string sbom_serial_number(std::string_view image_sha256) {
    util::Sha256 hasher;
    hasher.update(image_sha256);
    util::Sha256Digest digest = hasher.digest();
    // RFC 4122: version 5 in the high nibble of byte 6, variant 10xx in byte 8.
    digest[6] = static_cast<unsigned char>((digest[6] & 0x0fU) | 0x50U);
    digest[8] = static_cast<unsigned char>((digest[8] & 0x3fU) | 0x80U);
    std::string hex = util::Sha256::to_hex(digest).substr(0, 32);
    return "urn:uuid:" + hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
           hex.substr(16, 4) + "-" + hex.substr(20, 12);
}

std::optional<std::string> rfc3339_utc(uint64_t seconds) {
    if (seconds > k_last_rfc3339_second)
        return std::nullopt;
    // Howard Hinnant's civil_from_days, for days since 1970-01-01 (never negative here).
    const uint64_t days = seconds / 86400;
    const uint64_t second_of_day = seconds % 86400;
    const uint64_t z = days + 719468;
    const uint64_t era = z / 146097;
    const uint64_t day_of_era = z - era * 146097;
    const uint64_t year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    const uint64_t day_of_year =
        day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    const uint64_t month_index = (5 * day_of_year + 2) / 153;
    const uint64_t day = day_of_year - (153 * month_index + 2) / 5 + 1;
    const uint64_t month = month_index < 10 ? month_index + 3 : month_index - 9;
    const uint64_t year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", year, month, day,
                       second_of_day / 3600, second_of_day / 60 % 60, second_of_day % 60);
}

std::string cyclonedx_sbom(const pylock::Lock& input, const std::string& image_name,
                           const std::string& image_sha256) {
    const pylock::Lock lock = pylock::canonicalize(input);

    Json bom;
    bom["$schema"] = "http://cyclonedx.org/schema/bom-1.5.schema.json";
    bom["bomFormat"] = "CycloneDX";
    bom["specVersion"] = "1.5";
    bom["serialNumber"] = sbom_serial_number(image_sha256);
    bom["version"] = 1;

    Json metadata;
    if (lock.rootlock) {
        if (auto timestamp = rfc3339_utc(lock.rootlock->source_date_epoch))
            metadata["timestamp"] = *timestamp;
    }
    metadata["tools"] =
        Json{{"components", Json::array({Json{{"type", "application"}, {"name", "rootlock"}}})}};
    metadata["component"] = image_json(lock, image_name, image_sha256);
    bom["metadata"] = std::move(metadata);

    // bom-refs are purls; a second entry with the same name and version (a foreign lock may
    // split one by markers) gets a qualifier so that every reference stays unique.
    std::vector<std::string> refs;
    std::vector<std::string> purls;
    std::set<std::string> used = {k_image_ref, k_base_ref};
    for (const auto& package : lock.packages) {
        purls.push_back(pypi_purl(package.name, package.version));
        std::string ref = purls.back();
        for (size_t n = 2; used.count(ref) != 0; ++n)
            ref = purls.back() + "?rootlock-entry=" + std::to_string(n);
        used.insert(ref);
        refs.push_back(std::move(ref));
    }

    const bool has_base = lock.rootlock && !lock.rootlock->base.kind.empty();
    Json components = Json::array();
    std::set<std::string> deb_refs;
    if (has_base) {
        const pylock::LockBase& base = lock.rootlock->base;
        components.push_back(base_json(base));
        for (const auto& deb : base.debs) {
            Json component;
            component["type"] = "library";
            const std::string purl = deb_purl(deb.name, deb.version, deb.architecture, base.suite);
            component["bom-ref"] = purl;
            component["name"] = deb.name;
            component["version"] = deb.version;
            set_if_any(component, "hashes", sha256_json(deb.sha256));
            component["purl"] = purl;
            for (const auto& archive : base.archives) {
                if (archive.name == deb.archive)
                    component["externalReferences"] = Json::array({Json{
                        {"type", "distribution"}, {"url", archive.url + "/" + deb.filename}}});
            }
            Json properties = Json::array();
            add_property(properties, "rootlock:debian-archive", deb.archive);
            if (!deb.source.empty() || !deb.source_version.empty())
                add_property(properties, "rootlock:debian-source",
                             (deb.source.empty() ? deb.name : deb.source) + " " +
                                 (deb.source_version.empty() ? deb.version : deb.source_version));
            component["properties"] = std::move(properties);
            components.push_back(std::move(component));
            deb_refs.insert(purl);
        }
    }
    for (size_t i = 0; i < lock.packages.size(); ++i)
        components.push_back(package_json(lock.packages[i], refs[i], purls[i]));
    bom["components"] = std::move(components);

    std::set<std::string> image_needs;
    if (has_base)
        image_needs.insert(k_base_ref);
    bool any_requested = false;
    for (size_t i = 0; i < lock.packages.size(); ++i) {
        const auto& data = lock.packages[i].rootlock;
        if (data && data->requested) {
            image_needs.insert(refs[i]);
            any_requested = true;
        }
    }
    if (!any_requested)
        image_needs.insert(refs.begin(), refs.end());
    Json dependencies = Json::array();
    dependencies.push_back(Json{{"ref", k_image_ref}, {"dependsOn", refs_json(image_needs)}});
    if (!deb_refs.empty())
        dependencies.push_back(Json{{"ref", k_base_ref}, {"dependsOn", refs_json(deb_refs)}});
    for (size_t i = 0; i < lock.packages.size(); ++i) {
        std::set<std::string> needs;
        for (const auto& dependency : lock.packages[i].dependencies) {
            for (size_t j = 0; j < lock.packages.size(); ++j) {
                const auto& other = lock.packages[j];
                if (other.name == dependency.name &&
                    (!dependency.version || *dependency.version == other.version))
                    needs.insert(refs[j]);
            }
        }
        dependencies.push_back(Json{{"ref", refs[i]}, {"dependsOn", refs_json(needs)}});
    }
    bom["dependencies"] = std::move(dependencies);

    return bom.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace rootlock::image
