#include "capsim/hardware/calibration.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "capsim/core/suggest.hpp"

namespace capsim::hardware {
namespace {

bool digits(std::string_view s, std::size_t min, std::size_t max) {
  return s.size() >= min && s.size() <= max &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "8.0", "9.0", "12.1": one or two digits, a dot, one or two digits.
bool is_compute_capability(std::string_view s) {
  const auto dot = s.find('.');
  return dot != std::string_view::npos && digits(s.substr(0, dot), 1, 2) && digits(s.substr(dot + 1), 1, 2);
}

// "2026-11-21T19:27:17Z", optionally with fractional seconds before the Z.
bool is_iso_utc_time(std::string_view s) {
  if (s.size() < 20 || s.back() != 'Z') return false;
  const std::string_view fixed = s.substr(0, 19);
  const bool shape = digits(fixed.substr(0, 4), 4, 4) && fixed[4] == '-' && digits(fixed.substr(5, 2), 2, 2) &&
                     fixed[7] == '-' && digits(fixed.substr(8, 2), 2, 2) && fixed[10] == 'T' &&
                     digits(fixed.substr(11, 2), 2, 2) && fixed[13] == ':' && digits(fixed.substr(14, 2), 2, 2) &&
                     fixed[16] == ':' && digits(fixed.substr(17, 2), 2, 2);
  const std::string_view rest = s.substr(19, s.size() - 20);
  return shape && (rest.empty() || (rest[0] == '.' && digits(rest.substr(1), 1, 9)));
}


using nlohmann::json;

// 6 significant digits: "-3e+12", "4096.5" (json::dump would write -3000000000000.0).
std::string short_number(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

// --- Validation ----------------------------------------------------------------------

// Collects diagnostics while walking the profile; every accessor reports at the JSON path
// it was given and returns a neutral value on failure, so validation continues.
class Checker {
 public:
  explicit Checker(std::string file) : file_(std::move(file)) {}

  void error(const std::string& path, std::string message, std::string hint = {}) {
    errors_.push_back(Diagnostic{{file_}, path, std::move(message), std::move(hint)});
  }

  const json* field(const json& object, const std::string& path, const char* key, bool required) {
    auto it = object.find(key);
    if (it == object.end()) {
      if (required) error(join(path, key), "missing");
      return nullptr;
    }
    return &*it;
  }

  std::string text(const json& object, const std::string& path, const char* key, bool required = true) {
    const json* v = field(object, path, key, required);
    if (v == nullptr) return "";
    if (!v->is_string()) {
      error(join(path, key), "must be a string, got " + describe(*v));
      return "";
    }
    auto s = v->get<std::string>();
    if (s.empty()) error(join(path, key), "must not be empty");
    return s;
  }

  // A finite number > 0 (integer when `integer`).
  double positive(const json& object, const std::string& path, const char* key, bool required = true,
                  bool integer = false) {
    const json* v = field(object, path, key, required);
    if (v == nullptr) return 0;
    if (!v->is_number()) {
      error(join(path, key), "must be a finite positive number, got " + describe(*v));
      return 0;
    }
    const double x = v->get<double>();
    if (!std::isfinite(x) || !(x > 0)) {
      error(join(path, key), "must be a finite positive number, got " + short_number(x));
      return 0;
    }
    if (integer && (!v->is_number_integer() && std::floor(x) != x)) {
      error(join(path, key), "must be an integer, got " + short_number(x));
      return 0;
    }
    return x;
  }

  int count(const json& object, const std::string& path, const char* key, bool required = true) {
    const double x = positive(object, path, key, required, true);
    if (x > 2e9) {
      error(join(path, key), "is implausibly large: " + object.at(key).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      return 0;
    }
    return static_cast<int>(x);
  }

  // A non-negative integer (device ordinals).
  int ordinal(const json& object, const std::string& path, const char* key) {
    const json* v = field(object, path, key, true);
    if (v == nullptr) return -1;
    if (!v->is_number_integer() || v->get<long long>() < 0 || v->get<long long>() > 1024) {
      error(join(path, key), "must be a GPU ordinal (an integer >= 0), got " + v->dump());
      return -1;
    }
    return static_cast<int>(v->get<long long>());
  }

  std::optional<bool> boolean(const json& object, const std::string& path, const char* key, bool required) {
    const json* v = field(object, path, key, required);
    if (v == nullptr) return std::nullopt;
    if (!v->is_boolean()) {
      error(join(path, key), "must be true or false, got " + describe(*v));
      return std::nullopt;
    }
    return v->get<bool>();
  }

  void unknown_keys(const json& object, const std::string& path, const std::vector<std::string>& known) {
    for (const auto& [key, value] : object.items())
      if (std::find(known.begin(), known.end(), key) == known.end())
        error(join(path, key), "unknown key", did_you_mean(key, known));
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  static std::string describe(const json& v) {
    if (v.is_null()) return "null";
    if (v.is_string()) return "the string " + v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (v.is_boolean()) return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }

  std::vector<Diagnostic> take() { return std::move(errors_); }
  bool clean() const { return errors_.empty(); }

 private:
  std::string file_;
  std::vector<Diagnostic> errors_;
};

const std::vector<std::string> kKinds = {"gemm", "memory_copy", "triad",     "h2d",           "d2h",
                                         "p2p",  "allreduce",   "allgather", "launch_latency"};
const std::vector<std::string> kGemmPrecisions = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4"};

// The unit each kind is reported in (p2p: B/s for bandwidth, s for its latency point).
bool unit_fits(const std::string& kind, const std::string& unit) {
  if (kind == "gemm") return unit == "FLOP/s";
  if (kind == "launch_latency") return unit == "s";
  if (kind == "p2p") return unit == "B/s" || unit == "s";
  return unit == "B/s";
}

CalibrationMeasurement check_measurement(Checker& c, const json& v, const std::string& path) {
  CalibrationMeasurement m;
  if (!v.is_object()) {
    c.error(path, "must be an object, got " + Checker::describe(v));
    return m;
  }
  std::vector<std::string> known = {"kind", "median", "min", "max", "q1", "q3", "unit", "repeats"};
  m.kind = c.text(v, path, "kind");
  if (!m.kind.empty() && std::find(kKinds.begin(), kKinds.end(), m.kind) == kKinds.end()) {
    c.error(Checker::join(path, "kind"), "unknown measurement kind '" + m.kind + "'", did_you_mean(m.kind, kKinds));
    return m;
  }
  m.median = c.positive(v, path, "median");
  m.min = c.positive(v, path, "min");
  m.max = c.positive(v, path, "max");
  c.positive(v, path, "q1", false);
  c.positive(v, path, "q3", false);
  m.repeats = c.count(v, path, "repeats");
  m.unit = c.text(v, path, "unit");
  if (m.min > 0 && m.median > 0 && m.max > 0 && !(m.min <= m.median && m.median <= m.max))
    c.error(Checker::join(path, "median"), "min <= median <= max does not hold (" + short_number(m.min) + ", " +
                                               short_number(m.median) + ", " + short_number(m.max) + ")");
  if (!m.unit.empty() && !m.kind.empty() && !unit_fits(m.kind, m.unit))
    c.error(Checker::join(path, "unit"), "unit '" + m.unit + "' does not fit a " + m.kind + " measurement");

  if (m.kind == "gemm") {
    known.insert(known.end(), {"precision", "m", "n", "k"});
    m.precision = c.text(v, path, "precision");
    if (!m.precision.empty() &&
        std::find(kGemmPrecisions.begin(), kGemmPrecisions.end(), m.precision) == kGemmPrecisions.end())
      c.error(Checker::join(path, "precision"), "unknown precision '" + m.precision + "'",
              did_you_mean(m.precision, kGemmPrecisions));
    m.m = c.positive(v, path, "m", true, true);
    m.n = c.positive(v, path, "n", true, true);
    m.k = c.positive(v, path, "k", true, true);
  } else if (m.kind == "launch_latency") {
    known.push_back("mode");
    m.mode = c.text(v, path, "mode");
    if (!m.mode.empty() && m.mode != "queued" && m.mode != "round_trip")
      c.error(Checker::join(path, "mode"), "must be 'queued' or 'round_trip', got '" + m.mode + "'");
  } else if (!m.kind.empty()) {
    known.push_back("bytes");
    m.bytes = c.positive(v, path, "bytes", true, true);
    if (m.kind == "h2d" || m.kind == "d2h") {
      known.push_back("pinned");
      m.pinned = c.boolean(v, path, "pinned", true);
    } else if (m.kind == "p2p") {
      known.insert(known.end(), {"src", "dst"});
      m.src = c.ordinal(v, path, "src");
      m.dst = c.ordinal(v, path, "dst");
      if (m.src >= 0 && m.src == m.dst) c.error(Checker::join(path, "dst"), "must differ from src");
    } else if (m.kind == "allreduce" || m.kind == "allgather") {
      known.push_back("ranks");
      m.ranks = c.count(v, path, "ranks");
      if (m.ranks == 1) c.error(Checker::join(path, "ranks"), "a collective needs at least 2 ranks, got 1");
    }
  }
  if (!m.kind.empty()) c.unknown_keys(v, path, known);
  return m;
}

void check_device(Checker& c, const json& root, CalibrationProfile& p) {
  const json* d = c.field(root, "", "device", true);
  if (d == nullptr) return;
  if (!d->is_object()) {
    c.error("device", "must be an object, got " + Checker::describe(*d));
    return;
  }
  auto& out = p.device;
  out.name = c.text(*d, "device", "name");
  out.memory_bytes = c.positive(*d, "device", "memory_bytes", true, true);
  out.sm_count = c.count(*d, "device", "sm_count");
  out.clock_mhz = c.count(*d, "device", "clock_mhz");
  out.memory_clock_mhz = c.count(*d, "device", "memory_clock_mhz");
  out.bus_width_bits = c.count(*d, "device", "bus_width_bits");
  out.compute_capability = c.text(*d, "device", "compute_capability");
  if (!out.compute_capability.empty() && !is_compute_capability(out.compute_capability))
    c.error("device.compute_capability", "must be 'major.minor' like \"9.0\", got \"" + out.compute_capability + "\"");
  c.positive(*d, "device", "l2_cache_bytes", false, true);
  c.unknown_keys(*d, "device",
                 {"name", "memory_bytes", "sm_count", "clock_mhz", "memory_clock_mhz", "bus_width_bits",
                  "compute_capability", "l2_cache_bytes"});
}

// 1-based line and column of a byte offset.
SourceLocation location_of(std::string_view text, std::size_t byte, const std::string& file) {
  SourceLocation where{file, 1, 1};
  for (std::size_t i = 0; i < std::min(byte, text.size()); ++i) {
    if (text[i] == '\n') {
      ++where.line;
      where.column = 1;
    } else {
      ++where.column;
    }
  }
  return where;
}

CalibrationProfile check_profile(Checker& c, const json& root) {
  CalibrationProfile p;
  if (!root.is_object()) {
    c.error("", "a calibration profile must be a JSON object, got " + Checker::describe(root));
    return p;
  }
  const std::string schema = c.text(root, "", "schema");
  if (!schema.empty() && schema != kCalibrationSchema) {
    c.error("schema", "unsupported schema '" + schema + "'; this capsim reads " + std::string(kCalibrationSchema));
    return p;  // another schema's fields would only produce noise
  }
  p.synthetic = c.boolean(root, "", "synthetic", false).value_or(false);
  check_device(c, root, p);
  if (root.contains("gpu_count")) p.gpu_count = c.count(root, "", "gpu_count");
  p.driver_version = c.text(root, "", "driver_version");
  p.cuda_runtime_version = c.text(root, "", "cuda_runtime_version");
  p.measured_at = c.text(root, "", "measured_at");
  if (!p.measured_at.empty() && !is_iso_utc_time(p.measured_at))
    c.error("measured_at", "must be a UTC time like \"2025-06-01T12:00:00Z\", got \"" + p.measured_at + "\"");
  if (const json* host = c.field(root, "", "host", false); host != nullptr && !host->is_object())
    c.error("host", "must be an object, got " + Checker::describe(*host));
  if (const json* list = c.field(root, "", "measurements", true)) {
    if (!list->is_array()) c.error("measurements", "must be an array, got " + Checker::describe(*list));
    else if (list->empty()) c.error("measurements", "the profile has no measurements");
    else
      for (std::size_t i = 0; i < list->size(); ++i)
        p.measurements.push_back(check_measurement(c, (*list)[i], "measurements[" + std::to_string(i) + "]"));
  }
  c.unknown_keys(root, "",
                 {"schema", "synthetic", "device", "gpu_count", "driver_version", "cuda_runtime_version",
                  "measured_at", "host", "measurements"});
  return p;
}

// --- Matching ------------------------------------------------------------------------

// Upper case, '-' and '_' as spaces, words split: "NVIDIA A100-SXM4-80GB" ->
// {NVIDIA, A100, SXM4, 80GB}.
std::vector<std::string> words_of(std::string_view name) {
  std::string s;
  for (char ch : name) s += (ch == '-' || ch == '_') ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string normalized(std::string_view name) {
  std::string out;
  for (const auto& w : words_of(name)) out += (out.empty() ? "" : " ") + w;
  return out;
}

struct NamePattern {
  std::vector<std::string> all;       // words that must all appear
  std::vector<std::string> none;      // words that must not appear
  std::vector<std::string> gpu_ids;   // candidates, told apart by memory
};

// Driver names seen in the field (nvidia-smi, cudaDeviceProp::name), most specific first.
const std::vector<NamePattern>& name_patterns() {
  static const std::vector<NamePattern> patterns = {
      {{"H100", "NVL"}, {}, {"h100-nvl"}},
      {{"H100", "PCIE"}, {}, {"h100-pcie-80gb"}},
      {{"H100"}, {"NVL", "PCIE"}, {"h100-sxm-80gb"}},  // "NVIDIA H100 80GB HBM3"
      {{"H200"}, {"NVL"}, {"h200-sxm-141gb"}},
      {{"B200"}, {}, {"b200"}},
      {{"A100", "PCIE"}, {}, {"a100-pcie-40gb", "a100-pcie-80gb"}},
      {{"A100"}, {"PCIE"}, {"a100-sxm-40gb", "a100-sxm-80gb"}},
      {{"V100", "PCIE"}, {}, {"v100-pcie-16gb"}},
      {{"V100"}, {"PCIE"}, {"v100-sxm2-16gb", "v100-sxm2-32gb"}},
      {{"P100", "PCIE"}, {}, {"p100-pcie-16gb"}},
      {{"P100"}, {"PCIE"}, {"p100-sxm2-16gb"}},
      {{"A10G"}, {}, {"a10g"}},
      {{"A10"}, {}, {"a10"}},
      {{"A2"}, {}, {"a2"}},
      {{"A30"}, {}, {"a30"}},
      {{"A40"}, {}, {"a40"}},
      {{"L40S"}, {}, {"l40s"}},
      {{"L40"}, {}, {"l40"}},
      {{"L4"}, {}, {"l4"}},
      {{"T4"}, {}, {"t4"}},
      {{"P4"}, {}, {"p4"}},
      {{"K80"}, {}, {"k80"}},
      {{"RTX", "A6000"}, {}, {"rtx-a6000"}},
      {{"RTX", "A5000"}, {}, {"rtx-a5000"}},
      {{"RTX", "A2000"}, {}, {"rtx-a2000"}},
      {{"RTX", "4090"}, {}, {"rtx-4090"}},
      {{"RTX", "3090"}, {}, {"rtx-3090"}},
      {{"GTX", "1080", "TI"}, {}, {"gtx-1080-ti"}},
      {{"MI300X"}, {}, {"mi300x"}},
  };
  return patterns;
}

bool has_word(const std::vector<std::string>& words, const std::string& w) {
  return std::find(words.begin(), words.end(), w) != words.end();
}

bool fits(const NamePattern& p, const std::vector<std::string>& words) {
  return std::all_of(p.all.begin(), p.all.end(), [&](const auto& w) { return has_word(words, w); }) &&
         std::none_of(p.none.begin(), p.none.end(), [&](const auto& w) { return has_word(words, w); });
}

// Reported memory within -5 % / +12 % of the catalog's: drivers report a little more than
// the decimal GB of the datasheet (85.0e9 B for an 80 GB H100, 95.8e9 for the 94 GB NVL).
bool memory_fits(double reported, double catalog) {
  return catalog > 0 && reported >= 0.95 * catalog && reported <= 1.12 * catalog;
}

std::string gb_text(double bytes) {
  std::ostringstream out;
  out.precision(3);
  out << bytes / 1e9 << " GB";
  return out.str();
}

std::string closest_gpus(const Catalog& catalog, const CalibrationDevice& device) {
  struct Scored {
    double score;
    const Entity* e;
  };
  std::vector<Scored> scored;
  const std::string name = normalized(device.name);
  for (const Entity& e : catalog.all(EntityKind::gpu)) {
    const double distance = static_cast<double>(edit_distance(name, normalized(e.text("name"))));
    const double memory = e.quantity<Bytes>("memory").value_or(Bytes{}).value();
    // Memory says more than spelling about an unknown device: a 10 % difference in memory
    // weighs like about 10 edits of the name.
    const double memory_penalty = memory > 0 ? std::fabs(std::log(device.memory_bytes / memory)) * 100 : 100;
    scored.push_back({distance + memory_penalty, &e});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.score < b.score; });
  std::string out;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, scored.size()); ++i) {
    const Entity& e = *scored[i].e;
    out += (i ? ", " : "") + e.id + " (" + e.text("name") + ", " +
           gb_text(e.quantity<Bytes>("memory").value_or(Bytes{}).value()) + ")";
  }
  return out;
}

// --- Reduction to figures ------------------------------------------------------------

double sum_log_saturation(const GemmPoint& p, double h) {
  return std::log(p.m / (p.m + h)) + std::log(p.n / (p.n + h)) + std::log(p.k / (p.k + h));
}

double sum_squares(const std::vector<GemmPoint>& pts, double log_ceiling, double h) {
  double s = 0;
  for (const auto& p : pts) {
    const double r = log_ceiling + sum_log_saturation(p, h) - std::log(p.flops_per_second);
    s += r * r;
  }
  return s;
}

// The best log-ceiling for a fixed h is the mean residual (linear least squares).
double best_log_ceiling(const std::vector<GemmPoint>& pts, double h) {
  double s = 0;
  for (const auto& p : pts) s += std::log(p.flops_per_second) - sum_log_saturation(p, h);
  return s / static_cast<double>(pts.size());
}

}  // namespace

std::string MeasuredFigures::describe() const {
  return "calibrated (" + device_name + ", measured " + measured_at + (synthetic ? ", synthetic" : "") + ")";
}

// Where the `occurrence`-th (0-based) `"key":` stands in the text; the file alone when
// the key is not found as written (escapes).
SourceLocation key_location(std::string_view text, const std::string& key, int occurrence, const std::string& file) {
  const std::string quoted = "\"" + key + "\"";
  std::size_t at = 0;
  for (int seen = 0;; ++at) {
    at = text.find(quoted, at);
    if (at == std::string_view::npos) return {file};
    std::size_t after = at + quoted.size();
    while (after < text.size() && std::isspace(static_cast<unsigned char>(text[after]))) ++after;
    if (after < text.size() && text[after] == ':' && seen++ == occurrence) return location_of(text, at, file);
  }
}

// JSON allows a repeated key and the library keeps the last one; in a profile a repeated
// key is a mistake (two measurements of the same thing), so the parse reports it.
struct DuplicateKeys {
  struct Frame {
    bool object = false;
    std::string name;  // the key this value stands under
    std::set<std::string> keys;
  };
  std::vector<Frame> stack;
  std::string pending_key;
  std::map<std::string, int> times_seen;  // how often each key string appeared, in text order
  std::vector<std::pair<std::string, std::pair<std::string, int>>> found;  // path, key, occurrence

  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        stack.push_back({event == json::parse_event_t::object_start, pending_key, {}});
        pending_key.clear();
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!stack.empty()) stack.pop_back();
        break;
      case json::parse_event_t::key: {
        const std::string key = parsed.get<std::string>();
        const int occurrence = times_seen[key]++;
        if (!stack.empty() && stack.back().object && !stack.back().keys.insert(key).second) {
          std::string path;
          for (const auto& f : stack)
            if (!f.name.empty()) path += (path.empty() ? "" : ".") + f.name;
          found.push_back({path.empty() ? key : path + "." + key, {key, occurrence}});
        }
        pending_key = key;
        break;
      }
      case json::parse_event_t::value:
        pending_key.clear();
        break;
    }
    return true;
  }
};

Result<CalibrationProfile> parse_calibration_profile(std::string_view text, const std::string& file) {
  json root;
  DuplicateKeys duplicates;
  try {
    root = json::parse(text.begin(), text.end(), std::ref(duplicates));
  } catch (const json::parse_error& e) {
    std::string message = e.what();
    // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..."
    if (auto colon = message.find(": "); colon != std::string::npos) message = message.substr(colon + 2);
    return Diagnostic{location_of(text, e.byte > 0 ? e.byte - 1 : 0, file), "",
                      "not valid JSON: " + message, "JSON has no NaN or Infinity; a profile must not contain them"};
  } catch (const json::exception& e) {
    return Diagnostic{{file}, "", std::string("not valid JSON: ") + e.what(), ""};
  }
  if (!duplicates.found.empty()) {
    std::vector<Diagnostic> errors;
    for (const auto& [path, key] : duplicates.found)
      errors.push_back({key_location(text, key.first, key.second, file), path, "duplicate key '" + key.first + "'",
                        "each key may appear once in an object"});
    return errors;
  }
  Checker checker(file);
  CalibrationProfile profile = check_profile(checker, root);
  if (!checker.clean()) return checker.take();
  return profile;
}

Result<CalibrationProfile> read_calibration_profile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Diagnostic{{path.string()}, "", "cannot read the calibration profile", ""};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_calibration_profile(text.str(), path.string());
}

Result<std::string> match_calibration_gpu(const Catalog& catalog, const CalibrationDevice& device) {
  const auto words = words_of(device.name);
  std::string by_name_only;  // a GPU whose name fits but whose memory does not
  auto try_id = [&](const std::string& id) -> bool {
    const Entity* e = catalog.find_gpu(id);
    if (e == nullptr) return false;
    if (memory_fits(device.memory_bytes, e->quantity<Bytes>("memory").value_or(Bytes{}).value())) return true;
    if (by_name_only.empty()) by_name_only = id;
    return false;
  };
  for (const NamePattern& p : name_patterns()) {
    if (!fits(p, words)) continue;
    for (const auto& id : p.gpu_ids)
      if (try_id(id)) return id;
    break;  // the most specific pattern decides; a looser one would be a different GPU
  }
  const std::string name = normalized(device.name);
  for (const Entity& e : catalog.all(EntityKind::gpu))
    if (normalized(e.text("name")) == name && try_id(e.id)) return e.id;

  std::string message = "cannot match device '" + device.name + "' (" + gb_text(device.memory_bytes) + ") to a catalog GPU";
  if (!by_name_only.empty()) {
    const Entity* e = catalog.find_gpu(by_name_only);
    message += ": its name fits " + by_name_only + " but the catalog gives that GPU " +
               gb_text(e->quantity<Bytes>("memory").value_or(Bytes{}).value());
  }
  message += "; closest catalog GPUs: " + closest_gpus(catalog, device);
  return Diagnostic{{}, "device.name", message, "pass --gpu ID to choose the catalog GPU yourself"};
}

std::optional<GemmCurve> fit_gemm_curve(const std::vector<GemmPoint>& pts) {
  if (pts.size() < 3) return std::nullopt;
  for (const auto& p : pts)
    if (!(p.m > 0 && p.n > 0 && p.k > 0 && p.flops_per_second > 0 && std::isfinite(p.flops_per_second)))
      return std::nullopt;
  // Parameters theta = (log ceiling, log h); residual r_i = log fit_i - log measured_i.
  //   d r_i / d log ceiling = 1
  //   d r_i / d log h       = -sum_d h / (d + h)
  // Gauss-Newton from several starting h (the log-model is not convex in h), each step
  // halved until the sum of squares falls.
  double best_u = 0, best_a = 0, best_sse = std::numeric_limits<double>::infinity();
  for (double h0 : {8.0, 96.0, 1024.0}) {
    double u = std::log(h0);
    double a = best_log_ceiling(pts, h0);
    double sse = sum_squares(pts, a, h0);
    for (int iteration = 0; iteration < 100; ++iteration) {
      const double h = std::exp(u);
      Eigen::MatrixXd jacobian(static_cast<Eigen::Index>(pts.size()), 2);
      Eigen::VectorXd residual(static_cast<Eigen::Index>(pts.size()));
      for (std::size_t i = 0; i < pts.size(); ++i) {
        const auto& p = pts[i];
        const auto row = static_cast<Eigen::Index>(i);
        residual(row) = a + sum_log_saturation(p, h) - std::log(p.flops_per_second);
        jacobian(row, 0) = 1.0;
        jacobian(row, 1) = -(h / (p.m + h) + h / (p.n + h) + h / (p.k + h));
      }
      Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(jacobian);
      if (qr.rank() < 2) return std::nullopt;  // the shapes cannot tell ceiling from h
      const Eigen::Vector2d step = qr.solve(-residual);
      double scale = 1.0;
      bool improved = false;
      for (int halving = 0; halving < 30; ++halving, scale *= 0.5) {
        const double u_new = u + scale * step(1);
        const double a_new = a + scale * step(0);
        const double sse_new = sum_squares(pts, a_new, std::exp(u_new));
        if (sse_new < sse) {
          improved = sse - sse_new > 1e-15 * (1.0 + sse);
          u = u_new;
          a = a_new;
          sse = sse_new;
          break;
        }
      }
      if (!improved || std::abs(u) > 30) break;
    }
    if (sse < best_sse) {
      best_sse = sse;
      best_u = u;
      best_a = a;
    }
  }
  const double h = std::exp(best_u);
  if (!std::isfinite(h) || h < 1e-3 || h > 1e6 || !std::isfinite(best_a)) return std::nullopt;
  GemmCurve curve;
  curve.ceiling = FlopsPerSecond(std::exp(best_a));
  curve.half_saturation_dim = h;
  curve.points = static_cast<int>(pts.size());
  double relative = 0;
  for (const auto& p : pts) {
    const double fit = std::exp(best_a + sum_log_saturation(p, h));
    relative += (fit / p.flops_per_second - 1.0) * (fit / p.flops_per_second - 1.0);
  }
  curve.rms_relative_error = std::sqrt(relative / static_cast<double>(pts.size()));
  return curve;
}

namespace {

// Bytes per element of a GEMM's operands and of its result, per capsim-calibrate precision
// (fp8 writes bf16, int8 accumulates and writes int32: hardware_catalog/calibration/src/gemm.cpp).
std::pair<double, double> gemm_element_bytes(std::string_view precision) {
  if (precision == "fp16" || precision == "bf16") return {2, 2};
  if (precision == "fp8") return {1, 2};
  if (precision == "int8") return {1, 4};
  return {4, 4};  // fp32, tf32
}

}  // namespace

// Whether a measured GEMM belongs in the efficiency curve. Two kinds do not, because the
// models bound a GEMM's time by the curve and by the bandwidth roofline separately:
//   - launch-bound: at the precision's best measured rate its FLOPs would take under
//     kLaunchBoundLatencies queued launch latencies (on an H100, every GEMM from 128^3 to
//     1024^3 takes 6-7 us whatever its FLOPs, and a small one caught at a low clock can take
//     18-33 us: the test is on its work, not its time);
//   - memory-bound: streaming its operands and result once at the measured triad bandwidth
//     takes at least half its time (the 16- and 64-row shapes of decoding).
// Fitted with them, a real H100 profile gave a bf16 "ceiling" of 2 PFLOP/s, twice the
// datasheet peak, at 68 % rms error.
bool shapes_the_curve(const CalibrationMeasurement& m, const MeasuredFigures& f) {
  if (!(m.median > 0)) return false;
  const double flops = 2.0 * m.m * m.n * m.k;
  const double seconds = flops / m.median;
  if (const auto best = f.gemm_best.find(m.precision); best != f.gemm_best.end() && f.launch_latency &&
                                                       flops / best->second.value() < kLaunchBoundLatencies * f.launch_latency->value())
    return false;
  if (f.memory_bandwidth && f.memory_bandwidth->value() > 0) {
    const auto [in, out] = gemm_element_bytes(m.precision);
    const double bytes = in * (m.m * m.k + m.k * m.n) + out * m.m * m.n;
    if (bytes / f.memory_bandwidth->value() >= 0.5 * seconds) return false;
  }
  return true;
}

MeasuredFigures measured_figures(const CalibrationProfile& profile) {
  MeasuredFigures f;
  f.device_name = profile.device.name;
  f.measured_at = profile.measured_at;
  f.synthetic = profile.synthetic;
  std::map<std::string, std::vector<GemmPoint>, std::less<>> gemm;
  // The measurement of a kind at the largest size (ties: the higher median).
  auto at_largest = [&](auto&& accept) -> const CalibrationMeasurement* {
    const CalibrationMeasurement* best = nullptr;
    for (const auto& m : profile.measurements)
      if (accept(m) && (best == nullptr || m.bytes > best->bytes || (m.bytes == best->bytes && m.median > best->median)))
        best = &m;
    return best;
  };
  auto bandwidth = [](const CalibrationMeasurement* m) -> std::optional<BytesPerSecond> {
    if (m == nullptr) return std::nullopt;
    return BytesPerSecond(m->median);
  };
  f.memory_bandwidth = bandwidth(at_largest([](const auto& m) { return m.kind == "triad"; }));
  for (const auto& m : profile.measurements)
    if (m.kind == "launch_latency" && m.mode == "queued") f.launch_latency = Seconds(m.median);
  for (const auto& m : profile.measurements) {
    if (m.kind != "gemm") continue;
    auto& best = f.gemm_best[m.precision];
    if (m.median > best.value()) best = FlopsPerSecond(m.median);
  }
  for (const auto& m : profile.measurements)
    if (m.kind == "gemm" && shapes_the_curve(m, f)) gemm[m.precision].push_back({m.m, m.n, m.k, m.median});
  for (const auto& [precision, points] : gemm)
    if (auto curve = fit_gemm_curve(points)) f.gemm_curve.emplace(precision, *curve);

  f.memory_copy_bandwidth = bandwidth(at_largest([](const auto& m) { return m.kind == "memory_copy"; }));
  auto host = [&](const char* kind, bool pinned) {
    return bandwidth(at_largest([&](const auto& m) { return m.kind == kind && m.pinned == pinned; }));
  };
  f.h2d_pinned = host("h2d", true);
  f.d2h_pinned = host("d2h", true);
  f.h2d_pageable = host("h2d", false);
  f.d2h_pageable = host("d2h", false);

  // Peer to peer: per ordered pair, the bandwidth at its largest size; the slowest pair
  // counts (a ring is as fast as its slowest link), and so does the slowest latency.
  std::set<std::pair<int, int>> pairs;
  for (const auto& m : profile.measurements)
    if (m.kind == "p2p") pairs.insert({m.src, m.dst});
  for (const auto& pair : pairs) {
    const int src = pair.first, dst = pair.second;  // named: clang 14 cannot capture a structured binding
    const auto* bw = at_largest([&](const auto& m) {
      return m.kind == "p2p" && m.unit == "B/s" && m.src == src && m.dst == dst;
    });
    if (bw && (!f.p2p_bandwidth || bw->median < f.p2p_bandwidth->value())) f.p2p_bandwidth = BytesPerSecond(bw->median);
    for (const auto& m : profile.measurements)
      if (m.kind == "p2p" && m.unit == "s" && m.src == src && m.dst == dst &&
          (!f.p2p_latency || m.median > f.p2p_latency->value()))
        f.p2p_latency = Seconds(m.median);
  }
  int most_ranks = 0;
  for (const auto& m : profile.measurements)
    if (m.kind == "allreduce" || m.kind == "allgather") most_ranks = std::max(most_ranks, m.ranks);
  f.collective_ranks = most_ranks;
  f.allreduce_bus_bandwidth =
      bandwidth(at_largest([&](const auto& m) { return m.kind == "allreduce" && m.ranks == most_ranks; }));
  f.allgather_bus_bandwidth =
      bandwidth(at_largest([&](const auto& m) { return m.kind == "allgather" && m.ranks == most_ranks; }));
  return f;
}

}  // namespace capsim::hardware
