// Writing files so that no reader ever sees half of one: write to a temporary name in the
// same directory, flush, then rename over the target (atomic on POSIX file systems).
#pragma once

#include <filesystem>
#include <string_view>

#include "capsim/core/result.hpp"

namespace capsim {

Status write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace capsim
