// Built instead of nccl.cpp when CMake found no NCCL: collectives are not measured.
#include <cstdio>

#include "bench.hpp"

namespace capsim::calibration {

void run_nccl(const Options&, int, std::vector<Measurement>&) {
  std::fprintf(stderr, "capsim-calibrate: built without NCCL, all-reduce/all-gather not measured\n");
}

}  // namespace capsim::calibration
