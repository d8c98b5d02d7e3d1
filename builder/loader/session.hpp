// LoadSession models one process's link-map namespace: the main program (or the Python
// interpreter), the objects it loads breadth-first through DT_NEEDED, and the objects it
// dlopens, each request resolved in glibc's order and recorded with how it was found.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "loader/search.hpp"

namespace rootlock::loader {

enum class Via : uint8_t {
    interpreter,     // the dynamic loader itself
    already_loaded,  // an object of the namespace matched by name or SONAME
    path,            // the request held a slash
    rpath,           // DT_RPATH of `via_object` (the requester or an object up its chain)
    ld_library_path,
    runpath,        // the requester's own DT_RUNPATH
    cache,          // /etc/ld.so.cache (or the cache ldconfig would build)
    default_dir,    // the trusted directories
    host_provided,  // a driver library the host bind-mounts at run time
    not_found,
};

// "rpath", "ld-library-path", "default", ... as the JSON contract spells them.
std::string_view via_name(Via via);

struct LoadedObject {
    std::string name;                   // l_name: the path it was opened under
    std::vector<std::string> libnames;  // every name it was requested or matched under
    std::string first_request;          // the name it was first requested under
    std::string canonical;              // resolved path inside the root (empty if not found)
    uint64_t identity = 0;
    std::shared_ptr<const elf::ElfInfo> info;  // null when not found or host-provided
    int loader = -1;                           // l_loader: who caused it to be loaded (-1: none)
    Via via = Via::not_found;
    int via_object = -1;  // for Via::rpath: whose DT_RPATH found it
    bool faked = false;   // not found (ld.so's trace mode keeps a placeholder)
    std::string fatal;    // the search stopped at a bad file: ld.so's message
    std::string fatal_path;
};

// The path inside the root of an object found, the name it was asked for under otherwise: how
// reports name an object.
inline const std::string& canonical_of(const LoadedObject& object) {
    return object.canonical.empty() ? object.name : object.canonical;
}

// Its DT_SONAME, or the name it was first requested under when it has none (or was not found).
inline const std::string& soname_of(const LoadedObject& object) {
    return object.info && !object.info->soname.empty() ? object.info->soname : object.first_request;
}

// One DT_NEEDED request and what answered it.
struct Request {
    int requester = -1;
    std::string name;
    int object = -1;  // index into objects()
    Via via = Via::not_found;
};

class LoadSession {
  public:
    explicit LoadSession(SearchContext& context);

    // Loads `path` as the main program and its dependencies breadth-first. With
    // `origin_from_realpath` $ORIGIN is the resolved directory (an exec'd program, via
    // /proc/self/exe); without it, the directory as given (`ld.so --list PATH`).
    // Returns false when `path` is not an ELF object the loader could run.
    bool load_main(const std::string& path, bool origin_from_realpath);

    // dlopen(path) from the main program: the new object has no l_loader, so its dependencies
    // see only its own DT_RPATH and the main program's. Returns its index, -1 on failure.
    int dlopen(const std::string& path);

    // dlopen(name) as called from code in object `caller`: _dl_open_worker passes the caller's
    // map to _dl_map_object, so a bare name is searched along the caller's DT_RPATH and its
    // l_loader chain (unless the caller has DT_RUNPATH), the main program's DT_RPATH,
    // LD_LIBRARY_PATH, the caller's DT_RUNPATH, the cache and the defaults, and $ORIGIN in a name
    // with a slash is the caller's. __RTLD_CALLMAP then drops the caller, so the new object has
    // no l_loader. Returns the object's index, or -1 when nothing was found or `caller` is not
    // a loaded object.
    int dlopen_from(int caller, const std::string& name);

    const SearchContext& context() const { return m_context; }
    const std::vector<LoadedObject>& objects() const { return m_objects; }
    const std::vector<Request>& requests() const { return m_requests; }
    // Objects in the order ld.so's trace mode prints them (main excluded): the link map, in
    // which the dynamic loader sits right after the found object that precedes it in the
    // breadth-first search list (objects not found are not in that list).
    std::vector<int> list_order() const;
    int main_index() const { return m_main; }
    // The object a verneed entry naming `file` binds to from `requester` (find_needed).
    int find_by_name(const std::string& file) const;
    const std::string& main_error() const { return m_main_error; }
    // The main program's PT_INTERP when it names no loadable object in the root.
    const std::string& missing_interpreter() const { return m_missing_interpreter; }

  private:
    int match_loaded(const std::string& name) const;
    int map_object(int requester, const std::string& name, Via& via, int& via_object);
    int add_object(LoadedObject object);
    // Adds a name `index` answers to; the first loaded object with a name keeps it.
    void index_name(const std::string& name, int index);
    void load_dependencies(size_t first);
    std::optional<std::string> origin(int index) const;
    std::vector<std::string> expand_list(const std::vector<std::string>& list, int owner);

    SearchContext& m_context;
    std::vector<LoadedObject> m_objects;
    std::vector<Request> m_requests;
    // Every name (path, request, SONAME) of an object found, to the first object with it: what
    // _dl_map_object's walk over the namespace finds, without walking it per request.
    std::unordered_map<std::string, int> m_names;
    std::unordered_map<uint64_t, int> m_identities;  // file identity -> its object
    std::vector<int> m_list_order;
    std::vector<bool> m_listed;
    int m_main = -1;
    int m_interpreter = -1;
    int m_interpreter_predecessor = -1;  // found object before the loader's first reference
    std::optional<std::string> m_main_origin;
    std::string m_main_error;
    std::string m_missing_interpreter;
};

}  // namespace rootlock::loader
