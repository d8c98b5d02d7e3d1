// The digest line is fixed-width: its length alone says where the content starts.
#include "util/sealed_text.hpp"

#include "util/sha256.hpp"

namespace rootlock::util {

namespace {

constexpr std::string_view k_magic = "rootlock-sealed sha256:";
constexpr size_t k_header_size = k_magic.size() + 64 + 1;  // the digest and its newline

}  // namespace

std::string seal_text(std::string_view content) {
    std::string text;
    text.reserve(k_header_size + content.size());
    text += k_magic;
    text += sha256_hex(content);
    text += '\n';
    text += content;
    return text;
}

bool looks_sealed(std::string_view text) {
    return text.substr(0, k_magic.size()) == k_magic;
}

std::optional<std::string_view> unseal_text(std::string_view text) {
    if (text.size() < k_header_size || !looks_sealed(text) || text[k_header_size - 1] != '\n')
        return std::nullopt;
    const std::string_view content = text.substr(k_header_size);
    if (text.substr(k_magic.size(), 64) != sha256_hex(content))
        return std::nullopt;
    return content;
}

}  // namespace rootlock::util
