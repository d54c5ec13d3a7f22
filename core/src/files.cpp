#include "capsim/core/files.hpp"

#include <unistd.h>

#include <cstdio>

namespace capsim {

Status write_file_atomically(const std::filesystem::path& path, std::string_view content) {
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
