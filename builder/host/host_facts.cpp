// Names of the host facts' enumerations as reports and JSON spell them.
#include "host/host_facts.hpp"

namespace rootlock::host {

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
