// ld.so.conf with its includes: the input is split at "\n----\n" into /etc/ld.so.conf and the
// files of /etc/ld.so.conf.d/, so the fuzzer reaches globs, nesting and include cycles.
#include <string>
#include <string_view>

#include "fs/memory_tree.hpp"
#include "fuzz_common.hpp"
#include "loader/ld_so_conf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace rootlock;
    std::string_view text = fuzz::as_text(data, size);
    fs::MemoryTree tree;
    tree.add_dir("/usr/lib/x86_64-linux-gnu");
    tree.add_symlink("/lib", "usr/lib");
    static constexpr std::string_view k_separator = "\n----\n";
    int part = 0;
    while (true) {
        size_t end = text.find(k_separator);
        std::string_view content = text.substr(0, end);
        // Only the content is fuzzed: the paths are fixed, so the tree itself is always valid.
        std::string path =
            part == 0 ? "/etc/ld.so.conf" : "/etc/ld.so.conf.d/" + std::to_string(part) + ".conf";
        tree.add_file(path, content);
        if (end == std::string_view::npos || ++part > 8)
            break;
        text.remove_prefix(end + k_separator.size());
    }
    fuzz::check(loader::read_ld_so_conf(tree));
    return 0;
}
