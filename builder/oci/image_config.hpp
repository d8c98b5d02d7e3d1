// An image's config blob as check and diff read it (image-spec config.md: the platform, the
// environment, the labels), and platforms as an image index names them ("linux/arm64/v8").
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "oci/oci_documents.hpp"
#include "util/result.hpp"

namespace rootlock::oci {

struct ImageConfig {
    std::string architecture, os, variant;
    std::vector<std::string> env;  // "NAME=value", as written
    std::string working_dir;
    std::map<std::string, std::string> labels;
};

// Errors (located at `where`): not a JSON object, "config" not an object, Env not an array of
// strings, Labels not an object of strings, architecture or os not strings. Unknown keys are
// ignored: runtimes and builders add their own.
util::Result<ImageConfig> parse_image_config(const std::string& text, const std::string& where);

// The value of `name` in the config's Env; "" when it is not set.
std::string env_value(const ImageConfig& config, std::string_view name);

struct Platform {
    std::string os = "linux";
    std::string architecture = "amd64";
    std::string variant;  // "" matches any
};

// "OS/ARCH" or "OS/ARCH/VARIANT": "--image-platform: \"x\" is not OS/ARCH[/VARIANT]" otherwise.
util::Result<Platform> parse_platform(std::string_view text);
std::string to_string(const Platform& platform);

// One manifest of an image index with the platform it declares (empty fields when none).
struct PlatformEntry {
    Descriptor descriptor;
    Platform platform;
};

// An image index's "manifests" with their platforms. Errors: those of parse_index, a platform
// that is not an object, or whose os or architecture is not a string.
util::Result<std::vector<PlatformEntry>> parse_platform_index(const std::string& text,
                                                              const std::string& where);

// The entry of `entries` for `want`; errors name the platforms there are ("WHERE: no
// linux/amd64 image (there are linux/arm64/v8, linux/s390x)").
util::Result<Descriptor> pick_platform(const std::vector<PlatformEntry>& entries,
                                       const Platform& want, const std::string& where);

}  // namespace rootlock::oci
