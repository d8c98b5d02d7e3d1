// The breadth-first loading of one namespace and the per-request search order of glibc 2.36's
// _dl_map_object (elf/dl-load.c), as loader.md section 1 records it; see session.hpp.
#include "loader/session.hpp"

#include <algorithm>
#include <deque>

#include "loader/dst.hpp"

namespace rootlock::loader {

std::string_view via_name(Via via) {
    switch (via) {
        case Via::interpreter:
            return "interpreter";
        case Via::already_loaded:
            return "already-loaded";
        case Via::path:
            return "path";
        case Via::rpath:
            return "rpath";
        case Via::ld_library_path:
            return "ld-library-path";
        case Via::runpath:
            return "runpath";
        case Via::cache:
            return "cache";
        case Via::default_dir:
            return "default";
        case Via::host_provided:
            return "host-provided";
        case Via::not_found:
            return "not-found";
    }
    return "not-found";
}

LoadSession::LoadSession(SearchContext& context) : m_context(context) {}

void LoadSession::index_name(const std::string& name, int index) {
    m_names.emplace(name, index);
}

int LoadSession::add_object(LoadedObject object) {
    if (!object.faked) {
        const int index = static_cast<int>(m_objects.size());
        index_name(object.name, index);
        for (const auto& name : object.libnames)
            index_name(name, index);
        if (object.info && !object.info->soname.empty())
            index_name(object.info->soname, index);
        if (object.identity != 0)
            m_identities.emplace(object.identity, index);
    }
    m_objects.push_back(std::move(object));
    m_listed.push_back(false);
    return static_cast<int>(m_objects.size()) - 1;
}

std::optional<std::string> LoadSession::origin(int index) const {
    if (index < 0)
        return std::nullopt;
    if (index == m_main)
        return m_main_origin;
    return origin_of(m_objects[static_cast<size_t>(index)].name);
}

std::vector<std::string> LoadSession::expand_list(const std::vector<std::string>& list, int owner) {
    std::vector<std::string> dirs;
    DstContext dst{origin(owner), &m_context.target()};
    for (const auto& element : list) {
        // An empty element is the working directory; a process started by init has "/".
        ExpandedPath expanded = expand_dst(element.empty() ? "." : element, dst);
        if (!expanded.unknown_token.empty()) {
            m_context.note(expanded.unknown_token +
                           " cannot be known statically: search path element \"" + element +
                           "\" skipped");
            continue;
        }
        std::string dir = expanded.path;
        if (dir.empty() || dir[0] != '/')
            dir = "/" + dir;
        while (dir.size() > 1 && dir.back() == '/')
            dir.pop_back();
        dirs.push_back(std::move(dir));
    }
    return dirs;
}

int LoadSession::match_loaded(const std::string& name) const {
    // Faked (not found) objects never match: ld.so searches again for each request.
    auto found = m_names.find(name);
    return found == m_names.end() ? -1 : found->second;
}

std::vector<int> LoadSession::list_order() const {
    if (m_interpreter < 0 || !m_listed[static_cast<size_t>(m_interpreter)])
        return m_list_order;
    std::vector<int> order;
    if (m_interpreter_predecessor < 0)
        order.push_back(m_interpreter);
    for (int index : m_list_order) {
        if (index == m_interpreter)
            continue;
        order.push_back(index);
        if (index == m_interpreter_predecessor)
            order.push_back(m_interpreter);
    }
    return order;
}

int LoadSession::find_by_name(const std::string& file) const {
    return match_loaded(file);
}

namespace {
bool under_system_dir(const std::string& path, const Target& target) {
    return std::any_of(target.default_dirs.begin(), target.default_dirs.end(),
                       [&](const std::string& dir) {
                           return path.size() > dir.size() &&
                                  path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
                       });
}
}  // namespace

int LoadSession::map_object(int requester, const std::string& name, Via& via, int& via_object) {
    via_object = -1;
    if (int hit = match_loaded(name); hit >= 0) {
        LoadedObject& object = m_objects[static_cast<size_t>(hit)];
        if (std::find(object.libnames.begin(), object.libnames.end(), name) ==
            object.libnames.end()) {
            object.libnames.push_back(name);
            index_name(name, hit);
        }
        via = hit == m_interpreter ? Via::interpreter : Via::already_loaded;
        return hit;
    }

    const elf::ElfInfo* requester_info =
        requester >= 0 ? m_objects[static_cast<size_t>(requester)].info.get() : nullptr;
    DirSearch search;
    via = Via::not_found;
    auto settle = [&](DirSearch&& result, Via how, int object) {
        if (result.found || !result.fatal.empty()) {
            search = std::move(result);
            via = how;
            via_object = object;
            return true;
        }
        search.saw_other_class |= result.saw_other_class;
        return false;
    };

    if (name.find('/') != std::string::npos) {
        ExpandedPath expanded =
            expand_dst(name, DstContext{origin(requester), &m_context.target()});
        std::string path = expanded.path;
        if (!path.empty() && path[0] != '/')
            path = "/" + path;
        Attempt attempt = m_context.try_path(path);
        DirSearch result;
        if (attempt.outcome == Attempt::Outcome::accepted)
            result.found = attempt.found;
        if (attempt.outcome == Attempt::Outcome::fatal) {
            result.fatal = attempt.error;
            result.fatal_path = path;
        }
        settle(std::move(result), Via::path, -1);
    } else {
        bool done = false;
        const bool requester_has_runpath = requester_info && requester_info->runpath;
        if (!requester_has_runpath) {
            bool did_main = false;
            for (int l = requester; l >= 0 && !done; l = m_objects[static_cast<size_t>(l)].loader) {
                const elf::ElfInfo* info = m_objects[static_cast<size_t>(l)].info.get();
                // An object with DT_RUNPATH has its DT_RPATH discarded at load time.
                if (!info || !info->rpath || info->runpath)
                    continue;
                done = settle(m_context.search_dirs(name, expand_list(*info->rpath, l)), Via::rpath,
                              l);
                did_main |= l == m_main;
            }
            if (!done && !did_main && m_main >= 0) {
                const elf::ElfInfo* info = m_objects[static_cast<size_t>(m_main)].info.get();
                if (info && info->rpath && !info->runpath) {
                    done = settle(m_context.search_dirs(name, expand_list(*info->rpath, m_main)),
                                  Via::rpath, m_main);
                }
            }
        }
        if (!done && !m_context.environment().ld_library_path.empty()) {
            done = settle(m_context.search_dirs(
                              name, expand_list(m_context.environment().ld_library_path, m_main)),
                          Via::ld_library_path, -1);
        }
        if (!done && requester_has_runpath) {
            done = settle(
                m_context.search_dirs(name, expand_list(*requester_info->runpath, requester)),
                Via::runpath, -1);
        }
        int flag_owner = requester >= 0 ? requester : m_main;
        const elf::ElfInfo* owner_info =
            flag_owner >= 0 ? m_objects[static_cast<size_t>(flag_owner)].info.get() : nullptr;
        const bool nodeflib = owner_info && owner_info->nodeflib();
        if (!done) {
            if (auto cached = m_context.cache_lookup(name)) {
                if (!(nodeflib && under_system_dir(*cached, m_context.target()))) {
                    Attempt attempt = m_context.try_path(*cached);
                    DirSearch result;
                    if (attempt.outcome == Attempt::Outcome::accepted)
                        result.found = attempt.found;
                    if (attempt.outcome == Attempt::Outcome::fatal) {
                        result.fatal = attempt.error;
                        result.fatal_path = *cached;
                    }
                    if (attempt.outcome == Attempt::Outcome::other_class)
                        result.saw_other_class = true;
                    done = settle(std::move(result), Via::cache, -1);
                }
            }
        }
        if (!done && !nodeflib) {
            settle(m_context.search_dirs(name, m_context.target().default_dirs), Via::default_dir,
                   -1);
        }
    }

    if (search.found) {
        // The same file under another name (a hard link, merged /usr) is the same object.
        if (search.found->identity != 0) {
            if (auto same = m_identities.find(search.found->identity); same != m_identities.end()) {
                m_objects[static_cast<size_t>(same->second)].libnames.push_back(name);
                index_name(name, same->second);
                via = Via::already_loaded;
                return same->second;
            }
        }
        LoadedObject object;
        object.name = search.found->path;
        object.libnames = {name};
        object.first_request = name;
        object.canonical = search.found->canonical;
        object.identity = search.found->identity;
        object.info = search.found->info;
        object.loader = requester;
        object.via = via;
        object.via_object = via_object;
        return add_object(std::move(object));
    }

    LoadedObject object;
    object.name = name;
    object.libnames = {name};
    object.first_request = name;
    object.loader = requester;
    if (search.fatal.empty() && m_context.environment().host_provided.count(name) != 0) {
        object.via = Via::host_provided;
        via = Via::host_provided;
        // Host-provided objects answer later requests by name like any loaded object.
        return add_object(std::move(object));
    }
    object.faked = true;
    object.via = Via::not_found;
    object.fatal = search.fatal;
    object.fatal_path = search.fatal_path;
    if (object.fatal.empty() && search.saw_other_class) {
        object.fatal = "wrong ELF class: " +
                       elf::class_name(m_context.target().elf_class == elf::ElfClass::elf64
                                           ? elf::ElfClass::elf32
                                           : elf::ElfClass::elf64);
    }
    via = Via::not_found;
    return add_object(std::move(object));
}

void LoadSession::load_dependencies(size_t first) {
    // glibc's _dl_map_object_deps: a queue in order of first reference; each object's
    // DT_NEEDED entries are mapped in order, and new objects join the end of the queue.
    std::deque<int> queue;
    std::vector<bool> queued(m_objects.size(), false);
    for (size_t i = first; i < m_objects.size(); ++i) {
        queue.push_back(static_cast<int>(i));
        queued[i] = true;
    }
    while (!queue.empty()) {
        int current = queue.front();
        queue.pop_front();
        const auto info = m_objects[static_cast<size_t>(current)].info;
        if (!info || m_objects[static_cast<size_t>(current)].faked)
            continue;
        for (const auto& needed : info->needed) {
            Via via = Via::not_found;
            int via_object = -1;
            int object = map_object(current, needed, via, via_object);
            m_requests.push_back(Request{current, needed, object, via});
            if (queued.size() < m_objects.size())
                queued.resize(m_objects.size(), false);
            if (!m_listed[static_cast<size_t>(object)] && object != m_main) {
                if (object == m_interpreter) {
                    m_interpreter_predecessor = -1;
                    for (auto it = m_list_order.rbegin(); it != m_list_order.rend(); ++it) {
                        if (!m_objects[static_cast<size_t>(*it)].faked) {
                            m_interpreter_predecessor = *it;
                            break;
                        }
                    }
                }
                m_listed[static_cast<size_t>(object)] = true;
                m_list_order.push_back(object);
            }
            if (!queued[static_cast<size_t>(object)] && static_cast<size_t>(object) >= first) {
                queued[static_cast<size_t>(object)] = true;
                queue.push_back(object);
            }
        }
    }
}

bool LoadSession::load_main(const std::string& path, bool origin_from_realpath) {
    auto resolved = m_context.resolver().resolve(path);
    if (!resolved || resolved->stat.kind != fs::NodeKind::regular) {
        m_main_error = "cannot open: no such file";
        return false;
    }
    fs::ElfProbe probe = m_context.tree().probe_elf(resolved->path);
    if (probe.outcome != fs::ElfProbe::Outcome::elf) {
        m_main_error = probe.outcome == fs::ElfProbe::Outcome::too_short   ? "file too short"
                       : probe.outcome == fs::ElfProbe::Outcome::malformed ? probe.error
                                                                           : "invalid ELF header";
        return false;
    }
    const Target& target = m_context.target();
    if (probe.info->elf_class != target.elf_class) {
        m_main_error = "wrong ELF class: " + elf::class_name(probe.info->elf_class);
        return false;
    }
    if (probe.info->machine != target.machine) {
        // ld.so skips an object of another machine as if it were absent.
        m_main_error = "cannot open shared object file: No such file or directory";
        return false;
    }
    LoadedObject main;
    main.name = path;
    main.libnames = {path};
    main.first_request = path;
    main.canonical = resolved->path;
    main.identity = resolved->stat.identity;
    main.info = probe.info;
    main.via = Via::path;
    m_main = add_object(std::move(main));
    m_main_origin = origin_from_realpath ? fs::dirname(resolved->path) : origin_of(path);

    // The dynamic loader is in the namespace before anything else; it is listed only where
    // some object first needs it.
    std::string interpreter =
        probe.info->interpreter.empty() ? m_context.target().interpreter : probe.info->interpreter;
    if (auto interp = m_context.resolver().resolve(interpreter);
        interp && interp->stat.kind == fs::NodeKind::regular && interp->path != resolved->path) {
        fs::ElfProbe interp_probe = m_context.tree().probe_elf(interp->path);
        if (interp_probe.outcome == fs::ElfProbe::Outcome::elf) {
            LoadedObject object;
            object.name = interpreter;
            object.libnames = {interpreter};
            object.first_request = interpreter;
            object.canonical = interp->path;
            object.identity = interp->stat.identity;
            object.info = interp_probe.info;
            object.via = Via::interpreter;
            m_interpreter = add_object(std::move(object));
        }
    }
    // A program whose PT_INTERP is not there cannot be exec'd at all ("No such file or
    // directory" from execve, the classic symptom of a foreign or musl binary).
    if (!probe.info->interpreter.empty() && m_interpreter < 0 && interpreter != resolved->path) {
        m_missing_interpreter = interpreter;
    }
    load_dependencies(static_cast<size_t>(m_main));
    return true;
}

int LoadSession::dlopen(const std::string& path) {
    return dlopen_from(m_main, path);
}

int LoadSession::dlopen_from(int caller, const std::string& name) {
    // Only code of an object the namespace holds can call dlopen; -1 is "no main program", as
    // before a main is loaded.
    if (caller < -1 || caller >= static_cast<int>(m_objects.size()))
        return -1;
    if (caller >= 0) {
        const LoadedObject& calling = m_objects[static_cast<size_t>(caller)];
        if (calling.faked || !calling.info)
            return -1;
    }
    Via via = Via::not_found;
    int via_object = -1;
    size_t before = m_objects.size();
    int index = map_object(caller, name, via, via_object);
    LoadedObject& object = m_objects[static_cast<size_t>(index)];
    if (object.faked)
        return -1;
    if (static_cast<size_t>(index) >= before)
        object.loader = -1;  // dlopen leaves no l_loader
    if (!m_listed[static_cast<size_t>(index)] && index != m_main) {
        m_listed[static_cast<size_t>(index)] = true;
        m_list_order.push_back(index);
    }
    if (static_cast<size_t>(index) >= before)
        load_dependencies(before);
    return index;
}

}  // namespace rootlock::loader
