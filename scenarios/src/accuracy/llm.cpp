// LLM serving rows: a published offline throughput or server-mode latency of an engine on
// GPUs. Each row becomes the scenario a user would write for that deployment (the catalog's
// node for its GPUs, the engine's settings as workload keys, the client as arrivals or
// offline requests), and is predicted by the plan function every command uses: make_plan,
// as `capsim simulate` runs it. The runner holds no model constant and no code path of its
// own: what it sets is in the scenario `capsim accuracy --scenario ROW` prints.
#include <yaml-cpp/yaml.h>

#include <string>

#include "capsim/core/text.hpp"
#include "capsim/models/cluster.hpp"
#include "capsim/scenarios/runner.hpp"
#include "predictors.hpp"

namespace capsim::scenarios::accuracy {
namespace {

// A row's value copied into the scenario as written (a scalar), under `key`.
void copy_scalar(YAML::Emitter& out, const YAML::Node& row, const char* row_key, const char* key) {
  if (row[row_key]) out << YAML::Key << key << YAML::Value << row[row_key].Scalar();
}

}  // namespace

Result<RowScenario> llm_serving_row_scenario(const YAML::Node& row, const hardware::Catalog& catalog) {
  for (const char* key : {"id", "model", "gpu", "input_len", "output_len", "measured"})
    if (!row[key]) return row_error(row, key, std::string("an llm-serving row needs ") + key);
  const std::string gpu = row["gpu"].as<std::string>();
  const int gpus = row["gpus"] ? row["gpus"].as<int>() : 1;
  const int pp = row["pp"] ? row["pp"].as<int>() : 1;
  if (pp < 1 || gpus % pp != 0)
    return row_error(row["pp"], "pp", "must be at least 1 and divide gpus (" + std::to_string(gpus) + ")");
  const int tp = row["tp"] ? row["tp"].as<int>() : gpus / pp;
  // The row names its GPUs, not its server: the catalog's node for them (its fabric included).
  const std::string node = models::catalog_node_for_gpu(catalog, gpu, gpus);
  if (node.empty()) return row_error(row["gpu"], "gpu", "no catalog server or instance carries " + std::to_string(gpus) + " x " + gpu);
  const std::string mode = row["mode"] ? row["mode"].as<std::string>() : "offline";
  if (mode != "offline" && mode != "server")
    return row_error(row["mode"], "mode", "unknown mode '" + mode + "' (expected offline or server)");
  if (mode == "offline" && !row["num_requests"])
    return row_error(row, "num_requests", "an offline row needs num_requests (the requests queued at t = 0)");
  if (mode == "server" && !row["request_rate"])
    return row_error(row, "request_rate",
                     "a server-mode row needs request_rate (a fixed client concurrency is not modelled yet)");

  YAML::Emitter out;
  out << YAML::BeginMap;
  emit_row_header(out, row);
  out << YAML::Key << "workload" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "type" << YAML::Value << "llm-serving";
  copy_scalar(out, row, "model", "model");
  if (row["weights"]) {
    std::string p = row["weights"].as<std::string>();
    if (p.rfind("int4", 0) == 0) p = "int4";  // int4-awq, int4-gptq: 4-bit weights, 16-bit math
    out << YAML::Key << "precision" << YAML::Value << p;
  }
  copy_scalar(out, row, "kv_cache", "kv_cache");
  copy_scalar(out, row, "engine", "engine");
  copy_scalar(out, row, "kv_admission", "kv_admission");
  copy_scalar(out, row, "batching", "batching");
  copy_scalar(out, row, "decode_attention", "decode_attention");
  copy_scalar(out, row, "kv_memory_fraction", "kv_memory_fraction");
  copy_scalar(out, row, "max_num_seqs", "max_num_seqs");
  copy_scalar(out, row, "max_num_tokens", "max_batched_tokens");
  copy_scalar(out, row, "input_len", "prompt_tokens");
  copy_scalar(out, row, "output_len", "output_tokens");
  if (mode == "offline") out << YAML::Key << "offline_requests" << YAML::Value << row["num_requests"].Scalar();
  out << YAML::EndMap;
  if (mode == "server") {
    out << YAML::Key << "arrivals" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "kind" << YAML::Value << "poisson";
    copy_scalar(out, row, "request_rate", "rate");
    // A benchmark client sends num_requests at the rate and measures them all; without a
    // count, the steady state of a run of the scenario's default window.
    copy_scalar(out, row, "num_requests", "requests");
    out << YAML::EndMap;
  }
  out << YAML::Key << "deployment" << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "node" << YAML::Value << node;
  out << YAML::Key << "tensor_parallel" << YAML::Value << tp;
  out << YAML::Key << "pipeline_parallel" << YAML::Value << pp;
  out << YAML::Key << "replicas" << YAML::Value << 1;
  out << YAML::EndMap;
  out << YAML::EndMap;
  RowScenario r;
  r.text = std::string(out.c_str()) + "\n";
  r.command = "simulate";
  return r;
}

Result<RowPrediction> predict_llm_serving_row(const YAML::Node& row, const hardware::Catalog& catalog) {
  auto scenario_text = llm_serving_row_scenario(row, catalog);
  if (!scenario_text) return scenario_text.errors();
  auto scenario = load_scenario(row["id"].as<std::string>() + ".yaml", scenario_text->text, catalog);
  if (!scenario) return scenario.errors();
  auto plan = make_plan(*scenario, catalog);
  if (!plan) return plan.errors();
  if (!plan->serving_simulation || !plan->serving_simulation->llm)
    return row_error(row, "mode", "the plan holds no LLM serving simulation");
  const auto& sim = *plan->serving_simulation->llm;
  const auto& inf = *scenario->inference;
  const int gpus = inf.tensor_parallel * inf.pipeline_parallel;

  const YAML::Node m = row["measured"];
  RowPrediction r;
  r.metric = m["metric"].as<std::string>();
  r.published = m["value"].as<double>();
  const double out = sim.output_tokens_per_second;
  const double total = out * (inf.mix.prompt_tokens + inf.mix.output_tokens) / inf.mix.output_tokens;
  const std::string stat = m["stat"] ? m["stat"].as<std::string>() : "p50";
  if (stat != "p50" && stat != "p95" && stat != "p99" && stat != "mean")
    return row_error(m["stat"], "measured.stat", "unknown statistic '" + stat + "' (expected mean, p50, p95 or p99)");
  auto pick = [&](const des::Percentiles& p, double mean) {
    return stat == "mean" ? mean : stat == "p99" ? p.p99.mean : stat == "p95" ? p.p95.mean : p.p50.mean;
  };
  if (r.metric == "output_tokens_per_s") r.predicted = out;
  else if (r.metric == "output_tokens_per_s_per_gpu") r.predicted = out / gpus;
  else if (r.metric == "total_tokens_per_s") r.predicted = total;
  else if (r.metric == "requests_per_s") r.predicted = sim.requests_per_second;
  else if (r.metric == "ttft_ms") r.predicted = pick(sim.ttft, sim.ttft_mean) * 1e3;
  else if (r.metric == "tpot_ms") r.predicted = pick(sim.tpot, sim.tpot_mean) * 1e3;
  else if (r.metric == "e2e_latency_s") r.predicted = pick(sim.end_to_end, sim.end_to_end_mean);
  else return row_error(m, "measured.metric", "unknown metric '" + r.metric + "'");
  const bool static_batches = inf.batching == models::LlmBatching::static_batches;
  r.detail = "TP=" + std::to_string(inf.tensor_parallel) + " " + std::string(models::precision_name(inf.exec.precision)) +
             "/" + std::string(models::precision_name(inf.kv_cache)) + ", " +
             (inf.offline_requests > 0 ? "offline" : "server") + (static_batches ? ", static" : "") +
             (sim.saturated ? ", saturated" : "") + ", " + significant(sim.mean_running, 3) + " running" +
             (sim.preemptions > 0 ? ", " + std::to_string(sim.preemptions) + " preempted" : "");
  r.tags.push_back(row["gpu"].as<std::string>());
  return r;
}

}  // namespace capsim::scenarios::accuracy
