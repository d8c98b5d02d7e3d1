// Binds every undefined symbol of the objects of one namespace the way glibc's
// _dl_lookup_symbol_x walks an object's scope: the global scope (the main program, its
// DT_NEEDED closure breadth-first, then objects dlopened RTLD_GLOBAL), then, for objects a
// dlopen(RTLD_LOCAL) brought in (a Python extension), that dlopen's own closure.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "check/symbol_index.hpp"
#include "fs/file_tree.hpp"
#include "loader/session.hpp"

namespace rootlock::check {

struct ScopePlan {
    std::vector<int> global_roots;  // the main program, then RTLD_GLOBAL dlopen roots in order
    int local_root = -1;            // the object a dlopen(RTLD_LOCAL) opened, -1 for none
    // CPython dlopens extensions RTLD_NOW: every reference of the objects it brings in is bound
    // at import, lazily bound functions included.
    bool bind_now = false;
    // The objects were loaded on their own (nothing in the tree loads them): their host program
    // may provide unversioned symbols, so only versioned references, whose version names the
    // library that must define them, are checked.
    bool standalone = false;
};

// One reference no object in scope defines.
struct UnboundReference {
    int object = -1;  // index into the session's objects
    std::string name;
    std::string version;  // empty when unversioned
    std::string file;  // the soname its version is needed from (DT_VERNEED), empty if unversioned
    bool at_load = true;  // fails when the object is loaded; false: at the first call
};

// What an object's references leave unbound within its own DT_NEEDED closure, remembered per
// (object, closure): the closure is part of every scope the object is bound in, so only these
// residual references (usually none; Python's Py* for an extension) need the whole scope.
// This is what keeps a root of a thousand programs sharing libstdc++ and libtorch linear.
class BindingMemo {
  public:
    struct Entry {
        std::shared_ptr<const elf::ElfInfo> info;  // owns the symbols `residual` indexes
        std::vector<uint32_t> residual;            // indexes into info->symbols
        size_t references = 0;
        bool counted = false;  // count_references() added its references to a result already
    };
    Entry* find(const std::string& key);
    Entry& insert(const std::string& key, Entry entry);

  private:
    std::unordered_map<std::string, Entry> m_entries;
};

struct BindResult {
    std::vector<UnboundReference> unbound;
    // Undefined non-weak references bound or found unbound, each object counted once per
    // distinct closure: filled by count_references(), not by bind_symbols().
    size_t references = 0;
    // The memo entries of the objects bound, one per object. Their references are counted when
    // the result is merged, in the order results are merged, so that the count does not depend
    // on which thread bound which session first.
    std::vector<BindingMemo::Entry*> closures;
    // References not judged: their scope holds a library that was not found (missing-soname
    // covers them) or one the host provides (its exports are unknown), or a standalone object's
    // unversioned references.
    size_t unjudged = 0;
};

// Binds the references of every object of `session` from index `first` on. Objects are read
// again with their symbols from `tree` when the session's copy lacks them. One call at a time
// per memo; other threads may meanwhile count_references() of earlier results.
BindResult bind_symbols(const loader::LoadSession& session, size_t first, const ScopePlan& plan,
                        const fs::FileTree& tree, ExportIndexCache& indexes, BindingMemo& memo);

// Adds to result.references those of its closures no earlier counted result had.
void count_references(BindResult& result);

}  // namespace rootlock::check
