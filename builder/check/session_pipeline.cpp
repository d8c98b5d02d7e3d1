// SessionPipeline: one binding worker, merges on the caller's thread; see session_pipeline.hpp.
#include "check/session_pipeline.hpp"

namespace rootlock::check::detail {

SessionPipeline::SessionPipeline(Collector& out) : m_out(out) {
    if (std::thread::hardware_concurrency() > 1)
        m_worker = std::thread([this] { work(); });
}

SessionPipeline::~SessionPipeline() {
    // No merging here: a pipeline left by an exception drops what it holds (merging could
    // throw again). The worker finishes the session it is binding and stops.
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_to_bind.notify_all();
    if (m_worker.joinable())
        m_worker.join();
}

void SessionPipeline::submit(std::unique_ptr<const loader::LoadSession> session, ScopePlan plan,
                             Since from) {
    if (!m_worker.joinable()) {
        collect_session(*session, m_out, plan, from);
        return;
    }
    {
        std::lock_guard lock(m_mutex);
        m_jobs.push_back(Job{std::move(session), std::move(plan), from, {}});
    }
    m_to_bind.notify_one();
    merge_bound(k_max_in_flight);
}

void SessionPipeline::drain() {
    merge_bound(0);
}

void SessionPipeline::merge_bound(size_t keep) {
    while (true) {
        Job* job = nullptr;
        {
            std::unique_lock lock(m_mutex);
            if (m_jobs.empty())
                return;
            // The front is bound once the worker has passed it.
            const bool front_bound = m_bound_count > m_merged;
            if (!front_bound) {
                if (m_jobs.size() <= keep)
                    return;
                m_bound.wait(lock, [&] { return m_bound_count > m_merged; });
            }
            job = &m_jobs.front();
        }
        // Unlocked: the worker never touches a bound job, and a deque keeps the others in
        // place while the front goes.
        merge_session(*job->session, m_out, job->plan, job->from, std::move(job->bound));
        std::lock_guard lock(m_mutex);
        m_jobs.pop_front();
        ++m_merged;
    }
}

void SessionPipeline::work() {
    while (true) {
        Job* job = nullptr;
        {
            std::unique_lock lock(m_mutex);
            m_to_bind.wait(lock,
                           [&] { return m_stop || m_bound_count < m_merged + m_jobs.size(); });
            if (m_stop)
                return;
            job = &m_jobs[m_bound_count - m_merged];
        }
        job->bound = bind_session(*job->session, m_out, job->plan, job->from);
        {
            std::lock_guard lock(m_mutex);
            ++m_bound_count;
        }
        m_bound.notify_one();
    }
}

}  // namespace rootlock::check::detail
