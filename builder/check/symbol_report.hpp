// Undefined symbols as users read them: grouped by the library expected to define them and by
// who needs them, demangled, with when they fail, where else in the root they are defined, and
// a hint ("this extension was built against another torch").
#pragma once

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "check/object_scan.hpp"
#include "check/problem.hpp"
#include "check/symbol_binding.hpp"

namespace rootlock::check {

// The readable form of a mangled C++ name; the name itself when it is not one.
std::string demangle(const std::string& name);

class SymbolCollector {
  public:
    // Records the unbound references of one namespace. `standalone`: nothing in the tree loads
    // these objects, so findings are warnings.
    void add(const loader::LoadSession& session, const BindResult& result, bool standalone,
             ExportIndexCache& indexes);

    // One undefined-symbol problem per (library, provider, symbol set), with every object that
    // misses exactly that set. `scan` tells where else in the root the symbols are defined.
    void emit(const Scan& scan, std::vector<Problem>& problems) const;

    // The names `consumer` misses in a load context (for wrong-provider's verdict).
    std::vector<std::string> missed_by(const std::string& consumer) const;

    size_t references() const { return m_references; }
    size_t unjudged() const { return m_unjudged; }

  private:
    struct Missing {
        std::string name;
        std::string version;
        bool at_load = true;
        auto operator<=>(const Missing&) const = default;
    };
    struct Group {
        std::set<Missing> symbols;
        bool in_context = false;
        // For references no needed library explains: the consumer's DT_NEEDED names -> what
        // they bound to, so that a copy elsewhere in the root that defines the symbols can say
        // which of them was expected (libshadow.so.1 shadowed by a copy that lacks f_new).
        std::map<std::string, std::string> needed;
    };
    // (consumer, library, provider) -> what it misses
    std::map<std::tuple<std::string, std::string, std::string>, Group> m_groups;
    size_t m_references = 0;
    size_t m_unjudged = 0;
};

}  // namespace rootlock::check
