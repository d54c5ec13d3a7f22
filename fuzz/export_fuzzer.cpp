// Fuzzes what capsim emits from a cluster file and export flags (issue 47): a cluster file
// that loads is planned and exported to every target (k8s, karpenter, gke, terraform), its
// pools also through `capsim export`'s exporter with fuzzed --cluster, --location and --image,
// and its reports rendered as text, JSON, Markdown and CSV. Aborts when an output does not
// parse or holds anything but what it should:
//   k8s, karpenter  yaml-cpp reads the stream; a comment header, then only documents of the
//                   kinds capsim writes, each named; one JobSet per training workload and one
//                   Deployment per service (cluster plans), one workload object per pool
//                   (capsim export), one NodePool per pool and one EC2NodeClass (karpenter)
//   terraform       nlohmann::json reads it; one google_container_node_pool per pool
//   gke             a small sh tokenizer (quotes, comments, line continuations) reads every
//                   line as the shebang, a comment, `set -e` or one pool's
//                   `gcloud container node-pools create` with --flag words only: no other
//                   command, no unquoted ; & | < > ( ) $ or backquote; one command per pool
//   text, errors    no control character; JSON parses; Markdown has no raw '<' outside
//                   code fences; no CSV cell a spreadsheet would read as a formula
// (`sh -n` itself runs on sample scripts in tests/reliability/issue47_injection_test.cpp.)
//
// Input: a cluster file, optionally followed by a line "#--flags" and up to three lines, the
// values of --cluster, --location and --image. The file is read as if it were in
// scenarios/clusters/, so its scenario: entries reach the shipped workloads/ and nothing else.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "capsim/core/text.hpp"
#include "capsim/hardware/loader.hpp"
#include "capsim/scenarios/cluster.hpp"
#include "capsim/scenarios/cluster_export.hpp"
#include "capsim/scenarios/escape.hpp"
#include "capsim/scenarios/export.hpp"
#include "capsim/scenarios/report.hpp"

namespace {

using namespace capsim;
using namespace capsim::scenarios;

const hardware::Catalog& shipped_catalog() {
  static const hardware::Catalog catalog = [] {
    auto loaded = hardware::load_catalog_dir(CAPSIM_FUZZ_DATA_DIR "/catalog");
    if (!loaded) {
      std::cerr << format_diagnostics(loaded.errors());
      std::abort();
    }
    return std::move(loaded).value();
  }();
  return catalog;
}

[[noreturn]] void fail(const std::string& what, const std::string& detail) {
  std::cerr << "export invariant broken: " << what << ":\n" << detail.substr(0, 2000) << "\n";
  std::abort();
}

void no_control_character(const std::string& what, const std::string& text) {
  if (const auto bad = first_control_character(text, true)) fail(what + " holds " + code_point_name(bad->code), text);
}

void check_errors(const std::string& what, const std::vector<Diagnostic>& errors) {
  if (errors.empty()) fail(what + " failed without an error", "");
  for (const auto& d : errors) {
    // One line, shown as printable() shows text (a tab stays a tab).
    const std::string line = format_diagnostic(d);
    if (line.find('\n') != std::string::npos) fail(what + ": an error of more than one line", line);
    if (const auto bad = first_control_character(line, true)) fail(what + ": an error holds " + code_point_name(bad->code), line);
  }
}

// ---- YAML streams.

std::vector<YAML::Node> yaml_documents(const std::string& what, const std::string& text) {
  // The header: comment lines up to the first document.
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line) && line != "---";)
    if (!line.starts_with("#")) fail(what + ": a header line is no comment", line);
  std::vector<YAML::Node> docs;
  try {
    for (const auto& d : YAML::LoadAll(text))
      if (!d.IsNull()) docs.push_back(d);
  } catch (const YAML::Exception& e) {
    fail(what + ": yaml-cpp cannot read it (" + e.msg + ")", text);
  }
  static const std::set<std::string> kinds = {"ResourceFlavor", "ClusterQueue", "LocalQueue", "JobSet",
                                              "Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget",
                                              "NodePool", "EC2NodeClass", "Job", "LeaderWorkerSet"};
  for (const auto& d : docs) {
    if (!d.IsMap() || !d["kind"] || !d["kind"].IsScalar() || !kinds.contains(d["kind"].Scalar()))
      fail(what + ": a document of no kind capsim writes", text);
    if (!d["metadata"]["name"] || !d["metadata"]["name"].IsScalar() || !is_dns1123_subdomain(d["metadata"]["name"].Scalar()))
      fail(what + ": a document without a DNS-1123 name", text);
  }
  return docs;
}

std::size_t count_kind(const std::vector<YAML::Node>& docs, const std::string& kind) {
  std::size_t n = 0;
  for (const auto& d : docs) n += d["kind"].Scalar() == kind;
  return n;
}

// ---- The gke script, read as sh reads it: words, quotes, comments, continued lines.

struct Command {
  std::vector<std::string> words;  // unquoted
};

std::vector<Command> sh_commands(const std::string& script) {
  std::vector<Command> commands;
  Command current;
  std::string word;
  bool in_word = false;
  auto end_word = [&] {
    if (in_word) current.words.push_back(word);
    word.clear();
    in_word = false;
  };
  auto end_command = [&] {
    end_word();
    if (!current.words.empty()) commands.push_back(current);
    current = {};
  };
  for (std::size_t i = 0; i < script.size(); ++i) {
    const char c = script[i];
    if (c == '\'') {
      const auto close = script.find('\'', i + 1);
      if (close == std::string::npos) fail("gke: an unclosed quote", script);
      word += script.substr(i + 1, close - i - 1);
      in_word = true;
      i = close;
    } else if (c == '\\') {
      if (i + 1 < script.size() && script[i + 1] == '\n') {
        ++i;  // a continued line
        continue;
      }
      fail("gke: a backslash that continues no line", script);
    } else if (c == '#' && !in_word) {
      i = script.find('\n', i);
      if (i == std::string::npos) break;
      end_command();
    } else if (c == '\n') {
      end_command();
    } else if (c == ' ' || c == '\t') {
      end_word();
    } else if (std::string_view(";&|<>()$`\"*?[]~{}").find(c) != std::string_view::npos) {
      fail(std::string("gke: an unquoted '") + c + "'", script);
    } else {
      word += c;
      in_word = true;
    }
  }
  end_command();
  return commands;
}

void check_gke(const std::string& script, const std::vector<NodePool>& pools, const ExportSettings& s) {
  if (!script.starts_with("#!/bin/sh\n")) fail("gke: no shebang", script);
  const auto commands = sh_commands(script);
  if (commands.empty() || commands[0].words != std::vector<std::string>{"set", "-e"}) fail("gke: set -e is not first", script);
  if (commands.size() != pools.size() + 1) fail("gke: not one command per pool", script);
  for (std::size_t i = 1; i < commands.size(); ++i) {
    const auto& w = commands[i].words;
    if (w.size() < 6 || w[0] != "gcloud" || w[1] != "container" || w[2] != "node-pools" || w[3] != "create")
      fail("gke: a command that is not gcloud container node-pools create", script);
    if (w[4] != pools[i - 1].name) fail("gke: the pool's name is not one word", script);
    for (std::size_t k = 5; k < w.size(); ++k)
      if (!w[k].starts_with("--")) fail("gke: a word that is no flag: " + w[k], script);
    if (std::find(w.begin(), w.end(), "--cluster=" + s.cluster) == w.end()) fail("gke: --cluster is not the one given", script);
    if (std::find(w.begin(), w.end(), "--location=" + s.location) == w.end()) fail("gke: --location is not the one given", script);
  }
}

// ---- Reports.

void check_markdown(const std::string& md) {
  std::istringstream lines(md);
  std::string fence;
  for (std::string line; std::getline(lines, line);) {
    if (!fence.empty()) {
      if (line == fence) fence.clear();
      continue;
    }
    if (line.starts_with("```")) {
      fence = line.substr(0, line.find_first_not_of('`'));
      continue;
    }
    if (line.find('<') != std::string::npos) fail("markdown: a raw '<' outside a code block", line);
  }
}

// RFC 4180 cells of a CSV text; every one that starts like a formula must be a number.
void check_csv(const std::string& csv) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false;
  auto end_cell = [&] {
    cells.push_back(cell);
    cell.clear();
  };
  for (std::size_t i = 0; i < csv.size(); ++i) {
    const char c = csv[i];
    if (quoted) {
      if (c == '"' && i + 1 < csv.size() && csv[i + 1] == '"') cell += '"', ++i;
      else if (c == '"') quoted = false;
      else cell += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',' || c == '\n') {
      end_cell();
    } else if (c != '\r') {
      cell += c;
    }
  }
  if (quoted) fail("csv: an unclosed quote", csv);
  end_cell();
  for (const auto& x : cells)
    if (!x.empty() && std::string_view("=+-@\t\r").find(x.front()) != std::string_view::npos && !is_plain_number(x) && x != "-")
      fail("csv: a cell a spreadsheet reads as a formula", x);
}

// ---- The pools of a cluster plan, as `capsim export` would take them.

std::vector<NodePool> pools_of(const ClusterPlan& plan) {
  std::vector<NodePool> pools;
  for (const auto& b : plan.packing.pools)
    for (std::size_t i = 0; i < plan.problem.node_types.size() && i < plan.node_type_sources.size(); ++i) {
      if (plan.problem.node_types[i].id != b.node_type) continue;
      NodePool p;
      p.name = dns1123_label(b.node_type);
      p.provider = plan.node_type_sources[i].provider;
      p.instance_type = plan.node_type_sources[i].instance_type;
      p.gpu_id = plan.problem.node_types[i].gpu.id;
      p.gpus_per_node = plan.problem.node_types[i].gpus_per_node;
      p.min_nodes = b.min_nodes;
      p.max_nodes = p.nodes = b.max_nodes;
      pools.push_back(p);
    }
  return pools;
}

void export_pools(const ClusterPlan& plan, const ExportSettings& settings) {
  const auto pools = pools_of(plan);
  for (auto format : {ExportFormat::gke, ExportFormat::karpenter, ExportFormat::terraform, ExportFormat::k8s, ExportFormat::eks}) {
    auto out = export_node_pools(pools, format, settings);
    if (!out) {
      check_errors("export_node_pools", out.errors());
      continue;
    }
    if (!check_export_settings(settings, format).empty()) fail("an export with settings its checks refuse", *out);
    no_control_character("export_node_pools", *out);
    switch (format) {
      case ExportFormat::gke: check_gke(*out, pools, settings); break;
      case ExportFormat::terraform: {
        const auto j = nlohmann::json::parse(*out, nullptr, false);
        if (j.is_discarded() || j["resource"]["google_container_node_pool"].size() != pools.size())
          fail("terraform: not JSON of one resource per pool", *out);
        break;
      }
      case ExportFormat::karpenter: {
        const auto docs = yaml_documents("karpenter", *out);
        if (count_kind(docs, "NodePool") != pools.size() || count_kind(docs, "EC2NodeClass") != 1)
          fail("karpenter: not one NodePool per pool and one EC2NodeClass", *out);
        break;
      }
      case ExportFormat::eks: {
        const auto j = nlohmann::json::parse(*out, nullptr, false);
        if (j.is_discarded() || j["resource"]["aws_eks_node_group"].size() != pools.size())
          fail("eks: not JSON of one aws_eks_node_group per pool", *out);
        break;
      }
      case ExportFormat::k8s: {
        const auto docs = yaml_documents("k8s", *out);
        if (docs.size() != pools.size()) fail("k8s: not one workload object per pool", *out);
        for (const auto& d : docs)
          for (const auto& c : d["spec"]["template"]["spec"]["containers"])
            if (c["image"].Scalar() != settings.image) fail("k8s: the image is not the one given", *out);
        break;
      }
    }
  }
}

void export_plan(const ClusterPlan& plan, const std::string& location) {
  std::size_t training = 0;
  for (const auto& w : plan.problem.workloads) training += w.is_training ? 1 : 0;
  for (const char* target : {"k8s", "karpenter", "gke", "terraform"}) {
    auto out = cluster_export(plan, target, location);
    if (!out) {
      check_errors(std::string("cluster_export ") + target, out.errors());
      continue;
    }
    no_control_character(target, *out);
    const std::string t = target;
    if (t == "k8s") {
      const auto docs = yaml_documents("k8s", *out);
      if (count_kind(docs, "JobSet") != training || count_kind(docs, "Deployment") != plan.problem.workloads.size() - training)
        fail("k8s: not one JobSet per training workload and one Deployment per service", *out);
    } else if (t == "karpenter") {
      const auto docs = yaml_documents("karpenter", *out);
      if (count_kind(docs, "NodePool") != plan.packing.pools.size()) fail("karpenter: not one NodePool per pool", *out);
    } else if (t == "gke") {
      if (sh_commands(*out).size() != plan.packing.pools.size() + 1) fail("gke: not one command per pool", *out);
    } else {
      const auto j = nlohmann::json::parse(*out, nullptr, false);
      if (j.is_discarded() || j["resource"]["google_container_node_pool"].size() != plan.packing.pools.size())
        fail("terraform: not JSON of one resource per pool", *out);
    }
  }
}

// The budget of one input: the packer's own budget is not what this target explores.
bool small_enough(const ClusterScenario& s) {
  if (s.workloads.size() > 8) return false;
  for (const auto& w : s.workloads)
    if (w.replicas > 64 || w.gpus > 64 || w.min_replicas > 64) return false;
  return true;
}

std::string line_of(std::istringstream& in) {
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 16 * 1024) return 0;  // real cluster files are a few KB
  std::string text(reinterpret_cast<const char*>(data), size);
  ExportSettings settings;
  settings.location = "us-central1";
  if (const auto marker = text.find("\n#--flags\n"); marker != std::string::npos) {
    std::istringstream flags(text.substr(marker + 10));
    settings.cluster = line_of(flags);
    settings.location = line_of(flags);
    settings.image = line_of(flags);
    text.resize(marker + 1);
  }
  auto cluster = load_cluster(CAPSIM_FUZZ_CLUSTERS_DIR "/fuzz.yaml", text, shipped_catalog());
  if (!cluster) {
    check_errors("load_cluster", cluster.errors());
    return 0;
  }
  if (!small_enough(*cluster)) return 0;
  auto plan = plan_cluster(*cluster, shipped_catalog());
  if (!plan) {
    check_errors("plan_cluster", plan.errors());
    return 0;
  }
  no_control_character("cluster_plan_text", cluster_plan_text(*plan));
  if (!nlohmann::json::accept(cluster_plan_json(*plan))) fail("cluster_plan_json is not JSON", cluster_plan_json(*plan));
  const ReportDocument report = cluster_report(*plan);
  check_markdown(report_markdown(report));
  for (const auto& t : report_tables(report)) check_csv(render_csv(*t.table));  // one CSV per table
  export_plan(*plan, settings.location);
  settings.notes = {{"capsim.dev/cluster-plan", plan->name}};
  export_pools(*plan, settings);
  return 0;
}
