// Which copy of a library wins, and whether it is the consumer's own; see provider_check.hpp.
#include "check/provider_check.hpp"

#include <algorithm>

#include "fs/path_resolve.hpp"
#include "loader/dst.hpp"

namespace rootlock::check {

namespace {

bool under(const std::string& path, const std::string& dir) {
    return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
           path[dir.size()] == '/';
}

// The consumer's own copy: what its own DT_RUNPATH (or, without one, its own DT_RPATH) finds.
std::string own_path_copy(const loader::LoadSession& session, int requester,
                          const std::string& name, loader::SearchContext& context) {
    const auto& object = session.objects()[static_cast<size_t>(requester)];
    const elf::ElfInfo& info = *object.info;
    const auto& list = info.runpath ? info.runpath : info.rpath;
    if (!list)
        return {};
    std::string origin = requester == session.main_index() && !object.canonical.empty()
                             ? fs::dirname(object.canonical)
                             : loader::origin_of(object.name);
    loader::DstContext dst{origin, &context.target()};
    std::vector<std::string> dirs;
    for (const auto& element : *list) {
        loader::ExpandedPath expanded = loader::expand_dst(element.empty() ? "." : element, dst);
        if (!expanded.unknown_token.empty() || expanded.path.empty())
            continue;
        std::string dir = expanded.path[0] == '/' ? expanded.path : "/" + expanded.path;
        dirs.push_back(fs::normalize(dir));
    }
    loader::DirSearch found = context.search_dirs(name, dirs);
    return found.found ? found.found->canonical : std::string();
}

}  // namespace

std::vector<std::string> copies_of(const Scan& scan, const std::string& soname) {
    std::vector<std::string> copies;
    for (const auto* index : {&scan.by_soname, &scan.by_filename}) {
        if (auto found = index->find(soname); found != index->end())
            copies.insert(copies.end(), found->second.begin(), found->second.end());
    }
    std::sort(copies.begin(), copies.end());
    copies.erase(std::unique(copies.begin(), copies.end()), copies.end());
    return copies;
}

void ProviderCollector::add(const loader::LoadSession& session, size_t first_request,
                            loader::SearchContext& context, const Scan& scan,
                            const std::vector<std::string>& site_dirs) {
    const auto& objects = session.objects();
    const auto& requests = session.requests();
    for (size_t r = first_request; r < requests.size(); ++r) {
        const auto& request = requests[r];
        switch (request.via) {
            case loader::Via::ld_library_path:
            case loader::Via::cache:
            case loader::Via::default_dir:
            case loader::Via::already_loaded:
                break;
            default:
                continue;  // its own paths found it, or nothing did
        }
        if (request.requester < 0 || request.object < 0 ||
            request.name.find('/') != std::string::npos)
            continue;
        const auto& requester = objects[static_cast<size_t>(request.requester)];
        const auto& provider = objects[static_cast<size_t>(request.object)];
        if (requester.faked || !requester.info || provider.faked || provider.canonical.empty())
            continue;
        std::string packaged = own_path_copy(session, request.requester, request.name, context);
        if (packaged.empty()) {
            // No path of its own finds one: a copy shipped in the consumer's own environment.
            for (const auto& site : site_dirs) {
                if (!under(requester.canonical, site))
                    continue;
                for (const auto& copy : copies_of(scan, request.name)) {
                    if (under(copy, site)) {
                        packaged = copy;
                        break;
                    }
                }
            }
        }
        if (packaged.empty() || packaged == provider.canonical)
            continue;
        m_findings[{request.name, provider.canonical,
                    std::string(loader::via_name(
                        request.via == loader::Via::already_loaded ? provider.via : request.via)),
                    packaged}]
            .insert(requester.canonical);
    }
}

}  // namespace rootlock::check
