// Wrong provider wins: a library found through LD_LIBRARY_PATH, ld.so.cache, the default
// directories or an earlier load, while the consumer's own copy (the one its RPATH/RUNPATH
// points at, or one in its own Python environment) loses. A warning, and an error when the
// winner lacks a version or symbol the consumer needs (the __nvJitLinkComplete_12_4 failure).
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "check/object_scan.hpp"
#include "check/problem.hpp"
#include "loader/search.hpp"
#include "loader/session.hpp"

namespace rootlock::check {

class ProviderCollector {
  public:
    // Looks at the requests of `session` from index `first_request` on.
    void add(const loader::LoadSession& session, size_t first_request,
             loader::SearchContext& context, const Scan& scan,
             const std::vector<std::string>& site_dirs);

    // `lacks(consumer, soname, picked, packaged)` says what the winner lacks for that consumer
    // ("" when nothing): the verdict that makes the finding an error.
    template <typename Lacks>
    void emit(const Scan& scan, Lacks&& lacks, std::vector<Problem>& problems) const;

  private:
    // (soname, picked, via, packaged) -> consumers
    std::map<std::tuple<std::string, std::string, std::string, std::string>, std::set<std::string>>
        m_findings;
};

// Every copy of `soname` the scan saw (by SONAME or by file name), sorted.
std::vector<std::string> copies_of(const Scan& scan, const std::string& soname);

template <typename Lacks>
void ProviderCollector::emit(const Scan& scan, Lacks&& lacks,
                             std::vector<Problem>& problems) const {
    for (const auto& [key, consumers] : m_findings) {
        const auto& [soname, picked, via, packaged] = key;
        std::string reason;
        for (const auto& consumer : consumers) {
            std::string lack = lacks(consumer, soname, picked, packaged);
            if (!lack.empty()) {
                reason = consumer + " needs " + lack;
                break;
            }
        }
        Problem problem{"wrong-provider", reason.empty() ? Severity::warning : Severity::error, {}};
        problem.fields["soname"] = soname;
        problem.fields["picked"] = picked;
        problem.fields["via"] = via;
        problem.fields["packaged"] = packaged;
        problem.fields["needed_by"] = std::vector<std::string>(consumers.begin(), consumers.end());
        // The checked paths may not reach the winner (`check /opt/app` with LD_LIBRARY_PATH).
        std::vector<std::string> copies = copies_of(scan, soname);
        for (const std::string* path : {&picked, &packaged}) {
            if (std::find(copies.begin(), copies.end(), *path) == copies.end())
                copies.push_back(*path);
        }
        std::sort(copies.begin(), copies.end());
        problem.fields["copies"] = copies;
        if (!reason.empty())
            problem.fields["reason"] = reason + ", which the winner lacks";
        problems.push_back(std::move(problem));
    }
}

}  // namespace rootlock::check
