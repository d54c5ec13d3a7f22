#include "capsim/core/files.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

namespace capsim {
namespace {

// Removes "<name>.tmp.<pid>" files beside `path` left by writers that were killed before
// their rename: the pid names no running process. A live writer's file is left alone.
void remove_stale_temporaries(const std::filesystem::path& path) {
  std::error_code ec;
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const std::string prefix = path.filename().string() + ".tmp.";
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid == ::getpid() || (::kill(pid, 0) == 0 || errno != ESRCH)) continue;
    std::filesystem::remove(entry.path(), ec);
  }
}

}  // namespace

Status write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  remove_stale_temporaries(path);
  const auto tmp = path.string() + ".tmp." + std::to_string(::getpid());
  auto fail = [&](const std::string& what) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    return Status{Diagnostic{{path.string()}, "", what, ""}};
  };
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return fail("cannot write the file (does the directory exist?)");
  const bool written = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  const bool flushed = std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  if (std::fclose(f) != 0 || !written || !flushed) return fail("cannot write the file (disk full?)");
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return fail("cannot replace the file: " + ec.message());
  return {};
}

}  // namespace capsim
