// container_view: the OverlayTree the closure check runs over when a host is given; what LXC's
// mounts and the start hook's ldconfig will make of the image, built without touching either.
#include "host/container_view.hpp"

#include <algorithm>
#include <map>

#include "assemble/recipe_extras.hpp"
#include "elf/elf_reader.hpp"
#include "fs/path_resolve.hpp"
#include "loader/ld_so_cache.hpp"
#include "loader/ld_so_conf.hpp"
#include "loader/ldconfig_scan.hpp"
#include "util/byte_source.hpp"

namespace rootlock::host {

namespace {

util::Result<fs::SizedFile> sized_host_file(const HostReader& host, const InjectedFile& file) {
    // A mount follows links on the host side: the container sees the file they lead to.
    auto resolved = host.resolve(file.host_path);
    auto stat = resolved ? host.stat(*resolved) : std::nullopt;
    if (!stat)
        return util::make_error(file.host_path, "no such file on the host");
    fs::SizedFile sized;
    sized.size = stat->size;
    sized.mode = stat->mode;
    if (stat->kind != HostStat::Kind::regular)
        return sized;
    sized.host_path = host.on_disk(*resolved);
    ROOTLOCK_TRY(source, util::FileSource::open(sized.host_path, file.host_path));
    std::byte head[4] = {};
    if (source->size() < sizeof head || !source->read_at(0, head).ok() || !elf::has_elf_magic(head))
        return sized;
    elf::ReadOptions read_options;
    read_options.symbols = true;
    auto info = elf::read_elf(*source, read_options);
    if (info)
        sized.elf = std::make_shared<const elf::ElfInfo>(std::move(*info));
    else
        sized.elf_error = info.error().text();
    return sized;
}

// ldconfig's links: in each directory holding an injected library, SONAME -> the file of that
// soname with the highest version by name (ldconfig keeps the newest), image files included.
util::Status add_soname_links(fs::OverlayTree& tree, const std::vector<std::string>& dirs) {
    for (const auto& dir : dirs) {
        auto resolved = fs::resolve(tree, dir);
        if (!resolved)
            continue;
        ROOTLOCK_TRY(listing, tree.list(resolved->path));
        std::map<std::string, std::string> newest;  // soname -> file name
        for (const auto& entry : listing) {
            if (entry.kind != fs::NodeKind::regular || !loader::looks_like_dso(entry.name))
                continue;
            auto probe = tree.probe_elf(fs::join_path(resolved->path, entry.name));
            if (probe.outcome != fs::ElfProbe::Outcome::elf || probe.info->soname.empty() ||
                probe.info->soname == entry.name)
                continue;
            auto& best = newest[probe.info->soname];
            if (best.empty() || loader::cache_libcmp(entry.name, best) > 0)
                best = entry.name;
        }
        for (const auto& [soname, file] : newest) {
            std::string link = fs::join_path(resolved->path, soname);
            auto there = tree.lstat(link);
            if (there && there->kind != fs::NodeKind::symlink)
                continue;  // ldconfig never replaces a regular file
            ROOTLOCK_TRY(placed, tree.add_symlink(link, file));
            (void)placed;
        }
    }
    return util::ok_status();
}

}  // namespace

std::string image_path(const fs::FileTree& image, std::string_view path) {
    std::string normal = fs::normalize(path);
    std::string rest;
    std::string prefix = normal;
    while (prefix != "/") {
        if (auto resolved = fs::resolve(image, prefix))
            return rest.empty() ? resolved->path : fs::join(resolved->path, rest);
        const std::string name = fs::basename(prefix);
        rest = rest.empty() ? name : name + "/" + rest;
        prefix = fs::dirname(prefix);
    }
    return normal;
}

void canonical_container_paths(const fs::FileTree& image, HostFacts& facts) {
    for (auto& file : facts.files)
        file.container_path = image_path(image, file.container_path);
}

std::string driver_ld_conf_text(const HostFacts& facts) {
    std::string text;
    for (const auto& dir : facts.library_dirs)
        text += dir + "\n";
    return text;
}

util::Result<ContainerView> container_view(std::shared_ptr<const fs::FileTree> image,
                                           const HostFacts& facts, const HostReader& host) {
    ContainerView view;
    view.tree = std::make_shared<fs::OverlayTree>(std::move(image));
    fs::OverlayTree& tree = *view.tree;
    for (const auto& file : facts.files) {
        ROOTLOCK_TRY(sized, sized_host_file(host, file));
        ROOTLOCK_TRY(placed, tree.add_sized_file(file.container_path, std::move(sized)));
        (void)placed;
    }
    for (const auto& link : facts.links) {
        if (tree.lstat(link.path))
            continue;
        ROOTLOCK_TRY(placed, tree.add_symlink(link.path, link.target));
        (void)placed;
    }
    if (facts.library_dirs.empty())
        return view;
    ROOTLOCK_TRY(conf, tree.add_file(k_driver_ld_conf, driver_ld_conf_text(facts), 0644));
    ROOTLOCK_TRY(read, loader::read_ld_so_conf(tree));
    if (std::find(read.files_read.begin(), read.files_read.end(), conf) == read.files_read.end())
        view.notes.push_back("the image's /etc/ld.so.conf does not include " + conf +
                             ": the driver's directories are searched only if they are default "
                             "ones");
    ROOTLOCK_TRY(links, add_soname_links(tree, facts.library_dirs));
    (void)links;
    ROOTLOCK_TRY(cache, assemble::regenerate_ld_so_cache(tree));
    (void)cache;
    view.notes.push_back("checked as the container will run on " + facts.host_root + ": " +
                         std::to_string(facts.files.size()) + " host files injected, " +
                         "ld.so.cache as the start hook's ldconfig writes it");
    return view;
}

}  // namespace rootlock::host
