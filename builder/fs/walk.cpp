// walk(): an explicit stack instead of recursion, so a hostile tarball nesting directories
// thousands deep cannot exhaust the call stack.
#include "fs/walk.hpp"

#include <algorithm>
#include <vector>

#include "fs/path_resolve.hpp"

namespace rootlock::fs {

namespace {

// The kernel's own filesystems at the top of a live root (a container's /proc/PID/root, `/`
// inside one): they hold no object anything loads, and reading them fails all over.
bool is_kernel_directory(std::string_view path) {
    return path == "/proc" || path == "/sys" || path == "/dev";
}

}  // namespace

void walk(const FileTree& tree, std::string_view start, const WalkVisitor& visit) {
    auto root = resolve(tree, start);
    if (!root)
        return;
    if (root->stat.kind != NodeKind::directory) {
        visit(root->path, root->stat);
        return;
    }
    // Each frame is one directory's remaining entries, reversed so the next one is at the back.
    struct Frame {
        std::string dir;
        std::vector<StatEntry> remaining;
    };
    std::vector<Frame> stack;
    auto push_dir = [&](const std::string& dir) {
        auto entries = tree.list_stats(dir);
        if (!entries.ok())
            return;
        std::reverse(entries->begin(), entries->end());
        stack.push_back(Frame{dir, std::move(entries).value()});
    };
    push_dir(root->path);
    while (!stack.empty()) {
        if (stack.back().remaining.empty()) {
            stack.pop_back();
            continue;
        }
        StatEntry entry = std::move(stack.back().remaining.back());
        stack.back().remaining.pop_back();
        std::string path =
            stack.back().dir == "/" ? "/" + entry.name : stack.back().dir + "/" + entry.name;
        visit(path, entry.stat);
        if (entry.stat.kind == NodeKind::directory && !is_kernel_directory(path))
            push_dir(path);
    }
}

}  // namespace rootlock::fs
