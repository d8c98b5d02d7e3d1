// Supported-tag generation mirroring packaging.tags (cpython_tags, compatible_tags and the
// manylinux part of platform_tags) for a declared target, plus the priority index over it.
#include "python/wheel_tags.hpp"

#include <cstddef>
#include <utility>

namespace rootlock::python {

namespace {

// packaging assumes glibc minor 50 as the last of an older glibc major (_LAST_GLIBC_MINOR).
constexpr int k_last_glibc_minor = 50;

// Legacy manylinux names (PEP 513, 571, 599) for glibc 2.N, or nullptr.
const char* legacy_manylinux(int glibc_major, int glibc_minor) {
    if (glibc_major != 2)
        return nullptr;
    switch (glibc_minor) {
        case 17:
            return "manylinux2014";
        case 12:
            return "manylinux2010";
        case 5:
            return "manylinux1";
        default:
            return nullptr;
    }
}

std::string version_nodot(int major, int minor) {
    return std::to_string(major) + std::to_string(minor);
}

}  // namespace

std::vector<std::string> platform_tags(const TargetTags& target) {
    std::vector<std::string> platforms;
    // The oldest glibc a manylinux tag exists for: 2.17 everywhere, 2.5 on x86 (PEP 600).
    const int oldest_minor = (target.arch == "x86_64" || target.arch == "i686") ? 5 : 17;
    for (int major = target.glibc_major; major >= 2; --major) {
        const int top = major == target.glibc_major ? target.glibc_minor : k_last_glibc_minor;
        const int bottom = major == 2 ? oldest_minor : 0;
        for (int minor = top; minor >= bottom; --minor) {
            platforms.push_back("manylinux_" + std::to_string(major) + "_" + std::to_string(minor) +
                                "_" + target.arch);
            if (const char* legacy = legacy_manylinux(major, minor))
                platforms.push_back(std::string(legacy) + "_" + target.arch);
        }
    }
    if (target.allow_linux_tag)
        platforms.push_back("linux_" + target.arch);
    return platforms;
}

std::vector<Tag> supported_tags(const TargetTags& target) {
    const std::vector<std::string> platforms = platform_tags(target);
    const int major = target.python_major;
    const int minor = target.python_minor;
    const std::string interpreter = "cp" + version_nodot(major, minor);
    // packaging: abi3 applies from CPython 3.2 on.
    const bool abi3_applies = major > 3 || (major == 3 && minor >= 2);

    std::vector<Tag> tags;
    for (const std::string& platform : platforms)
        tags.push_back(Tag{interpreter, interpreter, platform});
    if (abi3_applies) {
        for (const std::string& platform : platforms)
            tags.push_back(Tag{interpreter, "abi3", platform});
    }
    for (const std::string& platform : platforms)
        tags.push_back(Tag{interpreter, "none", platform});
    if (abi3_applies) {
        for (int older = minor - 1; older > 1; --older) {
            const std::string older_interpreter = "cp" + version_nodot(major, older);
            for (const std::string& platform : platforms)
                tags.push_back(Tag{older_interpreter, "abi3", platform});
        }
    }

    // compatible_tags: py3Y, py3, then py3(Y-1) down to py30.
    std::vector<std::string> py_range{"py" + version_nodot(major, minor),
                                      "py" + std::to_string(major)};
    for (int older = minor - 1; older >= 0; --older)
        py_range.push_back("py" + version_nodot(major, older));
    for (const std::string& python : py_range) {
        for (const std::string& platform : platforms)
            tags.push_back(Tag{python, "none", platform});
    }
    tags.push_back(Tag{interpreter, "none", "any"});
    for (const std::string& python : py_range)
        tags.push_back(Tag{python, "none", "any"});
    return tags;
}

SupportedTags::SupportedTags(const TargetTags& target) : m_tags(supported_tags(target)) {
    m_priority.reserve(m_tags.size());
    for (size_t i = 0; i < m_tags.size(); ++i)
        m_priority.emplace(m_tags[i].text(), static_cast<int>(i));  // first place wins
}

int SupportedTags::tag_priority(const Tag& tag) const {
    const auto found = m_priority.find(tag.text());
    return found == m_priority.end() ? -1 : found->second;
}

std::optional<int> SupportedTags::best_priority(const WheelFilename& wheel) const {
    std::optional<int> best;
    for (const Tag& tag : wheel.tags) {
        const int priority = tag_priority(tag);
        if (priority >= 0 && (!best || priority < *best))
            best = priority;
    }
    return best;
}

}  // namespace rootlock::python
