// posix_spawnp with a pipe for the child's output: no shell, so no quoting, and the parent
// keeps only the tail of what the child says.
#include "util/subprocess.hpp"

#include <csignal>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace rootlock::util {

namespace {
constexpr size_t k_kept_output = 64 * 1024;
}

Result<ProcessResult> run_process(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& environment) {
    if (argv.empty())
        return make_error("run_process", "no program given");
    std::vector<std::string> env_strings;
    for (char** entry = environ; *entry != nullptr; ++entry) {
        std::string text(*entry);
        bool replaced = false;
        for (const auto& [name, value] : environment)
            replaced = replaced || text.rfind(name + "=", 0) == 0;
        if (!replaced)
            env_strings.push_back(std::move(text));
    }
    for (const auto& [name, value] : environment)
        env_strings.push_back(name + "=" + value);
    std::vector<char*> env_pointers;
    for (auto& text : env_strings)
        env_pointers.push_back(text.data());
    env_pointers.push_back(nullptr);
    std::vector<std::string> arg_strings(argv);
    std::vector<char*> arg_pointers;
    for (auto& text : arg_strings)
        arg_pointers.push_back(text.data());
    arg_pointers.push_back(nullptr);

    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
        return make_error(argv[0], std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    // Nothing of this process beyond 0-2 reaches the child: mmdebstrap hands apt a pipe by fd
    // number and fails when descriptors leaked from here push that number up.
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    // The child starts with every signal at its default and none blocked: libcurl ignores
    // SIGPIPE in this process, and apt (under mmdebstrap) fails when it inherits that.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t all_signals, no_signals;
    sigfillset(&all_signals);
    sigemptyset(&no_signals);
    posix_spawnattr_setsigdefault(&attributes, &all_signals);
    posix_spawnattr_setsigmask(&attributes, &no_signals);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    pid_t pid = 0;
    const int spawned = ::posix_spawnp(&pid, arg_pointers[0], &actions, &attributes,
                                       arg_pointers.data(), env_pointers.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    ::close(pipe_fds[1]);
    if (spawned != 0) {
        ::close(pipe_fds[0]);
        if (spawned == ENOENT)
            return make_error(argv[0], "not found; install it with apt-get");
        return make_error(argv[0], std::strerror(spawned));
    }
    ProcessResult result;
    char buffer[8192];
    for (;;) {
        const ssize_t got = ::read(pipe_fds[0], buffer, sizeof buffer);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        result.output.append(buffer, static_cast<size_t>(got));
        if (result.output.size() > 2 * k_kept_output)
            result.output.erase(0, result.output.size() - k_kept_output);
    }
    ::close(pipe_fds[0]);
    if (result.output.size() > k_kept_output)
        result.output.erase(0, result.output.size() - k_kept_output);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

std::string last_line(const std::string& output) {
    size_t end = output.size();
    while (end > 0) {
        while (end > 0 &&
               (output[end - 1] == '\n' || output[end - 1] == '\r' || output[end - 1] == ' '))
            --end;
        const size_t start = output.rfind('\n', end == 0 ? 0 : end - 1);
        const size_t begin = start == std::string::npos ? 0 : start + 1;
        if (end > begin)
            return output.substr(begin, end - begin);
        if (begin == 0)
            break;
        end = begin;
    }
    return "";
}

}  // namespace rootlock::util
