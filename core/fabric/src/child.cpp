#include "child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>

namespace capsim::fabric::detail {
namespace {

// First byte of the child's answer: the rest is the result, or an error message.
constexpr char kAnswerOk = 'K';
constexpr char kAnswerError = 'E';
constexpr std::size_t kReadChunkBytes = 4096;

Diagnostic failure(const std::string& what, const std::string& message) {
  return Diagnostic{{}, "fabric", what + ": " + message, {}};
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// Signals whose handlers the child must not inherit: a test framework's crash handler
// would report the child's crash as the parent's.
constexpr int kResetSignals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT};

[[noreturn]] void child_main(int fd, const std::function<std::string()>& work) {
  for (const int sig : kResetSignals) ::signal(sig, SIG_DFL);
  std::string answer;
  try {
    answer = kAnswerOk + work();
  } catch (const std::exception& e) {
    answer = std::string(1, kAnswerError) + e.what();
  } catch (...) {
    answer = std::string(1, kAnswerError) + "unknown exception";
  }
  write_all(fd, answer);
  ::close(fd);
  ::_exit(0);
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "killed by signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended abnormally";
}

void reap(pid_t pid, int* status) {
  while (::waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

Result<std::string> run_in_child(const std::function<std::string()>& work, Seconds timeout,
                                 const std::string& what) {
  // Buffered output would otherwise be written twice if anything in the child flushes it.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return failure(what, std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return failure(what, std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], work);
  }
  ::close(fds[1]);

  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout.value()));
  std::string answer;
  bool timed_out = false;
  char buffer[kReadChunkBytes];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // timeout: the loop re-checks the deadline
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child closed the pipe (answered or died)
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  if (timed_out) {
    ::kill(pid, SIGKILL);
    reap(pid, &status);
    return failure(what, "the simulation child did not finish within " +
                             std::to_string(timeout.value()) + " s and was killed");
  }
  reap(pid, &status);
  if (answer.empty())
    return failure(what, "the simulation child " + describe_status(status) + " without an answer");
  if (answer.front() == kAnswerError) return failure(what, answer.substr(1));
  if (answer.front() != kAnswerOk || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return failure(what,
                   "the simulation child " + describe_status(status) + " with a garbled answer");
  return answer.substr(1);
}

}  // namespace capsim::fabric::detail
