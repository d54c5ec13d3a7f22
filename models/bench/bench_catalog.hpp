// The shipped catalog for the models benchmarks, loaded once per binary
// (CAPSIM_BENCH_DATA_DIR is set by models/CMakeLists.txt).
#pragma once

#include "capsim/hardware/loader.hpp"

namespace capsim::bench {

inline const hardware::Catalog& catalog() {
  static const hardware::Catalog c = std::move(hardware::load_catalog_dir(CAPSIM_BENCH_DATA_DIR "/catalog")).value();
  return c;
}

}  // namespace capsim::bench
