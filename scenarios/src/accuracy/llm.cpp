// LLM serving rows: a published offline throughput or server-mode latency of an engine on
// a GPU, predicted by the continuous-batching simulation (models/serving_llm.hpp) with the
// row's model, parallelism, precisions and request lengths.
#include <string>

#include "capsim/core/text.hpp"
#include "capsim/models/cluster.hpp"
#include "capsim/models/serving_llm.hpp"
#include "predictors.hpp"

namespace capsim::scenarios::accuracy {
namespace {

Diagnostic row_error(const YAML::Node& n, std::string key, std::string message) {
  const YAML::Mark m = n.Mark();
  return Diagnostic{{{}, m.line + 1, m.column + 1}, std::move(key), std::move(message), {}};
}

}  // namespace

Result<RowPrediction> predict_llm_serving_row(const YAML::Node& row, const hardware::Catalog& catalog) {
  using namespace models;
  LlmServingSpec spec;
  const YAML::Node model = row["model"];
  if (!model || !model.IsScalar()) return row_error(row, "model", "an llm-serving row names a model preset");
  const auto* preset = find_transformer_preset(model.as<std::string>());
  if (!preset) return row_error(model, "model", "unknown model preset '" + model.as<std::string>() + "'");
  spec.shape = preset->shape;
  const std::string gpu = row["gpu"].as<std::string>();
  const int gpus = row["gpus"] ? row["gpus"].as<int>() : 1;
  // Pipeline stages within the row's node (gpus = tp x pp; LlmServingSpec::pipeline_parallel).
  spec.pipeline_parallel = row["pp"] ? row["pp"].as<int>() : 1;
  if (spec.pipeline_parallel < 1 || gpus % spec.pipeline_parallel != 0)
    return row_error(row["pp"], "pp", "must be at least 1 and divide gpus (" + std::to_string(gpus) + ")");
  spec.tensor_parallel = row["tp"] ? row["tp"].as<int>() : gpus / std::max(1, spec.pipeline_parallel);
  // The row names its GPUs, not its server: the fabric of the catalog's nodes with those GPUs.
  auto cluster = cluster_from_catalog(catalog, gpu, gpus, gpus > 1 ? catalog_intra_node_for_gpu(catalog, gpu, gpus) : "", "", 0);
  if (!cluster) return cluster.errors();
  spec.cluster = *cluster;
  auto precision = [&](const char* key, Precision fallback) -> Result<Precision> {
    if (!row[key]) return fallback;
    std::string p = row[key].as<std::string>();
    if (p.rfind("int4", 0) == 0) p = "int4";
    const auto parsed = precision_from_name(p);
    if (!parsed) return row_error(row[key], key, "unknown precision '" + p + "'");
    return *parsed;
  };
  auto weights = precision("weights", Precision::bf16);
  if (!weights) return weights.errors();
  auto kv = precision("kv_cache", *weights == Precision::fp8 ? Precision::fp8 : Precision::bf16);
  if (!kv) return kv.errors();
  spec.weights = *weights;
  spec.kv_cache = *kv;
  if (row["max_num_seqs"]) spec.max_concurrent = row["max_num_seqs"].as<int>();
  if (row["max_num_tokens"]) spec.max_batched_tokens = row["max_num_tokens"].as<int>();
  // How the source's engine ran the row (data/validation/README.md, LLM serving rows).
  auto choice = [&](const char* key, std::initializer_list<const char*> allowed, const char* fallback) -> Result<std::string> {
    if (!row[key]) return std::string(fallback);
    const std::string v = row[key].as<std::string>();
    std::string list;
    for (const char* a : allowed) {
      if (v == a) return v;
      list += (list.empty() ? "" : ", ") + std::string(a);
    }
    return row_error(row[key], key, "unknown value '" + v + "' (expected " + list + ")");
  };
  auto batching = choice("batching", {"continuous", "static"}, "continuous");
  if (!batching) return batching.errors();
  if (*batching == "static") spec.batching = LlmBatching::static_batches;
  auto admission = choice("kv_admission", {"on-demand", "reserved"}, "on-demand");
  if (!admission) return admission.errors();
  if (*admission == "reserved") spec.kv_admission = LlmKvAdmission::reserve_full;
  auto decode_attention = choice("decode_attention", {"gqa-shared", "per-query-head"}, "gqa-shared");
  if (!decode_attention) return decode_attention.errors();
  spec.gqa_shared_kv = *decode_attention == "gqa-shared";
  // TensorRT-LLM sizes its KV cache from the memory left free after loading the engine,
  // vLLM from the whole device (serving_llm.hpp, LlmKvBudget).
  auto engine = choice("engine", {"tensorrt-llm", "vllm"}, "vllm");
  if (!engine) return engine.errors();
  if (*engine == "tensorrt-llm") {
    spec.kv_budget = LlmKvBudget::share_of_free;
    spec.memory_utilization = kTrtllmFreeGpuMemoryFraction;
  }
  if (row["kv_memory_fraction"]) spec.memory_utilization = row["kv_memory_fraction"].as<double>();
  if (!row["input_len"] || !row["output_len"])
    return row_error(row, "input_len", "the row needs fixed input_len and output_len");
  const LlmRequestMix mix{row["input_len"].as<int>(), row["output_len"].as<int>()};

  LlmSimulationOptions o;
  const std::string mode = row["mode"] ? row["mode"].as<std::string>() : "offline";
  if (mode == "offline") {
    o.offline_requests = row["num_requests"] ? row["num_requests"].as<int>() : 1000;
  } else if (mode != "server") {
    return row_error(row["mode"], "mode", "unknown mode '" + mode + "' (expected offline or server)");
  } else if (row["request_rate"]) {
    o.rate = row["request_rate"].as<double>();
    // A benchmark client sends num_requests requests at the rate and measures them all;
    // without a count, the steady state of a long run.
    if (row["num_requests"]) o.server_requests = row["num_requests"].as<int>();
    o.warmup = Seconds(60);
    o.duration = Seconds(600);
  } else {
    return row_error(row, "request_rate", "a server-mode row needs request_rate (a fixed client concurrency is not modelled yet)");
  }
  auto sim = simulate_llm_serving(spec, mix, o);
  if (!sim) return sim.errors();

  const YAML::Node m = row["measured"];
  RowPrediction r;
  r.metric = m["metric"].as<std::string>();
  r.published = m["value"].as<double>();
  const double out = sim->output_tokens_per_second;
  const double total = out * (mix.prompt_tokens + mix.output_tokens) / mix.output_tokens;
  const std::string stat = m["stat"] ? m["stat"].as<std::string>() : "p50";
  if (stat != "p50" && stat != "p95" && stat != "p99" && stat != "mean")
    return row_error(m["stat"], "measured.stat", "unknown statistic '" + stat + "' (expected mean, p50, p95 or p99)");
  auto pick = [&](const des::Percentiles& p, double mean) {
    return stat == "mean" ? mean : stat == "p99" ? p.p99.mean : stat == "p95" ? p.p95.mean : p.p50.mean;
  };
  if (r.metric == "output_tokens_per_s") r.predicted = out;
  else if (r.metric == "output_tokens_per_s_per_gpu") r.predicted = out / gpus;
  else if (r.metric == "total_tokens_per_s") r.predicted = total;
  else if (r.metric == "requests_per_s") r.predicted = sim->requests_per_second;
  else if (r.metric == "ttft_ms") r.predicted = pick(sim->ttft, sim->ttft_mean) * 1e3;
  else if (r.metric == "tpot_ms") r.predicted = pick(sim->tpot, sim->tpot_mean) * 1e3;
  else if (r.metric == "e2e_latency_s") r.predicted = pick(sim->end_to_end, sim->end_to_end_mean);
  else return row_error(m, "measured.metric", "unknown metric '" + r.metric + "'");
  r.detail = "TP=" + std::to_string(spec.tensor_parallel) + " " + std::string(precision_name(spec.weights)) + "/" +
             std::string(precision_name(spec.kv_cache)) + ", " + mode + (*batching == "static" ? ", static" : "") +
             (sim->saturated ? ", saturated" : "") + ", " + significant(sim->mean_running, 3) + " running" +
             (sim->preemptions > 0 ? ", " + std::to_string(sim->preemptions) + " preempted" : "");
  r.tags.push_back(gpu);
  return r;
}

}  // namespace capsim::scenarios::accuracy
