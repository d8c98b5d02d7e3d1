// Names of the host facts' enumerations as reports and JSON spell them, and the GPU minor a
// device node names.
#include "host/host_facts.hpp"

#include <algorithm>

namespace rootlock::host {

int gpu_minor_of(std::string_view path) {
    if (!path.starts_with("/dev/nvidia"))
        return -1;
    std::string_view rest = path.substr(11);
    if (rest.empty() || rest.size() > 3 ||
        !std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return -1;
    int minor = 0;
    for (char c : rest)
        minor = minor * 10 + (c - '0');
    return minor;
}

const char* to_string(ModuleFlavor flavor) {
    switch (flavor) {
        case ModuleFlavor::proprietary:
            return "proprietary";
        case ModuleFlavor::open:
            return "open";
        case ModuleFlavor::unknown:
            break;
    }
    return "unknown";
}

const char* to_string(InjectedKind kind) {
    switch (kind) {
        case InjectedKind::library:
            return "library";
        case InjectedKind::binary:
            return "binary";
        case InjectedKind::firmware:
            return "firmware";
        case InjectedKind::socket:
            return "socket";
        case InjectedKind::other:
            break;
    }
    return "other";
}

}  // namespace rootlock::host
