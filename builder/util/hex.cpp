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

int base64_value(char c) {
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
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

std::string to_base64(std::string_view bytes) {
    static constexpr char k_alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (size_t i = 0; i < bytes.size(); i += 3) {
        uint32_t group = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16U;
        if (i + 1 < bytes.size())
            group |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8U;
        if (i + 2 < bytes.size())
            group |= static_cast<unsigned char>(bytes[i + 2]);
        out.push_back(k_alphabet[(group >> 18U) & 0x3FU]);
        out.push_back(k_alphabet[(group >> 12U) & 0x3FU]);
        out.push_back(i + 1 < bytes.size() ? k_alphabet[(group >> 6U) & 0x3FU] : '=');
        out.push_back(i + 2 < bytes.size() ? k_alphabet[group & 0x3FU] : '=');
    }
    return out;
}

std::optional<std::string> from_base64(std::string_view text) {
    if (text.size() % 4 == 0 && !text.empty() && text.back() == '=') {
        text.remove_suffix(1);
        if (!text.empty() && text.back() == '=')
            text.remove_suffix(1);
    }
    if (text.size() % 4 == 1)
        return std::nullopt;
    std::string out;
    out.reserve(text.size() * 3 / 4);
    uint32_t buffer = 0;
    int bits = 0;
    for (char c : text) {
        int value = base64_value(c);
        if (value < 0)
            return std::nullopt;
        buffer = ((buffer << 6U) | static_cast<uint32_t>(value)) & 0xFFFFFFU;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((buffer >> static_cast<unsigned>(bits)) & 0xFFU));
        }
    }
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
