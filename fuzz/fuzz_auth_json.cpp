// Auth files (containers-auth.json, docker's config.json). The input's first line is the
// host/name looked up, the rest the file.
#include "fuzz_common.hpp"
#include "registry/credentials.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    auto [scope, text] = fuzz::split_first_line(fuzz::as_text(data, size));
    std::string host(scope.substr(0, scope.find('/')));
    std::string name(scope.find('/') == std::string_view::npos ? std::string_view("x")
                                                               : scope.substr(scope.find('/') + 1));
    fuzz::check(registry::credentials_from_auth_json(std::string(text), "auth.json", host, name));
    return 0;
}
