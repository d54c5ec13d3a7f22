#include "capsim/core/files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace capsim {
namespace {

Diagnostic io_failure(const std::filesystem::path& path, const std::string& what, int error) {
  Diagnostic d{{path.string()}, "", what + ": " + std::strerror(error), ""};
  d.cause = Cause::environment;
  return d;
}

mode_t creation_mode() {
  const mode_t mask = ::umask(0);  // reading the umask means setting it; put it straight back
  ::umask(mask);
  return static_cast<mode_t>(0666 & ~mask);
}

// Writes all of `content`, retrying short writes and EINTR; false with errno set on failure.
bool write_all(int fd, std::string_view content) {
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

// Makes the rename itself durable; a failure here is reported but the new file is in place.
int fsync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int rc = ::fsync(fd) == 0 || errno == EINVAL ? 0 : errno;  // some file systems cannot
  ::close(fd);
  return rc;
}

// ".<name>.tmp.<pid>." : the temporaries of `name`, which carry their writer's pid so that a
// later writer can tell one left by a killed process from one still being written.
std::string temporary_prefix(const std::filesystem::path& path) { return "." + path.filename().string() + ".tmp."; }

// Removes the temporaries beside `path` whose writer no longer runs (killed before its
// rename). A live writer's file is left alone.
void remove_stale_temporaries(const std::filesystem::path& dir, const std::filesystem::path& path) {
  std::error_code ec;
  const std::string prefix = temporary_prefix(path);
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const auto dot = name.find('.', prefix.size());
    const std::string pid_text = name.substr(prefix.size(), dot == std::string::npos ? 0 : dot - prefix.size());
    if (pid_text.empty() || pid_text.size() > 9 || pid_text.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::filesystem::remove(entry.path(), ec);
  }
}

// The file behind `fd` is the one `st` describes.
bool same_file(int fd, const struct stat& st) {
  struct stat other {};
  return ::fstat(fd, &other) == 0 && other.st_dev == st.st_dev && other.st_ino == st.st_ino;
}

// A device or FIFO: written where it is, never replaced (renaming a file over /dev/full as
// root would replace the device). Opened without O_CREAT or O_TRUNC, following a link as any
// open does; a FIFO's open waits for its reader, as a shell's `>` does.
Status write_in_place(const std::filesystem::path& path, std::string_view content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return {io_failure(path, "cannot open it for writing", errno)};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
    // Swapped for a file between the look and the open: writing here would not be atomic.
    ::close(fd);
    return {io_failure(path, "changed while being opened", EAGAIN)};
  }
  if (!write_all(fd, content)) {
    const int error = errno;
    ::close(fd);
    return {io_failure(path, "cannot write to it", error)};
  }
  if (::close(fd) != 0) return {io_failure(path, "cannot write to it", errno)};
  return {};
}

// A path that names this process's standard output or error (/dev/stdout, /proc/self/fd/1, a
// link to the file or pipe stdout goes to): written through std::cout or std::cerr, in order
// with what the program prints there. Reopening it instead would write at offset 0 of a
// redirected file, under what the program prints after. The stream keeps any error.
bool write_to_standard_stream(const struct stat& target, std::string_view content) {
  if (same_file(STDOUT_FILENO, target)) {
    std::cout.write(content.data(), static_cast<std::streamsize>(content.size())).flush();
    return true;
  }
  if (same_file(STDERR_FILENO, target)) {
    std::cerr.write(content.data(), static_cast<std::streamsize>(content.size())).flush();
    return true;
  }
  return false;
}

// What is at `path` decides how it is written; nullopt: a regular file or nothing, replaced
// atomically. A symbolic link is followed only to a device, a FIFO or the standard streams:
// replacing the file a link names would mean writing in the link target's folder, which a
// link planted in a shared folder (/tmp) could point anywhere, and replacing the link itself
// would silently cut it.
std::optional<Status> write_special(const std::filesystem::path& path, std::string_view content) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return std::nullopt;
  auto refuse = [&](const std::string& what, const std::string& hint) {
    return Status{Diagnostic{{path.string()}, "", what, hint}};
  };
  const bool link = S_ISLNK(st.st_mode);
  const std::string no_links = "capsim does not write through links to files";
  const std::string instead = "name the file itself, or remove the link";
  if (link && ::stat(path.c_str(), &st) != 0) {
    const int error = errno;
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(path, ec);
    return refuse("is a symbolic link (to " + (ec ? std::string() : target.string() + ": ") + std::strerror(error) +
                      "); " + no_links,
                  instead);
  }
  if (!S_ISDIR(st.st_mode) && write_to_standard_stream(st, content)) return Status{};
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) return write_in_place(path, content);
  if (S_ISDIR(st.st_mode)) return refuse(link ? "is a symbolic link to a directory" : "is a directory", "name a file");
  if (S_ISBLK(st.st_mode))
    return refuse("is a block device (a disk); capsim writes only to files, character devices and pipes", "");
  std::error_code ec;
  const auto target = std::filesystem::canonical(path, ec);
  return refuse("is a symbolic link" + (ec ? std::string() : " (to " + target.string() + ")") + "; " + no_links,
                instead);
}

}  // namespace

Status write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  if (auto special = write_special(path, content)) return *special;
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  remove_stale_temporaries(dir, path);
  // A dot name, so that globs and directory listings do not pick up a half-written file;
  // mkstemp's random part makes it unique among threads of one process too, and O_EXCL
  // means it never follows a link someone planted.
  std::string tmp = (dir / (temporary_prefix(path) + std::to_string(::getpid()) + ".XXXXXX")).string();
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return {io_failure(path, "cannot create a temporary file beside it", errno)};
  auto fail = [&](const std::string& what, int error) {
    ::unlink(tmp.c_str());
    return Status{io_failure(path, what, error)};
  };
  if (::fchmod(fd, creation_mode()) != 0) {
    const int error = errno;
    ::close(fd);
    return fail("cannot set the file's mode", error);
  }
  if (!write_all(fd, content)) {
    const int error = errno;
    ::close(fd);
    return fail("cannot write the file", error);
  }
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    return fail("cannot flush the file to disk", error);
  }
  if (::close(fd) != 0) return fail("cannot write the file", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("cannot replace the file", errno);
  if (const int error = fsync_directory(dir); error != 0)
    return {io_failure(path, "written, but cannot flush its directory", error)};
  return {};
}

namespace {

// The live temporary directories, for the signal handler. A fixed table of C strings, so
// the handler reads it without allocating; slots are claimed and released under a mutex
// by ordinary code and read (never written) by the handler.
constexpr int kMaxLiveDirectories = 16;
constexpr std::size_t kMaxPath = 4096;
char g_live[kMaxLiveDirectories][kMaxPath];
std::atomic<bool> g_used[kMaxLiveDirectories];
std::mutex g_live_mutex;

void register_live(const std::filesystem::path& path) {
  const std::string text = path.string();
  if (text.size() >= kMaxPath) return;
  std::lock_guard<std::mutex> lock(g_live_mutex);
  for (int i = 0; i < kMaxLiveDirectories; ++i)
    if (!g_used[i].load()) {
      std::memcpy(g_live[i], text.c_str(), text.size() + 1);
      g_used[i].store(true);
      return;
    }
}

void unregister_live(const std::filesystem::path& path) {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  for (int i = 0; i < kMaxLiveDirectories; ++i)
    if (g_used[i].load() && path.string() == g_live[i]) g_used[i].store(false);
}

// Removes a directory of plain files (what capsim puts in one) with async-signal-safe calls.
void remove_flat_directory(const char* dir) {
  const int fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    // getdents would be the strictly signal-safe way; readdir on a fresh DIR is what
    // glibc implements with it and allocates only in fdopendir, before any entry.
    if (DIR* d = ::fdopendir(fd)) {
      while (const dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ::unlinkat(fd, e->d_name, 0);
      ::closedir(d);
    } else {
      ::close(fd);
    }
  }
  ::rmdir(dir);
}

extern "C" void on_terminate(int signal) {
  for (int i = 0; i < kMaxLiveDirectories; ++i)
    if (g_used[i].load()) remove_flat_directory(g_live[i]);
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

}  // namespace

Result<TemporaryDirectory> TemporaryDirectory::create(const std::string& prefix) {
  std::filesystem::path base = "/tmp";
  if (const char* env = std::getenv("TMPDIR"); env != nullptr && *env != '\0') {
    base = env;
    std::error_code ec;
    if (!std::filesystem::is_directory(base, ec))
      return environment_failure(Diagnostic{{base.string()}, "TMPDIR", "is not an existing directory",
                                            "set TMPDIR to a writable directory, or unset it to use /tmp"});
  }
  std::string pattern = (base / (prefix + "-XXXXXX")).string();
  // SIGTERM or SIGINT between mkdtemp and the registration would leave the directory behind
  // (a CI timeout did once): hold them until the handler knows it.
  sigset_t stop_signals, previous;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  ::pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);
  if (::mkdtemp(pattern.data()) == nullptr) {
    const int error = errno;
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return environment_failure(Diagnostic{{base.string()}, "TMPDIR",
                                          std::string("cannot create a private temporary directory: ") +
                                              std::strerror(error),
                                          "set TMPDIR to a writable directory"});
  }
  TemporaryDirectory dir{std::filesystem::path(pattern)};
  register_live(dir.path_);
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return dir;
}

TemporaryDirectory::TemporaryDirectory(TemporaryDirectory&& other) noexcept : path_(std::move(other.path_)) {
  other.path_.clear();
}

TemporaryDirectory::~TemporaryDirectory() {
  if (path_.empty()) return;
  unregister_live(path_);
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void remove_temporary_directories_on_signal() {
  struct sigaction action {};
  action.sa_handler = on_terminate;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
}

int create_private_file(const std::filesystem::path& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

Result<std::string> read_input_file(const std::filesystem::path& path, std::uintmax_t max_bytes, const std::string& what) {
  auto refuse = [&](const std::string& message, const std::string& hint = {}) -> Result<std::string> {
    return Diagnostic{{path.string()}, "", message, hint};
  };
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return refuse("cannot read the " + what + " (does it exist?)");
  if (std::filesystem::is_directory(status)) return refuse("is a directory, not a " + what);
  if (!std::filesystem::is_regular_file(status)) return refuse("is not a regular file (a device or a pipe), not a " + what);
  const auto size = std::filesystem::file_size(path, ec);
  const std::string limit = std::to_string(max_bytes / (1024 * 1024)) + " MiB";
  if (!ec && size > max_bytes)
    return refuse("the " + what + " is " + std::to_string(size) + " bytes, more than the limit of " + limit);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return refuse("cannot read the " + what + ": " + std::strerror(errno));
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return refuse("cannot read the " + what + ": " + std::strerror(error));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {
      ::close(fd);
      return refuse("the " + what + " grew past the limit of " + limit + " while being read");
    }
  }
  ::close(fd);
  return text;
}

}  // namespace capsim
