// gpgv run on an InRelease file: a good signature needs gpgv's exit status 0 and a VALIDSIG
// status line; the signed text is the file gpgv wrote with --output.
#include "debian/signature.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "util/atomic_file.hpp"
#include "util/subprocess.hpp"

namespace rootlock::debian {

namespace {

bool exists(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// gpgv's own complaint: the last line that is not a status line.
std::string gpgv_reason(const std::string& output) {
    std::string reason;
    size_t start = 0;
    while (start < output.size()) {
        size_t end = output.find('\n', start);
        if (end == std::string::npos)
            end = output.size();
        const std::string line = output.substr(start, end - start);
        if (!line.empty() && line.rfind("[GNUPG:]", 0) != 0)
            reason = line;
        start = end + 1;
    }
    return reason.empty() ? "no valid signature" : reason;
}

}  // namespace

util::Result<std::string> verify_clearsigned(const std::string& inrelease_path,
                                             const std::vector<std::string>& keyrings,
                                             const std::string& where) {
    std::vector<std::string> argv{"gpgv", "--status-fd", "1"};
    std::string names;
    for (const auto& keyring : keyrings) {
        if (!exists(keyring))
            return util::make_network_error(where, keyring + ": no such keyring");
        argv.push_back("--keyring");
        argv.push_back(keyring);
        names += (names.empty() ? "" : ", ") + keyring;
    }
    const std::string output = inrelease_path + ".verified";
    ::unlink(output.c_str());
    argv.push_back("--output");
    argv.push_back(output);
    argv.push_back(inrelease_path);
    // gpgv wants a home for its trustdb even though it never writes one: a private, empty one.
    char home_template[] = "/tmp/rootlock-gpgv-XXXXXX";
    const char* home = ::mkdtemp(home_template);
    std::vector<std::pair<std::string, std::string>> environment{{"LC_ALL", "C"}};
    if (home != nullptr)
        environment.emplace_back("GNUPGHOME", home);
    auto ran = util::run_process(argv, environment);
    if (home != nullptr)
        ::rmdir(home);
    if (!ran.ok()) {
        ::unlink(output.c_str());
        return util::make_network_error(where, ran.error().message);
    }
    const bool valid = ran->output.find("[GNUPG:] VALIDSIG ") != std::string::npos;
    if (ran->exit_code != 0 || !valid) {
        ::unlink(output.c_str());
        return util::make_network_error(where, "the signature does not verify against " + names +
                                                   ": gpgv: " + gpgv_reason(ran->output));
    }
    auto text = util::read_host_file(output);
    ::unlink(output.c_str());
    if (!text.ok())
        return util::make_network_error(where, text.error().text());
    return std::move(*text);
}

}  // namespace rootlock::debian
