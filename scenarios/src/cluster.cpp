// Cluster scenarios: load, size every workload, pack them onto node pools, render the plan.
#include "capsim/scenarios/cluster.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <limits>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "capsim/core/suggest.hpp"
#include "capsim/core/text.hpp"
#include "capsim/models/search.hpp"
#include "capsim/scenarios/cost_report.hpp"
#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "capsim/version.hpp"

namespace capsim::scenarios {
namespace {

using models::SharingMode;
using models::WeekHours;

constexpr std::array<const char*, 7> kDays{"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
constexpr std::array<const char*, 7> kDayNames{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  std::vector<Diagnostic> errors;

  void error(const YAML::Node& n, const std::string& key, const std::string& message, const std::string& hint = "") {
    const YAML::Mark m = n.Mark();
    errors.push_back(Diagnostic{{file_, m.line + 1, m.column + 1}, key, message, hint});
  }

  // Unknown keys of a mapping, each with the closest allowed one.
  void keys(const YAML::Node& map, const std::string& path, const std::vector<std::string>& allowed) {
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) {  // "? - a" makes a list a key (found by fuzz_scenario)
        error(kv.first, path, "expected a key (text), got " + std::string(kv.first.IsSequence() ? "a list" : "a mapping"));
        continue;
      }
      const std::string k = kv.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
      const std::string near = did_you_mean(k, allowed);
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      error(kv.first, path.empty() ? k : path + "." + k, "unknown key '" + k + "'",
            near.empty() ? "expected one of: " + list : near);
    }
  }

  std::optional<std::string> text(const YAML::Node& n, const std::string& path) {
    if (!n.IsScalar()) {
      error(n, path, "expected text");
      return std::nullopt;
    }
    return n.Scalar();
  }

  // A name: text of one line, as a scenario's name (the exports make object names of it).
  std::optional<std::string> name(const YAML::Node& n, const std::string& path) {
    auto t = text(n, path);
    if (!t) return std::nullopt;
    if (t->empty()) {
      error(n, path, "must not be empty");
      return std::nullopt;
    }
    if (t->find_first_of("\n\t") != std::string::npos) {
      error(n, path, "must be one line (no newline or tab)");
      return std::nullopt;
    }
    return t;
  }

  SourceLocation where(const YAML::Node& n) const { return {file_, n.Mark().line + 1, n.Mark().column + 1}; }

  std::optional<double> number(const YAML::Node& n, const std::string& path, double low, double high) {
    if (!n.IsScalar()) {
      error(n, path, "expected a number");
      return std::nullopt;
    }
    char* end = nullptr;
    const double v = std::strtod(n.Scalar().c_str(), &end);
    if (end == n.Scalar().c_str() || *end != '\0' || !std::isfinite(v)) {
      error(n, path, "expected a number, got '" + n.Scalar() + "'");
      return std::nullopt;
    }
    if (v < low || v > high) {
      error(n, path, "expected " + significant(low, 12) + " to " + significant(high, 12) + ", got " + n.Scalar());
      return std::nullopt;
    }
    return v;
  }

  std::optional<int> integer(const YAML::Node& n, const std::string& path, int low, int high) {
    auto v = number(n, path, low, high);
    if (!v) return std::nullopt;
    if (*v != std::floor(*v)) {
      error(n, path, "expected a whole number, got " + n.Scalar());
      return std::nullopt;
    }
    return static_cast<int>(*v);
  }

  template <class Q>
  std::optional<Q> quantity(const YAML::Node& n, const std::string& path) {
    if (!n.IsScalar()) {
      error(n, path, "expected a quantity with its unit");
      return std::nullopt;
    }
    auto q = parse_as<Q>(n.Scalar());
    if (!q) {
      error(n, path, q.errors()[0].message, q.errors()[0].hint);
      return std::nullopt;
    }
    if (!(q->value() >= 0)) {
      error(n, path, "must not be negative");
      return std::nullopt;
    }
    return *q;
  }

 private:
  std::string file_;
};

// "mon-fri", "sat", "mon,wed,fri", "daily" -> day indices.
std::optional<std::vector<int>> parse_days(const std::string& text) {
  if (text == "daily") return std::vector<int>{0, 1, 2, 3, 4, 5, 6};
  auto day = [](const std::string& d) -> int {
    for (int i = 0; i < 7; ++i)
      if (d == kDays[static_cast<std::size_t>(i)]) return i;
    return -1;
  };
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t dash = part.find('-');
    if (dash == std::string::npos) {
      const int d = day(part);
      if (d < 0) return std::nullopt;
      out.push_back(d);
    } else {
      const int a = day(part.substr(0, dash)), b = day(part.substr(dash + 1));
      if (a < 0 || b < 0 || b < a) return std::nullopt;
      for (int d = a; d <= b; ++d) out.push_back(d);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string days_text(const std::vector<int>& days) {
  if (days.size() == 7) return "daily";
  bool run = days.size() > 2;
  for (std::size_t i = 1; i < days.size(); ++i) run = run && days[i] == days[i - 1] + 1;
  if (run) return std::string(kDayNames[static_cast<std::size_t>(days.front())]) + "-" + kDayNames[static_cast<std::size_t>(days.back())];
  std::string t;
  for (int d : days) t += (t.empty() ? "" : ",") + std::string(kDayNames[static_cast<std::size_t>(d)]);
  return t;
}

void read_hours(Reader& r, const YAML::Node& n, const std::string& path, ClusterWorkloadSpec& w) {
  if (n.IsScalar()) {
    if (n.Scalar() == "always") {
      w.hours = WeekHours::always();
      w.hours_text = "always";
    } else if (n.Scalar() == "business") {
      w.hours = WeekHours::business_days(9, 18);
      w.hours_text = "Mon-Fri 09-18";
    } else {
      r.error(n, path, "expected always, business or {days:, from:, to:}, got '" + n.Scalar() + "'");
    }
    return;
  }
  if (!n.IsMap()) {
    r.error(n, path, "expected always, business or {days:, from:, to:}");
    return;
  }
  r.keys(n, path, {"days", "from", "to"});
  std::optional<std::vector<int>> days;
  if (!n["days"]) r.error(n, path + ".days", "missing key 'days' (mon-fri, sat, mon,wed,fri or daily)");
  else if (auto t = r.text(n["days"], path + ".days")) {
    days = parse_days(*t);
    if (!days) r.error(n["days"], path + ".days", "expected days such as mon-fri, sat, mon,wed,fri or daily, got '" + *t + "'");
  }
  std::optional<int> from, to;
  if (!n["from"]) r.error(n, path + ".from", "missing key 'from' (the first hour, 0 to 23)");
  else from = r.integer(n["from"], path + ".from", 0, 23);
  if (!n["to"]) r.error(n, path + ".to", "missing key 'to' (the hour it ends, 1 to 24)");
  else to = r.integer(n["to"], path + ".to", 1, 24);
  if (from && to && *to <= *from) {
    r.error(n["to"], path + ".to", "must be after from (" + std::to_string(*from) + ")");
    return;
  }
  if (!days || !from || !to) return;
  for (int d : *days)
    for (int h = *from; h < *to; ++h) w.hours.hours.set(static_cast<std::size_t>(d * 24 + h));
  w.hours_text = days_text(*days) + fmt::format(" {:02}-{:02}", *from, *to);
}

std::optional<SharingMode> sharing_from(const std::string& t) {
  if (t == "exclusive") return SharingMode::exclusive;
  if (t == "mig") return SharingMode::mig;
  if (t == "mps") return SharingMode::mps;
  if (t == "time-slicing") return SharingMode::time_slicing;
  return std::nullopt;
}

// "whole", "mig 1g.10gb", "time-slicing 0.25", "mps 0.5".
void read_share(Reader& r, const YAML::Node& n, const std::string& path, ClusterWorkloadSpec& w) {
  auto t = r.text(n, path);
  if (!t) return;
  const std::size_t space = t->find(' ');
  const std::string mode = t->substr(0, space), arg = space == std::string::npos ? "" : t->substr(space + 1);
  if (mode == "whole" && arg.empty()) return;
  if (mode == "mig" && !arg.empty()) {
    w.sharing = SharingMode::mig;
    w.mig_profile = arg;
    return;
  }
  if ((mode == "time-slicing" || mode == "mps") && !arg.empty()) {
    char* end = nullptr;
    const double f = std::strtod(arg.c_str(), &end);
    if (end != arg.c_str() && *end == '\0' && f > 0 && f <= 1) {
      w.sharing = mode == "mps" ? SharingMode::mps : SharingMode::time_slicing;
      w.fraction = f;
      return;
    }
  }
  r.error(n, path, "expected whole, mig <profile>, time-slicing <fraction> or mps <fraction> (a fraction in (0, 1]), got '" +
                       *t + "'");
}

void read_pod(Reader& r, const YAML::Node& n, const std::string& path, ClusterWorkloadSpec& w) {
  if (!n.IsMap()) {
    r.error(n, path, "expected {cpu:, memory:}");
    return;
  }
  r.keys(n, path, {"cpu", "memory"});
  if (n["cpu"]) {
    if (auto c = r.number(n["cpu"], path + ".cpu", 0, 1024)) w.pod_cpu = *c;
  }
  if (n["memory"]) {
    if (auto m = r.quantity<Bytes>(n["memory"], path + ".memory")) w.pod_memory = *m;
  }
}

void read_workload(Reader& r, const YAML::Node& n, const std::string& path, const hardware::Catalog& catalog,
                   const std::string& file, ClusterWorkloadSpec& w) {
  r.keys(n, path,
         {"name", "priority", "hours", "scenario", "job", "service", "sharing", "pod", "min_replicas", "spread",
          "may_borrow_serving"});
  if (!n["name"]) r.error(n, path + ".name", "missing key 'name'");
  else if (auto t = r.name(n["name"], path + ".name")) w.name = *t;
  if (n["name"]) w.name_where = r.where(n["name"]);
  if (n["priority"]) {
    if (auto p = r.integer(n["priority"], path + ".priority", -1000, 1000)) w.priority = *p;
  }
  if (!n["hours"]) r.error(n, path + ".hours", "missing key 'hours' (always, business or {days:, from:, to:})");
  else read_hours(r, n["hours"], path + ".hours", w);
  const int kinds = (n["scenario"] ? 1 : 0) + (n["job"] ? 1 : 0) + (n["service"] ? 1 : 0);
  if (kinds != 1)
    r.error(n, path, kinds == 0 ? "a workload needs one of scenario:, job: or service:"
                                : "a workload has one of scenario:, job: or service:, not several");
  auto gpu = [&](const YAML::Node& g, const std::string& p) {
    if (!g) {
      r.error(n, p, "missing key 'gpu' (a catalog GPU id)");
      return;
    }
    auto t = r.text(g, p);
    if (!t) return;
    if (!catalog.find(hardware::EntityKind::gpu, *t)) {
      r.error(g, p, "unknown GPU '" + *t + "'", did_you_mean(*t, catalog.ids(hardware::EntityKind::gpu)));
      return;
    }
    w.gpu = *t;
  };
  if (n["scenario"]) {
    // The single-scenario rule for the files a scenario names: inside the file's folder.
    if (auto t = r.text(n["scenario"], path + ".scenario")) {
      auto confined = named_input_path(file, *t, "scenario", "cluster file");
      if (confined) w.scenario = *confined;
      else r.error(n["scenario"], path + ".scenario", confined.errors()[0].message, confined.errors()[0].hint);
    }
  } else if (const YAML::Node j = n["job"]; j) {
    w.is_job = true;
    if (!j.IsMap()) {
      r.error(j, path + ".job", "expected {gpu:, gpus:, run_time:}");
    } else {
      r.keys(j, path + ".job", {"gpu", "gpus", "run_time", "gpu_memory"});
      gpu(j["gpu"], path + ".job.gpu");
      if (!j["gpus"]) r.error(j, path + ".job.gpus", "missing key 'gpus'");
      else if (auto g = r.integer(j["gpus"], path + ".job.gpus", 1, 4096)) w.gpus = *g;
      if (!j["run_time"]) r.error(j, path + ".job.run_time", "missing key 'run_time' (e.g. 3 h)");
      else if (auto t = r.quantity<Seconds>(j["run_time"], path + ".job.run_time")) w.run_time = *t;
      if (j["gpu_memory"]) {
        if (auto m = r.quantity<Bytes>(j["gpu_memory"], path + ".job.gpu_memory")) w.gpu_memory = *m;
      }
    }
  } else if (const YAML::Node s = n["service"]; s) {
    if (!s.IsMap()) {
      r.error(s, path + ".service", "expected {gpu:, replicas:, share:, gpu_memory:}");
    } else {
      r.keys(s, path + ".service", {"gpu", "replicas", "gpus", "share", "gpu_memory"});
      gpu(s["gpu"], path + ".service.gpu");
      if (!s["replicas"]) r.error(s, path + ".service.replicas", "missing key 'replicas'");
      else if (auto v = r.integer(s["replicas"], path + ".service.replicas", 1, 10000)) w.replicas = *v;
      w.gpus = 1;
      if (s["gpus"]) {
        if (auto v = r.integer(s["gpus"], path + ".service.gpus", 1, 64)) w.gpus = *v;
      }
      if (s["share"]) read_share(r, s["share"], path + ".service.share", w);
      if (s["gpu_memory"]) {
        if (auto m = r.quantity<Bytes>(s["gpu_memory"], path + ".service.gpu_memory")) w.gpu_memory = *m;
      }
    }
  }
  if (n["sharing"]) {
    if (!n["scenario"]) r.error(n["sharing"], path + ".sharing", "sharing: applies to a serving scenario; a service: states share:");
    else if (auto t = r.text(n["sharing"], path + ".sharing")) {
      if (auto m = sharing_from(*t)) w.scenario_sharing = *m;
      else r.error(n["sharing"], path + ".sharing", "expected exclusive, mig, mps or time-slicing, got '" + *t + "'");
    }
  }
  if (n["pod"]) read_pod(r, n["pod"], path + ".pod", w);
  if (n["min_replicas"]) {
    if (auto v = r.integer(n["min_replicas"], path + ".min_replicas", 0, 10000)) w.min_replicas = *v;
  }
  if (n["spread"]) {
    if (auto t = r.text(n["spread"], path + ".spread")) {
      if (*t == "none") w.spread = models::Spread::none;
      else if (*t == "node") w.spread = models::Spread::node;
      else if (*t == "zone") w.spread = models::Spread::zone;
      else r.error(n["spread"], path + ".spread", "expected none, node or zone, got '" + *t + "'");
    }
  }
  if (n["may_borrow_serving"]) {
    if (auto t = r.text(n["may_borrow_serving"], path + ".may_borrow_serving")) {
      if (*t == "true" || *t == "false") w.may_borrow_serving = *t == "true";
      else r.error(n["may_borrow_serving"], path + ".may_borrow_serving", "expected true or false, got '" + *t + "'");
    }
  }
}

// An owned option is a `cost.options` entry with server: and facility:; it is read by the
// scenario loader itself (a one-option scenario built around it), so its keys, units and
// errors are those of docs/scenario-reference.md. Errors point at the entry.
void read_owned(Reader& r, const YAML::Node& n, const std::string& path, const std::string& file,
                const hardware::Catalog& catalog, std::vector<ClusterOwnedOption>& out) {
  if (!n.IsMap()) {
    r.error(n, path, "expected an owned server ({name:, server:, facility:, ...})");
    return;
  }
  if (n["instance"] || !n["server"]) {
    r.error(n, path, "an owned option names a server: and a facility:", "cloud node types go in cluster.node_types");
    return;
  }
  YAML::Node scenario;
  scenario["name"] = "owned";
  scenario["workload"]["type"] = "service";
  scenario["workload"]["gpus"] = 1;
  scenario["cost"]["options"].push_back(YAML::Clone(n));
  YAML::Emitter emitted;
  emitted << scenario;
  const std::string text = std::string(emitted.c_str()) + "\n";
  auto loaded = load_scenario(file, text, catalog);
  if (!loaded) {
    for (const auto& e : loaded.errors()) {
      std::string key = e.key_path;
      const std::string inner = "cost.options[0]";
      if (key.rfind(inner, 0) == 0) key = path + key.substr(inner.size());
      std::string message = e.message;
      if (const auto at = message.find(inner); at != std::string::npos) message.replace(at, inner.size(), path);
      r.error(n, key, message, e.hint);
    }
    return;
  }
  ClusterOwnedOption o;
  o.option = loaded->cost->options.front();
  o.where = {file, n.Mark().line + 1, n.Mark().column + 1};
  out.push_back(std::move(o));
}

}  // namespace

Result<ClusterScenario> load_cluster(const std::string& file, const std::string& text, const hardware::Catalog& catalog) {
  YAML::Node root;
  std::vector<Diagnostic> control_characters;
  try {
    root = YAML::Load(text);
    if (auto second = second_document(file, text)) return *second;
    control_characters = control_character_errors(file, text);
  } catch (const YAML::Exception& e) {
    return Diagnostic{{file, e.mark.line + 1, e.mark.column + 1}, "", "invalid YAML: " + e.msg, ""};
  }
  Reader r(file);
  // Never the content of a file that is not a cluster scenario: it may be any file of the
  // machine (/etc/passwd, a .env).
  const std::vector<std::string> top = {"name", "description", "cluster", "workloads"};
  if (!root.IsMap())
    return Diagnostic{{file, 1, 1}, "",
                      std::string("expected a cluster scenario (a mapping with name:, cluster:, workloads:), got ") +
                          (root.IsNull() ? "nothing" : root.IsSequence() ? "a list" : "a single value") +
                          (root.IsNull() ? "" : " (the file's content is not shown)"),
                      ""};
  if (root.size() > 0 && std::none_of(root.begin(), root.end(), [&](const auto& kv) {
        return kv.first.IsScalar() && (std::find(top.begin(), top.end(), kv.first.Scalar()) != top.end() ||
                                       !did_you_mean(kv.first.Scalar(), top).empty());
      }))
    return Diagnostic{{file, 1, 1}, "",
                      "expected a cluster scenario (a mapping with name:, cluster:, workloads:), got a mapping of " +
                          plural(static_cast<long long>(root.size()), "key") +
                          ", none of them a cluster scenario's or close to one (the file's content is not shown)",
                      ""};
  r.errors = std::move(control_characters);
  ClusterScenario s;
  s.file = file;
  r.keys(root, "", top);
  if (!root["name"]) r.error(root, "name", "missing key 'name'");
  else if (auto t = r.name(root["name"], "name")) s.name = *t;
  if (root["name"]) s.name_where = r.where(root["name"]);
  if (root["description"]) {
    if (auto t = r.text(root["description"], "description")) s.description = *t;
  }
  const YAML::Node c = root["cluster"];
  if (!c || !c.IsMap()) {
    r.error(c ? c : root, "cluster", "expected cluster: {node_types:, system_reserve:, horizon:}");
  } else {
    r.keys(c, "cluster", {"node_types", "system_reserve", "horizon", "owned", "zones"});
    if (const YAML::Node zones = c["zones"]; zones) {
      if (!zones.IsSequence() || zones.size() == 0) r.error(zones, "cluster.zones", "expected a list of zones, e.g. [us-east-1a, us-east-1b]");
      for (std::size_t i = 0; zones.IsSequence() && i < zones.size(); ++i)
        if (auto z = r.text(zones[i], "cluster.zones[" + std::to_string(i) + "]")) {
          if (std::find(s.zones.begin(), s.zones.end(), *z) != s.zones.end())
            r.error(zones[i], "cluster.zones[" + std::to_string(i) + "]", "zone '" + *z + "' is listed twice");
          else
            s.zones.push_back(*z);
        }
    }
    const YAML::Node types = c["node_types"];
    if (!types || !types.IsSequence() || types.size() == 0) {
      r.error(types ? types : c, "cluster.node_types", "expected a list of catalog instance ids");
    } else {
      for (std::size_t i = 0; i < types.size(); ++i) {
        const std::string path = "cluster.node_types[" + std::to_string(i) + "]";
        auto t = r.text(types[i], path);
        if (!t) continue;
        if (!catalog.find(hardware::EntityKind::instance, *t)) {
          r.error(types[i], path, "unknown instance '" + *t + "'", did_you_mean(*t, catalog.ids(hardware::EntityKind::instance)));
          continue;
        }
        if (std::find(s.node_types.begin(), s.node_types.end(), *t) != s.node_types.end()) {
          r.error(types[i], path, "'" + *t + "' is listed twice");
          continue;
        }
        s.node_types.push_back(*t);
        s.node_type_where.push_back({file, types[i].Mark().line + 1, types[i].Mark().column + 1});
      }
    }
    if (const YAML::Node res = c["system_reserve"]; !res) {
      r.error(c, "cluster.system_reserve", "missing key 'system_reserve' ({cpu:, memory:} each node keeps for kubelet and daemonsets)");
    } else if (!res.IsMap()) {
      r.error(res, "cluster.system_reserve", "expected {cpu:, memory:}");
    } else {
      r.keys(res, "cluster.system_reserve", {"cpu", "memory"});
      if (!res["cpu"]) r.error(res, "cluster.system_reserve.cpu", "missing key 'cpu'");
      else if (auto v = r.number(res["cpu"], "cluster.system_reserve.cpu", 0, 1024)) s.reserve.cpu_cores = *v;
      if (!res["memory"]) r.error(res, "cluster.system_reserve.memory", "missing key 'memory'");
      else if (auto m = r.quantity<Bytes>(res["memory"], "cluster.system_reserve.memory")) s.reserve.memory = *m;
    }
    if (const YAML::Node owned = c["owned"]; owned) {
      if (!owned.IsSequence()) r.error(owned, "cluster.owned", "expected a list of owned servers ({name:, server:, facility:, ...})");
      for (std::size_t i = 0; owned.IsSequence() && i < owned.size(); ++i)
        read_owned(r, owned[i], "cluster.owned[" + std::to_string(i) + "]", file, catalog, s.owned);
    }
    if (c["horizon"]) {
      if (auto h = r.quantity<Seconds>(c["horizon"], "cluster.horizon")) {
        if (h->value() < units::day * 7) r.error(c["horizon"], "cluster.horizon", "must be at least a week");
        else s.horizon = *h;
      }
    }
  }
  const YAML::Node ws = root["workloads"];
  if (!ws || !ws.IsSequence() || ws.size() == 0) {
    r.error(ws ? ws : root, "workloads", "expected a list of workloads");
  } else {
    s.workloads_where = {file, ws.Mark().line + 1, ws.Mark().column + 1};
    // The packer's budget (models::kMaxPackingPods), checked before anything is sized: every
    // workload is at least one pod, a stated service its replicas (10,000 workloads took 237 s
    // to pack, 4 services of 10,000 replicas 21 s).
    if (ws.size() > static_cast<std::size_t>(models::kMaxPackingPods))
      r.error(ws, "workloads",
              "has " + std::to_string(ws.size()) + " workloads, more than the packer's limit of " +
                  std::to_string(models::kMaxPackingPods) + " pods (each workload is at least one)",
              "split the estate into several cluster files");
    long long stated_pods = 0;
    bool reported = ws.size() > static_cast<std::size_t>(models::kMaxPackingPods);
    std::set<std::string> names;
    for (std::size_t i = 0; i < ws.size(); ++i) {
      const std::string path = "workloads[" + std::to_string(i) + "]";
      if (!ws[i].IsMap()) {
        r.error(ws[i], path, "expected a workload (a mapping with name:, hours: and scenario:, job: or service:)");
        continue;
      }
      ClusterWorkloadSpec w;
      w.where = {file, ws[i].Mark().line + 1, ws[i].Mark().column + 1};
      read_workload(r, ws[i], path, catalog, file, w);
      if (!w.name.empty() && !names.insert(w.name).second) r.error(ws[i]["name"], path + ".name", "workload '" + w.name + "' is named twice");
      const bool stated_service = w.scenario.empty() && !w.is_job && ws[i]["service"];
      stated_pods += stated_service ? w.replicas : 1;
      if (!reported && stated_pods > models::kMaxPackingPods) {
        reported = true;
        const YAML::Node at = stated_service && ws[i]["service"]["replicas"] ? ws[i]["service"]["replicas"] : ws[i];
        r.error(at, stated_service ? path + ".service.replicas" : path,
                "the workloads up to here have " + std::to_string(stated_pods) +
                    " pods (a stated service's replicas, at least one for every other workload), more than the "
                    "packer's limit of " + std::to_string(models::kMaxPackingPods) + " pods",
                "split the estate into several cluster files");
      }
      s.workloads.push_back(std::move(w));
    }
  }
  if (!r.errors.empty()) return r.errors;
  return s;
}

Result<ClusterScenario> load_cluster_file(const std::filesystem::path& path, const hardware::Catalog& catalog) {
  auto text = read_scenario_text(path);
  if (!text) return text.errors();
  return load_cluster(path.string(), *text, catalog);
}

namespace {

// Contiguous runs of a week's hours (wrapping from Sunday night to Monday morning): start, length.
std::vector<std::pair<int, int>> windows(const WeekHours& h) {
  std::vector<std::pair<int, int>> out;
  if (h.count() == models::kHoursPerWeek) return {{0, models::kHoursPerWeek}};
  for (int s = 0; s < models::kHoursPerWeek; ++s) {
    const int prev = (s + models::kHoursPerWeek - 1) % models::kHoursPerWeek;
    if (!h.hours.test(static_cast<std::size_t>(s)) || h.hours.test(static_cast<std::size_t>(prev))) continue;
    int len = 0;
    while (len < models::kHoursPerWeek && h.hours.test(static_cast<std::size_t>((s + len) % models::kHoursPerWeek))) ++len;
    out.emplace_back(s, len);
  }
  return out;
}

std::string hours_text(double seconds) { return significant(seconds / units::hour, 3) + " h"; }

struct Sized {
  models::PackingWorkload packing;
  ClusterWorkloadPlan plan;
};

Diagnostic workload_error(const ClusterScenario& s, std::size_t i, const std::string& message, const std::string& hint = "") {
  return Diagnostic{s.workloads[i].where, "workloads[" + std::to_string(i) + "]", message, hint};
}

Result<Sized> size_workload(const ClusterScenario& s, std::size_t i, const hardware::Catalog& catalog,
                            const std::vector<std::string>& cluster_gpus) {
  const ClusterWorkloadSpec& w = s.workloads[i];
  Sized out;
  models::PackingWorkload& p = out.packing;
  p.name = w.name;
  p.priority = w.priority;
  out.plan.name = w.name;
  out.plan.name_where = w.name_where;
  out.plan.hours_text = w.hours_text;
  bool training = w.is_job;
  std::string gpu = w.gpu;
  int gpus = w.gpus, replicas = w.replicas;
  Seconds run_time = w.run_time;
  SharingMode sharing = w.sharing;
  std::string mig = w.mig_profile;
  double fraction = w.fraction;
  Bytes gpu_memory = w.gpu_memory;
  if (!w.scenario.empty()) {
    auto loaded = load_scenario_file(w.scenario, catalog);
    if (!loaded) {
      std::vector<Diagnostic> errors = loaded.errors();
      for (auto& e : errors) e.message = "workload '" + w.name + "': " + e.message;
      return errors;
    }
    Scenario scenario = *loaded;
    Scenario* sub = &scenario;
    // Sized on the cluster's GPUs only.
    std::vector<std::string> candidates;
    for (const auto& g : sub->hardware.gpus)
      if (std::find(cluster_gpus.begin(), cluster_gpus.end(), g) != cluster_gpus.end()) candidates.push_back(g);
    if (!sub->hardware.gpus.empty() && candidates.empty()) {
      std::string theirs, ours;
      for (const auto& g : sub->hardware.gpus) theirs += (theirs.empty() ? "" : ", ") + g;
      for (const auto& g : cluster_gpus) ours += (ours.empty() ? "" : ", ") + g;
      return workload_error(s, i, "workload '" + w.name + "': its scenario runs on " + theirs + ", the cluster's node types carry " + ours,
                            "add a node type with one of its GPUs to cluster.node_types");
    }
    if (!candidates.empty()) sub->hardware.gpus = candidates;
    sub->hardware.instances = s.node_types;
    sub->hardware.servers.clear();
    if (sub->inference && w.scenario_sharing) sub->inference->sharing_modes = {*w.scenario_sharing};
    // A deployment pinned to a node type the cluster does not have moves to a cluster type
    // with the same GPU (the cluster decides where things run).
    if (sub->inference && !sub->inference->node.empty() &&
        std::find(s.node_types.begin(), s.node_types.end(), sub->inference->node) == s.node_types.end()) {
      const hardware::Entity* pinned = catalog.find(hardware::EntityKind::instance, sub->inference->node);
      const std::string gpu_of_pin = pinned ? pinned->text("gpu") : "";
      std::string replacement;
      for (const auto& id : s.node_types)
        if (const auto* e = catalog.find(hardware::EntityKind::instance, id); e && e->text("gpu") == gpu_of_pin) {
          replacement = id;
          break;
        }
      if (replacement.empty())
        return workload_error(s, i, "workload '" + w.name + "': its scenario deploys on " + sub->inference->node + " (" + gpu_of_pin +
                                        "), and no cluster node type carries a " + gpu_of_pin,
                              "add a node type with a " + gpu_of_pin + " to cluster.node_types");
      sub->inference->node = replacement;
    }
    auto plan = make_plan(*sub, catalog);
    if (!plan) {
      std::vector<Diagnostic> errors = plan.errors();
      for (auto& e : errors) e.message = "workload '" + w.name + "': " + e.message;
      return errors;
    }
    const PlanFigures& f = plan->plan;
    if (f.node_pools.empty() || f.gpu.empty())
      return workload_error(s, i, "workload '" + w.name + "': its scenario's plan names no GPU to pack (" + f.configuration + ")");
    const NodePool& pool = f.node_pools.front();
    gpu = f.gpu;
    training = !sub->inference.has_value();
    if (training) {
      gpus = f.gpus;
      if (!f.time) return workload_error(s, i, "workload '" + w.name + "': its plan has no run time");
      run_time = *f.time;
      if (f.memory_per_gpu) gpu_memory = *f.memory_per_gpu;
      out.plan.source = w.scenario.filename().string() + ": " + std::to_string(gpus) + " x " + gpu + ", " +
                        hours_text(run_time.value()) + " per run";
    } else {
      replicas = pool.pods;
      if (pool.mig_profile) {
        sharing = SharingMode::mig;
        mig = *pool.mig_profile;
        gpus = 1;
      } else {
        sharing = SharingMode::exclusive;
        gpus = pool.gpus_per_pod;
      }
      out.plan.source = w.scenario.filename().string() + ": " + f.configuration;
    }
  } else {
    out.plan.source = "stated";
  }
  if (std::find(cluster_gpus.begin(), cluster_gpus.end(), gpu) == cluster_gpus.end()) {
    std::string ours;
    for (const auto& g : cluster_gpus) ours += (ours.empty() ? "" : ", ") + g;
    return workload_error(s, i, "workload '" + w.name + "': no node type carries its GPU " + gpu + " (the cluster's carry " + ours + ")",
                          "add a node type with a " + gpu + " to cluster.node_types");
  }
  out.plan.gpu = gpu;
  p.gpus = {gpu};
  p.is_training = training;
  if (training) {
    out.plan.kind = "training";
    p.training.gpus = gpus;
    p.training.gpu_memory_per_gpu = gpu_memory;
    p.training.cpu_per_gpu = w.pod_cpu;
    p.training.memory_per_gpu = w.pod_memory;
    p.training.may_borrow_serving = w.may_borrow_serving;
    // One run per window occurrence, from its start, for the run time in whole hours.
    const int run_hours = static_cast<int>(std::ceil(run_time.value() / units::hour - 1e-9));
    for (const auto& [start, length] : windows(w.hours)) {
      if (run_hours > length)
        return workload_error(s, i, "workload '" + w.name + "': a run takes " + hours_text(run_time.value()) + ", its window (" +
                                        w.hours_text + ") is " + std::to_string(length) + " h",
                              "widen hours:, or give the run more GPUs: a shorter deadline in its scenario");
      for (int h = 0; h < std::max(1, run_hours); ++h) p.active.hours.set(static_cast<std::size_t>((start + h) % models::kHoursPerWeek));
    }
    out.plan.demand = "gang of " + plural(gpus, "GPU") + ", " + std::to_string(std::max(1, run_hours)) + " h per run";
  } else {
    out.plan.kind = "service";
    p.service.replicas = replicas;
    p.service.min_replicas = std::min(w.min_replicas, replicas);
    p.service.gpu = {sharing, gpus, mig, fraction, gpu_memory};
    p.service.cpu_per_replica = w.pod_cpu;
    p.service.memory_per_replica = w.pod_memory;
    p.service.spread = w.spread;
    p.active = w.hours;
    const std::string share = sharing == SharingMode::mig                            ? "MIG " + mig
                              : sharing == SharingMode::time_slicing                 ? "time-sliced " + significant(fraction) + " GPU"
                              : sharing == SharingMode::mps                          ? "MPS " + significant(fraction) + " GPU"
                              : gpus == 1                                            ? "1 GPU"
                                                                                     : std::to_string(gpus) + " GPUs";
    out.plan.demand = plural(replicas, "replica") + " x " + share +
                      (p.service.min_replicas > 0 ? ", " + std::to_string(p.service.min_replicas) + " all week" : "");
  }
  out.plan.active_hours = p.active.count();
  if (w.min_replicas > 0 && !training) out.plan.active_hours = models::kHoursPerWeek;
  return out;
}

}  // namespace

// Each pool against the owned options whose server carries its GPU: a service scenario of
// the pool's peak GPUs, busy as the pool is, through the cost model of `capsim cost`.
Result<std::vector<ClusterOwnedComparison>> compare_owned(const ClusterScenario& s, const ClusterPlan& plan,
                                                          const hardware::Catalog& catalog) {
  std::vector<ClusterOwnedComparison> out;
  std::vector<Diagnostic> errors;
  for (const auto& pool : plan.packing.pools) {
    const models::PoolNodeType* type = nullptr;
    for (const auto& t : plan.problem.node_types)
      if (t.id == pool.node_type) type = &t;
    if (type == nullptr || pool.max_nodes == 0) continue;
    std::vector<const ClusterOwnedOption*> owned;
    for (const auto& o : s.owned) {
      const hardware::Entity* server = catalog.find(hardware::EntityKind::server, o.option.server);
      if (server != nullptr && server->text("gpu") == type->gpu.id) owned.push_back(&o);
    }
    if (owned.empty()) continue;
    int node_hours = 0;
    for (const auto& n : plan.packing.nodes)
      if (n.node_type == pool.node_type) node_hours += n.up.count();
    ClusterOwnedComparison c;
    c.node_type = pool.node_type;
    c.gpu = type->gpu.id;
    c.gpus = pool.max_nodes * type->gpus_per_node;
    c.busy = static_cast<double>(node_hours) / (pool.max_nodes * models::kHoursPerWeek);
    Scenario sc;
    sc.name = s.name + "/" + pool.node_type;
    sc.file = s.file;
    sc.training.service = true;
    sc.training.service_gpus = c.gpus;
    CostSetup cost;
    cost.horizon = s.horizon;
    cost.profile = "measured";
    cost.busy = c.busy;
    CostOptionSetup cloud;
    cloud.name = "cloud on demand (" + pool.node_type + ")";
    cloud.instance = pool.node_type;
    cost.options.push_back(cloud);
    for (const auto* o : owned) cost.options.push_back(o->option);
    sc.cost = cost;
    auto report = cost_scenario(sc, catalog);
    if (!report) {
      for (auto e : report.errors()) {
        const std::string prefix = "cost.options[";
        if (e.key_path.rfind(prefix, 0) == 0) {
          const std::size_t k = std::stoul(e.key_path.substr(prefix.size()));
          if (k >= 1 && k <= owned.size()) e.where = owned[k - 1]->where;
        }
        e.message = "pool " + pool.node_type + ": " + e.message;
        errors.push_back(std::move(e));
      }
      continue;
    }
    const auto& cmp = report->comparison;
    for (std::size_t i = 0; i < cmp.options.size(); ++i) {
      c.options.push_back(cmp.options[i].name);
      c.totals.push_back(cmp.totals[i]);
      c.servers.push_back(cmp.options[i].nodes);
      if (i == 0) continue;
      std::optional<double> u;
      std::optional<int> month;
      for (const auto& b : cmp.break_even)
        if ((b.a == cmp.options[i].name && b.b == cloud.name) || (b.b == cmp.options[i].name && b.a == cloud.name)) {
          u = b.utilization;
          month = b.month;
        }
      c.break_even_utilization.push_back(u);
      c.break_even_month.push_back(month);
    }
    c.cheapest = cmp.cheapest;
    out.push_back(std::move(c));
  }
  if (!errors.empty()) return errors;
  return out;
}

namespace {
Result<ClusterPlan> pack_cluster(const ClusterScenario& s, const hardware::Catalog& catalog);
std::vector<ClusterPlan::SmallerNode> try_smaller_nodes(const ClusterScenario& s, const ClusterPlan& plan,
                                                        const hardware::Catalog& catalog);
}  // namespace

Result<ClusterPlan> plan_cluster(const ClusterScenario& s, const hardware::Catalog& catalog) {
  auto packed = pack_cluster(s, catalog);
  if (!packed) return packed.errors();
  ClusterPlan plan = std::move(packed).value();
  plan.smaller_nodes = try_smaller_nodes(s, plan, catalog);
  return plan;
}

namespace {

Result<ClusterPlan> pack_cluster(const ClusterScenario& s, const hardware::Catalog& catalog) {
  ClusterPlan out;
  out.name = s.name;
  out.name_where = s.name_where;
  out.horizon = s.horizon;
  std::vector<Diagnostic> errors;
  std::vector<std::string> cluster_gpus;
  std::optional<Currency> currency;
  std::map<std::string, MoneyPerSecond> committed;  // node type -> 1-year committed price
  std::map<std::string, MoneyPerSecond> spot;       // node type -> spot price
  for (std::size_t i = 0; i < s.node_types.size(); ++i) {
    const std::string& id = s.node_types[i];
    const std::string key = "cluster.node_types[" + std::to_string(i) + "]";
    const SourceLocation at = i < s.node_type_where.size() ? s.node_type_where[i] : SourceLocation{s.file, 0, 0};
    auto nt = models::node_type_by_id(catalog, id);
    if (!nt) {
      errors.push_back(Diagnostic{at, key, nt.errors()[0].message, nt.errors()[0].hint});
      continue;
    }
    const hardware::Entity* e = catalog.find(hardware::EntityKind::instance, id);
    const auto vcpus = e->integer("vcpus");
    const auto memory = e->quantity<Bytes>("memory");
    if (!nt->price) errors.push_back(Diagnostic{at, key, "instance '" + id + "' has no on-demand price in the catalog", ""});
    if (!vcpus || !memory)
      errors.push_back(Diagnostic{at, key, "instance '" + id + "' has no vcpus or memory in the catalog", ""});
    if (!nt->price || !vcpus || !memory) continue;
    if (currency && nt->price->currency() != *currency)
      errors.push_back(Diagnostic{at, key, "instance '" + id + "' is priced in another currency than the first node type",
                                  "list node types priced in one currency"});
    currency = nt->price->currency();
    models::PoolNodeType t;
    t.id = id;
    t.gpu = nt->cluster.gpu;
    t.gpus_per_node = nt->cluster.gpus_per_node;
    t.cpu_cores = static_cast<double>(*vcpus);
    t.memory = *memory;
    t.reserve = s.reserve;
    t.price_per_node = *nt->price;
    t.zones = s.zones;
    if (auto r = models::node_type_by_id(catalog, id, "price.reserved_1yr"); r && r->price && r->price->currency() == *currency)
      committed.emplace(id, *r->price);
    if (auto r = models::node_type_by_id(catalog, id, "price.spot"); r && r->price && r->price->currency() == *currency)
      spot.emplace(id, *r->price);
    out.problem.node_types.push_back(std::move(t));
    out.node_type_sources.push_back(
        {id, nt->provider, nt->name, e->text("region"), static_cast<int>(e->integer("efa_interfaces").value_or(0))});
    if (std::find(cluster_gpus.begin(), cluster_gpus.end(), nt->cluster.gpu.id) == cluster_gpus.end())
      cluster_gpus.push_back(nt->cluster.gpu.id);
  }
  if (!errors.empty()) return errors;
  for (std::size_t i = 0; i < s.workloads.size(); ++i) {
    auto sized = size_workload(s, i, catalog, cluster_gpus);
    if (!sized) {
      for (const auto& e : sized.errors()) errors.push_back(e);
      continue;
    }
    out.problem.workloads.push_back(std::move(sized->packing));
    out.workloads.push_back(std::move(sized->plan));
  }
  if (!errors.empty()) return errors;
  auto packed = models::pack_heuristic(out.problem);
  if (!packed) {
    for (auto e : packed.errors()) {
      e.where.file = s.file;
      for (std::size_t i = 0; i < s.workloads.size(); ++i)
        if (e.key_path.rfind("workloads[" + std::to_string(i) + "]", 0) == 0) e.where = s.workloads[i].where;
      if (e.key_path == "workloads") e.where = s.workloads_where;
      if (e.message.find("spread: zone needs") != std::string::npos && s.zones.empty()) e.hint = "list the zones in cluster.zones";
      errors.push_back(std::move(e));
    }
    return errors;
  }
  out.packing = std::move(*packed);
  out.weekly_cost = out.packing.weekly_cost;
  double always = 0;
  for (const auto& pool : out.packing.pools)
    for (const auto& t : out.problem.node_types)
      if (t.id == pool.node_type) always += pool.max_nodes * t.price_per_node.value() * models::kHoursPerWeek * units::hour;
  const Currency cur = out.weekly_cost.currency();
  out.always_on_weekly_cost = Money(always, cur);
  const double week = models::kHoursPerWeek * units::hour;
  double best = 0, spot_training = 0;
  for (const auto& n : out.packing.nodes) {
    ClusterNodeCost c;
    c.node_type = n.node_type;
    c.up_hours = n.up.count();
    for (const auto& t : out.problem.node_types)
      if (t.id == n.node_type) c.on_demand = Money(c.up_hours * units::hour * t.price_per_node.value(), cur);
    if (auto it = committed.find(n.node_type); it != committed.end()) {
      c.committed = Money(week * it->second.value(), cur);
      for (const auto& t : out.problem.node_types)
        if (t.id == n.node_type) c.break_even_hours = models::kHoursPerWeek * it->second.value() / t.price_per_node.value();
      c.commit = c.committed->value() < c.on_demand.value();
    }
    best += c.commit ? c.committed->value() : c.on_demand.value();
    if (auto it = spot.find(n.node_type); it != spot.end()) c.spot = Money(c.up_hours * units::hour * it->second.value(), cur);
    c.training = !n.pods.empty();
    for (const auto& pod : n.pods)
      for (const auto& w : out.problem.workloads)
        if (w.name == pod.workload && !w.is_training) c.training = false;
    const double chosen = c.commit ? c.committed->value() : c.on_demand.value();
    spot_training += c.training && c.spot ? std::min(chosen, c.spot->value()) : chosen;
    out.node_costs.push_back(std::move(c));
  }
  out.best_weekly_cost = Money(best, cur);
  out.spot_training_weekly_cost = Money(spot_training, cur);
  // GPUs each workload holds per hour.
  out.gpus_per_hour.assign(out.workloads.size(), {});
  for (const auto& n : out.packing.nodes)
    for (const auto& pod : n.pods)
      for (std::size_t w = 0; w < out.workloads.size(); ++w) {
        if (out.workloads[w].name != pod.workload) continue;
        const double gpus = pod.gpu_share * static_cast<double>(pod.gpus.size());
        for (int h = 0; h < models::kHoursPerWeek; ++h)
          if (pod.active.hours.test(static_cast<std::size_t>(h))) out.gpus_per_hour[w][static_cast<std::size_t>(h)] += gpus;
      }
  const double weeks = s.horizon.value() / (7 * units::day);
  out.best_horizon_cost = Money(best * weeks, cur);
  out.horizon_cost = Money(out.weekly_cost.value() * weeks, cur);
  if (auto owned = compare_owned(s, out, catalog); !owned) return owned.errors();
  else out.owned = std::move(*owned);
  out.always_on_horizon_cost = Money(always * weeks, cur);
  out.currency_note = std::string(currency_code(cur));
  // The prices the pools rest on, dated; the user's own quotes marked.
  const PriceAgePolicy age;
  for (const auto& pool : out.packing.pools)
    if (const hardware::Entity* e = catalog.find(pool.node_type))
      for (const auto& [name, value] : e->fields)
        if (name.starts_with("price.") || name == "purchase_price")
          if (auto price = price_used(*e, name, age)) {
            if (price->stale) out.warnings.push_back("stale price: " + price->warning(age));
            out.prices.push_back(std::move(*price));
          }
  return out;
}

// A week as 7 rows of 24 characters: the number of nodes up in each hour (0-9, + above).
std::vector<std::string> timeline_rows(const std::array<int, models::kHoursPerWeek>& up) {
  std::vector<std::string> rows;
  for (int d = 0; d < 7; ++d) {
    std::string row = std::string(kDayNames[static_cast<std::size_t>(d)]) + " ";
    for (int h = 0; h < 24; ++h) {
      const int n = up[static_cast<std::size_t>(d * 24 + h)];
      row += n == 0 ? '.' : n < 10 ? static_cast<char>('0' + n) : '+';
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// Issue 50: what a pool pays for GPUs that hold no pod. A node is paid for every hour it is
// up; a GPU-hour is idle for the share of it no pod uses (a MIG slice or an MPS share uses
// its fraction). The idle cost is the node's on-demand cost in that proportion.
struct PoolWaste {
  std::string node_type;
  double gpu_hours = 0;       // per week, GPUs x hours up
  double idle_gpu_hours = 0;  // of those, held by no pod
  double idle_cost = 0;       // per week, on demand
  double idle_fraction() const { return gpu_hours > 0 ? idle_gpu_hours / gpu_hours : 0; }
};

std::vector<PoolWaste> pool_waste(const ClusterPlan& p) {
  std::vector<PoolWaste> out;
  for (const auto& pool : p.packing.pools) out.push_back({pool.node_type});
  for (std::size_t i = 0; i < p.packing.nodes.size(); ++i) {
    const auto& n = p.packing.nodes[i];
    const double total = static_cast<double>(n.gpus.size()) * static_cast<double>(n.up.count());
    double busy = 0;
    for (const auto& pod : n.pods)
      busy += pod.gpu_share * static_cast<double>(pod.gpus.size()) * static_cast<double>((pod.active.hours & n.up.hours).count());
    const double idle = std::max(0.0, total - std::min(busy, total));
    const double cost = i < p.node_costs.size() ? p.node_costs[i].on_demand.value() : 0;
    for (auto& w : out)
      if (w.node_type == n.node_type) {
        w.gpu_hours += total;
        w.idle_gpu_hours += idle;
        w.idle_cost += total > 0 ? cost * idle / total : 0;
      }
  }
  return out;
}

// Each pool more than half idle: the catalog's priced instances of its GPU with fewer GPUs
// per node, in the plan's currency, not already allowed, each tried by packing the whole
// cluster again with it allowed; the cheapest that lowers the weekly cost is kept, or a line
// saying none did.
std::vector<ClusterPlan::SmallerNode> try_smaller_nodes(const ClusterScenario& s, const ClusterPlan& plan,
                                                        const hardware::Catalog& catalog) {
  constexpr double kMostlyIdle = 0.5;
  std::vector<ClusterPlan::SmallerNode> out;
  for (const auto& w : pool_waste(plan)) {
    if (w.idle_fraction() <= kMostlyIdle) continue;
    const models::PoolNodeType* pool = nullptr;
    for (const auto& t : plan.problem.node_types)
      if (t.id == w.node_type) pool = &t;
    if (!pool) continue;
    ClusterPlan::SmallerNode best{w.node_type, pool->gpu.id, w.idle_fraction(), "", 0, "", plan.weekly_cost};
    for (const auto& e : catalog.all(hardware::EntityKind::instance)) {
      if (e.text("gpu") != pool->gpu.id || e.integer("gpu_count").value_or(0) >= pool->gpus_per_node) continue;
      if (std::find(s.node_types.begin(), s.node_types.end(), e.id) != s.node_types.end()) continue;
      auto nt = models::node_type_by_id(catalog, e.id);
      if (!nt || !nt->price || nt->price->currency() != plan.weekly_cost.currency()) continue;
      if (nt->cluster.gpu.id != pool->gpu.id || nt->cluster.gpus_per_node >= pool->gpus_per_node) continue;
      ClusterScenario wider = s;
      wider.node_types.push_back(e.id);
      auto again = pack_cluster(wider, catalog);
      if (!again || !(again->weekly_cost.value() < best.weekly_cost.value())) continue;
      best = {w.node_type, pool->gpu.id, w.idle_fraction(), e.id, nt->cluster.gpus_per_node, nt->provider, again->weekly_cost};
    }
    out.push_back(std::move(best));
  }
  return out;
}

}  // namespace

std::string cluster_plan_text(const ClusterPlan& p) {
  const std::string cur = " " + p.currency_note;
  std::string t = "Cluster plan: " + p.name + " (" + plural(static_cast<long long>(p.workloads.size()), "workload") + ", " +
                  plural(static_cast<long long>(p.packing.nodes.size()), "node") + ", " + p.packing.solver + ")\n\nWorkloads\n";
  std::size_t wn = 4, wd = 6, ws = 4;
  for (const auto& w : p.workloads) {
    wn = std::max(wn, w.name.size());
    wd = std::max(wd, w.demand.size());
    ws = std::max(ws, w.hours_text.size());
  }
  t += fmt::format("  {:<{}}  {:<8}  {:<{}}  {:<{}}  {:>8}  {}\n", "name", wn, "kind", "demand", wd, "hours", ws, "h/week", "from");
  for (const auto& w : p.workloads)
    t += fmt::format("  {:<{}}  {:<8}  {:<{}}  {:<{}}  {:>8}  {}\n", w.name, wn, w.kind, w.demand, wd, w.hours_text, ws,
                     w.active_hours, w.source);
  t += "\nNode pools (autoscaling bounds: the fewest and most nodes up in one hour)\n";
  for (const auto& pool : p.packing.pools) {
    const models::PoolNodeType* type = nullptr;
    for (const auto& nt : p.problem.node_types)
      if (nt.id == pool.node_type) type = &nt;
    int node_hours = 0;
    for (const auto& n : p.packing.nodes)
      if (n.node_type == pool.node_type) node_hours += n.up.count();
    t += fmt::format("  {:<22} {} x {:<14} min {}  max {}  {} node-hours/week  {}{}/week\n", pool.node_type, type->gpus_per_node,
                     type->gpu.id, pool.min_nodes, pool.max_nodes, node_hours,
                     money_short(node_hours * type->price_per_node.value() * units::hour), cur);
  }
  t += "\nIdle GPUs (GPU-hours a pool's nodes are up and paid for with no pod on them, at on-demand prices)\n";
  for (const auto& w : pool_waste(p))
    t += fmt::format("  {:<22} {} of {} GPU-hours/week idle ({} %), {}{}/week, {} % of the weekly cost\n", w.node_type,
                     significant(w.idle_gpu_hours, 4), significant(w.gpu_hours, 4), significant(100 * w.idle_fraction(), 3),
                     money_short(w.idle_cost), cur,
                     significant(p.weekly_cost.value() > 0 ? 100 * w.idle_cost / p.weekly_cost.value() : 0, 3));
  for (const auto& n : p.smaller_nodes) {
    if (n.node_type.empty())
      t += fmt::format("  {} is {} % idle; no smaller priced node type of {} in the catalog packs the plan for less\n", n.pool,
                       significant(100 * n.idle_fraction, 3), n.gpu);
    else
      t += fmt::format("  {} is {} % idle; with {} ({} x {}, {}) allowed the plan costs {}{}/week instead of {}{} (add it to "
                       "cluster.node_types)\n",
                       n.pool, significant(100 * n.idle_fraction, 3), n.node_type, n.gpus_per_node, n.gpu, n.provider,
                       money_short(n.weekly_cost.value()), cur, money_short(p.weekly_cost.value()), cur);
  }
  t += "\nPacking (node by node; GPU: pods)\n";
  for (std::size_t i = 0; i < p.packing.nodes.size(); ++i) {
    const auto& n = p.packing.nodes[i];
    t += fmt::format("  node {} {} (up {} h/week)\n", i + 1, n.node_type, n.up.count());
    for (std::size_t g = 0; g < n.gpus.size(); ++g) {
      std::string pods;
      for (const auto& pod : n.pods)
        if (std::find(pod.gpus.begin(), pod.gpus.end(), static_cast<int>(g)) != pod.gpus.end())
          pods += (pods.empty() ? "" : ", ") + pod.workload + "#" + std::to_string(pod.index) + " (" + pod.share + ")";
      t += fmt::format("    GPU {}  {}\n", g, pods.empty() ? "idle" : pods);
    }
  }
  t += "\nTimeline (nodes up per hour, Monday to Sunday, 00-24)\n";
  for (const auto& row : timeline_rows(p.packing.nodes_up)) t += "  " + row + "\n";
  const double weeks = p.horizon.value() / (7 * units::day);
  t += "\nCost per node and week: on demand for the hours it is up, or a 1-year commitment paid for all 168 h\n";
  t += fmt::format("  {:<6} {:<20} {:>9}  {:>13}  {:>14}  {:>20}  {:<10}  {}\n", "node", "type", "up h/week", "on demand",
                   "committed 1 yr", "break-even h/week", "cheaper", "spot");
  for (std::size_t i = 0; i < p.node_costs.size(); ++i) {
    const auto& c = p.node_costs[i];
    t += fmt::format("  {:<6} {:<20} {:>9}  {:>13}  {:>14}  {:>20}  {:<10}  {}\n", i + 1, c.node_type, c.up_hours,
                     money_short(c.on_demand.value()) + cur, c.committed ? money_short(c.committed->value()) + cur : "not priced",
                     c.break_even_hours ? significant(*c.break_even_hours, 3) : "-", c.commit ? "committed" : "on demand",
                     c.spot ? money_short(c.spot->value()) + cur + (c.training ? " (training)" : "") : "not priced");
  }
  t += "\nCost of the estate\n";
  t += fmt::format("  each node as above (cheaper of the two)         {}{}/week  {}{} over {} weeks\n",
                   money_short(p.best_weekly_cost.value()), cur, money_short(p.best_horizon_cost.value()), cur, significant(weeks, 3));
  t += fmt::format("  as above, training nodes on spot where priced   {}{}/week  {}{} over {} weeks (interruptions not modelled)\n",
                   money_short(p.spot_training_weekly_cost.value()), cur, money_short(p.spot_training_weekly_cost.value() * weeks), cur,
                   significant(weeks, 3));
  t += fmt::format("  all on demand, nodes up only while pods run      {}{}/week  {}{} over {} weeks\n",
                   money_short(p.weekly_cost.value()), cur, money_short(p.horizon_cost.value()), cur, significant(weeks, 3));
  t += fmt::format("  all on demand, every pool at its maximum 24/7    {}{}/week  {}{} over {} weeks\n",
                   money_short(p.always_on_weekly_cost.value()), cur, money_short(p.always_on_horizon_cost.value()), cur,
                   significant(weeks, 3));
  if (!p.owned.empty()) {
    t += "\nOwned servers instead of a pool, over " + significant(weeks, 3) + " weeks (the pool's peak GPUs bought, busy as the pool)\n";
    for (const auto& c : p.owned) {
      t += fmt::format("  {} ({} x {} at the peak, up {} of the week)\n", c.node_type, c.gpus, c.gpu,
                       significant(100 * c.busy, 3) + " %");
      for (std::size_t i = 0; i < c.options.size(); ++i) {
        std::string be;
        if (i > 0) {
          const auto& u = c.break_even_utilization[i - 1];
          const auto& m = c.break_even_month[i - 1];
          be = u ? "owning pays above " + significant(100 * *u, 3) + " % busy" : "no break-even utilization";
          be += m ? ", its cash falls to the cloud's in month " + std::to_string(*m) : ", its cash never falls to the cloud's in 10 years";
        }
        t += fmt::format("    {:<40} {:>10}{}{}{}\n", c.options[i], money_short(c.totals[i].value()), cur,
                         static_cast<int>(i) == c.cheapest ? "  cheapest" : "", be.empty() ? "" : "  (" + be + ")");
      }
    }
  }
  if (!p.prices.empty()) {
    t += "\nPrices used (as of; your quotes marked)\n";
    for (const auto& price : p.prices) t += "  " + price.text() + "\n";
  }
  for (const auto& w : p.warnings) t += "warning: " + w + "\n";
  return t;
}

ReportDocument cluster_report(const ClusterPlan& p) {
  const std::string cur = " " + p.currency_note;
  // Amounts as cluster_plan_json writes them, in the plan's currency (CSV keeps them whole).
  auto money = [&](double amount) { return Cell(money_short(amount), amount, p.currency_note); };
  auto count = [](double n) { return Cell(significant(n, 3), n); };
  ReportDocument doc;
  doc.title = "Cluster plan: " + p.name;
  doc.subtitle = plural(static_cast<long long>(p.workloads.size()), "workload") + " on " +
                 plural(static_cast<long long>(p.packing.nodes.size()), "node") + " of " +
                 plural(static_cast<long long>(p.packing.pools.size()), "node pool") + "; " + p.packing.solver;
  ReportSection workloads{"workloads", "Workloads", {}, {}, {}, {}};
  Table wt;
  wt.columns = {"name", "kind", "GPU", "demand", "hours", "hours/week", "from"};
  wt.right_align = {false, false, false, false, false, true, false};
  for (const auto& w : p.workloads)
    wt.rows.push_back({w.name, w.kind, w.gpu, w.demand, w.hours_text, Cell(std::to_string(w.active_hours), w.active_hours),
                       w.source});
  workloads.tables.push_back(std::move(wt));
  ReportSection pools{"pools", "Node pools and packing", {}, {}, {ChartKind::cluster_packing}, {}};
  pools.paragraphs.push_back("Autoscaling bounds: the fewest and most nodes of each pool up in one hour of the week. "
                             "In the picture each node is a row and each GPU a box, filled by the pods it holds.");
  Table pt;
  pt.columns = {"node type", "GPUs per node", "GPU", "min nodes", "max nodes"};
  pt.right_align = {false, true, false, true, true};
  for (const auto& pool : p.packing.pools)
    for (const auto& t : p.problem.node_types)
      if (t.id == pool.node_type)
        pt.rows.push_back({pool.node_type, Cell(std::to_string(t.gpus_per_node), t.gpus_per_node), t.gpu.id,
                           Cell(std::to_string(pool.min_nodes), pool.min_nodes),
                           Cell(std::to_string(pool.max_nodes), pool.max_nodes)});
  pools.tables.push_back(std::move(pt));
  ReportSection timeline{"timeline", "The week", {"Nodes up in each hour, Monday 00:00 to Sunday 24:00."}, {},
                         {ChartKind::cluster_timeline}, {}};
  ReportSection cost{"cost", "Cost", {}, {}, {}, {}};
  Table ct;
  ct.columns = {"node", "type", "up hours/week", "on demand" + cur, "committed 1 yr" + cur, "break-even hours/week", "cheaper"};
  ct.right_align = {true, false, true, true, true, true, false};
  for (std::size_t i = 0; i < p.node_costs.size(); ++i) {
    const auto& c = p.node_costs[i];
    const double none = std::numeric_limits<double>::quiet_NaN();  // an empty CSV cell
    ct.rows.push_back({std::to_string(i + 1), c.node_type, Cell(std::to_string(c.up_hours), c.up_hours),
                       money(c.on_demand.value()),
                       c.committed ? money(c.committed->value()) : Cell("not priced", none, p.currency_note),
                       c.break_even_hours ? count(*c.break_even_hours) : Cell("-", none),
                       c.commit ? "committed" : "on demand"});
  }
  cost.tables.push_back(std::move(ct));
  const double weeks = p.horizon.value() / (7 * units::day);
  Table et;
  et.columns = {"the estate", "per week" + cur, "over " + significant(weeks, 3) + " weeks" + cur};
  et.right_align = {false, true, true};
  et.rows.push_back({"each node at the cheaper of on demand and committed", money(p.best_weekly_cost.value()),
                     money(p.best_horizon_cost.value())});
  et.rows.push_back({"all on demand, nodes up only while their pods run", money(p.weekly_cost.value()),
                     money(p.horizon_cost.value())});
  et.rows.push_back({"all on demand, every pool at its maximum 24/7", money(p.always_on_weekly_cost.value()),
                     money(p.always_on_horizon_cost.value())});
  cost.tables.push_back(std::move(et));
  {
    Table wt{{"pool", "GPU-hours/week", "idle", "idle cost/week" + cur, "of the weekly cost"}, {}, {false, true, true, true, true}};
    for (const auto& w : pool_waste(p)) {
      const double share = 100 * (p.weekly_cost.value() > 0 ? w.idle_cost / p.weekly_cost.value() : 0.0);
      wt.rows.push_back({w.node_type, Cell(significant(w.gpu_hours, 4), w.gpu_hours),
                         Cell(significant(100 * w.idle_fraction(), 3) + " %", 100 * w.idle_fraction(), "%"),
                         money(w.idle_cost), Cell(significant(share, 3) + " %", share, "%")});
    }
    cost.tables.push_back(std::move(wt));
  }
  if (!p.prices.empty()) {
    Table pt{{"price", "value", "as of", "origin"}, {}, {false, true, false, false}};
    for (const auto& price : p.prices)
      pt.rows.push_back({price.entry + " " + price.field, price.value, price.as_of,
                         std::string(price.user_quote() ? "your quote" : "catalog") + (price.stale ? ", stale" : "")});
    cost.tables.push_back(std::move(pt));
  }
  for (const auto& c : p.owned) {
    Table ot;
    ot.columns = {c.node_type + " (" + std::to_string(c.gpus) + " x " + c.gpu + ", up " + significant(100 * c.busy, 3) + " %)",
                  "servers or nodes", "over the horizon" + cur, "owning pays above", "cash break-even month"};
    ot.right_align = {false, true, true, true, true};
    for (std::size_t i = 0; i < c.options.size(); ++i) {
      Cell pays, month;
      if (i > 0) {
        const auto& u = c.break_even_utilization[i - 1];
        const auto& m = c.break_even_month[i - 1];
        pays = u ? Cell(significant(100 * *u, 3) + " % busy", 100 * *u, "%") : Cell("never");
        month = m ? Cell(std::to_string(*m), *m) : Cell("none in 10 years");
      }
      ot.rows.push_back({c.options[i] + (static_cast<int>(i) == c.cheapest ? " (cheapest)" : ""),
                         Cell(std::to_string(c.servers[i]), c.servers[i]), money(c.totals[i].value()), pays, month});
    }
    cost.tables.push_back(std::move(ot));
  }
  ReportSection text{"plan", "The plan as capsim plan prints it", {}, {}, {}, cluster_plan_text(p)};
  doc.sections = {std::move(workloads), std::move(pools), std::move(timeline), std::move(cost), std::move(text)};
  doc.footer = "capsim " + std::string(CAPSIM_VERSION) + ", capsim plan";
  return doc;
}

std::string cluster_plan_json(const ClusterPlan& p) {
  nlohmann::json waste = nlohmann::json::array();
  for (const auto& w : pool_waste(p))
    waste.push_back({{"node_type", w.node_type},
                     {"gpu_hours_per_week", w.gpu_hours},
                     {"idle_gpu_hours_per_week", w.idle_gpu_hours},
                     {"idle_fraction", w.idle_fraction()},
                     {"idle_weekly_cost", w.idle_cost},
                     {"idle_share_of_weekly_cost", p.weekly_cost.value() > 0 ? w.idle_cost / p.weekly_cost.value() : 0.0}});
  nlohmann::json smaller = nlohmann::json::array();
  for (const auto& n : p.smaller_nodes)
    smaller.push_back({{"pool", n.pool},
                       {"idle_fraction", n.idle_fraction},
                       {"node_type", n.node_type.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.node_type)},
                       {"gpus_per_node", n.node_type.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.gpus_per_node)},
                       {"provider", n.node_type.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.provider)},
                       {"weekly_cost", n.node_type.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.weekly_cost.value())}});
  nlohmann::json prices = nlohmann::json::array();
  for (const auto& price : p.prices)
    prices.push_back({{"entry", price.entry},
                      {"field", price.field},
                      {"value", price.value},
                      {"as_of", price.as_of.empty() ? nlohmann::json(nullptr) : nlohmann::json(price.as_of)},
                      {"your_quote", price.user_quote()},
                      {"stale", price.stale}});
  nlohmann::json workloads = nlohmann::json::array();
  for (std::size_t i = 0; i < p.workloads.size(); ++i) {
    const auto& w = p.workloads[i];
    std::vector<double> gpus(p.gpus_per_hour[i].begin(), p.gpus_per_hour[i].end());
    workloads.push_back({{"name", w.name},   {"kind", w.kind},           {"gpu", w.gpu},
                         {"demand", w.demand}, {"hours", w.hours_text}, {"active_hours_per_week", w.active_hours},
                         {"from", w.source}, {"gpus_per_hour", gpus}});
  }
  nlohmann::json pools = nlohmann::json::array();
  for (const auto& pool : p.packing.pools)
    pools.push_back({{"node_type", pool.node_type}, {"min_nodes", pool.min_nodes}, {"max_nodes", pool.max_nodes}});
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : p.packing.nodes) {
    nlohmann::json pods = nlohmann::json::array();
    for (const auto& pod : n.pods)
      pods.push_back({{"workload", pod.workload}, {"index", pod.index}, {"gpus", pod.gpus}, {"share", pod.share},
                      {"hours_per_week", pod.active.count()}});
    nodes.push_back({{"node_type", n.node_type}, {"up_hours_per_week", n.up.count()}, {"pods", pods}});
  }
  std::vector<int> up(p.packing.nodes_up.begin(), p.packing.nodes_up.end());
  nlohmann::json owned = nlohmann::json::array();
  for (const auto& c : p.owned) {
    nlohmann::json options = nlohmann::json::array();
    for (std::size_t i = 0; i < c.options.size(); ++i) {
      nlohmann::json o = {{"name", c.options[i]}, {"servers_or_nodes", c.servers[i]}, {"horizon_cost", c.totals[i].value()}};
      if (i > 0) {
        o["break_even_utilization"] = c.break_even_utilization[i - 1] ? nlohmann::json(*c.break_even_utilization[i - 1]) : nlohmann::json();
        o["break_even_month"] = c.break_even_month[i - 1] ? nlohmann::json(*c.break_even_month[i - 1]) : nlohmann::json();
      }
      options.push_back(std::move(o));
    }
    owned.push_back({{"node_type", c.node_type}, {"gpu", c.gpu}, {"gpus", c.gpus}, {"busy", c.busy},
                     {"options", options}, {"cheapest", c.cheapest}});
  }
  nlohmann::json node_costs = nlohmann::json::array();
  for (const auto& c : p.node_costs) {
    nlohmann::json j = {{"node_type", c.node_type}, {"up_hours_per_week", c.up_hours}, {"on_demand", c.on_demand.value()},
                        {"committed_1yr", nullptr}, {"break_even_hours_per_week", nullptr}, {"commit", c.commit}};
    if (c.committed) j["committed_1yr"] = c.committed->value();
    if (c.break_even_hours) j["break_even_hours_per_week"] = *c.break_even_hours;
    j["spot"] = c.spot ? nlohmann::json(c.spot->value()) : nlohmann::json();
    j["training_only"] = c.training;
    node_costs.push_back(std::move(j));
  }
  nlohmann::json j = {{"schema", kClusterPlanSchema},
                      {"name", p.name},
                      {"currency", p.currency_note},
                      {"solver", p.packing.solver},
                      {"workloads", workloads},
                      {"pools", pools},
                      {"nodes", nodes},
                      {"nodes_up_per_hour", up},
                      {"node_costs", node_costs},
                      {"weekly_cost", p.weekly_cost.value()},
                      {"best_weekly_cost", p.best_weekly_cost.value()},
                      {"best_horizon_cost", p.best_horizon_cost.value()},
                      {"spot_training_weekly_cost", p.spot_training_weekly_cost.value()},
                      {"always_on_weekly_cost", p.always_on_weekly_cost.value()},
                      {"horizon_weeks", p.horizon.value() / (7 * units::day)},
                      {"horizon_cost", p.horizon_cost.value()},
                      {"always_on_horizon_cost", p.always_on_horizon_cost.value()},
                      {"owned", owned},
                      {"pool_waste", waste},
                      {"smaller_nodes", smaller},
                      {"prices", prices},
                      {"warnings", p.warnings}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace capsim::scenarios
