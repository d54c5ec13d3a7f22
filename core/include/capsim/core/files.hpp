// Writing files so that no reader ever sees half of one, and a failed write never costs the
// previous version. Every writer in capsim (reports, charts, exports, JUnit, manifests,
// calibration profiles, the GUI's scenario save) goes through write_file_atomically; the Qt
// writers render into memory first and hand the bytes here.
//
// Thread-safe: concurrent writers of one path (threads or processes) each use a temporary
// of their own, and the last rename wins with one complete file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "capsim/core/result.hpp"

namespace capsim {

// Writes `content` to a temporary file with a unique name (mkstemp) in the target's
// directory, checks every write and the close, fsyncs it, renames it over `path` and fsyncs
// the directory. On any failure the old file is untouched, the temporary is removed and the
// diagnostic (cause: environment) names `path` and the system's reason (e.g. "No space left
// on device"). The new file gets mode 0666 less the umask, like an ordinary create.
Status write_file_atomically(const std::filesystem::path& path, std::string_view content);

// Reads a whole input file of at most `max_bytes`: a regular file (not a device such as
// /dev/zero, a FIFO or a directory), read with the cap enforced while reading (a file that
// grows is caught too). Errors (Cause::input) name the file and never quote its content.
Result<std::string> read_input_file(const std::filesystem::path& path, std::uintmax_t max_bytes, const std::string& what);

// A private directory for one process's scratch files: created with mkdtemp (a fresh,
// unpredictable name, mode 0700, never an existing directory or a link) under $TMPDIR
// (else /tmp), and removed with everything in it when the object goes, and also when
// the process is stopped by SIGTERM or SIGINT while it exists (see
// remove_temporary_directories_on_signal). Movable, not copyable; not thread-safe.
class TemporaryDirectory {
 public:
  // Errors (Cause::environment): $TMPDIR is not an existing writable directory.
  static Result<TemporaryDirectory> create(const std::string& prefix);
  TemporaryDirectory(TemporaryDirectory&& other) noexcept;
  TemporaryDirectory& operator=(TemporaryDirectory&&) = delete;
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  ~TemporaryDirectory();
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit TemporaryDirectory(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

// Installs SIGTERM and SIGINT handlers that remove every live TemporaryDirectory and then
// end the process as the signal would (128 + signal number). Call it once from main().
void remove_temporary_directories_on_signal();

// Creates `path` for writing only if it does not exist, never following a link
// (O_CREAT | O_EXCL | O_NOFOLLOW), mode 0600; returns the descriptor or -1 with errno.
int create_private_file(const std::filesystem::path& path);

}  // namespace capsim
