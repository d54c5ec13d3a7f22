// Running work in a forked child process, with a wall-clock limit.
#pragma once

#include <functional>
#include <string>

#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"

namespace capsim::fabric::detail {

// Forks; the child runs `work` and sends its text back through a pipe, then _exit()s (no
// destructors, no atexit handlers, no flushing of the parent's stdio buffers). An exception
// in `work` comes back as an error with its message. Errors: fork/pipe failure, a child
// that crashes (the signal is named), exits without answering, or outlives `timeout` (it
// is then killed). `what` names the work in messages.
Result<std::string> run_in_child(const std::function<std::string()>& work, Seconds timeout,
                                 const std::string& what);

}  // namespace capsim::fabric::detail
