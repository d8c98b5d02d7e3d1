// The image's software bill of materials as CycloneDX 1.5 JSON, made from the lock alone so
// that the same lock and image give the same bytes: no clock, no random serial number.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pylock/pylock.hpp"

namespace rootlock::image {

// The SBOM of the image built from `lock`: ordered keys, 2-space indent, a trailing newline.
// - serialNumber: a UUID (version 5 layout) from the first 16 bytes of sha256(image_sha256), so
//   one image always has the same serial number and different images get different ones;
// - metadata.timestamp: the lock's source date epoch in RFC 3339 UTC; left out for a foreign
//   lock, which has none;
// - metadata.component: the image, type "container", with its SHA-256 (`image_sha256`: 64
//   lowercase hex digits, else the hash is left out) and the target as "rootlock:target-*"
//   properties;
// - components: first the base, type "operating-system" (it is the distribution the image
//   runs, which "file" would hide), named "debian" with the suite as version for a Debian base,
//   else by its tarball's file name, with the tarball's SHA-256 (the only identity that
//   reproduces it); for a Debian base locked per package, one "library" per .deb (purl
//   pkg:deb/debian/..., its SHA-256, its pool URL), on which the base depends; then one
//   "library" per package in the lock's order (by name, then PEP 440
//   version): purl pkg:pypi/NAME@VERSION, the wheel's hashes (when the package has exactly one
//   wheel), a "distribution" reference per wheel URL carrying that wheel's hashes, and the
//   sonames as "rootlock:provides" / "rootlock:needs" properties, one per soname, sorted;
// - dependencies: the image on the base and the recipe's direct requirements (every package
//   when the lock marks none), each package on the packages its lock entry names.
// Hash algorithms CycloneDX has no name for, and digests that are not hex of the algorithm's
// length, are left out.
std::string cyclonedx_sbom(const pylock::Lock& lock, const std::string& image_name,
                           const std::string& image_sha256);

// The purl of a Debian package, as the purl spec's deb type writes it:
// "pkg:deb/debian/libc6@2.36-9%2Bdeb12u13?arch=amd64&distro=debian-12" (the distro from the
// suite's codename: bookworm and bookworm-security are debian-12).
std::string deb_purl(std::string_view name, std::string_view version, std::string_view arch,
                     std::string_view suite);

// The purl of a PyPI package: the name lowercased with '_' as '-', both parts percent-encoded
// (everything but A-Z a-z 0-9 . - _ ~), so "2.8.0+cu128" reads "2.8.0%2Bcu128"; no "@VERSION"
// when the version is empty.
std::string pypi_purl(std::string_view name, std::string_view version);

// "urn:uuid:..." for an image digest, as above.
std::string sbom_serial_number(std::string_view image_sha256);

// Seconds since the epoch as "YYYY-MM-DDTHH:MM:SSZ"; nullopt past the year 9999, which RFC 3339
// cannot write.
std::optional<std::string> rfc3339_utc(uint64_t seconds);

}  // namespace rootlock::image
