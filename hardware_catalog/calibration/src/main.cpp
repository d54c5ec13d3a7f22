// capsim-calibrate: measures what this GPU node delivers and writes a JSON profile for
// `capsim catalog import-calibration`. Needs the CUDA toolkit (runtime, cuBLASLt,
// and NCCL when it was found at build time); nlohmann-json (header-only) at build time.
//
//   capsim-calibrate [-o FILE] [--device N] [--quick] [--repeats N] [--warmup N]
//                    [--sustain SECONDS] [--skip gemm,memory,transfer,p2p,nccl,launch]
#include <sys/utsname.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "bench.hpp"
#include "capsim/core/files.hpp"

namespace capsim::calibration {
namespace {

constexpr const char* kUsage =
    "usage: capsim-calibrate [options]\n"
    "Measures GEMM throughput (cuBLASLt: fp32, tf32, fp16, bf16, fp8, int8 where supported),\n"
    "device memory bandwidth (copy, triad), host<->device and peer-to-peer copies, NCCL\n"
    "collectives (when built with NCCL) and kernel launch latency; writes a JSON profile.\n"
    "\n"
    "  -o, --output FILE   profile to write (default calibration.json; '-' for stdout)\n"
    "  --device N          GPU to measure (default 0; p2p and NCCL use every GPU)\n"
    "  --quick             fewer shapes and sizes: a smoke test of the setup\n"
    "  --repeats N         timed samples per measurement (default 20)\n"
    "  --warmup N          untimed runs before sampling (default 5)\n"
    "  --sustain SECONDS   run each GEMM back to back this long before sampling, so it is\n"
    "                      timed at the clock the power limit holds (default 1; 0: cold)\n"
    "  --skip LIST         comma-separated groups to skip: gemm,memory,transfer,p2p,nccl,launch\n"
    "  -h, --help          this text\n";

bool parse_int(const char* text, int& value) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 0 || v > 1000000) return false;
  value = static_cast<int>(v);
  return true;
}

// Returns 0 to run, 1 after --help, 2 on a bad argument.
int parse_args(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 1;
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "-o" || a == "--output") {
      const char* v = value();
      if (!v) return std::cerr << "capsim-calibrate: " << a << " needs a file name\n", 2;
      o.output = v;
    } else if (a == "--device" || a == "--repeats" || a == "--warmup") {
      const char* v = value();
      int n = 0;
      if (!v || !parse_int(v, n) || (a == "--repeats" && n < 1))
        return std::cerr << "capsim-calibrate: " << a << " needs a non-negative integer\n", 2;
      (a == "--device" ? o.device : a == "--repeats" ? o.repeats : o.warmup) = n;
    } else if (a == "--sustain") {
      const char* v = value();
      char* end = nullptr;
      const double seconds = v ? std::strtod(v, &end) : -1.0;
      if (!v || end == v || *end != '\0' || !(seconds >= 0 && seconds <= 600))
        return std::cerr << "capsim-calibrate: --sustain needs seconds between 0 and 600\n", 2;
      o.sustain_seconds = seconds;
    } else if (a == "--skip") {
      const char* v = value();
      if (!v) return std::cerr << "capsim-calibrate: --skip needs a list\n", 2;
      std::stringstream list(v);
      for (std::string group; std::getline(list, group, ',');) {
        if (group != "gemm" && group != "memory" && group != "transfer" && group != "p2p" && group != "nccl" &&
            group != "launch")
          return std::cerr << "capsim-calibrate: unknown group '" << group << "' in --skip\n", 2;
        o.skip.push_back(group);
      }
    } else {
      return std::cerr << "capsim-calibrate: unknown argument '" << a << "'\n" << kUsage, 2;
    }
  }
  return 0;
}

int attribute(cudaDeviceAttr a, int device) {
  int v = 0;
  cudaDeviceGetAttribute(&v, a, device);
  return v;
}

// Facts about the host that explain a measurement (CPU model, OS); nothing that
// identifies the machine (no host name, no serial numbers).
std::vector<std::pair<std::string, std::string>> host_facts() {
  std::vector<std::pair<std::string, std::string>> out;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) out.emplace_back("cpu", line.substr(colon + 2));
      break;
    }
  }
  utsname u{};
  if (uname(&u) == 0) out.emplace_back("os", std::string(u.sysname) + " " + u.release);
  return out;
}

}  // namespace

int run(int argc, char** argv) {
  Options o;
  if (int r = parse_args(argc, argv, o); r != 0) return r == 1 ? 0 : 2;
  int gpu_count = 0;
  if (cudaGetDeviceCount(&gpu_count) != cudaSuccess || gpu_count == 0) {
    std::cerr << "capsim-calibrate: no CUDA GPU is visible (" << cudaGetErrorString(cudaGetLastError()) << ")\n";
    return 1;
  }
  if (o.device >= gpu_count) {
    std::cerr << "capsim-calibrate: --device " << o.device << " but only " << gpu_count << " GPUs are visible\n";
    return 2;
  }
  cudaDeviceProp prop{};
  try {
    check(cudaSetDevice(o.device), "cudaSetDevice");
    check(cudaGetDeviceProperties(&prop, o.device), "cudaGetDeviceProperties");
  } catch (const CudaError& e) {
    std::cerr << "capsim-calibrate: " << e.what() << "\n";
    return 1;
  }
  Profile p;
  p.device.name = prop.name;
  p.device.memory_bytes = prop.totalGlobalMem;
  p.device.sm_count = prop.multiProcessorCount;
  p.device.clock_mhz = attribute(cudaDevAttrClockRate, o.device) / 1000;
  p.device.memory_clock_mhz = attribute(cudaDevAttrMemoryClockRate, o.device) / 1000;
  p.device.bus_width_bits = prop.memoryBusWidth;
  p.device.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  p.device.l2_cache_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
  p.gpu_count = gpu_count;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  p.driver_version = cuda_version_text(driver);
  p.cuda_runtime_version = cuda_version_text(runtime);
  p.measured_at = utc_iso8601(std::time(nullptr));
  p.host = host_facts();
  // How the GEMMs were timed: the curve is the sustained rate, or a cold burst.
  p.host.emplace_back("gemm_sustain_seconds", std::to_string(o.sustain_seconds));
  std::fprintf(stderr, "capsim-calibrate: %s (cc %s, %d SMs, %.1f GiB), %d GPU(s) visible\n", prop.name,
               p.device.compute_capability.c_str(), prop.multiProcessorCount,
               static_cast<double>(prop.totalGlobalMem) / (1 << 30), gpu_count);

  // Each group catches its own CUDA errors per measurement; what escapes here is a
  // failure of the group's set-up, which skips that group only.
  auto group = [&](const char* name, auto&& body) {
    if (o.skipped(name)) return;
    try {
      body();
    } catch (const CudaError& e) {
      std::fprintf(stderr, "capsim-calibrate: %s: %s, skipped\n", name, e.what());
      cudaGetLastError();
    }
    cudaSetDevice(o.device);
  };
  group("launch", [&] { run_launch_latency(o, p.measurements); });
  group("memory", [&] { run_memory(o, prop, p.measurements); });
  group("transfer", [&] { run_host_transfers(o, p.measurements); });
  group("gemm", [&] { run_gemm(o, prop, p.measurements); });
  group("p2p", [&] { run_peer_to_peer(o, gpu_count, p.measurements); });
  group("nccl", [&] { run_nccl(o, gpu_count, p.measurements); });

  int dropped = 0;
  const std::string json = write_profile(p, &dropped);
  if (dropped > 0) std::fprintf(stderr, "capsim-calibrate: %d measurement(s) had non-finite values, left out\n", dropped);
  if (o.output == "-") {
    std::cout << json;
  } else {
    if (auto status = write_file_atomically(o.output, json); !status.empty()) {
      std::cerr << "capsim-calibrate: " << format_diagnostics(status);
      return 3;
    }
    std::fprintf(stderr, "capsim-calibrate: wrote %zu measurements to %s\n", p.measurements.size() - static_cast<std::size_t>(dropped),
                 o.output.c_str());
  }
  return 0;
}

}  // namespace capsim::calibration

int main(int argc, char** argv) { return capsim::calibration::run(argc, argv); }
