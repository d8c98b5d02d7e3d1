// add_recipe_extras: the recipe's files, then its ld.so.conf.d entry and the cache ldconfig would
// build from it, computed over the overlay itself so that wheels' libraries on those paths count.
#include "assemble/recipe_extras.hpp"

#include <algorithm>
#include <span>

#include "fs/path_resolve.hpp"
#include "loader/ld_so_cache.hpp"
#include "loader/ld_so_conf.hpp"
#include "loader/ldconfig_scan.hpp"
#include "loader/target.hpp"

namespace rootlock::assemble {

namespace {

std::string conf_text(const std::vector<std::string>& library_paths) {
    std::string text = "# Written by rootlock from the recipe's [loader] library-paths.\n";
    for (const auto& path : library_paths)
        text += path + "\n";
    return text;
}

// The generator string of the cache already in the tree (the base's ldconfig wrote it), or
// glibc's own form when there is none.
util::Result<std::string> existing_generator(const fs::FileTree& tree) {
    auto cache_file = fs::resolve(tree, "/etc/ld.so.cache");
    if (!cache_file || cache_file->stat.kind != fs::NodeKind::regular)
        return std::string("ldconfig");
    ROOTLOCK_TRY(bytes, tree.read_file(cache_file->path));
    std::span<const std::byte> view(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
    ROOTLOCK_TRY(parsed, loader::parse_ld_so_cache(view, "/etc/ld.so.cache"));
    return parsed.generator;
}

}  // namespace

util::Status add_recipe_extras(fs::OverlayTree& tree, const std::vector<std::string>& library_paths,
                               const std::vector<std::pair<std::string, std::string>>& files) {
    for (const auto& [path, content] : files) {
        // The overlay would replace a directory, hiding all below it: never what was meant.
        if (auto there = tree.lstat(path); there && there->kind == fs::NodeKind::directory)
            return util::make_error(path, "is a directory in the base; [files] writes files");
        ROOTLOCK_TRY(placed, tree.add_file(path, content, 0644));
        (void)placed;
    }
    if (library_paths.empty())
        return util::ok_status();
    ROOTLOCK_TRY(conf, tree.add_file(k_rootlock_ld_conf, conf_text(library_paths), 0644));
    ROOTLOCK_TRY(read, loader::read_ld_so_conf(tree));
    const auto& seen = read.files_read;
    if (std::find(seen.begin(), seen.end(), conf) == seen.end() &&
        std::find(seen.begin(), seen.end(), k_rootlock_ld_conf) == seen.end())
        return util::make_error(
            "/etc/ld.so.conf",
            "does not include " + conf + ", so [loader] library-paths would be ignored");
    return regenerate_ld_so_cache(tree);
}

util::Status regenerate_ld_so_cache(fs::OverlayTree& tree) {
    ROOTLOCK_TRY(generator, existing_generator(tree));
    ROOTLOCK_TRY(target, loader::detect_target(tree, {}));
    loader::ScanOptions scan;
    scan.system_directories = target.default_dirs;  // ldconfig's built-in ones are the loader's
    scan.machine = target.machine;
    scan.elf_class = target.elf_class;
    scan.generator = generator;
    ROOTLOCK_TRY(cache, loader::simulate_ldconfig(tree, scan));
    loader::CacheWriteOptions write_options;
    write_options.generator = cache.generator;
    const std::vector<std::byte> bytes = loader::write_ld_so_cache(cache.entries, write_options);
    ROOTLOCK_TRY(placed,
                 tree.add_file(
                     "/etc/ld.so.cache",
                     std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()), 0644));
    (void)placed;
    return util::ok_status();
}

}  // namespace rootlock::assemble
