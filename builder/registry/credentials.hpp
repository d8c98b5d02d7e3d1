// Who rootlock is at a registry: the credentials podman, skopeo and docker already use, found
// where they keep them, so that `rootlock push` works after `podman login` or `docker login`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace rootlock::registry {

struct Credentials {
    std::string username;
    std::string password;
    std::string identity_token;  // a refresh token for the bearer flow ("identitytoken")
    std::string source;          // where they came from, for messages: "$REGISTRY_AUTH_FILE"
};

// Where to look, in this order (the first that has the host wins):
//   ROOTLOCK_REGISTRY_USERNAME and ROOTLOCK_REGISTRY_PASSWORD (both set);
//   --authfile, else $REGISTRY_AUTH_FILE (containers-auth.json(5));
//   $XDG_RUNTIME_DIR/containers/auth.json (podman login's default);
//   $DOCKER_CONFIG/config.json, else ~/.docker/config.json.
struct CredentialSources {
    std::optional<std::string> env_username;
    std::optional<std::string> env_password;
    std::string authfile;                     // named by the user: it must exist and parse
    std::vector<std::string> optional_files;  // each read when present

    // From the process environment and an --authfile option ("" for none).
    static CredentialSources from_environment(const std::string& authfile);
};

// The credentials for `host` and repository `name`. In an auth file, "auths" keys may be a host
// ("127.0.0.1:5000"), a URL ("https://host/v1/") or a namespace ("host/team", "host/team/app"),
// the most specific match first; an entry holds "auth" (base64 "user:password"), or "username"
// and "password", and optionally "identitytoken". nullopt when no source has the host (the
// registry may not need any). A file that is not JSON, or an entry whose "auth" is not base64
// of "user:password", is one error naming the file and the key.
util::Result<std::optional<Credentials>> find_credentials(const CredentialSources& sources,
                                                          const std::string& host,
                                                          const std::string& name);

// The same lookup over one auth file's text (tests and the fuzz target).
util::Result<std::optional<Credentials>> credentials_from_auth_json(const std::string& text,
                                                                    const std::string& file,
                                                                    const std::string& host,
                                                                    const std::string& name);

}  // namespace rootlock::registry
