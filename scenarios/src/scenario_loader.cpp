#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "capsim/core/files.hpp"
#include "capsim/core/text.hpp"
#include "capsim/core/suggest.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "capsim/scenarios/schema.hpp"

namespace capsim::scenarios {

std::string_view commitment_name(Commitment c) {
  switch (c) {
    case Commitment::on_demand: return "on_demand";
    case Commitment::spot: return "spot";
    case Commitment::reserved_1yr: return "reserved_1yr";
    case Commitment::reserved_3yr: return "reserved_3yr";
  }
  return "";
}

std::string_view commitment_price_field(Commitment c) {
  switch (c) {
    case Commitment::on_demand: return "price.on_demand";
    case Commitment::spot: return "price.spot";
    case Commitment::reserved_1yr: return "price.reserved_1yr";
    case Commitment::reserved_3yr: return "price.reserved_3yr";
  }
  return "";
}

namespace {

std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "'" + n.Scalar() + "'";
    default: return "nothing";
  }
}

// What a file's top level is, without its content: "a single value (not shown)".
std::string describe_root(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      return "a mapping of " + plural(static_cast<long long>(n.size()), "key") +
             ", none of them a scenario's or close to one (the file's content is not shown)";
    case YAML::NodeType::Sequence: return "a list (the file's content is not shown)";
    case YAML::NodeType::Scalar: return "a single value (the file's content is not shown)";
    default: return "nothing";
  }
}

// Whether a top-level mapping is a scenario at all: one of its keys is a scenario's, or close
// enough to one to be a typo of it. A mapping that is not (a JSON credentials file, a
// docker config) gets one error that shows none of its keys.
bool has_scenario_key(const YAML::Node& root) {
  const std::vector<std::string> known = scenario_schema().child_names();
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (!it->first.IsScalar()) continue;
    const std::string& key = it->first.Scalar();
    if (std::find(known.begin(), known.end(), key) != known.end() || !did_you_mean(key, known).empty()) return true;
  }
  return false;
}

bool parse_double(const std::string& s, double& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size() && std::isfinite(out);
}

// Limits exactly as the schema holds them (16777216, not 16777200), never in exponent form.
std::string number_text(double v) { return significant(v, 12); }

// Notes where the second document of a stream starts and whether it holds anything.
class DocumentMarks : public YAML::EventHandler {
 public:
  YAML::Mark second;
  bool empty_second = true;
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ == 2) second = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { content(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { content(m); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    content(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    content(m);
  }
  void OnMapEnd() override {}

 private:
  void content(const YAML::Mark& m) {
    if (documents_ == 2 && empty_second) {
      empty_second = false;
      second = m;
    }
  }
  int documents_ = 0;
};

}  // namespace

std::optional<Diagnostic> second_document(const std::string& file, const std::string& text) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentMarks marks;
  if (parser.HandleNextDocument(marks) && parser.HandleNextDocument(marks) && !marks.empty_second)
    return Diagnostic{{file, marks.second.line + 1, marks.second.column + 1}, "",
                      "a scenario file holds one YAML document; a second one starts here",
                      "remove the '---' and what follows, or put each scenario in a file of its own"};
  return std::nullopt;
}

namespace {

class Loader {
 public:
  Loader(std::string file, const hardware::Catalog& catalog) : file_(std::move(file)), catalog_(catalog) {}

  Result<Scenario> load(const std::string& text) {
    YAML::Node root;
    try {
      // The first document is the scenario; a second one, even a broken one, is an error,
      // not ignored. Documents are walked one at a time and at most two are looked at:
      // yaml-cpp 0.7's LoadAll can loop forever on some malformed streams (found by
      // fuzz_scenario), so it is not used.
      root = YAML::Load(text);
      if (auto second = second_document(file_, text)) {
        errors_.push_back(*second);
        return errors_;
      }
    } catch (const YAML::Exception& e) {
      return Diagnostic{{file_, e.mark.line + 1, e.mark.column + 1}, "", "invalid YAML: " + e.msg, ""};
    }
    if (!root.IsMap()) {
      if (root.IsNull()) {  // an empty file has no position of its own
        errors_.push_back({{file_, 1, 1}, "", "expected a scenario (a mapping with name:, workload:, hardware:), got nothing", ""});
        return errors_;
      }
      // Never the content: the file may be any file of the machine (/etc/passwd, a .env).
      error(root, "", "expected a scenario (a mapping with name:, workload:, hardware:), got " + describe_root(root));
      return errors_;
    }
    if (root.size() > 0 && !has_scenario_key(root)) {
      error(root, "", "expected a scenario (a mapping with name:, workload:, hardware:), got " + describe_root(root));
      return errors_;
    }
    check_shape(root);
    if (!errors_.empty()) {
      check_the_rest(root);
      return errors_;
    }
    Scenario s;
    try {
      s = build(root);
    } catch (const YAML::Exception& e) {
      // A key the checks above should have caught: an error naming the place, not a crash.
      errors_.push_back({{file_, e.mark.line >= 0 ? e.mark.line + 1 : 1, e.mark.column >= 0 ? e.mark.column + 1 : 1},
                         "",
                         std::string("cannot read the scenario: ") + e.msg,
                         "please report this input as a capsim bug"});
      return errors_;
    }
    s.text = text;
    if (!errors_.empty()) return errors_;
    return s;
  }

 private:
  void error(const YAML::Node& at, std::string path, std::string message, std::string hint = {}) {
    const YAML::Mark m = at.Mark();
    errors_.push_back({{file_, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0},
                       std::move(path),
                       std::move(message),
                       std::move(hint)});
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  // Phase 1 over the whole scenario: the schema, the station budget, the name.
  void check_shape(const YAML::Node& root) {
    validate(root, scenario_schema(), "");
    check_station_budget(root["deployment"]);
    if (const auto name = root["name"]; name && name.IsScalar()) {
      if (name.Scalar().empty()) error(name, "name", "must not be empty", "name the scenario, e.g. name: llama-70b-pretrain");
      else if (name.Scalar().find_first_of("\n\t") != std::string::npos)
        error(name, "name", "must be one line (no newline or tab)");
    }
  }

  // Phase 1 found errors. When every one is an unknown key, phase 2 (build's cross-field
  // checks) still runs, on the tree without those keys, so a typo does not hide the other
  // errors. A stray key (like no known one) never feeds phase 2, so taking it out changes
  // nothing else; a typo of a known key leaves that key at its default, so phase-2 errors on
  // the mapping that held it and on its keys are dropped rather than blamed on a default (a
  // misspelt required key would come back as "missing"). After an unknown key inside a list
  // entry, or a bad value, phase 2 waits until it is fixed: taking out the list or the key
  // could raise errors anywhere (a graph without its stages makes the deployment's wrong).
  void check_the_rest(YAML::Node root) {
    std::vector<Diagnostic> first = std::move(errors_);
    errors_.clear();
    std::vector<std::string> unsure;  // mappings whose phase-2 errors may come from a default
    for (const auto& d : first) {
      if (d.key_path.empty() || d.key_path.find('[') != std::string::npos || d.message.rfind("unknown key '", 0) != 0) {
        errors_ = std::move(first);
        return;
      }
      remove_key(root, d.key_path);
      const auto dot = d.key_path.rfind('.');
      if (!d.hint.empty()) unsure.push_back(dot == std::string::npos ? "" : d.key_path.substr(0, dot));  // a typo
    }
    check_shape(root);
    std::vector<Diagnostic> second;
    if (errors_.empty()) {
      try {
        (void)build(root);
        second = std::move(errors_);
      } catch (const YAML::Exception&) {
      }
    }
    errors_ = std::move(first);
    for (auto& d : second) {
      const std::string at = d.key_path.substr(0, d.key_path.find('['));
      const auto dot = at.rfind('.');
      const std::string parent = dot == std::string::npos ? "" : at.substr(0, dot);
      const bool in_unsure = std::any_of(unsure.begin(), unsure.end(),
                                         [&](const std::string& m) { return at == m || parent == m; });
      if (!in_unsure) errors_.push_back(std::move(d));
    }
  }

  // Takes the key at a dotted path ("workload.global_bach") out of its mapping. The node is
  // passed by value: a copy refers to the same node, where assigning one would write through.
  static void remove_key(YAML::Node node, std::string_view path) {
    if (!node.IsMap()) return;
    const auto dot = path.find('.');
    if (dot == std::string_view::npos) {
      node.remove(std::string(path));
      return;
    }
    remove_key(node[std::string(path.substr(0, dot))], path.substr(dot + 1));
  }

  // Phase 1: shape, types, units and ranges against the schema.
  void validate(const YAML::Node& node, const SchemaNode& schema, const std::string& path) {
    switch (schema.kind) {
      case ValueKind::map: validate_map(node, schema, path); return;
      case ValueKind::length:
        if (node.IsMap()) validate_map(node, schema, path);
        else if (node.IsScalar()) validate_scalar(node, schema, path);
        else error(node, path, "expected a whole number of tokens or a distribution mapping, got " + describe(node),
                   "e.g. 256, or {distribution: exponential, mean: 256}");
        return;
      case ValueKind::model:
        if (node.IsMap()) validate_map(node, schema, path);
        else if (!node.IsScalar()) error(node, path, "expected a preset name or a shape mapping, got " + describe(node));
        return;
      case ValueKind::list:
        if (!node.IsSequence()) {
          error(node, path, "expected a list, got " + describe(node), "write [a, b] or one '- item' per line");
          return;
        }
        if (node.size() == 0) error(node, path, "expected at least one item");
        if (schema.maximum > 0 && static_cast<double>(node.size()) > schema.maximum) {
          error(node, path, "has " + std::to_string(node.size()) + " items, more than the limit of " +
                                number_text(schema.maximum) + " (the work grows faster than linearly with them)");
          return;
        }
        for (std::size_t i = 0; i < node.size(); ++i)
          validate(node[i], schema.children.at(0), path + "[" + std::to_string(i) + "]");
        return;
      default: validate_scalar(node, schema, path); return;
    }
  }

  void validate_map(const YAML::Node& node, const SchemaNode& schema, const std::string& path) {
    if (!node.IsMap()) {
      error(node, path, "expected a mapping, got " + describe(node));
      return;
    }
    std::set<std::string> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
      const std::string key_path = join(path, key);
      if (!seen.insert(key).second) {
        error(it->first, key_path, "duplicate key '" + key + "'");
        continue;
      }
      const SchemaNode* child = schema.child(key);
      if (child == nullptr) {
        const std::string where = path.empty() ? "at the top level" : "in '" + path + "'";
        error(it->first, key_path, "unknown key '" + key + "' " + where, did_you_mean(key, schema.child_names()));
        continue;
      }
      validate(it->second, *child, key_path);
    }
    for (const auto& c : schema.children)
      if (c.required && !seen.contains(c.name))
        error(node, path, "missing required key '" + c.name + "'" + (c.help.empty() ? "" : " (" + c.help + ")"));
  }

  bool in_range(const SchemaNode& schema, double v) const {
    return (schema.minimum == 0 && schema.maximum == 0) || (v >= schema.minimum && v <= schema.maximum);
  }

  std::string range_text(const SchemaNode& schema) const {
    return "between " + number_text(schema.minimum) + " and " + number_text(schema.maximum);
  }

  void validate_scalar(const YAML::Node& node, const SchemaNode& schema, const std::string& path) {
    if (!node.IsScalar()) {
      error(node, path, "expected a single value, got " + describe(node));
      return;
    }
    const std::string& text = node.Scalar();
    // ESC, CR, NUL, a right-to-left override and the like would reach terminals, reports
    // and JUnit XML raw.
    if (const auto bad = first_control_character(text, true)) {
      error(node, path, "contains the control character " + code_point_name(bad->code),
            "remove it; scenario text is printed to terminals and written to reports");
      return;
    }
    switch (schema.kind) {
      case ValueKind::text: return;
      case ValueKind::choice:
        if (std::find(schema.choices.begin(), schema.choices.end(), text) == schema.choices.end()) {
          std::string options;
          for (const auto& c : schema.choices) options += (options.empty() ? "" : ", ") + c;
          error(node, path, "expected one of " + options + ", got '" + text + "'", did_you_mean(text, schema.choices));
        }
        return;
      case ValueKind::quantity: {
        auto q = parse_quantity(text);
        if (!q) {
          for (const auto& d : q.errors()) error(node, path, d.message, d.hint);
          return;
        }
        if (!(q->dim == schema.dim)) {
          error(node, path, "expected " + describe_dimension(schema.dim) + ", got " + describe_dimension(q->dim) +
                                " ('" + text + "')");
          return;
        }
        const bool ratio = schema.dim == dims::none;
        if (ratio ? q->value_si < 0 : q->value_si <= 0)
          error(node, path, std::string("must be ") + (ratio ? "zero or more" : "greater than zero") + ", got '" +
                                text + "'");
        else if (!in_range(schema, q->value_si))
          error(node, path, "must be between " + to_string(ParsedQuantity{schema.minimum, schema.dim, Currency::none}) +
                                " and " + to_string(ParsedQuantity{schema.maximum, schema.dim, Currency::none}) +
                                ", got '" + text + "'");
        return;
      }
      case ValueKind::count: {
        auto c = parse_count(text);
        if (!c) {
          for (const auto& d : c.errors()) error(node, path, d.message, d.hint);
        } else if (*c <= 0) {
          error(node, path, "must be greater than zero, got '" + text + "'");
        } else if (!in_range(schema, *c)) {
          error(node, path, "must be between " + number_text(schema.minimum) + " and " + number_text(schema.maximum) +
                                ", got '" + text + "'");
        }
        return;
      }
      case ValueKind::length:
      case ValueKind::integer: {
        long long v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc{} || end != text.data() + text.size()) {
          error(node, path, "expected a whole number, got '" + text + "'");
        } else if (!in_range(schema, static_cast<double>(v))) {
          error(node, path, "must be " + range_text(schema) + ", got " + text);
        }
        return;
      }
      case ValueKind::number: {
        double v = 0;
        if (!parse_double(text, v)) error(node, path, "expected a number, got '" + text + "'");
        else if (!in_range(schema, v)) error(node, path, "must be " + range_text(schema) + ", got " + text);
        return;
      }
      case ValueKind::boolean:
        if (text != "true" && text != "false") error(node, path, "expected true or false, got '" + text + "'");
        return;
      case ValueKind::catalog_id:
        if (!hardware::is_valid_id(text))
          error(node, path, "invalid id '" + text + "'", "catalog ids are lowercase with hyphens, e.g. 'h100-sxm-80gb'");
        return;
      default: return;
    }
  }

  // Phase 2: the values, checked against presets and the catalog. Phase 1 passed, so
  // every conversion below succeeds.
  static long long as_int(const YAML::Node& n) { return std::stoll(n.Scalar()); }
  static double as_quantity(const YAML::Node& n) { return parse_quantity(n.Scalar())->value_si; }
  static double as_count(const YAML::Node& n) { return *parse_count(n.Scalar()); }

  template <class T, class F>
  static void read_list(const YAML::Node& n, std::vector<T>& out, F convert) {
    if (!n) return;
    out.clear();
    for (std::size_t i = 0; i < n.size(); ++i) out.push_back(convert(n[i]));
  }

  // Every key of the file and where it is (Scenario::key_at).
  void record_keys(const YAML::Node& n, const std::string& path, std::map<std::string, SourceLocation>& at) const {
    auto place = [&](const std::string& key, const YAML::Mark& m) {
      at.emplace(key, SourceLocation{file_, m.line + 1, m.column + 1});
    };
    if (n.IsMap()) {
      for (auto it = n.begin(); it != n.end(); ++it) {
        if (!it->first.IsScalar()) continue;
        const std::string key = path.empty() ? it->first.Scalar() : path + "." + it->first.Scalar();
        place(key, it->first.Mark());
        record_keys(it->second, key, at);
      }
    } else if (n.IsSequence()) {
      for (std::size_t i = 0; i < n.size(); ++i) {
        const std::string key = path + "[" + std::to_string(i) + "]";
        place(key, n[i].Mark());
        record_keys(n[i], key, at);
      }
    }
  }

  Scenario build(const YAML::Node& root) {
    Scenario s;
    s.file = file_;
    record_keys(root, "", s.key_at);
    s.name = root["name"].Scalar();
    if (root["description"]) s.description = root["description"].Scalar();
    build_workload(root["workload"], s.training);
    if (root["hardware"]) build_hardware(root["hardware"], s.hardware);
    const std::string workload_type = root["workload"]["type"].Scalar();  // s.inference is read below
    const bool serving = workload_type == "inference" || workload_type == "llm-serving";
    if (!s.training.service && !serving &&
        (!root["hardware"] || (!root["hardware"]["gpus"] && !root["hardware"]["nodes"])))
      error(root["hardware"] ? root["hardware"] : root, root["hardware"] ? "hardware" : "",
            "missing required key '" + std::string(root["hardware"] ? "gpus" : "hardware") + "' for training",
            "the GPU types to consider, e.g. hardware: {gpus: [h100-sxm-80gb]}, or the node types: {nodes: [dgx-h100]}");
    if (const YAML::Node search = root["search"]) build_search(search, s.search);
    if (const YAML::Node pricing = root["pricing"]; pricing && pricing["commitment"]) {
      const std::string c = pricing["commitment"].Scalar();
      for (auto k : {Commitment::on_demand, Commitment::spot, Commitment::reserved_1yr, Commitment::reserved_3yr})
        if (commitment_name(k) == c) s.commitment = k;
    }
    if (root["deadline"]) s.deadline = Seconds(as_quantity(root["deadline"]));
    const std::string type = root["workload"]["type"].Scalar();
    if (type == "inference" || type == "llm-serving") {
      s.inference = build_inference(root, type == "llm-serving");
      if (const YAML::Node d = root["deployment"]) check_stated_gpus(d, *s.inference, s.hardware, root["hardware"]);
      if (const YAML::Node sim = root["simulate"]) {
        // For serving, simulate: only sets the run: length, warm-up and seed.
        SimulationSetup run;
        for (const char* key : {"node", "gpus", "batch_per_gpu", "host", "prefetch_batches", "checkpoint"})
          if (sim[key]) error(sim[key], std::string("simulate.") + key, std::string(key) + " applies to training pipelines");
        read_run_length(sim, run);
        s.simulate = run;
      }
      sample_lengths(root["workload"], *s.inference, s.simulate ? s.simulate->seed : SimulationSetup{}.seed);
    } else {
      for (const char* key : {"arrivals", "slo", "deployment"})
        if (root[key]) error(root[key], key, std::string(key) + " applies to inference and llm-serving workloads");
      if (const YAML::Node sim = root["simulate"]) {
        if (s.training.service)
          error(sim, "simulate", "a service workload (fixed GPUs, costed) has no pipeline to simulate",
                "remove simulate:, or describe the workload as training or inference");
        else
          s.simulate = build_simulation(sim, s.training);
      }
    }
    if (const YAML::Node cost = root["cost"]) s.cost = build_cost(cost);
    if (s.training.service && !s.cost) error(root["workload"], "workload", "a service workload needs a cost: section");
    if (root["budget"]) {
      auto q = parse_quantity(root["budget"].Scalar());
      s.budget = Money(q->value_si, q->currency);
    }
    if (const YAML::Node expect = root["expect"])
      for (std::size_t i = 0; i < expect.size(); ++i) {
        auto e = parse_expectation(expect[i].Scalar());
        if (!e) {
          for (const auto& d : e.errors()) error(expect[i], "expect[" + std::to_string(i) + "]", d.message, d.hint);
          continue;
        }
        e.value().where = {file_, expect[i].Mark().line + 1, expect[i].Mark().column + 1};
        s.expect.push_back(*e);
      }
    return s;
  }

  void build_workload(const YAML::Node& w, TrainingWorkload& t) {
    const YAML::Node model = w["model"];
    const std::string type = w["type"].Scalar();
    if (type == "inference" || type == "llm-serving") {
      t.service = false;
      t.model = models::SampleModel{};
      t.model_name = type;
      return;  // the rest is read by build_inference
    }
    if (type == "service") {
      t.service = true;
      if (!w["gpus"]) error(w, "workload", "missing required key 'gpus' for a service", "e.g. gpus: 16");
      else t.service_gpus = static_cast<int>(as_int(w["gpus"]));
      for (const char* key : {"model", "tokens", "samples"})
        if (w[key]) error(w[key], std::string("workload.") + key, std::string(key) + " applies to training workloads");
      t.model = models::SampleModel{};
      return;
    }
    if (!model) {
      error(w, "workload", "missing required key 'model' for training", "e.g. model: llama-2-7b");
      return;
    }
    if (w["gpus"]) error(w["gpus"], "workload.gpus", "gpus applies to service workloads; training is sized by the search");
    if (model.IsScalar()) {
      t.model_name = model.Scalar();
      if (const auto* p = models::find_transformer_preset(t.model_name)) {
        t.model = p->shape;
      } else if (const auto* m = models::find_sample_model_preset(t.model_name)) {
        t.model = *m;
      } else {
        std::vector<std::string> names;
        for (const auto& p : models::transformer_presets()) names.push_back(p.shape.name);
        for (const auto& m : models::sample_model_presets()) names.push_back(m.name);
        error(model, "workload.model", "unknown model preset '" + t.model_name + "'",
              did_you_mean(t.model_name, names).empty() ? "run 'capsim models' for the list"
                                                         : did_you_mean(t.model_name, names));
        return;
      }
    } else {
      t.model_name = "custom";
      models::TransformerShape shape;
      shape.name = "custom";
      shape.layers = static_cast<int>(as_int(model["layers"]));
      shape.hidden = static_cast<int>(as_int(model["hidden"]));
      shape.heads = static_cast<int>(as_int(model["heads"]));
      shape.kv_heads = model["kv_heads"] ? static_cast<int>(as_int(model["kv_heads"])) : shape.heads;
      shape.ffn_hidden = model["ffn_hidden"] ? static_cast<int>(as_int(model["ffn_hidden"])) : 4 * shape.hidden;
      shape.vocab = static_cast<int>(as_int(model["vocab"]));
      shape.seq_len = static_cast<int>(as_int(model["seq_len"]));
      shape.gated_mlp = model["gated_mlp"] && model["gated_mlp"].Scalar() == "true";
      shape.experts = model["experts"] ? static_cast<int>(as_int(model["experts"])) : 1;
      shape.experts_per_token = model["experts_per_token"] ? static_cast<int>(as_int(model["experts_per_token"])) : 1;
      shape.tied_embeddings = model["tied_embeddings"] && model["tied_embeddings"].Scalar() == "true";
      if (model["head_dim"]) shape.head_dim_override = static_cast<int>(as_int(model["head_dim"]));
      if (model["sliding_window"]) shape.sliding_window = static_cast<int>(as_int(model["sliding_window"]));
      if (shape.head_dim_override == 0 && shape.hidden % shape.heads != 0)
        error(model["hidden"], "workload.model.hidden",
              "hidden (" + std::to_string(shape.hidden) + ") must be a multiple of heads (" +
                  std::to_string(shape.heads) + ")",
              "give head_dim when the heads are not hidden / heads wide");
      if (shape.heads % shape.kv_heads != 0)
        error(model["kv_heads"], "workload.model.kv_heads", "heads must be a multiple of kv_heads");
      if (shape.experts_per_token > shape.experts)
        error(model["experts_per_token"], "workload.model.experts_per_token", "cannot exceed experts");
      t.model = shape;
    }
    if (w["seq_len"]) {
      if (auto* shape = std::get_if<models::TransformerShape>(&t.model))
        shape->seq_len = static_cast<int>(as_int(w["seq_len"]));
      else
        error(w["seq_len"], "workload.seq_len", "seq_len applies to transformers, not to '" + t.model_name + "'");
    }
    if (w["tokens"]) t.tokens = as_count(w["tokens"]);
    if (w["samples"]) t.samples = as_count(w["samples"]);
    if (w["epochs"]) t.epochs = std::stod(w["epochs"].Scalar());
    if (w["global_batch"]) t.global_batch = static_cast<int>(as_int(w["global_batch"]));
    if (w["precision"]) t.options.compute = *models::precision_from_name(w["precision"].Scalar());
    if (w["mixed_precision"]) t.options.mixed_precision = w["mixed_precision"].Scalar() == "true";
    if (w["fine_tuning"]) {
      const std::string f = w["fine_tuning"].Scalar();
      t.options.fine_tuning = f == "lora" ? models::FineTuning::lora
                              : f == "qlora" ? models::FineTuning::qlora
                                             : models::FineTuning::full;
    }
    if (w["lora_rank"]) t.options.lora_rank = static_cast<int>(as_int(w["lora_rank"]));
    if (w["memory_overhead"]) t.options.overhead_fraction = as_quantity(w["memory_overhead"]);
    if (w["attention"]) {
      const std::string a = w["attention"].Scalar();
      t.options.attention = a == "eager" ? models::Attention::eager : models::Attention::flash;
      t.options.flash_kernel = a == "flash1"   ? models::FlashKernel::fa1
                               : a == "flash3" ? models::FlashKernel::fa3
                                               : models::FlashKernel::fa2;
    }
    if (w["kernels"]) t.options.kernels = w["kernels"].Scalar() == "eager" ? models::Kernels::eager : models::Kernels::fused;
    if (w["tp_comm_overlap"]) t.options.tp_comm_overlap = w["tp_comm_overlap"].Scalar() == "true";
    if (w["tp_comm_overlap_backward"])
      t.options.tp_comm_overlap_backward = w["tp_comm_overlap_backward"].Scalar() == "true";
    if (w["grad_reduce_overlap"]) t.options.overlap_gradient_reduce = w["grad_reduce_overlap"].Scalar() == "true";
    if (w["grad_reduce"]) t.options.fp32_gradient_reduce = w["grad_reduce"].Scalar() == "fp32";
    if (w["p2p_overlap"]) t.options.overlap_p2p = w["p2p_overlap"].Scalar() == "true";
    if (w["fp8_weight_cast"])
      t.options.fp8_weights_cast_once_per_step = w["fp8_weight_cast"].Scalar() == "once_per_step";
    if (w["fp8_scaling"]) t.options.fp8_rowwise_scaling = w["fp8_scaling"].Scalar() == "rowwise";
    if (w["moe_dispatch"]) t.options.moe_dispatch_per_node = w["moe_dispatch"].Scalar() == "per-node";

    if (t.is_transformer()) {
      if (!w["tokens"]) error(w, "workload", "missing required key 'tokens' for a transformer", "e.g. tokens: 300B");
      if (w["samples"]) error(w["samples"], "workload.samples", "samples applies to sample models; give tokens");
    } else {
      if (!w["samples"]) error(w, "workload", "missing required key 'samples' for '" + t.model_name + "'", "e.g. samples: 1.28M");
      if (w["tokens"]) error(w["tokens"], "workload.tokens", "tokens applies to transformers; give samples");
      if (t.options.fine_tuning != models::FineTuning::full)
        error(w["fine_tuning"], "workload.fine_tuning", "LoRA and QLoRA apply to transformers");
    }
  }

  void check_ids(const YAML::Node& list, const std::string& path, hardware::EntityKind kind,
                 std::vector<std::string>& out) {
    if (!list) return;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string id = list[i].Scalar();
      auto found = catalog_.get(kind, id);
      if (!found)
        error(list[i], path + "[" + std::to_string(i) + "]", found.errors()[0].message, found.errors()[0].hint);
      else
        out.push_back(id);
    }
  }

  void build_hardware(const YAML::Node& h, HardwareChoice& hw) {
    check_ids(h["gpus"], "hardware.gpus", hardware::EntityKind::gpu, hw.gpus);
    check_ids(h["instances"], "hardware.instances", hardware::EntityKind::instance, hw.instances);
    check_ids(h["servers"], "hardware.servers", hardware::EntityKind::server, hw.servers);
    check_ids(h["providers"], "hardware.providers", hardware::EntityKind::provider, hw.providers);
    if (const YAML::Node nodes = h["nodes"]) {
      std::vector<std::string> known = catalog_.ids(hardware::EntityKind::instance);
      for (const auto& id : catalog_.ids(hardware::EntityKind::server)) known.push_back(id);
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        const std::string path = "hardware.nodes[" + std::to_string(i) + "]";
        const std::string id = nodes[i].Scalar();
        const hardware::Entity* node = catalog_.find(hardware::EntityKind::instance, id);
        if (node == nullptr) node = catalog_.find(hardware::EntityKind::server, id);
        if (node == nullptr) {
          error(nodes[i], path, "no instance or server with id '" + id + "'", did_you_mean(id, known));
          continue;
        }
        if (std::find(hw.nodes.begin(), hw.nodes.end(), id) != hw.nodes.end()) {
          error(nodes[i], path, "'" + id + "' is listed twice");
          continue;
        }
        hw.nodes.push_back(id);
        const std::string gpu = node->text("gpu");
        if (!h["gpus"]) {
          if (std::find(hw.gpus.begin(), hw.gpus.end(), gpu) == hw.gpus.end()) hw.gpus.push_back(gpu);
        } else if (std::find(hw.gpus.begin(), hw.gpus.end(), gpu) == hw.gpus.end()) {
          error(nodes[i], path, "'" + id + "' carries " + gpu + ", not one of hardware.gpus",
                "add " + gpu + " to hardware.gpus, or leave hardware.gpus out: the nodes' GPUs are the candidates");
        }
      }
      if (h["instances"] || h["servers"])
        error(nodes, "hardware.nodes", "hardware.nodes pins the node types: leave out hardware.instances and hardware.servers");
    }
    if (const YAML::Node out = h["scale_out"]) {
      const auto ref = hardware::parse_counted_ref(out.Scalar());
      if (!ref || ref->count < 1) {
        error(out, "hardware.scale_out", "expected 'N x network-id', got '" + out.Scalar() + "'",
              "e.g. scale_out: \"8 x roce-400g\" (capsim catalog list networks lists the ids)");
      } else if (catalog_.find(hardware::EntityKind::network, ref->id) == nullptr) {
        error(out, "hardware.scale_out", "no network with id '" + ref->id + "'",
              did_you_mean(ref->id, catalog_.ids(hardware::EntityKind::network)));
      } else {
        hw.scale_out_network = ref->id;
        hw.scale_out_nics = ref->count;
      }
    }
    if (h["max_gpus"]) hw.max_gpus = static_cast<int>(as_int(h["max_gpus"]));
    if (h["min_gpus"]) hw.min_gpus = static_cast<int>(as_int(h["min_gpus"]));
    if (hw.min_gpus > hw.max_gpus) error(h["min_gpus"], "hardware.min_gpus", "min_gpus is larger than max_gpus");
  }

  SimulationSetup build_simulation(const YAML::Node& n, const TrainingWorkload& training) {
    SimulationSetup sim;
    if (!n["node"]) {
      error(n, "simulate", "missing required key 'node' for a training pipeline simulation",
            "the instance or server the job runs on, e.g. node: aws-g5-xlarge");
      return sim;
    }
    sim.node = n["node"].Scalar();
    if (catalog_.find(hardware::EntityKind::instance, sim.node) == nullptr &&
        catalog_.find(hardware::EntityKind::server, sim.node) == nullptr) {
      std::vector<std::string> ids = catalog_.ids(hardware::EntityKind::instance);
      for (auto& id : catalog_.ids(hardware::EntityKind::server)) ids.push_back(id);
      error(n["node"], "simulate.node", "no instance or server with id '" + sim.node + "'", did_you_mean(sim.node, ids));
    }
    const bool model_known = std::none_of(errors_.begin(), errors_.end(),
                                          [](const Diagnostic& d) { return d.key_path == "workload.model"; });
    if (model_known && training.is_transformer())
      error(n, "simulate",
            "the pipeline simulation covers sample models (images and other per-sample data loaders); '" +
                training.model_name + "' is a transformer, whose token loading is not a constraint worth simulating",
            "use capsim size for transformers");
    auto get_int = [&](const YAML::Node& node, const char* key, int fallback) {
      return node[key] ? static_cast<int>(as_int(node[key])) : fallback;
    };
    sim.gpus = get_int(n, "gpus", 1);
    sim.batch_per_gpu = get_int(n, "batch_per_gpu", 64);
    sim.prefetch_batches = get_int(n, "prefetch_batches", 4);
    const YAML::Node host = n["host"];
    if (!host) {
      error(n, "simulate", "missing required key 'host' for a training pipeline simulation",
            "host: {cpu_cores, decode_time, sample_size, storage_bandwidth}");
      return sim;
    }
    for (const char* key : {"cpu_cores", "decode_time", "sample_size", "storage_bandwidth"})
      if (!host[key]) error(host, "simulate.host", std::string("missing required key '") + key + "'");
    if (!errors_.empty()) return sim;
    sim.cpu_cores = static_cast<int>(as_int(host["cpu_cores"]));
    sim.decode_time = Seconds(as_quantity(host["decode_time"]));
    if (host["decode_cv"]) sim.decode_cv = std::stod(host["decode_cv"].Scalar());
    sim.sample_size = Bytes(as_quantity(host["sample_size"]));
    sim.storage_bandwidth = BytesPerSecond(as_quantity(host["storage_bandwidth"]));
    if (host["storage_latency"]) sim.storage_latency = Seconds(as_quantity(host["storage_latency"]));
    if (const YAML::Node ck = n["checkpoint"]) {
      if (!ck["every_steps"] || !ck["bandwidth"]) {
        error(ck, "simulate.checkpoint", "a checkpoint needs every_steps and bandwidth");
      } else {
        sim.checkpoint_every_steps = static_cast<int>(as_int(ck["every_steps"]));
        sim.checkpoint_bandwidth = BytesPerSecond(as_quantity(ck["bandwidth"]));
      }
    }
    read_run_length(n, sim);
    return sim;
  }

  // duration, warmup, seed and max_events: shared by training and serving runs.
  void read_run_length(const YAML::Node& n, SimulationSetup& run) {
    if (n["duration"]) run.duration = Seconds(as_quantity(n["duration"]));
    if (n["warmup"]) run.warmup = Seconds(as_quantity(n["warmup"]));
    if (n["seed"]) run.seed = static_cast<std::uint64_t>(as_int(n["seed"]));
    if (n["max_events"]) run.max_events = static_cast<std::uint64_t>(as_int(n["max_events"]));
    const YAML::Node at = n["duration"] ? n["duration"] : n;
    run.duration_at = {file_, at.Mark().line + 1, at.Mark().column + 1};
  }

  InferenceSetup build_inference(const YAML::Node& root, bool llm) {
    InferenceSetup inf;
    inf.llm = llm;
    const YAML::Node w = root["workload"];
    if (w["precision"]) inf.exec.precision = *models::precision_from_name(w["precision"].Scalar());
    if (llm) {
      inf.shape = transformer_preset(w["model"], "workload.model");
      if (w["prompt_tokens"]) inf.prompt_lengths = read_length(w["prompt_tokens"], "workload.prompt_tokens", inf.shape);
      else inf.prompt_lengths.mean = inf.mix.prompt_tokens;
      if (w["output_tokens"]) inf.output_lengths = read_length(w["output_tokens"], "workload.output_tokens", inf.shape);
      else inf.output_lengths.mean = inf.mix.output_tokens;
      for (auto* d : {&inf.prompt_lengths, &inf.output_lengths})
        if (d->is_fixed()) d->min = d->max = static_cast<int>(d->mean);
      if (inf.prompt_lengths.is_fixed()) inf.mix.prompt_tokens = static_cast<int>(inf.prompt_lengths.mean);
      if (inf.output_lengths.is_fixed()) inf.mix.output_tokens = static_cast<int>(inf.output_lengths.mean);
      if (const YAML::Node sp = w["speculative"]) {
        // phase 1 checked the types and ranges
        inf.speculation.tokens = static_cast<int>(as_int(sp["tokens"]));
        inf.speculation.acceptance_rate = std::stod(sp["acceptance_rate"].Scalar());
        if (const YAML::Node d = sp["draft_model"]) {
          inf.speculation.draft = transformer_preset(d, "workload.speculative.draft_model");
          inf.speculation.has_draft = true;
        }
      }
      if (const YAML::Node f = w["request_lengths"]) {
        if (w["prompt_tokens"] || w["output_tokens"])
          error(f, "workload.request_lengths", "request_lengths gives every request its lengths: leave out prompt_tokens and output_tokens",
                "their means are taken from the file");
        else
          read_request_lengths(f, inf);
      }
      check_context_length(w, inf);
      if (w["kv_cache"]) inf.kv_cache = *models::precision_from_name(w["kv_cache"].Scalar());
      if (w["max_num_seqs"]) inf.max_num_seqs = static_cast<int>(as_int(w["max_num_seqs"]));

      if (w["offline_requests"]) inf.offline_requests = static_cast<int>(as_int(w["offline_requests"]));
      read_llm_engine(w, inf);
      if (w["batching"]) inf.batching = w["batching"].Scalar() == "static" ? models::LlmBatching::static_batches
                                                                          : models::LlmBatching::continuous;
      if (w["decode_attention"]) inf.gqa_shared_kv = w["decode_attention"].Scalar() == "gqa-shared";
      if (w["kv_memory_fraction"]) {
        inf.kv_memory_fraction = std::stod(w["kv_memory_fraction"].Scalar());
        inf.memory_utilization = *inf.kv_memory_fraction;
        inf.engine_setting_origin["kv_memory_fraction"] = "the scenario's";
      }
      // The KV cache's default precision is the engine's: TensorRT-LLM's FP8 builds quantize it
      // with the weights (an assumption: its FP8 recipes pass kv_cache_dtype fp8); vLLM's
      // kv_cache_dtype 'auto' keeps the activations' 16 bits.
      if (!w["kv_cache"] && (inf.llm_engine == "tensorrt-llm" || inf.llm_engine == "trtllm-serve") &&
          inf.exec.precision == models::Precision::fp8)
        inf.kv_cache = models::Precision::fp8;
      if (w["graph"]) error(w["graph"], "workload.graph", "graph applies to inference; llm-serving names a model");
    } else {
      const std::string engine_id = w["engine"] ? w["engine"].Scalar() : "framework";
      if (const auto* e = catalog_.find(hardware::EntityKind::engine, engine_id); e && e->text("kind") == "llm-serving") {
        error(w["engine"], "workload.engine", "'" + engine_id + "' serves LLMs (workload.type: llm-serving)",
              "an inference graph runs framework, tensorflow, onnxruntime or tensorrt");
      } else if (auto engine = catalog_.engine(engine_id)) {
        inf.exec.engine = *engine;
      } else {
        error(w["engine"] ? w["engine"] : w, "workload.engine", engine.errors().front().message,
              "the catalog's engines.yaml defines the engine profiles");
      }
      if (const YAML::Node f = w["engine_speedup"]) {
        const double v = std::stod(f.Scalar());  // phase 1 checked it is a finite number
        if (!(v > 0)) error(f, "workload.engine_speedup", "must be greater than zero, got " + f.Scalar(),
                            "the factor every latency is divided by; leave it out to use the engine profile alone");
        else inf.exec.engine_speedup = v;
      }
      const YAML::Node graph = w["graph"];
      if (!graph) error(w, "workload", "missing required key 'graph' for inference", "a list of {name, model, fan_out}");
      graph_stages_ = graph ? graph.size() : 0;
      for (std::size_t i = 0; graph && i < graph.size(); ++i) {
        const std::string path = "workload.graph[" + std::to_string(i) + "].model";
        auto served = served_model(graph[i]["model"], path, graph[i]["name"].Scalar());
        if (const YAML::Node model = graph[i]["model"]; model.IsMap() && model["latency_file"])
          inf.latency_files.push_back(model["latency_file"].Scalar());
        if (!served) continue;
        models::GraphStage stage{graph[i]["name"].Scalar(), std::move(*served), 1.0};
        if (graph[i]["fan_out"]) stage.fan_out = std::stod(graph[i]["fan_out"].Scalar());
        inf.graph.stages.push_back(stage);
      }
      inf.graph.name = root["name"].Scalar();
    }
    const YAML::Node a = root["arrivals"];
    const bool offline = llm && root["workload"]["offline_requests"];  // every request queued at t = 0
    if (offline && !a) {
      // no arrival process: the offline requests are all there at the start
    } else if (a && a["by_hour"]) {
      read_load_curve(a, inf);
    } else if (!a || !a["rate"]) {
      error(a ? a : root, a ? "arrivals" : "", "missing required key '" + std::string(a ? "rate" : "arrivals") + "'",
            "requests per second, e.g. arrivals: {kind: poisson, rate: 200}");
    } else {
      inf.arrivals.rate = des::Rate(std::stod(a["rate"].Scalar()));
      if (a["requests"]) {
        inf.server_requests = static_cast<int>(as_int(a["requests"]));
        if (a["kind"] && a["kind"].Scalar() != "poisson")
          error(a["requests"], "arrivals.requests", "a fixed request count applies to poisson arrivals");
      }
      const std::string kind = a["kind"] ? a["kind"].Scalar() : "poisson";
      if (kind == "diurnal") {
        inf.arrivals.kind = models::ArrivalSpec::Kind::diurnal;
        const YAML::Node h = a["hourly"];
        if (!h || h.size() != 24) {
          error(h ? h : a, "arrivals.hourly", "diurnal arrivals need 24 hourly multipliers");
        } else {
          for (std::size_t i = 0; i < 24; ++i) inf.arrivals.hourly[i] = std::stod(h[i].Scalar());
        }
      } else if (kind == "trace") {
        inf.arrivals.kind = models::ArrivalSpec::Kind::trace;
        if (!a["trace"]) error(a, "arrivals", "trace arrivals need trace: a file of arrival times");
        else read_trace(a["trace"], inf.arrivals);
      }
    }
    if (const YAML::Node slo = root["slo"]) {
      if (slo["p99"]) inf.p99 = Seconds(as_quantity(slo["p99"]));
      if (slo["ttft_p99"]) inf.ttft_p99 = Seconds(as_quantity(slo["ttft_p99"]));
      if (slo["tpot_p99"]) inf.tpot_p99 = Seconds(as_quantity(slo["tpot_p99"]));
    }
    // Sizing needs the bounds it sizes for; a stated deployment is checked against its SLO
    // when it has one (run --check fails a plan that misses it), and may have none (a
    // measurement's reproduction at saturation).
    const bool sizes = root["hardware"] && root["hardware"]["gpus"];
    if (llm && sizes && (!inf.ttft_p99 || !inf.tpot_p99))
      error(root["slo"] ? root["slo"] : root, "slo", "sizing llm-serving (hardware.gpus) needs slo.ttft_p99 and slo.tpot_p99");
    if (!llm && sizes && !inf.p99) error(root["slo"] ? root["slo"] : root, "slo", "sizing inference (hardware.gpus) needs slo.p99");
    if (root["slo"] && llm && root["slo"]["p99"])
      error(root["slo"]["p99"], "slo.p99", "llm-serving bounds slo.ttft_p99 and slo.tpot_p99, not slo.p99");
    if (root["slo"] && !llm && (root["slo"]["ttft_p99"] || root["slo"]["tpot_p99"]))
      error(root["slo"], "slo", "slo.ttft_p99 and slo.tpot_p99 bound llm-serving; inference bounds slo.p99");
    if (const YAML::Node d = root["deployment"]) build_deployment(d, inf);
    if (const YAML::Node s = root["search"]) {
      auto to_int = [](const YAML::Node& n) { return static_cast<int>(std::stoll(n.Scalar())); };
      read_list(s["max_batch"], inf.max_batch, to_int);
      read_list(s["max_queue_delay"], inf.max_queue_delay, [](const YAML::Node& n) { return Seconds(as_quantity(n)); });
      read_list(s["sharing"], inf.sharing_modes, [](const YAML::Node& n) { return sharing_mode(n.Scalar()); });
    }
    if (!root["deployment"] && !(root["hardware"] && root["hardware"]["gpus"]))
      error(root, "", "an inference scenario needs a deployment: to simulate or hardware.gpus to size");
    if (!llm) check_requests_per_batch(root, inf);
    return inf;
  }

  // hardware.max_gpus bounds a stated deployment as it bounds a recommendation (10^6 LLM
  // replicas planned 8,000,000 GPUs): the GPUs the deployment's own numbers give are checked
  // here, at the key that states them. MIG packs replicas onto GPUs by their slices, so its
  // count is known after plan_deployment (simulate_serving_scenario checks it there).
  void check_stated_gpus(const YAML::Node& d, const InferenceSetup& inf, const HardwareChoice& hw, const YAML::Node& h) {
    const std::string limit = "hardware.max_gpus (" + std::to_string(hw.max_gpus) +
                              (h && h["max_gpus"] ? ")" : ", its default)");
    const std::string hint = "state fewer replicas, or raise hardware.max_gpus";
    if (inf.llm) {
      const double gpus = static_cast<double>(inf.replicas) * inf.tensor_parallel * inf.pipeline_parallel;
      if (gpus > hw.max_gpus)
        error(d["replicas"] ? d["replicas"] : d, d["replicas"] ? "deployment.replicas" : "deployment",
              plural(inf.replicas, "replica") + " of " + std::to_string(inf.tensor_parallel * inf.pipeline_parallel) +
                  " GPUs (tensor_parallel " + std::to_string(inf.tensor_parallel) +
                  (inf.pipeline_parallel > 1 ? " x pipeline_parallel " + std::to_string(inf.pipeline_parallel) : "") +
                  ") are " + number_text(gpus) + " GPUs, more than " + limit,
              hint);
      return;
    }
    const YAML::Node stages = d["stages"];
    if (!stages || inf.stages.size() != stages.size() || inf.sharing == models::SharingMode::mig) return;
    if (inf.sharing == models::SharingMode::exclusive) {
      double gpus = 0;
      for (const auto& st : inf.stages) gpus += st.replicas;
      if (gpus > hw.max_gpus)
        error(stages, "deployment.stages",
              "the stages' replicas take a GPU each (exclusive): " + number_text(gpus) + " GPUs, more than " + limit, hint);
      return;
    }
    // MPS and time-slicing: GPU g hosts replica g of every stage, so the most replicas decide.
    for (std::size_t i = 0; i < stages.size(); ++i)
      if (inf.stages[i].replicas > hw.max_gpus) {
        const YAML::Node r = stages[i]["replicas"];
        error(r ? r : stages[i], "deployment.stages[" + std::to_string(i) + "]" + (r ? ".replicas" : ""),
              std::to_string(inf.stages[i].replicas) + " replicas, one per GPU (" +
                  std::string(models::sharing_mode_name(inf.sharing)) + "), more than " + limit,
              hint);
        return;
      }
  }

  // A batch of max_batch model inputs at fan-out f < 1 holds max_batch / f requests, each a
  // row of the stage's latency curve and an item the simulation carries (fan_out 0.000001
  // grew to 24 GB): past models::kMaxRequestsPerBatch, the stated deployment's batch or the
  // sizing's largest (search.max_batch) is refused at the stage's fan_out.
  void check_requests_per_batch(const YAML::Node& root, const InferenceSetup& inf) {
    const YAML::Node graph = root["workload"]["graph"];
    if (!graph || !graph.IsSequence()) return;
    const bool sized = root["hardware"] && root["hardware"]["gpus"];
    const int searched = inf.max_batch.empty() ? 1 : *std::max_element(inf.max_batch.begin(), inf.max_batch.end());
    for (std::size_t i = 0; i < graph.size(); ++i) {
      const YAML::Node f = graph[i]["fan_out"];
      double fan_out = 1;
      if (!f || !parse_double(f.Scalar(), fan_out) || !(fan_out > 0)) continue;
      const std::string stage = "deployment.stages[" + std::to_string(i) + "].max_batch";
      std::vector<std::pair<int, std::string>> batches;  // max_batch, the key it comes from
      if (inf.stages.size() == graph.size()) batches.emplace_back(inf.stages[i].batching.max_batch, stage);
      if (sized) batches.emplace_back(searched, root["search"] && root["search"]["max_batch"] ? "search.max_batch"
                                                                                           : "the sizing's default batches");
      for (const auto& [batch, from] : batches) {
        const double requests = models::requests_per_batch(batch, fan_out);
        if (requests <= models::kMaxRequestsPerBatch) continue;
        error(f, "workload.graph[" + std::to_string(i) + "].fan_out",
              "a batch of " + std::to_string(batch) + " model inputs (" + from + ") at fan-out " + f.Scalar() + " holds " +
                  number_text(requests) + " requests, more than the requests-per-batch limit of " +
                  number_text(models::kMaxRequestsPerBatch),
              "a fan-out of at least " + number_text(batch / models::kMaxRequestsPerBatch) + ", or a smaller max_batch");
        break;
      }
    }
  }

  static models::SharingMode sharing_mode(const std::string& s) {
    return s == "mig" ? models::SharingMode::mig
           : s == "mps" ? models::SharingMode::mps
           : s == "time-slicing" ? models::SharingMode::time_slicing
                                 : models::SharingMode::exclusive;
  }

  models::TransformerShape transformer_preset(const YAML::Node& model, const std::string& path) {
    if (!model || !model.IsScalar()) {
      error(model ? model : YAML::Node(), path, "llm-serving needs model: a transformer preset", "e.g. llama-2-70b");
      return {};
    }
    if (const auto* p = models::find_transformer_preset(model.Scalar())) return p->shape;
    std::vector<std::string> names;
    for (const auto& p : models::transformer_presets()) names.push_back(p.shape.name);
    error(model, path, "unknown transformer preset '" + model.Scalar() + "'", did_you_mean(model.Scalar(), names));
    return {};
  }

  // The trace file: beside the scenario or below its directory (a scenario from a pull
  // request must not read the CI machine's other files), a regular file of at most 64 MiB,
  // and errors that give line numbers, never the file's text.
  // CAPSIM_ALLOW_TRACE_OUTSIDE=1 lifts the directory rule for a trusted scenario.
  // The simulated deployment has one server per replica and instance of every stage; each
  // is a DES station, and 1e6 of them ran past 300 s at 6.6 GB. Refuse past the budget.
  void check_station_budget(const YAML::Node& deployment) {
    constexpr double kMaxStations = 10000;
    if (!deployment || !deployment.IsMap() || !deployment["stages"] || !deployment["stages"].IsSequence()) return;
    double stations = 0;
    for (const auto& stage : deployment["stages"]) {
      if (!stage.IsMap()) return;
      double replicas = 1, instances = 1;
      if (stage["replicas"] && !parse_double(stage["replicas"].Scalar(), replicas)) return;
      if (stage["instances"] && !parse_double(stage["instances"].Scalar(), instances)) return;
      stations += replicas * instances;
    }
    if (stations > kMaxStations)
      error(deployment["stages"], "deployment.stages",
            "the stages have " + number_text(stations) + " servers (replicas x instances) to simulate, more than the limit of " +
                number_text(kMaxStations),
            "size the deployment with hardware.gpus instead of simulating it server by server");
  }

  // A file the scenario names (trace, latency table): relative to the scenario and inside
  // its directory unless CAPSIM_ALLOW_TRACE_OUTSIDE=1; nullopt (and an error) otherwise.
  std::optional<std::filesystem::path> input_path(const YAML::Node& n, const std::string& key, const std::string& what) {
    auto path = named_input_path(file_, n.Scalar(), what, "scenario");
    if (!path) {
      const Diagnostic& d = path.errors().front();
      error(n, key, d.message, d.hint);
      return std::nullopt;
    }
    return *path;
  }

  // A file the scenario names (input_path's rules), read whole: its path for errors and its
  // text; nullopt after an error at the scenario's key.
  std::optional<std::pair<std::string, std::string>> read_named_file(const YAML::Node& n, const std::string& key,
                                                                    const std::string& what, std::uintmax_t max_bytes) {
    auto path = input_path(n, key, what);
    if (!path) return std::nullopt;
    auto text = read_input_file(*path, max_bytes, what);
    if (!text) {
      for (const auto& d : text.errors()) error(n, key, d.where.file + ": " + d.message);
      return std::nullopt;
    }
    return std::make_pair(path->string(), std::move(*text));
  }

  // One CSV row's cells, trimmed of spaces, each with the column its text starts at.
  struct CsvCell {
    std::string text;
    int column = 1;
  };
  static std::vector<CsvCell> csv_cells(const std::string& row) {
    std::vector<CsvCell> cells;
    std::stringstream ss(row);
    int at = 1;
    for (std::string cell; std::getline(ss, cell, ',');) {
      const int width = static_cast<int>(cell.size()) + 1;
      int lead = 0;
      while (!cell.empty() && cell.front() == ' ') cell.erase(cell.begin()), ++lead;
      while (!cell.empty() && cell.back() == ' ') cell.pop_back();
      cells.push_back({cell, at + lead});
      at += width;
    }
    return cells;
  }

  void read_trace(const YAML::Node& n, models::ArrivalSpec& arrivals) {
    constexpr std::uintmax_t kMaxTraceBytes = 64ull * 1024 * 1024;
    auto read = read_named_file(n, "arrivals.trace", "trace file", kMaxTraceBytes);
    if (!read) return;
    const std::string& file = read->first;
    double previous = 0;
    int line = 0;
    std::istringstream in(read->second);
    for (std::string row; std::getline(in, row);) {
      ++line;
      if (row.empty() || row[0] == '#') continue;
      double t = 0;
      if (!parse_double(row, t) || !std::isfinite(t) || t < previous) {
        errors_.push_back({{file, line, 1}, "arrivals.trace",
                           "line " + std::to_string(line) +
                               " is not a time in seconds at or after the previous line's (its text is not shown)",
                           ""});
        return;
      }
      previous = t;
      arrivals.trace.push_back(Seconds(t));
    }
    if (arrivals.trace.empty()) error(n, "arrivals.trace", "the trace file holds no arrivals");
  }

  // arrivals.by_hour: a day's load curve in requests/s, as diurnal arrivals whose base rate is
  // the peak hour's and whose multipliers are each hour's share of it.
  void read_load_curve(const YAML::Node& a, InferenceSetup& inf) {
    const YAML::Node h = a["by_hour"];
    for (const char* key : {"rate", "hourly"})
      if (a[key]) error(a[key], std::string("arrivals.") + key, std::string(key) + " does not go with by_hour",
                        "by_hour gives each hour's rate in requests per second");
    if (a["kind"] && a["kind"].Scalar() != "diurnal")
      error(a["kind"], "arrivals.kind", "by_hour is a diurnal load curve", "write kind: diurnal, or leave kind out");
    if (h.size() != 24) {
      error(h, "arrivals.by_hour", "a day's load curve needs 24 hourly rates, got " + std::to_string(h.size()),
            "one rate in requests per second for each hour from midnight");
      return;
    }
    double peak = 0;
    std::array<double, 24> rates{};
    for (std::size_t i = 0; i < 24; ++i) peak = std::max(peak, rates[i] = std::stod(h[i].Scalar()));
    if (!(peak > 0)) {
      error(h, "arrivals.by_hour", "every hour's rate is zero", "at least one hour needs requests");
      return;
    }
    inf.arrivals.kind = models::ArrivalSpec::Kind::diurnal;
    inf.arrivals.rate = des::Rate(peak);
    for (std::size_t i = 0; i < 24; ++i) inf.arrivals.hourly[i] = rates[i] / peak;
  }

  // workload.engine of an llm-serving scenario: its catalog entry's scheduler settings
  // (data/catalog/llm_engines.yaml), then the scenario's keys over them; capsim's defaults
  // (models/serving_llm.hpp) where neither gives one.
  void read_llm_engine(const YAML::Node& w, InferenceSetup& inf) {
    const YAML::Node e = w["engine"];
    if (e) inf.llm_engine = e.Scalar();
    auto& origin = inf.engine_setting_origin;
    for (const char* key : {"kv_admission", "chunked_prefill", "max_batched_tokens", "kv_memory_fraction"})
      origin[key] = "capsim's default";
    const hardware::Entity* entry = catalog_.find(hardware::EntityKind::engine, inf.llm_engine);
    if (entry == nullptr || entry->text("kind") != "llm-serving") {
      std::vector<std::string> llm_ids;
      for (const auto& c : catalog_.all(hardware::EntityKind::engine))
        if (c.text("kind") == "llm-serving") llm_ids.push_back(c.id);
      std::string list;
      for (const auto& id : llm_ids) list += (list.empty() ? "" : ", ") + id;
      const std::string hint = did_you_mean(inf.llm_engine, llm_ids);
      error(e ? e : w, "workload.engine",
            entry ? "'" + inf.llm_engine + "' is an inference engine; llm-serving runs " + list
                  : "unknown LLM serving engine '" + inf.llm_engine + "' (the catalog has " + list + ")",
            hint.empty() ? "data/catalog/llm_engines.yaml defines them" : hint);
      return;
    }
    const hardware::Entity& engine = *entry;
    const std::string of = engine.id + "'s";
    inf.llm_engine_name = engine.text("name");
    if (engine.has("kv_admission")) {
      inf.kv_admission = engine.text("kv_admission") == "reserved" ? models::LlmKvAdmission::reserve_full
                                                                   : models::LlmKvAdmission::on_demand;
      origin["kv_admission"] = of;
    }
    if (engine.has("preemption")) inf.preemption = engine.text("preemption");
    if (const auto* v = engine.find("chunked_prefill")) {
      inf.chunked_prefill = v->number != 0;
      origin["chunked_prefill"] = of;
    }
    if (auto tokens = engine.integer("max_batched_tokens")) {
      inf.max_batched_tokens = static_cast<int>(*tokens);
      origin["max_batched_tokens"] = of;
    }
    if (const auto* f = engine.find("kv_memory_fraction")) {
      inf.memory_utilization = f->number;
      origin["kv_memory_fraction"] = of;
    }
    if (engine.has("kv_memory_of") && engine.text("kv_memory_of") == "free") {
      inf.kv_budget = models::LlmKvBudget::share_of_free;
      // Without a sourced fraction, TensorRT-LLM's default share of what is free.
      if (!engine.has("kv_memory_fraction")) inf.memory_utilization = models::kTrtllmFreeGpuMemoryFraction;
    }
    // The scenario's keys win.
    if (w["kv_admission"]) {
      inf.kv_admission = w["kv_admission"].Scalar() == "reserved" ? models::LlmKvAdmission::reserve_full
                                                                  : models::LlmKvAdmission::on_demand;
      origin["kv_admission"] = "the scenario's";
    }
    if (w["chunked_prefill"]) {
      inf.chunked_prefill = w["chunked_prefill"].Scalar() == "true";
      origin["chunked_prefill"] = "the scenario's";
    }
    if (w["max_batched_tokens"]) {
      inf.max_batched_tokens = static_cast<int>(as_int(w["max_batched_tokens"]));
      origin["max_batched_tokens"] = "the scenario's";
    }
  }

  // Distributions become the simulation's requests, drawn from the scenario's seed.
  void sample_lengths(const YAML::Node& w, InferenceSetup& inf, std::uint64_t seed) {
    if (!inf.llm || (inf.prompt_lengths.is_fixed() && inf.output_lengths.is_fixed()) || !errors_.empty()) return;
    auto mix = models::sample_llm_request_mix(inf.prompt_lengths, inf.output_lengths, context_of(inf.shape),
                                              models::kLlmLengthSamples, seed);
    if (!mix) {
      const YAML::Node at = w["prompt_tokens"] ? w["prompt_tokens"] : w["output_tokens"];
      for (const auto& d : mix.errors()) error(at, d.key_path, d.message, d.hint);
      return;
    }
    inf.mix = std::move(mix).value();
  }

  // workload.prompt_tokens / output_tokens: a whole number (phase 1 checked its range), or a
  // distribution mapping whose keys phase 1 checked one by one; here, how they go together.
  models::LlmLengthDistribution read_length(const YAML::Node& n, const std::string& key,
                                            const models::TransformerShape& shape) {
    models::LlmLengthDistribution d;
    if (n.IsScalar()) {
      d.mean = static_cast<double>(as_int(n));
      d.min = d.max = static_cast<int>(d.mean);
      return d;
    }
    const int context = context_of(shape);
    d.min = n["min"] ? static_cast<int>(as_int(n["min"])) : 1;
    d.max = n["max"] ? static_cast<int>(as_int(n["max"])) : (context > 0 ? context : 1 << 22);
    const YAML::Node dist = n["distribution"], hist = n["histogram"];
    if (!dist && !hist) {
      error(n, key, "a length distribution needs distribution: or histogram:",
            "e.g. {distribution: exponential, mean: 256}, or {histogram: [[128, 0.5], [512, 0.5]]}; or one number");
      return d;
    }
    if (dist && hist) {
      error(hist, key + ".histogram", "give distribution: or histogram:, not both");
      return d;
    }
    // Keys that the chosen form does not read are errors, not silently ignored.
    auto refuse = [&](const char* k, const std::string& why) {
      if (n[k]) error(n[k], key + "." + k, std::string(k) + " does not apply to " + why);
    };
    if (hist) {
      d.kind = models::LlmLengthKind::histogram;
      for (const char* k : {"mean", "sigma", "min", "max"}) refuse(k, "a histogram (its pairs give the lengths)");
      for (std::size_t i = 0; i < hist.size(); ++i) {
        const YAML::Node pair = hist[i];
        const std::string at = key + ".histogram[" + std::to_string(i) + "]";
        if (pair.size() != 2) {
          error(pair, at, "expected a [tokens, weight] pair, got " + std::to_string(pair.size()) + " numbers",
                "e.g. [512, 0.3]");
          continue;
        }
        const double tokens = std::stod(pair[0].Scalar()), weight = std::stod(pair[1].Scalar());
        if (tokens < 1 || tokens != std::floor(tokens)) {
          error(pair[0], at, "tokens must be a whole number from 1 to 4194304, got " + pair[0].Scalar());
          continue;
        }
        if (!(weight > 0)) {
          error(pair[1], at, "weight must be greater than zero, got " + pair[1].Scalar(), "leave the length out instead");
          continue;
        }
        d.histogram.emplace_back(static_cast<int>(tokens), weight);
      }
      if (d.histogram.empty()) return d;
      double total = 0, sum = 0;
      d.min = d.max = d.histogram.front().first;
      for (const auto& [tokens, weight] : d.histogram) {
        total += weight;
        sum += tokens * weight;
        d.min = std::min(d.min, tokens);
        d.max = std::max(d.max, tokens);
      }
      d.mean = sum / total;
      if (context > 0 && d.min > context)
        error(hist, key + ".histogram", "every length is longer than " + shape.name + "'s context of " +
                                            std::to_string(context) + " tokens");
      return d;
    }
    const std::string kind = dist.Scalar();
    const std::string what = (kind == "exponential" ? "an " : "a ") + kind + " distribution";
    if (kind == "uniform") d.kind = models::LlmLengthKind::uniform;
    else if (kind == "normal") d.kind = models::LlmLengthKind::normal;
    else if (kind == "lognormal") d.kind = models::LlmLengthKind::lognormal;
    else d.kind = models::LlmLengthKind::exponential;
    if (d.min > d.max) {
      error(n["max"] ? n["max"] : n, key + ".max",
            "max (" + std::to_string(d.max) + ") is less than min (" + std::to_string(d.min) + ")");
      return d;
    }
    if (context > 0 && d.min > context)
      error(n["min"], key + ".min", "min (" + std::to_string(d.min) + ") is longer than " + shape.name + "'s context of " +
                                        std::to_string(context) + " tokens");
    if (d.kind == models::LlmLengthKind::uniform) {
      refuse("mean", "a uniform distribution (its mean is (min + max) / 2)");
      refuse("sigma", what);
      if (!n["min"] || !n["max"])
        error(n, key, "a uniform distribution needs min and max", "e.g. {distribution: uniform, min: 1, max: 511}");
      d.mean = (d.min + d.max) / 2.0;
      return d;
    }
    if (!n["mean"]) {
      error(n, key, what + " needs mean", "the mean length in tokens, e.g. mean: 256");
      return d;
    }
    d.mean = std::stod(n["mean"].Scalar());
    const bool needs_sigma = d.kind != models::LlmLengthKind::exponential;
    if (needs_sigma && !n["sigma"])
      error(n, key, what + " needs sigma",
            d.kind == models::LlmLengthKind::normal ? "the standard deviation in tokens, e.g. sigma: 64"
                                                    : "the standard deviation of ln(tokens), e.g. sigma: 0.8");
    else if (needs_sigma) {
      d.sigma = std::stod(n["sigma"].Scalar());
      if (!(d.sigma > 0)) error(n["sigma"], key + ".sigma", "must be greater than zero, got " + n["sigma"].Scalar(),
                                "a length that never varies is one number: " + key.substr(key.find('.') + 1) + ": " +
                                    significant(d.mean, 7));
    }
    if (!needs_sigma) refuse("sigma", what + " (its spread is its mean)");
    if (d.mean < d.min || d.mean > d.max)
      error(n["mean"], key + ".mean",
            "the mean (" + significant(d.mean, 7) + ") lies outside min to max (" + std::to_string(d.min) + " to " +
                std::to_string(d.max) + ")");
    return d;
  }

  // The model's context (TransformerPreset::context_length): 0 when the preset gives none.
  static int context_of(const models::TransformerShape& shape) {
    const auto* preset = models::find_transformer_preset(shape.name);
    return preset ? preset->context_length : 0;
  }

  // A request attends over its prompt and its output: longer than the released model's
  // context, no engine runs it (a 1,000,000-token prompt on a 131,072-token model passed).
  // The request_lengths file is checked line by line as it is read.
  void check_context_length(const YAML::Node& w, const InferenceSetup& inf) {
    const int context = context_of(inf.shape);
    if (context <= 0 || w["request_lengths"]) return;
    if (!inf.prompt_lengths.is_fixed() || !inf.output_lengths.is_fixed()) {
      // Sampling draws a pair again when it is longer than the context; the shortest pair must fit.
      const long long shortest = static_cast<long long>(inf.prompt_lengths.min) + inf.output_lengths.min;
      if (shortest > context)
        error(w["prompt_tokens"] ? w["prompt_tokens"] : w["output_tokens"],
              w["prompt_tokens"] ? "workload.prompt_tokens" : "workload.output_tokens",
              "the shortest request (" + std::to_string(inf.prompt_lengths.min) + " prompt and " +
                  std::to_string(inf.output_lengths.min) + " output tokens) is longer than " + inf.shape.name +
                  "'s context of " + std::to_string(context) + " tokens",
              "lower min");
      return;
    }
    const long long tokens = static_cast<long long>(inf.mix.prompt_tokens) + inf.mix.output_tokens;
    if (tokens <= context) return;
    const bool prompt_alone = inf.mix.prompt_tokens > context || !w["output_tokens"];
    const YAML::Node at = prompt_alone ? w["prompt_tokens"] : w["output_tokens"];
    error(at ? at : w, at ? (prompt_alone ? "workload.prompt_tokens" : "workload.output_tokens") : "workload",
          "a request of " + std::to_string(inf.mix.prompt_tokens) + " prompt and " + std::to_string(inf.mix.output_tokens) +
              " output tokens is " + std::to_string(tokens) + " tokens, more than " + inf.shape.name + "'s context of " +
              std::to_string(context) + " tokens",
          "the model attends over at most " + std::to_string(context) + " tokens, prompt and output together");
  }

  // Per-request lengths: a CSV with the header prompt_tokens,output_tokens and one request
  // per line, relative to the scenario and inside its directory (the trace file's rules);
  // a line longer than the model's context is refused at its line.
  void read_request_lengths(const YAML::Node& n, InferenceSetup& inf) {
    constexpr std::uintmax_t kMaxLengthsBytes = 64ull * 1024 * 1024;
    constexpr long long kMaxTokens = 1 << 22;  // workload.prompt_tokens' bound
    constexpr int kMaxReported = 20;
    const std::string key = "workload.request_lengths";
    const int context = context_of(inf.shape);
    auto read = read_named_file(n, key, "request lengths file", kMaxLengthsBytes);
    if (!read) return;
    const std::string& file = read->first;
    std::istringstream in(read->second);
    std::vector<models::LlmRequestLength> requests;
    bool header = false;
    int line = 0, bad = 0;
    auto report = [&](int column, const std::string& message, const std::string& hint) {
      if (++bad <= kMaxReported) errors_.push_back({{file, line, column}, key, message, hint});
    };
    for (std::string row; std::getline(in, row);) {
      ++line;
      if (!row.empty() && row.back() == '\r') row.pop_back();
      if (row.empty() || row[0] == '#') continue;
      const std::vector<CsvCell> cells = csv_cells(row);
      if (!header) {
        if (cells.size() != 2 || cells[0].text != "prompt_tokens" || cells[1].text != "output_tokens") {
          report(1, "the header must be 'prompt_tokens,output_tokens'", "one request per line after it, e.g. 467,256");
          return;
        }
        header = true;
        continue;
      }
      if (cells.size() != 2) {
        report(1, "line " + std::to_string(line) + " has " + std::to_string(cells.size()) +
                      " columns, expected 2 (prompt_tokens, output_tokens)", "");
        continue;
      }
      long long v[2] = {0, 0};
      bool ok = true;
      for (int c = 0; c < 2 && ok; ++c) {
        const std::string& cell = cells[c].text;
        const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v[c]);
        if (ec != std::errc{} || end != cell.data() + cell.size() || v[c] < 1 || v[c] > kMaxTokens) {
          report(cells[c].column, std::string(c == 0 ? "prompt_tokens" : "output_tokens") + " must be a whole number from 1 to " +
                                 std::to_string(kMaxTokens) + " (its text is not shown)", "");
          ok = false;
        }
      }
      if (ok && context > 0 && v[0] + v[1] > context) {
        report(1, "the request's prompt_tokens + output_tokens are more than " + inf.shape.name + "'s context of " +
                      std::to_string(context) + " tokens (its text is not shown)",
               "the model attends over at most " + std::to_string(context) + " tokens, prompt and output together");
        ok = false;
      }
      if (ok) requests.push_back({static_cast<int>(v[0]), static_cast<int>(v[1])});
    }
    if (bad > kMaxReported)
      errors_.push_back({{file, line, 1}, key, std::to_string(bad - kMaxReported) + " more lines are wrong the same ways", ""});
    if (!header) {
      errors_.push_back({{file, 1, 1}, key, "the request lengths file is empty", "header prompt_tokens,output_tokens"});
      return;
    }
    if (bad > 0) return;
    if (requests.empty()) {
      errors_.push_back({{file, line, 1}, key, "the request lengths file lists no requests", "one line per request after the header, e.g. 467,256"});
      return;
    }
    inf.mix = models::llm_request_mix(std::move(requests));
    inf.request_lengths_file = n.Scalar();
  }

  // A served model: a preset name, or the user's own (described and/or measured).
  std::optional<models::ServedModel> served_model(const YAML::Node& n, const std::string& path,
                                                  const std::string& stage) {
    if (n.IsScalar()) {
      if (const models::ServedModel* preset = models::find_reference_served_model(n.Scalar())) return *preset;
      std::vector<std::string> names;
      for (const auto& m : models::reference_served_models()) names.push_back(m.model.name);
      error(n, path, "unknown served model '" + n.Scalar() + "'",
            did_you_mean(n.Scalar(), names).empty() ? "`capsim models` lists the presets; or describe your model "
                                                      "by flops_per_sample, bytes_per_sample and params"
                                                    : did_you_mean(n.Scalar(), names));
      return std::nullopt;
    }
    models::ServedModel m;
    m.model.name = n["name"] ? n["name"].Scalar() : stage;
    m.model.source = "the scenario's own description";
    if (n["flops_per_sample"]) m.model.forward_flops_per_sample = as_quantity(n["flops_per_sample"]);
    if (n["bytes_per_sample"]) m.model.activation_bytes_per_sample = as_quantity(n["bytes_per_sample"]);
    if (n["params"]) m.model.params = as_count(n["params"]);
    if (n["input_bytes"]) m.model.input_bytes_per_sample = as_quantity(n["input_bytes"]);
    if (n["resolution"]) m.model.input_resolution = static_cast<int>(as_int(n["resolution"]));
    if (n["layers"]) m.kernels_per_forward = static_cast<int>(as_int(n["layers"]));
    const std::size_t before = errors_.size();
    std::map<std::string, std::vector<des::ServiceTime::Row>> tables;
    std::map<std::string, SourceLocation> table_at;
    if (const YAML::Node rows = n["latency"]) {
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const YAML::Node r = rows[i];
        const std::string gpu = r["gpu"].Scalar();
        if (!catalog_.find_gpu(gpu)) {
          error(r["gpu"], path + ".latency[" + std::to_string(i) + "].gpu", "unknown GPU '" + gpu + "'",
                did_you_mean(gpu, catalog_.ids(hardware::EntityKind::gpu)));
          continue;
        }
        add_latency_row(tables, table_at, gpu, static_cast<int>(as_int(r["batch"])), as_quantity(r["latency"]),
                        {file_, r.Mark().line + 1, r.Mark().column + 1}, path + ".latency[" + std::to_string(i) + "]");
      }
      if (n["latency"]) m.model.source = "measured latency table in the scenario";
    }
    if (const YAML::Node f = n["latency_file"]) {
      read_latency_file(f, path + ".latency_file", tables, table_at);
      m.model.source = "measured latency table " + f.Scalar();
    }
    for (auto& [gpu, rows] : tables) {
      auto curve = models::LatencyCurve::measured(std::move(rows), m.model.source + " (" + gpu + ")");
      if (!curve) {
        for (const auto& d : curve.errors())
          errors_.push_back({table_at[gpu], path, "GPU " + gpu + ": " + d.message, "batches increasing, latencies not decreasing"});
        continue;
      }
      m.measured.emplace(gpu, std::move(*curve));
    }
    if (!(m.model.forward_flops_per_sample > 0) && !n["latency"] && !n["latency_file"])
      error(n, path, "your own model needs flops_per_sample (a roofline from its FLOPs, bytes and params) or a "
                     "measured latency / latency_file",
            "e.g. model: {flops_per_sample: 8.2 GFLOP, bytes_per_sample: 42 MB, params: 25.6 M}");
    if (errors_.size() != before) return std::nullopt;
    return m;
  }

  void add_latency_row(std::map<std::string, std::vector<des::ServiceTime::Row>>& tables,
                       std::map<std::string, SourceLocation>& at, const std::string& gpu, int batch, double seconds,
                       SourceLocation where, const std::string& key) {
    auto& rows = tables[gpu];
    if (!at.contains(gpu)) at[gpu] = where;
    if (!rows.empty() && batch <= rows.back().batch) {
      errors_.push_back({where, key, "GPU " + gpu + ": batch " + std::to_string(batch) + " after batch " +
                                         std::to_string(rows.back().batch) + ": batches must increase",
                         "list each GPU's batches in increasing order"});
      return;
    }
    if (!rows.empty() && seconds < rows.back().time.value()) {
      errors_.push_back({where, key, "GPU " + gpu + ": batch " + std::to_string(batch) + " takes " +
                                         significant(seconds * 1e3) + " ms, less than batch " +
                                         std::to_string(rows.back().batch) + " (" +
                                         significant(rows.back().time.value() * 1e3) +
                                         " ms): latency must not fall as the batch grows",
                         "a measured table with a falling latency is usually a unit or column mix-up"});
      return;
    }
    rows.push_back({batch, Seconds(seconds)});
  }

  // A CSV of measured latencies: header gpu,batch,latency_<unit>; relative to the scenario
  // and inside its directory (the trace file's rules).
  void read_latency_file(const YAML::Node& n, const std::string& key,
                         std::map<std::string, std::vector<des::ServiceTime::Row>>& tables,
                         std::map<std::string, SourceLocation>& at) {
    constexpr std::uintmax_t kMaxTableBytes = 4ull * 1024 * 1024;
    auto read = read_named_file(n, key, "latency file", kMaxTableBytes);
    if (!read) return;
    const std::string& file = read->first;
    std::istringstream in(read->second);
    int line = 0;
    double unit = 0;
    std::string unit_name;
    for (std::string row; std::getline(in, row);) {
      ++line;
      if (!row.empty() && row.back() == '\r') row.pop_back();
      if (row.empty() || row[0] == '#') continue;
      std::vector<std::string> cells;
      for (auto& cell : csv_cells(row)) cells.push_back(std::move(cell.text));
      if (unit == 0) {
        if (cells.size() != 3 || cells[0] != "gpu" || cells[1] != "batch" || !cells[2].starts_with("latency_")) {
          errors_.push_back({{file, line, 1}, key, "the header must be 'gpu,batch,latency_ms' (or latency_us, latency_s)",
                             "the latency column names its unit"});
          return;
        }
        unit_name = cells[2].substr(8);
        unit = unit_name == "s" ? 1.0 : unit_name == "ms" ? 1e-3 : unit_name == "us" ? 1e-6 : 0.0;
        if (unit == 0) {
          errors_.push_back({{file, line, 3}, key, "unknown latency unit '" + unit_name + "' in the header",
                             "latency_ms, latency_us or latency_s"});
          return;
        }
        continue;
      }
      if (cells.size() != 3) {
        errors_.push_back({{file, line, 1}, key, "line " + std::to_string(line) + " has " + std::to_string(cells.size()) +
                                                     " columns, expected 3 (gpu, batch, latency)", ""});
        continue;
      }
      if (!catalog_.find_gpu(cells[0])) {
        errors_.push_back({{file, line, 1}, key, "unknown GPU '" + cells[0] + "'",
                           did_you_mean(cells[0], catalog_.ids(hardware::EntityKind::gpu))});
        continue;
      }
      long long batch = 0;
      const auto [bend, bec] = std::from_chars(cells[1].data(), cells[1].data() + cells[1].size(), batch);
      if (bec != std::errc{} || bend != cells[1].data() + cells[1].size() || batch < 1 || batch > (1 << 16)) {
        errors_.push_back({{file, line, static_cast<int>(cells[0].size()) + 2}, key,
                           "batch must be a whole number from 1 to 65536", ""});
        continue;
      }
      double v = 0;
      if (!parse_double(cells[2], v) || !(v > 0)) {
        errors_.push_back({{file, line, static_cast<int>(cells[0].size() + cells[1].size()) + 3}, key,
                           "latency must be a number greater than zero (in " + unit_name + ")", ""});
        continue;
      }
      if (v * unit < kMinBatchLatencySeconds || v * unit > kMaxBatchLatencySeconds) {
        errors_.push_back({{file, line, static_cast<int>(cells[0].size() + cells[1].size()) + 3}, key,
                           "latency must be between 1 us and 60 min (in " + unit_name + ": " +
                               number_text(kMinBatchLatencySeconds / unit) + " to " +
                               number_text(kMaxBatchLatencySeconds / unit) + ")",
                           "a batch faster than a kernel launch is usually a unit slip"});
        continue;
      }
      add_latency_row(tables, at, cells[0], static_cast<int>(batch), v * unit, {file, line, 1}, key);
    }
    if (unit == 0) errors_.push_back({{file, 1, 1}, key, "the latency file is empty", "header gpu,batch,latency_ms"});
  }

  void build_deployment(const YAML::Node& d, InferenceSetup& inf) {
    inf.node = d["node"].Scalar();
    if (catalog_.find(hardware::EntityKind::instance, inf.node) == nullptr &&
        catalog_.find(hardware::EntityKind::server, inf.node) == nullptr) {
      std::vector<std::string> ids = catalog_.ids(hardware::EntityKind::instance);
      for (auto& id : catalog_.ids(hardware::EntityKind::server)) ids.push_back(id);
      error(d["node"], "deployment.node", "no instance or server with id '" + inf.node + "'", did_you_mean(inf.node, ids));
    }
    if (d["sharing"]) inf.sharing = sharing_mode(d["sharing"].Scalar());
    if (d["tensor_parallel"]) inf.tensor_parallel = static_cast<int>(as_int(d["tensor_parallel"]));
    if (d["pipeline_parallel"]) inf.pipeline_parallel = static_cast<int>(as_int(d["pipeline_parallel"]));
    if (d["replicas"]) inf.replicas = static_cast<int>(as_int(d["replicas"]));
    if (inf.llm) return;
    const YAML::Node stages = d["stages"];
    if (!stages || stages.size() != graph_stages_) {
      error(stages ? stages : d, "deployment.stages",
            "expected one entry per graph stage (" + std::to_string(graph_stages_) + ")");
      return;
    }
    for (std::size_t i = 0; i < stages.size(); ++i) {
      const YAML::Node s = stages[i];
      models::StageDeployment st;
      st.exec = inf.exec;
      if (s["replicas"]) st.replicas = static_cast<int>(as_int(s["replicas"]));
      if (s["instances"]) st.instances_per_replica = static_cast<int>(as_int(s["instances"]));
      if (s["max_batch"]) st.batching.max_batch = static_cast<int>(as_int(s["max_batch"]));
      if (s["max_queue_delay"]) st.batching.max_queue_delay = Seconds(as_quantity(s["max_queue_delay"]));
      if (s["mig_profile"]) st.mig_profile = s["mig_profile"].Scalar();
      if (s["mps_share"]) st.mps_share = as_quantity(s["mps_share"]);
      if (inf.sharing == models::SharingMode::mig && st.mig_profile.empty())
        error(s, "deployment.stages[" + std::to_string(i) + "]", "mig sharing needs mig_profile", "e.g. 1g.10gb");
      inf.stages.push_back(st);
    }
  }

  MoneyPerSecond price_rate(const YAML::Node& n) {
    auto q = parse_quantity(n.Scalar());
    return MoneyPerSecond(q->value_si, q->currency);
  }
  Money money(const YAML::Node& n) {
    auto q = parse_quantity(n.Scalar());
    return Money(q->value_si, q->currency);
  }

  CostSetup build_cost(const YAML::Node& n) {
    CostSetup c;
    if (n["horizon"]) c.horizon = Seconds(as_quantity(n["horizon"]));
    if (const YAML::Node u = n["utilization"]) {
      if (u["profile"]) c.profile = u["profile"].Scalar();
      if (u["hours_per_day"]) c.hours_per_day = std::stod(u["hours_per_day"].Scalar());
      if (u["days_per_week"]) c.days_per_week = std::stod(u["days_per_week"].Scalar());
      if (u["weeks_on"]) c.weeks_on = std::stod(u["weeks_on"].Scalar());
      if (u["period_weeks"]) c.period_weeks = std::stod(u["period_weeks"].Scalar());
      if (u["busy"]) c.busy = as_quantity(u["busy"]);
      if (c.profile == "campaigns" && (!u["weeks_on"] || !u["period_weeks"]))
        error(u, "cost.utilization", "campaigns needs weeks_on and period_weeks");
      if (c.profile == "measured" && !u["busy"]) error(u, "cost.utilization", "measured needs busy, e.g. '65 %'");
      if (c.busy <= 0 || c.busy > 1) error(u["busy"], "cost.utilization.busy", "must be greater than 0 % and at most 100 %");
    }
    if (n["runs_per_month"]) c.runs_per_month = std::stod(n["runs_per_month"].Scalar());
    if (n["storage"]) c.storage = price_rate(n["storage"]);
    if (n["egress"]) c.egress = price_rate(n["egress"]);
    if (const YAML::Node rates = n["exchange_rates"])
      for (std::size_t i = 0; i < rates.size(); ++i) {
        const Currency currency = parse_currency_code(rates[i]["currency"].Scalar()).value_or(Currency::none);
        // A second rate of one currency was ignored without a word: the first one converted.
        const auto first = std::find_if(c.usd_per_unit.begin(), c.usd_per_unit.end(),
                                        [&](const auto& r) { return r.first == currency; });
        if (first != c.usd_per_unit.end()) {
          error(rates[i]["currency"], "cost.exchange_rates[" + std::to_string(i) + "].currency",
                "a second " + rates[i]["currency"].Scalar() + " rate (cost.exchange_rates[" +
                    std::to_string(first - c.usd_per_unit.begin()) + "] gives one): which converts would be ambiguous",
                "give one rate per currency");
          continue;
        }
        c.usd_per_unit.emplace_back(currency, std::stod(rates[i]["usd"].Scalar()));
      }
    const YAML::Node options = n["options"];
    for (std::size_t i = 0; i < options.size(); ++i) c.options.push_back(build_cost_option(options[i], i));
    return c;
  }

  CostOptionSetup build_cost_option(const YAML::Node& n, std::size_t index) {
    const std::string path = "cost.options[" + std::to_string(index) + "]";
    CostOptionSetup o;
    o.where = {file_, n.Mark().line + 1, n.Mark().column + 1};
    o.name = n["name"].Scalar();
    auto text = [&](const char* key) { return n[key] ? n[key].Scalar() : std::string(); };
    o.instance = text("instance");
    o.server = text("server");
    o.facility = text("facility");
    if (o.instance.empty() == o.server.empty())
      error(n, path, "an option names either an instance (cloud, bare metal) or a server (owned)");
    if (!o.instance.empty()) {
      if (auto found = catalog_.get(hardware::EntityKind::instance, o.instance); !found)
        error(n["instance"], path + ".instance", found.errors()[0].message, found.errors()[0].hint);
    }
    if (!o.server.empty()) {
      if (auto found = catalog_.get(hardware::EntityKind::server, o.server); !found)
        error(n["server"], path + ".server", found.errors()[0].message, found.errors()[0].hint);
      if (o.facility.empty()) error(n, path, "an owned server needs a facility: (on-prem or colocation)");
      if (!n["idle_power"])
        error(n, path, "an owned server needs idle_power: its draw when idle, as a share of its maximum",
              "e.g. idle_power: 30 %");
    }
    if (!o.facility.empty())
      if (auto found = catalog_.get(hardware::EntityKind::facility, o.facility); !found)
        error(n["facility"], path + ".facility", found.errors()[0].message, found.errors()[0].hint);
    if (n["pricing"]) o.pricing = n["pricing"].Scalar();
    if (n["interruptions_per_hour"]) o.interruptions_per_hour = std::stod(n["interruptions_per_hour"].Scalar());
    if (n["checkpoint_interval"]) o.checkpoint_interval = Seconds(as_quantity(n["checkpoint_interval"]));
    if (n["restart_time"]) o.restart_time = Seconds(as_quantity(n["restart_time"]));
    if (o.pricing == "spot" && o.interruptions_per_hour > 0 && !n["checkpoint_interval"])
      error(n, path, "spot with interruptions needs checkpoint_interval");
    if (n["depreciation"]) o.depreciation = Seconds(as_quantity(n["depreciation"]));
    if (n["network_per_server"]) o.network_per_server = money(n["network_per_server"]);
    if (n["maintenance_per_year"]) o.maintenance_per_year = as_quantity(n["maintenance_per_year"]);
    if (n["licences_per_gpu_per_year"]) o.licences_per_gpu_per_year = money(n["licences_per_gpu_per_year"]);
    if (n["staff_fte"]) o.staff_fte = std::stod(n["staff_fte"].Scalar());
    if (n["staff_cost_per_fte"]) o.staff_cost_per_fte = price_rate(n["staff_cost_per_fte"]);
    if (n["space_per_server"]) o.space_per_server = price_rate(n["space_per_server"]);
    if (n["idle_power"]) o.idle_power = as_quantity(n["idle_power"]);
    if (o.idle_power && *o.idle_power > 1) error(n["idle_power"], path + ".idle_power", "must be at most 100 %");
    if (n["cross_connects"]) o.cross_connects = static_cast<int>(as_int(n["cross_connects"]));
    if (n["cross_connect_price"]) o.cross_connect_price = price_rate(n["cross_connect_price"]);
    if (n["remote_hands_per_month"]) o.remote_hands_per_month = Seconds(as_quantity(n["remote_hands_per_month"]));
    if (n["remote_hands_price"]) o.remote_hands_price = price_rate(n["remote_hands_price"]);
    if (n["gpu_share"]) o.gpu_share = as_quantity(n["gpu_share"]);
    if (o.gpu_share <= 0 || o.gpu_share > 1) error(n["gpu_share"], path + ".gpu_share", "must be greater than 0 % and at most 100 %");
    return o;
  }

  void build_search(const YAML::Node& s, SearchSpace& space) {
    auto to_int = [](const YAML::Node& n) { return static_cast<int>(std::stoll(n.Scalar())); };
    read_list(s["micro_batch"], space.micro_batch, to_int);
    read_list(s["zero_stage"], space.zero_stage, to_int);
    read_list(s["tensor_parallel"], space.tensor_parallel, to_int);
    read_list(s["pipeline_parallel"], space.pipeline_parallel, to_int);
    read_list(s["batch_per_gpu"], space.batch_per_gpu, to_int);
    read_list(s["virtual_stages"], space.virtual_stages, to_int);
    read_list(s["context_parallel"], space.context_parallel, to_int);
    read_list(s["expert_parallel"], space.expert_parallel, to_int);
    auto to_bool = [](const YAML::Node& n) { return n.Scalar() == "true"; };
    read_list(s["sequence_parallel"], space.sequence_parallel, to_bool);
    read_list(s["fsdp_hybrid"], space.fsdp_hybrid, to_bool);
    read_list(s["recompute_fraction"], space.recompute_fraction, [](const YAML::Node& n) { return std::stod(n.Scalar()); });
    read_list(s["recompute"], space.recompute, [](const YAML::Node& n) {
      const std::string r = n.Scalar();
      return r == "full" ? models::Recompute::full : r == "selective" ? models::Recompute::selective : models::Recompute::none;
    });
  }

  std::string file_;
  const hardware::Catalog& catalog_;
  std::size_t graph_stages_ = 0;  // workload.graph entries as written (some may have failed to load)
  std::vector<Diagnostic> errors_;
};

}  // namespace

std::vector<Diagnostic> placed(const Scenario& s, std::vector<Diagnostic> errors) {
  for (auto& d : errors) {
    if (d.where.file.empty()) d.where.file = s.file;
    if (d.where.line > 0 || d.where.file != s.file) continue;
    for (std::string path = d.key_path; !path.empty();) {
      if (const auto it = s.key_at.find(path); it != s.key_at.end()) {
        d.where = it->second;
        break;
      }
      const auto cut = path.find_last_of(".[");
      path = cut == std::string::npos ? "" : path.substr(0, cut);
    }
  }
  return errors;
}

Result<Scenario> load_scenario(const std::string& name, const std::string& text, const hardware::Catalog& catalog) {
  return Loader(name, catalog).load(text);
}

Result<std::string> read_scenario_text(const std::filesystem::path& path) {
  if (path == "-") {  // standard input, as Unix tools read "-"
    std::string text(kMaxScenarioBytes + 1, '\0');
    std::cin.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(std::cin.gcount()));
    if (text.size() > kMaxScenarioBytes)
      return Diagnostic{{"<stdin>"}, "", "the scenario on standard input is larger than " +
                                             std::to_string(kMaxScenarioBytes / (1024 * 1024)) + " MiB", ""};
    return text;
  }
  auto text = read_input_file(path, kMaxScenarioBytes, "scenario file");
  if (!text && std::filesystem::is_directory(path)) {
    auto d = text.errors().front();
    d.hint = "give a .yaml file";
    return d;
  }
  return text;
}

Result<Scenario> load_scenario_file(const std::filesystem::path& path, const hardware::Catalog& catalog) {
  auto text = read_scenario_text(path);
  if (!text) return text.errors();
  return load_scenario(path == "-" ? std::string("<stdin>") : path.string(), *text, catalog);
}

}  // namespace capsim::scenarios
