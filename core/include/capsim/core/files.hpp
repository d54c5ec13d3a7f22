// Writing files so that no reader ever sees half of one, and a failed write never costs the
// previous version (devices, pipes and the standard streams are written in place). Every
// writer in capsim (reports, charts, exports, JUnit, manifests, calibration profiles, the
// GUI's scenario save) goes through write_file_atomically; the Qt writers render into memory
// first and hand the bytes here.
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

// Writes `content` to `path`, by what is there:
//   - nothing or a regular file: replaced atomically. A temporary file with a unique name
//     (mkstemp) in the target's directory gets the content, every write and the close checked,
//     is fsynced and renamed over `path`, and the directory is fsynced. On any failure the old
//     file is untouched and the temporary removed. The new file gets mode 0666 less the umask,
//     like an ordinary create.
//   - a character device, FIFO or socket (/dev/null, /dev/full, a named pipe): written in
//     place, never replaced; opening a FIFO waits for its reader.
//   - this process's standard output or error, by any name (/dev/stdout, /proc/self/fd/1, a
//     link to the file stdout is redirected to): written through std::cout or std::cerr, in
//     order with the rest of what is printed there; a failure shows in that stream's state and
//     is the program's to check at its end, as for everything else it prints.
//   - a symbolic link: followed to a device, a FIFO or a standard stream as above; a link to a
//     file (or to nothing) is refused, the link left alone: replacing the file it names would
//     write into the link target's folder, wherever a link planted in a shared folder points.
//   - a directory or a block device: refused.
// A refusal is Cause::input; a failed write is Cause::environment, naming `path` and the
// system's reason (e.g. "No space left on device").
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
