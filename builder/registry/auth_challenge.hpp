// The WWW-Authenticate challenge a registry answers 401 with (RFC 7235; the distribution spec's
// token flow): `Bearer realm="https://auth.example/token",service="reg",scope="repository:x:pull"`
// or `Basic realm="Registry"`. The scheme says how to authenticate, the parameters where.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace rootlock::registry {

struct AuthChallenge {
    std::string scheme;                         // lowercased: "bearer", "basic"
    std::map<std::string, std::string> params;  // names lowercased, values unquoted

    std::string param(const std::string& name) const {
        auto it = params.find(name);
        return it == params.end() ? std::string() : it->second;
    }
};

// The first challenge of the header's value: the scheme, then `name=token` or
// `name="quoted \"string\""` pairs separated by commas. Errors (unlocated, quoted input): no
// scheme, an unterminated quoted string, a parameter without '=' or a value.
util::Result<AuthChallenge> parse_auth_challenge(std::string_view header);

}  // namespace rootlock::registry
