// Writing files so that no reader ever sees half of one, and a failed write never costs the
// previous version. Every writer in capsim (reports, charts, exports, JUnit, manifests,
// calibration profiles, the GUI's scenario save) goes through write_file_atomically; the Qt
// writers render into memory first and hand the bytes here.
//
// Thread-safe: concurrent writers of one path (threads or processes) each use a temporary
// of their own, and the last rename wins with one complete file.
#pragma once

#include <filesystem>
#include <string_view>

#include "capsim/core/result.hpp"

namespace capsim {

// Writes `content` to a temporary file with a unique name (mkstemp) in the target's
// directory, checks every write and the close, fsyncs it, renames it over `path` and fsyncs
// the directory. On any failure the old file is untouched, the temporary is removed and the
// diagnostic (cause: environment) names `path` and the system's reason (e.g. "No space left
// on device"). The new file gets mode 0666 less the umask, like an ordinary create.
Status write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace capsim
