// SessionPipeline: binds load sessions on a worker thread while the calling thread loads the
// next ones, and merges each into the Collector in the order they were submitted. Loading
// (SearchContext, not thread-safe) and merging stay on the caller's thread; binding, half of
// the time a whole-root check spends on its thousand programs, runs beside them. The report
// is the same as collecting each session in turn: merges keep the order, and the one worker
// binds in that order too. Internal to check/.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "check/closure_collect.hpp"

namespace rootlock::check::detail {

class SessionPipeline {
  public:
    // `out` must outlive the pipeline; while sessions are in flight, the caller may load new
    // sessions but must not touch `out` except through the pipeline. drain() before reading
    // `out`: the destructor drops sessions not merged yet.
    explicit SessionPipeline(Collector& out);
    SessionPipeline(const SessionPipeline&) = delete;
    SessionPipeline& operator=(const SessionPipeline&) = delete;
    ~SessionPipeline();

    // collect_session(*session, out, plan, from), after every session submitted before it.
    // The session must not depend on one still in flight (a base it was copied from is fine
    // as long as that base outlives the pipeline's use of it).
    void submit(std::unique_ptr<const loader::LoadSession> session, ScopePlan plan,
                Since from = {});
    // Merges every session submitted; then the caller may use `out` again.
    void drain();

  private:
    struct Job {
        std::unique_ptr<const loader::LoadSession> session;
        ScopePlan plan;
        Since from;
        BindResult bound;
    };
    // Sessions loaded ahead of the worker at most: each holds its objects until merged.
    static constexpr size_t k_max_in_flight = 4;

    // Merges the jobs at the front that are bound; with `wait`, waits until at most
    // `keep` jobs remain unmerged.
    void merge_bound(size_t keep);
    void work();

    Collector& m_out;
    std::mutex m_mutex;
    std::condition_variable m_to_bind;
    std::condition_variable m_bound;
    std::deque<Job> m_jobs;    // unmerged, in submission order
    size_t m_merged = 0;       // jobs merged (and popped) so far
    size_t m_bound_count = 0;  // jobs bound so far: m_jobs[m_bound_count - m_merged] is next
    bool m_stop = false;
    std::thread m_worker;  // none on a single core: submit() binds and merges at once
};

}  // namespace rootlock::check::detail
