// The auth-file formats of docker (config.json) and containers (auth.json) share "auths"; this
// file reads that part. Credential helpers ("credsStore", "credHelpers") run other programs and
// are left to the user: a helper-only entry counts as no credentials.
#include "registry/credentials.hpp"

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "util/atomic_file.hpp"
#include "util/hex.hpp"
#include "util/quote.hpp"

namespace rootlock::registry {

namespace {

std::optional<std::string> env(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr)
        return std::nullopt;
    return std::string(value);
}

// "https://host:5000/v1/" -> "host:5000"; "host/team/" -> "host/team".
std::string normalized_key(std::string key) {
    for (const char* scheme : {"https://", "http://"})
        if (key.rfind(scheme, 0) == 0)
            key.erase(0, std::string(scheme).size());
    while (!key.empty() && key.back() == '/')
        key.pop_back();
    for (const char* suffix : {"/v1", "/v2"}) {
        std::string s(suffix);
        if (key.size() > s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0)
            key.erase(key.size() - s.size());
    }
    return key;
}

util::Result<Credentials> entry_credentials(const nlohmann::json& entry, const std::string& file,
                                            const std::string& key) {
    std::string where = file + ": auths." + key;
    if (!entry.is_object())
        return util::make_error(where, "is not an object");
    Credentials found;
    found.source = file;
    auto text = [&](const char* field) -> util::Result<std::string> {
        auto it = entry.find(field);
        if (it == entry.end() || it->is_null())
            return std::string();
        if (!it->is_string())
            return util::make_error(where, std::string(field) + " is not a string");
        return it->get<std::string>();
    };
    ROOTLOCK_TRY(auth, text("auth"));
    ROOTLOCK_TRY(username, text("username"));
    ROOTLOCK_TRY(password, text("password"));
    ROOTLOCK_TRY(identity, text("identitytoken"));
    if (!auth.empty()) {
        auto decoded = util::from_base64(auth);
        size_t colon = decoded ? decoded->find(':') : std::string::npos;
        if (colon == std::string::npos)
            return util::make_error(where, "auth is not the base64 of \"user:password\"");
        found.username = decoded->substr(0, colon);
        found.password = decoded->substr(colon + 1);
    } else {
        found.username = username;
        found.password = password;
    }
    found.identity_token = identity;
    return found;
}

}  // namespace

CredentialSources CredentialSources::from_environment(const std::string& authfile) {
    CredentialSources sources;
    sources.env_username = env("ROOTLOCK_REGISTRY_USERNAME");
    sources.env_password = env("ROOTLOCK_REGISTRY_PASSWORD");
    sources.authfile = authfile;
    if (authfile.empty()) {
        if (auto named = env("REGISTRY_AUTH_FILE"); named && !named->empty())
            sources.authfile = *named;
    }
    if (auto runtime = env("XDG_RUNTIME_DIR"); runtime && !runtime->empty())
        sources.optional_files.push_back(*runtime + "/containers/auth.json");
    if (auto docker = env("DOCKER_CONFIG"); docker && !docker->empty())
        sources.optional_files.push_back(*docker + "/config.json");
    else if (auto home = env("HOME"); home && !home->empty())
        sources.optional_files.push_back(*home + "/.docker/config.json");
    return sources;
}

util::Result<std::optional<Credentials>> credentials_from_auth_json(const std::string& text,
                                                                    const std::string& file,
                                                                    const std::string& host,
                                                                    const std::string& name) {
    auto document = nlohmann::json::parse(text, nullptr, false);
    if (document.is_discarded() || !document.is_object())
        return util::make_error(file, "not a JSON object (an auth file holds {\"auths\": ...})");
    auto auths = document.find("auths");
    if (auths == document.end() || auths->is_null())
        return std::optional<Credentials>();
    if (!auths->is_object())
        return util::make_error(file, "\"auths\" is not an object");
    // The most specific key first: host/a/b, host/a, host.
    std::vector<std::string> wanted;
    std::string scope = host + "/" + name;
    while (true) {
        wanted.push_back(scope);
        size_t slash = scope.rfind('/');
        if (slash == std::string::npos || slash < host.size())
            break;
        scope.erase(slash);
    }
    if (wanted.back() != host)
        wanted.push_back(host);
    for (const auto& key : wanted) {
        for (const auto& [stored, entry] : auths->items()) {
            if (normalized_key(stored) != key)
                continue;
            ROOTLOCK_TRY(found, entry_credentials(entry, file, util::printable(stored)));
            if (found.username.empty() && found.identity_token.empty())
                continue;  // a helper-only entry ({}), as docker login writes with credsStore
            return std::optional<Credentials>(found);
        }
    }
    return std::optional<Credentials>();
}

util::Result<std::optional<Credentials>> find_credentials(const CredentialSources& sources,
                                                          const std::string& host,
                                                          const std::string& name) {
    if (sources.env_username && sources.env_password) {
        Credentials from_env{*sources.env_username, *sources.env_password, "",
                             "ROOTLOCK_REGISTRY_USERNAME"};
        return std::optional<Credentials>(from_env);
    }
    std::vector<std::pair<std::string, bool>> files;  // path, must exist
    if (!sources.authfile.empty())
        files.emplace_back(sources.authfile, true);
    for (const auto& path : sources.optional_files)
        files.emplace_back(path, false);
    for (const auto& [path, required] : files) {
        auto text = util::read_host_file(path);
        if (!text) {
            if (required)
                return text.error();
            continue;
        }
        ROOTLOCK_TRY(found, credentials_from_auth_json(*text, path, host, name));
        if (found)
            return found;
    }
    return std::optional<Credentials>();
}

}  // namespace rootlock::registry
