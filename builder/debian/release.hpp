// An archive's Release file (the signed text of InRelease): its identity (suite, codename,
// date), what it offers (architectures, components) and the SHA256 of every index it lists, so
// that a Packages file is trusted only when its hash is the one the signature covers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace rootlock::debian {

struct ReleaseFile {
    std::string path;  // relative to dists/SUITE/ ("main/binary-amd64/Packages.xz")
    uint64_t size = 0;
    std::string sha256;  // lowercase hex
};

struct Release {
    std::string origin, label, suite, codename, version;
    std::string date;         // as written: "Sat, 09 Nov 2024 10:13:41 UTC"
    std::string valid_until;  // "" when absent
    std::vector<std::string> architectures;
    std::vector<std::string> components;
    bool acquire_by_hash = false;
    std::vector<ReleaseFile> files;  // the SHA256 section, in file order

    const ReleaseFile* find(std::string_view path) const;
};

// Parses one paragraph. Required: Date and a SHA256 section (an archive without SHA256 cannot be
// trusted here); Suite or Codename. Each SHA256 line is "HASH SIZE PATH"; a bad one is
// "Release:LINE: SHA256 line \"...\": ...". A path with ".." or a leading '/' is refused.
util::Result<Release> parse_release(std::string_view text, const std::string& file_name);

// An RFC 2822 date as Release files write it ("Sat, 09 Nov 2024 10:13:41 UTC", also "+0000")
// as seconds since the epoch, or an error naming the text.
util::Result<int64_t> parse_release_date(std::string_view text);

// Seconds since the epoch as snapshot.debian.org's timestamp path component: "20241109T101341Z".
std::string snapshot_timestamp(int64_t seconds);

}  // namespace rootlock::debian
