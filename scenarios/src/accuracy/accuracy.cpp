// The accuracy runner: reads data/validation, asks each kind's predictor (predictors.hpp)
// for every row, and summarises the signed errors per group, held-out rows apart.
#include "capsim/scenarios/accuracy.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>

#include "capsim/core/files.hpp"
#include "capsim/core/suggest.hpp"
#include "capsim/scenarios/workspace.hpp"
#include "predictors.hpp"

namespace capsim::scenarios {

Diagnostic accuracy::row_error(const YAML::Node& n, std::string key, std::string message) {
  const YAML::Mark m = n.Mark();
  return Diagnostic{{{}, m.line + 1, m.column + 1}, std::move(key), std::move(message), {}};
}

void accuracy::emit_row_header(YAML::Emitter& out, const YAML::Node& row) {
  out << YAML::Key << "name" << YAML::Value << row["id"].as<std::string>();
  out << YAML::Key << "description" << YAML::Value
      << (row["source"] ? row["source"].as<std::string>() : std::string()) +
             (row["where"] ? "; " + row["where"].as<std::string>() : std::string());
}

namespace {

namespace fs = std::filesystem;

Diagnostic at(const std::string& file, const YAML::Node& n, std::string key, std::string message) {
  const YAML::Mark m = n.Mark();
  return Diagnostic{{file, m.line + 1, m.column + 1}, std::move(key), std::move(message), {}};
}

using Predictor = Result<accuracy::RowPrediction> (*)(const YAML::Node&, const hardware::Catalog&);

Predictor predictor_for(const std::string& kind) {
  if (kind == "training") return accuracy::predict_training_row;
  if (kind == "cnn-training") return accuracy::predict_cnn_training_row;
  if (kind == "vision-inference") return accuracy::predict_vision_inference_row;
  if (kind == "llm-serving") return accuracy::predict_llm_serving_row;
  return nullptr;
}

// Megatron-LM SC'21 Table 1 keeps the paper's own columns (it is shared with the
// megatron validation test); each row becomes a training row here. Their measured figure
// is TFLOP/s per GPU with the paper's FLOP count, which includes one recompute forward
// (full recompute, sec. 5.1); the table gives no micro-batch or schedule: b = 1, plain
// 1F1B, no sequence parallelism (it came later), eager attention (2021, before
// FlashAttention). The model's GEMM constants were chosen on these rows: fit.
std::vector<YAML::Node> megatron_table_rows(const YAML::Node& doc) {
  std::vector<YAML::Node> rows;
  const YAML::Node hw = doc["hardware"];
  for (const auto& r : doc["rows"]) {
    YAML::Node row;
    const int gpus = r["gpus"].as<int>(), tp = r["tp"].as<int>(), pp = r["pp"].as<int>();
    row["id"] = "megatron-sc21-t1-" + r["params_b"].as<std::string>() + "b";
    row["source"] = "Narayanan et al., Efficient Large-Scale Language Model Training on GPU Clusters Using "
                    "Megatron-LM, SC'21, https://arxiv.org/abs/2104.04473";
    row["where"] = "Table 1, " + r["params_b"].as<std::string>() + " B row";
    row["as_of"] = "2021-04";
    row["group"] = "megatron-3d";
    row["fit"] = true;
    YAML::Node model;
    model["layers"] = r["layers"];
    model["hidden"] = r["hidden"];
    model["heads"] = r["heads"];
    model["vocab"] = doc["model"]["vocab"];
    row["model"] = model;
    row["seq_len"] = doc["model"]["seq_len"];
    row["global_batch"] = r["global_batch"];
    row["micro_batch"] = 1;
    row["precision"] = "fp16";
    row["attention"] = "eager";
    YAML::Node h;
    h["gpu"] = hw["gpu"];
    h["gpus"] = gpus;
    h["gpus_per_node"] = hw["gpus_per_node"];
    h["intra_node"] = hw["intra_node"];
    h["inter_node"] = hw["inter_node"];
    row["hardware"] = h;
    YAML::Node layout;
    layout["tp"] = tp;
    layout["pp"] = pp;
    layout["dp"] = gpus / (tp * pp);
    layout["vp"] = 1;
    layout["sp"] = false;
    layout["sharding"] = "none";
    layout["recompute"] = "full";
    row["layout"] = layout;
    YAML::Node measured;
    measured["metric"] = "tflops_per_gpu";
    measured["value"] = r["achieved_tflops_per_gpu"];
    measured["flop_convention"] = "megatron-with-recompute";
    row["measured"] = measured;
    rows.push_back(row);
  }
  return rows;
}

void summarise_into(AccuracySummary& s, const std::vector<const AccuracyRow*>& rows) {
  double sum = 0, held_sum = 0, fit_sum = 0, dev_sum = 0, first_sum = 0;
  // A row marked first_look: whose first look is not recorded yet counts in no figure: its
  // error must not be seen (in a mean either) before it is recorded.
  const auto pending = [](const AccuracyRow* r) {
    return r->first_look_row && !r->fit && !r->first_look_error && r->not_predicted.empty();
  };
  for (const AccuracyRow* r : rows) {
    if (pending(r)) {
      ++s.first_look_pending;
      continue;
    }
    if (r->fit) continue;
    if (r->first_look_error) {  // the recorded error, whatever the row gives now
      const double e = std::fabs(*r->first_look_error);
      ++s.first_look;
      first_sum += e;
      s.first_look_max_abs = std::max(s.first_look_max_abs, e);
    } else if (r->not_predicted.empty()) {
      const double e = std::fabs(r->error_percent);
      ++s.dev;
      dev_sum += e;
      s.dev_max_abs = std::max(s.dev_max_abs, e);
    }
  }
  if (s.dev > 0) s.dev_mean_abs = dev_sum / s.dev;
  if (s.first_look > 0) s.first_look_mean_abs = first_sum / s.first_look;
  for (const AccuracyRow* r : rows) {
    if (pending(r)) continue;
    if (!r->not_predicted.empty()) {
      ++s.not_predicted;
      continue;
    }
    const double e = std::fabs(r->error_percent);
    ++s.rows;
    sum += e;
    s.max_abs = std::max(s.max_abs, e);
    if (r->fit) {
      ++s.fit;
      fit_sum += e;
    } else {
      ++s.held_out;
      held_sum += e;
      s.held_out_max_abs = std::max(s.held_out_max_abs, e);
    }
  }
  if (s.rows > 0) s.mean_abs = sum / s.rows;
  if (s.held_out > 0) s.held_out_mean_abs = held_sum / s.held_out;
  if (s.fit > 0) s.fit_mean_abs = fit_sum / s.fit;
}

// A row's batch is one a GPU ran: a whole number from 1 to 65536, the bound a scenario's
// max_batch has. A batch of 1e9 was predicted (900 million ms) instead of refused.
bool batch_in_range(const std::string& file, const YAML::Node& r, const std::string& id, std::vector<Diagnostic>& errors) {
  constexpr long long kMaxRowBatch = 1 << 16;
  bool ok = true;
  for (const char* key : {"batch", "batch_per_gpu"}) {
    const YAML::Node b = r[key];
    if (!b) continue;
    long long v = 0;
    if (b.IsScalar() && YAML::convert<long long>::decode(b, v) && v >= 1 && v <= kMaxRowBatch) continue;
    errors.push_back(at(file, b, "rows[" + id + "]." + key,
                        std::string(key) + " must be a whole number from 1 to " + std::to_string(kMaxRowBatch) +
                            (b.IsScalar() ? ", got '" + b.Scalar() + "'" : std::string())));
    ok = false;
  }
  return ok;
}

}  // namespace

Result<fs::path> default_validation_dir(const fs::path& data_dir) {
  if (const char* dir = std::getenv("CAPSIM_VALIDATION"); dir && *dir) return fs::path(dir);
  auto data = find_data_dir(data_dir);
  if (!data) return data.errors();
  return data->path / "validation";
}

Result<AccuracyReport> run_accuracy(const hardware::Catalog& catalog, const fs::path& dir,
                                    const std::string& group) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".yaml") files.push_back(it->path());
  if (ec)
    return Diagnostic{{dir.string(), 0, 0}, "", "cannot read the validation directory: " + ec.message(), {}};
  std::sort(files.begin(), files.end());

  AccuracyReport report;
  std::vector<Diagnostic> errors;
  std::map<std::string, FirstLook> first_looks;
  {
    auto recorded = read_first_looks(dir / kFirstLooksFile);
    if (!recorded) return recorded.errors();
    for (auto& f : *recorded) first_looks.emplace(f.id, std::move(f));
  }
  for (const fs::path& path : files) {
    if (path.filename() == kFirstLooksFile) continue;  // the record, not rows
    const std::string file = path.filename().string();
    YAML::Node doc;
    try {
      doc = YAML::LoadFile(path.string());
    } catch (const YAML::Exception& e) {
      errors.push_back({{path.string(), e.mark.line + 1, e.mark.column + 1}, "", e.msg, {}});
      continue;
    }
    // A value of the wrong type anywhere in the file (a word where a number belongs, a list
    // where text does) is an error at its line and column, like every other bad input.
    const auto bad_value = [&](const YAML::Exception& e, const std::string& where) {
      errors.push_back({{path.string(), e.mark.line + 1, e.mark.column + 1},
                        where,
                        "a value of the wrong type (yaml-cpp: " + e.msg + ")",
                        "see data/validation/README.md for each field's type"});
    };
    std::string kind;
    std::vector<YAML::Node> rows;
    try {
      if (doc.IsMap() && doc["kind"]) {
        kind = doc["kind"].as<std::string>();
        if (!predictor_for(kind)) {
          errors.push_back(at(path.string(), doc["kind"], "kind",
                              "unknown kind '" + kind + "' (expected training, cnn-training, vision-inference or llm-serving)"));
          continue;
        }
        for (const auto& r : doc["rows"]) rows.push_back(r);
      } else if (file == "megatron_sc21_table1.yaml") {
        kind = "training";
        rows = megatron_table_rows(doc);
      } else {
        continue;  // not a file of predicted rows (memory_rules.yaml is checked by its own test)
      }
    } catch (const YAML::Exception& e) {
      bad_value(e, "kind");
      continue;
    }
    // --group KIND: the other kinds' rows are not predicted at all (their groups are theirs).
    if (predictor_for(group) && group != kind) continue;
    const Predictor predict = predictor_for(kind);
    for (const YAML::Node& r : rows) {
      try {
        AccuracyRow row;
        row.file = file;
        row.kind = kind;
        if (!r["id"] || !r["source"] || !r["measured"]) {
          errors.push_back(at(path.string(), r, "rows", "a row needs id, source and measured"));
          continue;
        }
        row.id = r["id"].as<std::string>();
        if (!batch_in_range(path.string(), r, row.id, errors)) continue;
        row.source = r["source"].as<std::string>();
        if (r["where"]) row.where = r["where"].as<std::string>();
        row.fit = r["fit"] && r["fit"].as<bool>();
        row.first_look_row = static_cast<bool>(r["first_look"]);
        if (auto recorded = first_looks.find(row.id); recorded != first_looks.end())
          row.first_look_error = recorded->second.error_percent;
        row.groups.push_back(kind);
        if (r["group"]) row.groups.push_back(r["group"].as<std::string>());
        auto predicted = predict(r, catalog);
        if (!predicted) {
          const auto& d = predicted.errors().front();
          row.not_predicted = d.key_path.empty() ? d.message : d.key_path + ": " + d.message;
          if (r["measured"]["metric"]) row.metric = r["measured"]["metric"].as<std::string>();
        } else {
          row.metric = predicted->metric;
          row.published = predicted->published;
          row.predicted = predicted->predicted;
          row.detail = predicted->detail;
          row.step_time_s = predicted->step_time_s;
          for (const auto& t : predicted->tags) row.groups.push_back(t);
          if (!(row.published > 0) || !std::isfinite(row.predicted) || !(row.predicted > 0)) {
            row.not_predicted = "no positive finite figure (published " + std::to_string(row.published) + ")";
          } else {
            row.error_percent = (row.predicted - row.published) / row.published * 100.0;
          }
        }
        // kind, then the row's own group, then the derived tags (sorted, none repeated).
        const std::size_t fixed = r["group"] ? 2 : 1;
        std::vector<std::string> tags(row.groups.begin() + fixed, row.groups.end());
        row.groups.resize(fixed);
        std::sort(tags.begin(), tags.end());
        for (auto& tag : tags)
          if (std::find(row.groups.begin(), row.groups.end(), tag) == row.groups.end())
            row.groups.push_back(std::move(tag));
        report.rows.push_back(std::move(row));
      } catch (const YAML::Exception& e) {
        bad_value(e, r.IsMap() && r["id"] && r["id"].IsScalar() ? "rows[" + r["id"].Scalar() + "]" : "rows");
      }
    }
  }
  if (!errors.empty()) return errors;

  std::set<std::string> names;
  for (const auto& r : report.rows) names.insert(r.groups.begin(), r.groups.end());
  if (!group.empty() && !names.count(group)) {
    std::vector<std::string> known(names.begin(), names.end());
    return Diagnostic{{}, "--group", "no validation row is in group '" + group + "'",
                      did_you_mean(group, known)};
  }
  if (!group.empty()) {
    std::erase_if(report.rows, [&](const AccuracyRow& r) {
      return std::find(r.groups.begin(), r.groups.end(), group) == r.groups.end();
    });
    names.clear();
    for (const auto& r : report.rows) names.insert(r.groups.begin(), r.groups.end());
  }
  for (const auto& name : names) {
    std::vector<const AccuracyRow*> in;
    for (const auto& r : report.rows)
      if (std::find(r.groups.begin(), r.groups.end(), name) != r.groups.end()) in.push_back(&r);
    AccuracySummary s;
    s.group = name;
    summarise_into(s, in);
    report.groups.push_back(s);
  }
  std::vector<const AccuracyRow*> all;
  for (const auto& r : report.rows) all.push_back(&r);
  report.overall.group = group.empty() ? "all" : group;
  summarise_into(report.overall, all);
  return report;
}

namespace {

// Every row of the directory's files with the kind its file names, in file order.
struct KindedRow {
  fs::path file;
  std::string kind;
  YAML::Node row;
};
Result<std::vector<KindedRow>> validation_rows(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".yaml") files.push_back(it->path());
  if (ec) return Diagnostic{{dir.string(), 0, 0}, "", "cannot read the validation directory: " + ec.message(), {}};
  std::sort(files.begin(), files.end());
  std::vector<KindedRow> out;
  for (const fs::path& path : files) {
    try {
      const YAML::Node doc = YAML::LoadFile(path.string());
      if (!doc.IsMap() || !doc["rows"] || !doc["rows"].IsSequence()) continue;
      if (!doc["kind"] && path.filename() == "megatron_sc21_table1.yaml") {
        for (const auto& r : megatron_table_rows(doc)) out.push_back({path, "training", r});
        continue;
      }
      const std::string kind = doc["kind"] ? doc["kind"].as<std::string>() : "";
      for (const auto& r : doc["rows"])
        if (r["id"]) out.push_back({path, kind, r});
    } catch (const YAML::Exception& e) {
      return Diagnostic{{path.string(), e.mark.line + 1, e.mark.column + 1}, "", e.msg, {}};
    }
  }
  return out;
}

Result<AccuracyRowScenario> row_scenario(const KindedRow& k, const hardware::Catalog& catalog) {
  const std::string id = k.row["id"].as<std::string>();
  if (k.kind != "llm-serving" && k.kind != "training")
    return Diagnostic{{k.file.string()}, "--scenario",
                      "row '" + id + "' is a " + k.kind +
                          " row: the runner still predicts those outside the plan function, so it has no scenario to "
                          "print yet (llm-serving and training rows do)",
                      ""};
  auto scenario = k.kind == "training" ? accuracy::training_row_scenario(k.row, catalog)
                                       : accuracy::llm_serving_row_scenario(k.row, catalog);
  if (!scenario) {
    // The reason run_accuracy reports the row as not predicted, placed at the row.
    std::vector<Diagnostic> errors = scenario.errors();
    for (auto& d : errors)
      if (d.where.file.empty()) d.where.file = k.file.string();
    return errors;
  }
  return AccuracyRowScenario{id, k.row["measured"]["metric"].as<std::string>(), scenario->command, scenario->text};
}

}  // namespace

Result<AccuracyRowScenario> accuracy_row_scenario(const hardware::Catalog& catalog, const fs::path& dir,
                                                  const std::string& id) {
  auto rows = validation_rows(dir);
  if (!rows) return rows.errors();
  std::vector<std::string> ids;
  for (const auto& k : *rows) {
    ids.push_back(k.row["id"].as<std::string>());
    if (ids.back() == id) return row_scenario(k, catalog);
  }
  return Diagnostic{{}, "--scenario", "no validation row with id '" + id + "'", did_you_mean(id, ids)};
}

Result<std::vector<AccuracyRowScenario>> accuracy_row_scenarios(const hardware::Catalog& catalog, const fs::path& dir) {
  auto rows = validation_rows(dir);
  if (!rows) return rows.errors();
  std::vector<AccuracyRowScenario> out;
  for (const auto& k : *rows)
    if (k.kind == "llm-serving" || k.kind == "training")
      if (auto s = row_scenario(k, catalog)) out.push_back(std::move(s).value());
  return out;
}

std::string first_look_digest(const FirstLook& f) {
  char figures[96];
  std::snprintf(figures, sizeof figures, "%.17g|%.17g", f.published, f.predicted);
  const std::string text = f.id + "|" + f.metric + "|" + figures + "|" + f.commit;
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

Result<std::vector<FirstLook>> read_first_looks(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::vector<FirstLook>{};
  std::vector<FirstLook> out;
  try {
    const YAML::Node doc = YAML::LoadFile(file.string());
    const YAML::Node list = doc["first_looks"];
    if (!list || !list.IsSequence())
      return Diagnostic{{file.string(), 1, 1}, "first_looks", "expected first_looks: a list of recorded first looks", {}};
    for (const auto& n : list) {
      FirstLook f;
      f.id = n["id"].as<std::string>();
      f.metric = n["metric"].as<std::string>();
      f.published = n["published"].as<double>();
      f.predicted = n["predicted"].as<double>();
      f.error_percent = n["error_percent"].as<double>();
      f.commit = n["commit"].as<std::string>();
      f.date = n["date"].as<std::string>();
      f.digest = n["digest"].as<std::string>();
      out.push_back(std::move(f));
    }
  } catch (const YAML::Exception& e) {
    return Diagnostic{{file.string(), e.mark.line + 1, e.mark.column + 1}, "first_looks", e.msg, {}};
  }
  return out;
}

Result<std::vector<std::string>> record_first_looks(const hardware::Catalog& catalog, const fs::path& dir,
                                                    const fs::path& file, const std::string& commit,
                                                    const std::string& date) {
  auto read = read_first_looks(file);
  if (!read) return read.errors();
  std::vector<FirstLook> recorded = *read;
  std::set<std::string> have;
  for (const auto& f : recorded) have.insert(f.id);
  auto report = run_accuracy(catalog, dir);
  if (!report) return report.errors();
  std::vector<std::string> added;
  for (const auto& row : report->rows) {
    if (!row.first_look_row || have.count(row.id) || !row.not_predicted.empty()) continue;
    FirstLook f{row.id, row.metric, row.published, row.predicted, row.error_percent, commit, date, ""};
    f.digest = first_look_digest(f);
    recorded.push_back(std::move(f));
    added.push_back(row.id);
  }
  if (added.empty()) return added;
  YAML::Emitter out;
  out.SetDoublePrecision(17);  // the figures read back exactly: the digest covers them
  out << YAML::Comment(
      "First looks: the error capsim gave each row the day it was added, before any model change it could "
      "motivate. Written by capsim accuracy --record-first-look; never edit an entry (the digest covers its figures).");
  out << YAML::BeginMap << YAML::Key << "first_looks" << YAML::Value << YAML::BeginSeq;
  for (const auto& f : recorded) {
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "id" << YAML::Value << f.id << YAML::Key << "metric" << YAML::Value << f.metric;
    out << YAML::Key << "published" << YAML::Value << f.published << YAML::Key << "predicted" << YAML::Value
        << f.predicted;
    out << YAML::Key << "error_percent" << YAML::Value << f.error_percent;
    out << YAML::Key << "commit" << YAML::Value << f.commit << YAML::Key << "date" << YAML::Value << f.date;
    out << YAML::Key << "digest" << YAML::Value << f.digest << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  if (auto status = write_file_atomically(file.string(), std::string(out.c_str()) + "\n"); !status.empty()) return status;
  return added;
}

}  // namespace capsim::scenarios
