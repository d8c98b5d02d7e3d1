// Value checks of the recipe, as pure functions: name and hash shapes, CUDA and driver
// versions, the driver minimum per CUDA major (cuda-wheels.md section 8), paths, key suggestions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rootlock::recipe {

struct CudaVersion {
    int major = 0;
    int minor = 0;
};

// Lowercase ASCII letters and digits joined by single hyphens: "train-cu128".
bool is_kebab_case(std::string_view text);
// 64 hexadecimal digits, either case.
bool is_sha256_hex(std::string_view text);
// "3.N" with N digits only.
bool is_python_version(std::string_view text);
// A release such as "2.8.0" or "2.9.0rc1": starts with a digit, letters digits and dots only.
bool is_release_version(std::string_view text);
// "MAJOR.MINOR", both decimal numbers.
std::optional<CudaVersion> parse_cuda_version(std::string_view text);
// The major of a driver version with two or three numeric parts: "570.133.07" -> 570.
std::optional<int> parse_driver_major(std::string_view text);
// The oldest driver major that runs a CUDA major: 13 -> 580, 12 -> 525, 11 -> 450.
std::optional<int> minimum_driver(int cuda_major);
// "cu128" for 12.8.
std::string cuda_tag(CudaVersion version);
// The first path segment of a URL of the form cuNNN ("/whl/cu130" -> "cu130"), if any.
std::optional<std::string> cuda_tag_in_url(std::string_view url);
// http://, https:// or file:// followed by something.
bool is_index_url(std::string_view text);
// A project name pattern: letters, digits, '-', '_', '.', and '*' globs.
bool is_package_pattern(std::string_view text);
// An environment variable name: [A-Za-z_][A-Za-z0-9_]*.
bool is_env_name(std::string_view text);
// A soname: no '/', contains ".so".
bool is_soname(std::string_view text);
// One of mmdebstrap's variants.
bool is_debian_variant(std::string_view text);
// A Debian architecture whose Python wheels PEP 600 tags: amd64, arm64, i386, ppc64el, s390x,
// armhf, armel.
bool is_debian_architecture(std::string_view text);
// Ends in .tar.zst, .tar.xz, .tar.gz or .tar.
bool has_image_suffix(std::string_view text);

// Why a [loader] library-paths entry cannot be a line of ld.so.conf, as the end of a message
// ("is not canonical (...)"); nullopt when it can. Duplicates are the caller's to find.
std::optional<std::string> library_path_problem(std::string_view path);
// Why a [files] key cannot name a file of the image, as the end of a message; nullopt when it
// can. A path under another [files] path is the caller's to find.
std::optional<std::string> file_path_problem(std::string_view path);

// Edit distance counting an adjacent swap as one edit (optimal string alignment).
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `key` when it is close enough to be a likely typo.
std::optional<std::string> suggest_key(std::string_view key,
                                       const std::vector<std::string_view>& candidates);

}  // namespace rootlock::recipe
