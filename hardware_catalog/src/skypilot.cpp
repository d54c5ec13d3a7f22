#include "capsim/hardware/skypilot.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "capsim/core/suggest.hpp"

namespace capsim::hardware {
namespace {

namespace fs = std::filesystem;

// One CSV record (RFC 4180: quoted fields may hold commas and doubled quotes) and the column
// each field starts at.
struct Record {
  std::vector<std::string> fields;
  std::vector<int> columns;
};

std::optional<Record> parse_csv_line(const std::string& line) {
  Record r;
  std::string field;
  bool quoted = false;
  int start = 1;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      r.fields.push_back(std::move(field));
      r.columns.push_back(start);
      field.clear();
      start = static_cast<int>(i) + 2;
    } else if (c != '\r') {
      field += c;
    }
  }
  if (quoted) return std::nullopt;
  r.fields.push_back(std::move(field));
  r.columns.push_back(start);
  return r;
}

std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "p4d.24xlarge" in "us-east-1" of aws -> "aws-p4d-24xlarge-us-east-1".
std::string make_id(const std::string& provider, const std::string& type, const std::string& region) {
  std::string out;
  for (char c : lower(provider + "-" + type + "-" + region)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (ok) out += c;
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

std::string file_date(const fs::path& file) {
  std::error_code ec;
  const auto t = fs::last_write_time(file, ec);
  if (ec) return {};
  const auto sys = std::chrono::file_clock::to_sys(t);
  const std::time_t tt = std::chrono::system_clock::to_time_t(sys);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

// One instance type in one region, from one or more rows (one per zone).
struct Offer {
  std::string cloud, file, type, accelerator, region, gpu;
  int first_line = 0, last_line = 0, zones = 0;
  int gpu_count = 0;
  std::string vcpus, memory;
  std::string on_demand;            // the CSV's text
  std::string spot;                 // the lowest of the zones', as written
  std::optional<double> spot_value;
};

constexpr const char* kRequired[] = {"InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs",
                                     "MemoryGiB",    "Price",           "SpotPrice",        "Region"};

class Importer {
 public:
  Importer(const Catalog& catalog, const SkyPilotOptions& options) : catalog_(catalog), options_(options) {}

  void read_cloud(const std::string& cloud, const fs::path& file) {
    out_.clouds.push_back(cloud);
    std::string provider = cloud == "do" ? "digitalocean" : cloud;
    const bool known_provider = catalog_.find(EntityKind::provider, provider) != nullptr;
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      errors_.push_back(environment_failure({{file.string()}, "", "cannot read the SkyPilot catalog file", ""}));
      return;
    }
    const std::string name = cloud + "/vms.csv";
    dates_[name] = options_.as_of.empty() ? file_date(file) : options_.as_of;
    std::string line;
    int line_no = 0;
    std::map<std::string, int> column;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.empty() || line == "\r") continue;
      auto record = parse_csv_line(line);
      if (!record) {
        errors_.push_back({{file.string(), line_no, 1}, "", "unterminated quoted field", "a CSV row ends inside quotes"});
        continue;
      }
      if (column.empty()) {
        for (std::size_t i = 0; i < record->fields.size(); ++i) column[record->fields[i]] = static_cast<int>(i);
        std::vector<std::string> present(record->fields.begin(), record->fields.end());
        bool ok = true;
        for (const char* want : kRequired)
          if (!column.contains(want)) {
            errors_.push_back({{file.string(), 1, 1}, "header", "no '" + std::string(want) + "' column in the header",
                               did_you_mean(want, present)});
            ok = false;
          }
        if (!ok) return;
        continue;
      }
      auto field = [&](const char* name) -> std::string {
        const auto it = column.find(name);
        if (it == column.end() || it->second >= static_cast<int>(record->fields.size())) return {};
        return record->fields[it->second];
      };
      auto col = [&](const char* name) {
        const auto it = column.find(name);
        return it == column.end() || it->second >= static_cast<int>(record->columns.size()) ? 1
                                                                                            : record->columns[it->second];
      };
      ++out_.rows;
      const std::string type = field("InstanceType"), accelerator = field("AcceleratorName");
      const std::string region = field("Region");
      if (accelerator.empty()) {
        ++out_.cpu_rows;
        continue;
      }
      if (!options_.regions.empty() &&
          std::find(options_.regions.begin(), options_.regions.end(), region) == options_.regions.end())
        continue;
      const SourceLocation where{file.string(), line_no, 1};
      auto refuse = [&](std::string why) { out_.refused.push_back({where, type, accelerator, std::move(why)}); };
      if (!known_provider) {
        refuse("the catalog has no provider '" + provider + "' (providers.yaml)");
        continue;
      }
      const std::string gpu = skypilot_gpu_id(accelerator, type, field("GpuInfo"));
      if (gpu.empty() || catalog_.find(EntityKind::gpu, gpu) == nullptr) {
        refuse("the catalog has no GPU for '" + accelerator + "'" + (gpu.empty() ? "" : " (would be '" + gpu + "')"));
        continue;
      }
      const auto count = number(field("AcceleratorCount"));
      if (!count || *count < 1 || std::floor(*count) != *count) {
        refuse("GPU count '" + field("AcceleratorCount") + "' is not a whole number of GPUs (a fractional GPU)");
        continue;
      }
      const std::string price = field("Price"), spot = field("SpotPrice");
      for (const auto& [text, name] : {std::pair{price, "Price"}, std::pair{spot, "SpotPrice"}})
        if (!text.empty() && !number(text))
          errors_.push_back({{file.string(), line_no, col(name)}, name, "expected a price in USD per hour, got '" + text + "'",
                             ""});
      if ((!price.empty() && !number(price)) || (!spot.empty() && !number(spot))) continue;
      const std::string key = provider + "\n" + type + "\n" + region;
      auto [it, inserted] = offers_.try_emplace(key);
      Offer& o = it->second;
      if (inserted) {
        order_.push_back(key);
        o = Offer{cloud, name, type, accelerator, region, gpu, line_no, line_no, 0, static_cast<int>(*count), {}, {},
                  {}, {}, std::nullopt};
        if (const auto v = number(field("vCPUs")); v && *v >= 1 && std::floor(*v) == *v)
          o.vcpus = std::to_string(static_cast<long long>(*v));
        if (const auto m = number(field("MemoryGiB")); m && *m > 0) o.memory = field("MemoryGiB") + " GiB";
      }
      o.last_line = line_no;
      ++o.zones;
      if (o.on_demand.empty() && number(price).value_or(0) > 0) o.on_demand = price;
      if (const auto s = number(spot); s && *s > 0 && (!o.spot_value || *s < *o.spot_value)) {
        o.spot_value = s;
        o.spot = spot;
      }
      providers_[key] = provider;
    }
    if (column.empty()) errors_.push_back({{file.string()}, "", "empty file: no header", ""});
  }

  Result<SkyPilotImport> finish() {
    if (!errors_.empty()) return errors_;
    YAML::Emitter y;
    y << YAML::BeginMap << YAML::Key << "instances" << YAML::Value << YAML::BeginSeq;
    std::set<std::string> used;
    for (const auto& key : order_) {
      const Offer& o = offers_.at(key);
      if (o.on_demand.empty() && o.spot.empty()) continue;  // no price to import
      const std::string& provider = providers_.at(key);
      const Entity* existing = nullptr;
      for (const auto& e : catalog_.all(EntityKind::instance))
        if (e.text("provider") == provider && e.text("name") == o.type && e.text("region") == o.region) existing = &e;
      y << YAML::BeginMap;
      if (existing != nullptr) {
        y << YAML::Key << "id" << YAML::Value << existing->id;
        ++out_.updated_instances;
      } else {
        std::string id = make_id(provider, o.type, o.region);
        for (int n = 2; used.contains(id) || catalog_.find(id) != nullptr; ++n)
          id = make_id(provider, o.type, o.region) + "-" + std::to_string(n);
        used.insert(id);
        y << YAML::Key << "id" << YAML::Value << id;
        y << YAML::Key << "provider" << YAML::Value << provider;
        y << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << o.type;
        y << YAML::Key << "region" << YAML::Value << YAML::DoubleQuoted << o.region;
        y << YAML::Key << "gpu" << YAML::Value << o.gpu;
        y << YAML::Key << "gpu_count" << YAML::Value << o.gpu_count;
        if (!o.vcpus.empty()) y << YAML::Key << "vcpus" << YAML::Value << o.vcpus;
        if (!o.memory.empty()) y << YAML::Key << "memory" << YAML::Value << o.memory;
        ++out_.new_instances;
      }
      y << YAML::Key << "price" << YAML::Value << YAML::BeginMap;
      if (!o.on_demand.empty()) y << YAML::Key << "on_demand" << YAML::Value << o.on_demand + " USD/h";
      if (!o.spot.empty()) y << YAML::Key << "spot" << YAML::Value << o.spot + " USD/h";
      y << YAML::EndMap;
      y << YAML::Key << "source" << YAML::Value << source_text(o);
      y << YAML::Key << "as_of" << YAML::Value << dates_.at(o.file);
      y << YAML::EndMap;
    }
    y << YAML::EndSeq << YAML::EndMap;
    std::string header = "# Catalog overlay written by `capsim catalog import-skypilot` from SkyPilot's public catalog\n"
                         "# (https://github.com/skypilot-org/skypilot-catalog";
    header += options_.commit.empty() ? ")" : ", commit " + options_.commit + ")";
    header += ". Load it with --catalog-overlay; do not edit the figures without changing their source.\n";
    out_.overlay_yaml = header + y.c_str() + "\n";
    return out_;
  }

 private:
  std::string source_text(const Offer& o) const {
    std::string s = "SkyPilot catalog " + o.file + " (https://github.com/skypilot-org/skypilot-catalog";
    s += options_.commit.empty() ? ", file dated " + dates_.at(o.file) : ", commit " + options_.commit;
    s += "), " + (o.first_line == o.last_line ? "row at line " + std::to_string(o.first_line)
                                               : "rows at lines " + std::to_string(o.first_line) + "-" +
                                                     std::to_string(o.last_line));
    if (o.zones > 1 && !o.spot.empty()) s += "; spot: the lowest of " + std::to_string(o.zones) + " zones";
    return s;
  }

  const Catalog& catalog_;
  const SkyPilotOptions& options_;
  SkyPilotImport out_;
  std::vector<Diagnostic> errors_;
  std::map<std::string, Offer> offers_;
  std::map<std::string, std::string> providers_;
  std::map<std::string, std::string> dates_;  // file -> as_of
  std::vector<std::string> order_;
};

}  // namespace

std::string skypilot_gpu_id(std::string_view accelerator, std::string_view instance_type, std::string_view gpu_info) {
  // SkyPilot's accelerator names (catalogs/vN/common/accelerators.csv and the clouds' files)
  // name a chip, not its module: a PCIe card is told by the instance type or GpuInfo.
  const std::string type = lower(std::string(instance_type)), info = lower(std::string(gpu_info));
  const bool pcie = type.find("pcie") != std::string::npos || info.find("pcie") != std::string::npos;
  static const std::map<std::string, std::pair<std::string, std::string>> table = {
      // name: {SXM or only form, PCIe form}
      {"K80", {"k80", "k80"}},
      {"P4", {"p4", "p4"}},
      {"P100", {"p100-pcie-16gb", "p100-pcie-16gb"}},
      {"V100", {"v100-sxm2-16gb", "v100-pcie-16gb"}},
      {"V100-32GB", {"v100-sxm2-32gb", "v100-sxm2-32gb"}},
      {"T4", {"t4", "t4"}},
      {"A2", {"a2", "a2"}},
      {"A10", {"a10", "a10"}},
      {"A10G", {"a10g", "a10g"}},
      {"A30", {"a30", "a30"}},
      {"A40", {"a40", "a40"}},
      {"A100", {"a100-sxm-40gb", "a100-pcie-40gb"}},
      {"A100-80GB", {"a100-sxm-80gb", "a100-pcie-80gb"}},
      {"A100-80GB-PCIE", {"a100-pcie-80gb", "a100-pcie-80gb"}},
      {"H100", {"h100-sxm-80gb", "h100-pcie-80gb"}},
      {"H100-MEGA", {"h100-sxm-80gb", "h100-sxm-80gb"}},
      {"H100-NVL", {"h100-nvl", "h100-nvl"}},
      {"H200", {"h200-sxm-141gb", "h200-sxm-141gb"}},
      {"B200", {"b200", "b200"}},
      {"L4", {"l4", "l4"}},
      {"L40", {"l40", "l40"}},
      {"L40S", {"l40s", "l40s"}},
      {"A6000", {"rtx-a6000", "rtx-a6000"}},
      {"RTXA6000", {"rtx-a6000", "rtx-a6000"}},
      {"A5000", {"rtx-a5000", "rtx-a5000"}},
      {"RTXA5000", {"rtx-a5000", "rtx-a5000"}},
      {"RTXA2000", {"rtx-a2000", "rtx-a2000"}},
      {"RTX3090", {"rtx-3090", "rtx-3090"}},
      {"RTX4090", {"rtx-4090", "rtx-4090"}},
      {"RTX6000-Ada", {"rtx-6000-ada", "rtx-6000-ada"}},
      {"RTX6000Ada", {"rtx-6000-ada", "rtx-6000-ada"}},
      {"MI300X", {"mi300x", "mi300x"}},
  };
  const auto it = table.find(std::string(accelerator));
  if (it == table.end()) return {};
  return pcie ? it->second.second : it->second.first;
}

Result<SkyPilotImport> import_skypilot(const fs::path& dir, const Catalog& catalog, const SkyPilotOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Diagnostic{{dir.string()}, "", "not a directory",
                      "give a SkyPilot catalog folder such as skypilot-catalog/catalogs/v8 (one folder per cloud, each "
                      "with vms.csv)"};
  std::vector<std::pair<std::string, fs::path>> files;
  if (fs::is_regular_file(dir / "vms.csv", ec)) {
    files.emplace_back(fs::absolute(dir, ec).lexically_normal().filename().string(), dir / "vms.csv");
    if (files.back().first.empty()) files.back().first = fs::absolute(dir, ec).parent_path().filename().string();
  }
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_directory() && fs::is_regular_file(entry.path() / "vms.csv"))
      files.emplace_back(entry.path().filename().string(), entry.path() / "vms.csv");
  if (files.empty())
    return Diagnostic{{dir.string()}, "", "no vms.csv here or in its cloud folders",
                      "give a SkyPilot catalog folder such as skypilot-catalog/catalogs/v8"};
  std::sort(files.begin(), files.end());
  Importer importer(catalog, options);
  for (const auto& [cloud, file] : files) importer.read_cloud(cloud, file);
  return importer.finish();
}

}  // namespace capsim::hardware
