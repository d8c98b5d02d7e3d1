// The temporaries of runs that were killed (`kill -9`, a power cut): files whose names carry the
// PID of the process that made them, removed by a later run once that process is gone, and never
// while it lives, so two runs sharing a cache or an output directory leave each other alone.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rootlock::util {

// Whether no process has this PID now (kill(pid, 0) fails with ESRCH). A PID reused by another
// process reads as alive: its file is kept, which errs on the safe side.
bool process_gone(long pid);

// Removes the regular files of `dir` named PREFIX<pid>, PREFIX<pid>-<anything> or
// PREFIX<pid>.<anything> (an OCI build's layer files beside its image) whose process is gone;
// returns how many. A missing or unreadable directory, or a file that vanished meanwhile,
// is no error: this is housekeeping, never a reason to fail the run.
size_t remove_dead_leftovers(const std::string& dir, std::string_view prefix);

}  // namespace rootlock::util
