// Hex encoding one byte at a time: the texts are small (cached scripts, page bodies).
#include "util/hex.hpp"

#include <cstdint>

namespace rootlock::util {

namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

}  // namespace

std::string to_hex(std::string_view bytes) {
    static constexpr char k_digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (char c : bytes) {
        auto byte = static_cast<unsigned char>(c);
        out += k_digits[byte >> 4U];
        out += k_digits[byte & 0xFU];
    }
    return out;
}

std::string to_base64url(std::string_view bytes) {
    static constexpr char k_alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    uint32_t buffer = 0;
    int bits = 0;
    for (char c : bytes) {
        buffer = ((buffer << 8U) | static_cast<unsigned char>(c)) & 0xFFFFU;
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out.push_back(k_alphabet[(buffer >> static_cast<unsigned>(bits)) & 0x3FU]);
        }
    }
    if (bits > 0)
        out.push_back(k_alphabet[(buffer << static_cast<unsigned>(6 - bits)) & 0x3FU]);
    return out;
}

std::optional<std::string> from_hex(std::string_view hex) {
    if (hex.size() % 2 != 0)
        return std::nullopt;
    std::string out;
    out.reserve(hex.size() / 2);
    for (size_t i = 0; i < hex.size(); i += 2) {
        int high = hex_value(hex[i]);
        int low = hex_value(hex[i + 1]);
        if (high < 0 || low < 0)
            return std::nullopt;
        out += static_cast<char>((high << 4) | low);
    }
    return out;
}

}  // namespace rootlock::util
