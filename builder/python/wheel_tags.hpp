// The PEP 425/600 tags a declared target accepts, in packaging.tags priority order for CPython
// on a glibc (manylinux) Linux, and the lookup that ranks a wheel's tags against them.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "python/wheel_filename.hpp"

namespace rootlock::python {

// The target an environment is built for, from the recipe and the base; never the host.
struct TargetTags {
    int python_major = 3;
    int python_minor = 0;
    std::string arch;  // "x86_64", "aarch64"
    int glibc_major = 2;
    int glibc_minor = 0;
    bool allow_linux_tag = false;  // accept bare linux_ARCH wheels (built on some other host)
};

// The platform tags of the target, best first: manylinux_G_N_ARCH from the target glibc down to
// 2_17 (2_5 on x86_64), each legacy alias right after its PEP 600 twin (manylinux2014 at 2_17,
// manylinux2010 at 2_12, manylinux1 at 2_5), then linux_ARCH when allowed. Never musllinux.
std::vector<std::string> platform_tags(const TargetTags& target);

// Every tag the target accepts, best first, as packaging's cpython_tags(python_version,
// [cpXY], platforms) followed by compatible_tags(python_version, "cpXY", platforms): cpXY-cpXY,
// cpXY-abi3, cpXY-none on each platform; cp3(Y-1)..cp32-abi3; py3Y, py3, py3(Y-1)..py30 with
// "none" on each platform; cpXY-none-any; py3Y, py3, py3(Y-1)..py30-none-any.
std::vector<Tag> supported_tags(const TargetTags& target);

// supported_tags() with a hashed index: priority lookups cost one hash, not a scan.
class SupportedTags {
  public:
    explicit SupportedTags(const TargetTags& target);

    const std::vector<Tag>& tags() const { return m_tags; }

    // The tag's place in tags() (0 is best), or -1 when the target does not accept it.
    int tag_priority(const Tag& tag) const;

    // The best (lowest) priority among the wheel's tags; nullopt when none is accepted.
    std::optional<int> best_priority(const WheelFilename& wheel) const;

  private:
    std::vector<Tag> m_tags;
    std::unordered_map<std::string, int> m_priority;  // Tag::text() -> index; lookups only
};

}  // namespace rootlock::python
