// version_gaps(); see versions.hpp.
#include "loader/versions.hpp"

namespace rootlock::loader {

std::vector<VersionGap> version_gaps(const LoadSession& session, size_t first_object) {
    std::vector<VersionGap> gaps;
    const auto& objects = session.objects();
    for (size_t i = first_object; i < objects.size(); ++i) {
        const LoadedObject& object = objects[i];
        if (object.faked || !object.info)
            continue;
        for (const auto& need : object.info->version_needs) {
            int provider_index = session.find_by_name(need.file);
            if (provider_index < 0)
                continue;
            const LoadedObject& provider = objects[static_cast<size_t>(provider_index)];
            if (provider.faked || !provider.info)
                continue;  // reported as missing, or host's
            // A provider without any version definitions: ld.so warns "no version information
            // available" and on Debian 12 the next binding aborted (loader.md section 7).
            const bool no_info = provider.info->version_defs.empty();
            for (const auto& version : need.versions) {
                if (version.weak)
                    continue;
                if (!no_info && provider.info->defines_version(version.name))
                    continue;
                gaps.push_back(VersionGap{static_cast<int>(i), need.file, version.name,
                                          provider_index, no_info});
            }
        }
    }
    return gaps;
}

}  // namespace rootlock::loader
