// Armour to packets: the lines between a BEGIN line's headers and its END line, base64.
#include "debian/armor.hpp"

#include "debian/text_checks.hpp"
#include "util/hex.hpp"

namespace rootlock::debian {

namespace {

constexpr std::string_view k_begin = "-----BEGIN PGP PUBLIC KEY BLOCK-----";
constexpr std::string_view k_end = "-----END PGP PUBLIC KEY BLOCK-----";

// A line without its CR (armour written on Windows) and its surrounding blanks.
std::string_view trimmed(std::string_view line) {
    if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    return trim_blanks(line);
}

}  // namespace

bool is_armoured_key(std::string_view bytes) {
    return bytes.find(k_begin) != std::string_view::npos;
}

util::Result<std::string> dearmor_key(std::string_view bytes, const std::string& where) {
    if (!is_armoured_key(bytes))
        return std::string(bytes);
    std::string packets;
    size_t at = 0;
    while ((at = bytes.find(k_begin, at)) != std::string_view::npos) {
        // The body starts on the line after BEGIN.
        at = bytes.find('\n', at);
        at = at == std::string_view::npos ? bytes.size() : at + 1;
        enum class Part { headers, body } part = Part::headers;
        std::string body;
        bool ended = false;
        while (at < bytes.size() && !ended) {
            size_t end = bytes.find('\n', at);
            if (end == std::string_view::npos)
                end = bytes.size();
            const std::string_view line = trimmed(bytes.substr(at, end - at));
            at = end + 1;
            if (line.starts_with(k_end)) {
                ended = true;
            } else if (part == Part::headers) {
                // "Key: value" armour headers end at the first blank line; a line that is no
                // header already belongs to the body.
                if (line.empty() || line.find(':') == std::string_view::npos) {
                    part = Part::body;
                    body += line;
                }
            } else if (!(line.size() == 5 && line.front() == '=')) {  // not the CRC-24 line
                body += line;
            }
        }
        if (!ended)
            return util::make_error(where, "an armoured key block without its END line");
        auto decoded = util::from_base64(body);
        if (!decoded)
            return util::make_error(where, "an armoured key block whose body is not base64");
        packets += *decoded;
    }
    if (packets.empty())
        return util::make_error(where, "an armoured key block with no key in it");
    return packets;
}

}  // namespace rootlock::debian
