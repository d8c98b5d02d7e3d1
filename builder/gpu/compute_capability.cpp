// Compute capabilities and nvcc architecture names, parsed and written; see
// compute_capability.hpp. Untrusted text is echoed through util::quote_prefix only.
#include "gpu/compute_capability.hpp"

#include <fmt/format.h>

namespace rootlock::gpu {

namespace {

// How much of a bad text an error echoes: a capability or an arch name is a few bytes.
constexpr size_t k_capability_echo = 40;

bool is_capability_digit(char c) {
    return c >= '0' && c <= '9';
}

// A run of 1 to `max_digits` decimal digits without a leading zero (unless it is "0" and
// `allow_zero`); its value, or -1.
int small_decimal(std::string_view text, size_t max_digits, bool allow_zero) {
    if (text.empty() || text.size() > max_digits)
        return -1;
    int value = 0;
    for (char c : text) {
        if (!is_capability_digit(c))
            return -1;
        value = value * 10 + (c - '0');
    }
    if (text.size() > 1 && text.front() == '0')
        return -1;
    if (value == 0 && !allow_zero)
        return -1;
    return value;
}

util::Error capability_error(std::string_view text, std::string_view why) {
    return util::make_error("", fmt::format("{} is not a compute capability such as 8.6: {}",
                                            util::quote_prefix(text, k_capability_echo), why));
}

util::Error sm_name_error(std::string_view text, std::string_view why) {
    return util::make_error("", fmt::format("{} is not an architecture name such as sm_86: {}",
                                            util::quote_prefix(text, k_capability_echo), why));
}

}  // namespace

std::string ComputeCapability::text() const {
    return fmt::format("{}.{}", major, minor);
}

int ComputeCapability::sm() const {
    return major * 10 + minor;
}

util::Result<ComputeCapability> parse_compute_capability(std::string_view text) {
    if (text.empty())
        return capability_error(text, "it is empty");
    const size_t dot = text.find('.');
    if (dot == std::string_view::npos)
        return capability_error(text, "it has no dot between major and minor");
    const int major = small_decimal(text.substr(0, dot), 2, false);
    if (major < 0)
        return capability_error(text, "the major is not a number from 1 to 99");
    const int minor = small_decimal(text.substr(dot + 1), 1, true);
    if (minor < 0)
        return capability_error(text, "the minor is not one digit");
    return ComputeCapability{major, minor};
}

ComputeCapability from_sm(int sm) {
    if (sm < 0)
        return {};
    return ComputeCapability{sm / 10, sm % 10};
}

std::string SmName::text() const {
    std::string out = fmt::format("{}_{}", ptx ? "compute" : "sm", capability.sm());
    if (variant == SmVariant::arch_specific)
        out += 'a';
    else if (variant == SmVariant::family)
        out += 'f';
    return out;
}

util::Result<SmName> parse_sm_name(std::string_view text) {
    SmName out;
    std::string_view rest = text;
    if (rest.starts_with("sm_")) {
        rest.remove_prefix(3);
    } else if (rest.starts_with("compute_")) {
        rest.remove_prefix(8);
        out.ptx = true;
    } else {
        return sm_name_error(text, "it does not start with sm_ or compute_");
    }
    if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
        out.variant = rest.back() == 'a' ? SmVariant::arch_specific : SmVariant::family;
        rest.remove_suffix(1);
    }
    const int number = small_decimal(rest, 3, false);
    if (number < 10)
        return sm_name_error(text, "the number is not one from 10 to 999");
    out.capability = from_sm(number);
    return out;
}

}  // namespace rootlock::gpu
