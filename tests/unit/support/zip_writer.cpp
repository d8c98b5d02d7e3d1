// The stored-zip writer: local headers, data, central directory and end record, little endian,
// with CRC-32 computed here (an implementation independent of the reader under test).
#include "support/zip_writer.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <array>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace rootlock::testing {

namespace {

uint32_t crc32(const std::string& bytes) {
    static const std::array<uint32_t, 256> table = [] {
        std::array<uint32_t, 256> out{};
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int bit = 0; bit < 8; ++bit)
                c = (c & 1U) != 0 ? 0xEDB88320U ^ (c >> 1) : c >> 1;
            out[i] = c;
        }
        return out;
    }();
    uint32_t crc = 0xFFFFFFFFU;
    for (char ch : bytes) {
        crc = table[(crc ^ static_cast<unsigned char>(ch)) & 0xFFU] ^ (crc >> 8);
    }
    return crc ^ 0xFFFFFFFFU;
}

void put16(std::string& out, uint32_t value) {
    out += static_cast<char>(value & 0xFFU);
    out += static_cast<char>((value >> 8) & 0xFFU);
}

void put32(std::string& out, uint32_t value) {
    put16(out, value & 0xFFFFU);
    put16(out, value >> 16);
}

uint32_t narrow(size_t value) {
    if (value > 0xFFFFFFFFU)
        throw std::runtime_error("build_zip: member too large for a test zip");
    return static_cast<uint32_t>(value);
}

}  // namespace

std::string build_zip(const std::vector<ZipMember>& members) {
    std::string out;
    std::string central;
    // 1980-01-01 00:00:00 in DOS form, so the bytes never depend on the clock.
    constexpr uint32_t k_dos_time = 0;
    constexpr uint32_t k_dos_date = (0U << 9) | (1U << 5) | 1U;
    for (const ZipMember& member : members) {
        const uint32_t offset = narrow(out.size());
        const uint32_t crc = crc32(member.content);
        const uint32_t size = narrow(member.content.size());
        const uint32_t declared = member.declared_size.value_or(size);
        const uint32_t name_size = narrow(member.name.size());
        put32(out, 0x04034b50U);
        put16(out, 20);  // version needed
        put16(out, 0);   // flags
        put16(out, 0);   // stored
        put16(out, k_dos_time);
        put16(out, k_dos_date);
        put32(out, crc);
        put32(out, size);
        put32(out, declared);
        put16(out, name_size);
        put16(out, 0);
        out += member.name;
        out += member.content;

        put32(central, 0x02014b50U);
        put16(central, (3U << 8) | 20U);  // made by Unix, spec 2.0
        put16(central, 20);
        put16(central, 0);
        put16(central, 0);
        put16(central, k_dos_time);
        put16(central, k_dos_date);
        put32(central, crc);
        put32(central, size);
        put32(central, declared);
        put16(central, name_size);
        put16(central, 0);  // extra
        put16(central, 0);  // comment
        put16(central, 0);  // disk
        put16(central, 0);  // internal attributes
        put32(central, member.unix_mode << 16);
        put32(central, offset);
        central += member.name;
    }
    const uint32_t central_offset = narrow(out.size());
    const uint32_t count = narrow(members.size());
    out += central;
    put32(out, 0x06054b50U);
    put16(out, 0);
    put16(out, 0);
    put16(out, count);
    put16(out, count);
    put32(out, narrow(central.size()));
    put32(out, central_offset);
    put16(out, 0);
    return out;
}

void write_zip(const std::string& host_path, const std::vector<ZipMember>& members) {
    std::ofstream file(host_path, std::ios::binary | std::ios::trunc);
    const std::string bytes = build_zip(members);
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!file)
        throw std::runtime_error("write_zip: cannot write " + host_path);
}

void write_deflated_zip(const std::string& host_path, const std::vector<ZipMember>& members) {
    std::unique_ptr<struct archive, int (*)(struct archive*)> writer(archive_write_new(),
                                                                     archive_write_free);
    auto check = [&](int status) {
        if (status != ARCHIVE_OK) {
            const char* message = archive_error_string(writer.get());
            throw std::runtime_error("write_deflated_zip: " +
                                     std::string(message != nullptr ? message : "failed"));
        }
    };
    check(archive_write_set_format_zip(writer.get()));
    check(archive_write_zip_set_compression_deflate(writer.get()));
    check(archive_write_open_filename(writer.get(), host_path.c_str()));
    for (const ZipMember& member : members) {
        std::unique_ptr<struct archive_entry, void (*)(struct archive_entry*)> entry(
            archive_entry_new(), archive_entry_free);
        archive_entry_set_pathname(entry.get(), member.name.c_str());
        archive_entry_set_mode(entry.get(), member.unix_mode);
        archive_entry_set_mtime(entry.get(), 315532800, 0);  // 1980-01-01, not the clock
        bool symlink = (member.unix_mode & 0170000U) == 0120000U;
        if (symlink)
            archive_entry_set_symlink(entry.get(), member.content.c_str());
        else
            archive_entry_set_size(entry.get(), static_cast<la_int64_t>(member.content.size()));
        check(archive_write_header(writer.get(), entry.get()));
        if (!symlink && !member.content.empty()) {
            la_ssize_t written =
                archive_write_data(writer.get(), member.content.data(), member.content.size());
            if (written != static_cast<la_ssize_t>(member.content.size()))
                check(ARCHIVE_FATAL);
        }
    }
    check(archive_write_close(writer.get()));
}

}  // namespace rootlock::testing
