// `capsim --version`: the version, the git commit it was built from, where its data is and how
// current the catalog is.
#pragma once

#include <string>

#include "output.hpp"

namespace capsim::cli {

struct VersionReport {
  std::string text;
  int exit_code = kExitOk;  // kExitEnvironment when the data directory or catalog cannot be read
};

VersionReport version_report(const GlobalOptions& g);

}  // namespace capsim::cli
