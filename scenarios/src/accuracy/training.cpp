// Training rows: a published step time, throughput or FLOP rate of a transformer on a GPU
// cluster. Each row becomes the training scenario a user would write for that run (the
// model's shape, the stack's workload keys, the catalog's node for its GPUs pinned with
// hardware.nodes, the published layout pinned through the search lists, min_gpus = max_gpus
// = the row's GPUs), and is predicted by the plan function every command uses: make_plan, as
// `capsim run` plans it, with the product's memory check. A layout the source tuned without
// publishing it (`vp: tuned`, `micro_batch: tuned`) becomes the list of candidates the search
// tries. The published figure is compared in its own metric; a FLOP rate is converted with
// the FLOP convention the source used, so the comparison is like for like. The runner holds
// no model constant and no code path of its own: what it sets is in the scenario
// `capsim accuracy --scenario ROW` prints.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "capsim/models/cluster.hpp"
#include "capsim/models/performance.hpp"
#include "capsim/scenarios/runner.hpp"
#include "predictors.hpp"

namespace capsim::scenarios::accuracy {
namespace {

template <class T>
T get_or(const YAML::Node& n, const char* key, T fallback) {
  return n && n[key] ? n[key].as<T>() : fallback;
}

bool is_tuned(const YAML::Node& n) { return n && n.IsScalar() && n.Scalar() == "tuned"; }

// A flow list of the values, as the search lists are written.
template <class T>
void write_list(YAML::Emitter& out, const char* key, const std::vector<T>& values) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const T& v : values) out << v;
  out << YAML::EndSeq;
}

// The catalog node the row's cluster is: a server, else an instance, that carries the row's
// GPU, exactly as many per node as the row's nodes hold (the search takes nodes whole) and
// the fabric the row names (any stated one when it names none). When the row names its
// network, the node with those NICs if the catalog has one (`nics_match`); else the first.
struct RowNode {
  std::string id;
  bool nics_match = false;
};
RowNode row_node(const hardware::Catalog& catalog, const std::string& gpu, int per_node, const std::string& intra,
                 const std::optional<hardware::CountedRef>& nics) {
  RowNode first;
  for (hardware::EntityKind kind : {hardware::EntityKind::server, hardware::EntityKind::instance})
    for (const auto& node : catalog.all(kind)) {
      if (node.text("gpu") != gpu || node.integer("gpu_count").value_or(1) != per_node) continue;
      if (per_node > 1 && (!node.has("intra_node") || (!intra.empty() && node.text("intra_node") != intra))) continue;
      if (!nics) return {node.id, false};
      auto type = models::node_type_by_id(catalog, node.id);
      if (!type) continue;
      auto stated = models::with_scale_out(catalog, type->cluster, nics->id, nics->count);
      if (stated && stated->inter_node_bandwidth.value() == type->cluster.inter_node_bandwidth.value() &&
          stated->inter_node_latency.value() == type->cluster.inter_node_latency.value())
        return {node.id, true};
      if (first.id.empty()) first.id = node.id;
    }
  return first;
}

// What the runner needs besides the scenario to read the row's figure off the plan.
struct WrittenRow {
  RowScenario scenario;
  std::vector<std::string> tags;
};

Result<WrittenRow> write_row(const YAML::Node& row, const hardware::Catalog& catalog) {
  using namespace models;
  const YAML::Node m = row["model"];
  if (!m || !(m.IsMap() || m.IsScalar()))
    return row_error(row, "model", "a training row needs its model: a preset name or its shape");
  // A preset name is what a user's scenario names too (e.g. gpt3-175b).
  const TransformerPreset* preset = m.IsScalar() ? find_transformer_preset(m.Scalar()) : nullptr;
  if (m.IsScalar() && !preset) return row_error(m, "model", "unknown model preset '" + m.Scalar() + "'");
  if (!preset)
    for (const char* key : {"layers", "hidden", "heads", "vocab"})
      if (!m[key]) return row_error(m, std::string("model.") + key, std::string("the model's shape needs ") + key);
  if (!row["seq_len"] || !row["global_batch"])
    return row_error(row, "seq_len", "a training row needs seq_len and global_batch (sequences)");
  const int seq_len = row["seq_len"].as<int>();
  const int layers = preset ? preset->shape.layers : m["layers"].as<int>();

  const YAML::Node hw = row["hardware"];
  if (!hw || !hw["gpu"] || !hw["gpus"]) return row_error(row, "hardware", "needs gpu and gpus");
  const std::string gpu = hw["gpu"].as<std::string>();
  const int gpus = hw["gpus"].as<int>();
  const int per_node = std::min(gpus, get_or(hw, "gpus_per_node", 8));
  // The GPUs as the source ran them, when they differ from the catalog's part: no scenario
  // key sets a GPU's power limit or memory; such a node needs its own catalog entry.
  for (const char* key : {"power_limit", "memory_bandwidth"})
    if (hw[key])
      return row_error(hw[key], std::string("hardware.") + key,
                       "the row's GPUs differ from the catalog's " + gpu + " (" + key + " " + hw[key].Scalar() +
                           "), and the catalog has no node with them");
  std::vector<std::string> tags;
  std::string network = get_or<std::string>(hw, "inter_node", "unknown");
  std::optional<hardware::CountedRef> nics;
  if (network != "unknown" && !network.empty() && gpus > per_node) {
    nics = hardware::parse_counted_ref(network);
    if (!nics) return row_error(hw, "hardware.inter_node", "expected 'N x network-id', got '" + network + "'");
  } else if (gpus > per_node) {
    tags.push_back("network-assumed");  // the catalog node's own NICs
  }
  std::string intra = get_or<std::string>(hw, "intra_node", "unknown");
  if (intra == "unknown") intra.clear();
  const RowNode node = row_node(catalog, gpu, per_node, intra, nics);
  if (node.id.empty())
    return row_error(hw, "hardware",
                     "no catalog server or instance carries " + std::to_string(per_node) + " x " + gpu + " per node" +
                         (intra.empty() ? std::string() : " on " + intra));

  const YAML::Node l = row["layout"];
  const int tp = get_or(l, "tp", 1), pp = get_or(l, "pp", 1), cp = get_or(l, "cp", 1), ep = get_or(l, "ep", 1);
  if (tp < 1 || pp < 1 || cp < 1 || ep < 1 || gpus % (tp * pp * cp) != 0)
    return row_error(l, "layout", "t x p x cp must divide the row's " + std::to_string(gpus) + " GPUs");
  const int dp = gpus / (tp * pp * cp);
  if (get_or(l, "dp", dp) != dp)
    return row_error(l, "layout", "t x p x cp x d = " + std::to_string(tp * pp * cp * get_or(l, "dp", dp)) +
                                      " is not the row's " + std::to_string(gpus) + " GPUs");
  const bool vp_tuned = is_tuned(l["vp"]);
  const bool mb_tuned = is_tuned(row["micro_batch"]);
  const int micro_batch = mb_tuned ? 1 : get_or(row, "micro_batch", 1);
  // A published global batch need not be a multiple of micro-batch x d (e.g. a batch in
  // tokens): the step then runs ceil(B / (b d)) micro-batches, a batch the scenario states.
  const int per = micro_batch * dp;
  const int global_batch = (row["global_batch"].as<int>() + per - 1) / per * per;
  std::vector<int> virtual_stages{vp_tuned ? 1 : get_or(l, "vp", 1)};
  // vp: tuned -- the source ran an interleaved schedule and tuned its virtual stages without
  // publishing the number (Llama 3's 405B runs): every count the schedule allows is a candidate.
  if (vp_tuned && pp > 1)
    for (int v = 2; v <= layers / pp; ++v) virtual_stages.push_back(v);
  // micro_batch: tuned -- the source tuned its micro-batch without publishing it (Megatron-LM's
  // README benchmarks): every micro-batch that divides the per-replica batch is a candidate.
  std::vector<int> micro_batches{micro_batch};
  if (mb_tuned)
    for (int b = 2; b <= global_batch / dp; ++b)
      if ((global_batch / dp) % b == 0) micro_batches.push_back(b);

  const std::string sharding = get_or<std::string>(l, "sharding", "none");
  int zero = 0;
  bool hybrid = false;
  if (sharding == "zero1") zero = 1;
  else if (sharding == "zero2") zero = 2;
  else if (sharding == "zero3" || sharding == "fsdp") zero = 3;
  else if (sharding == "fsdp-hybrid") {
    zero = 3;
    hybrid = true;
    // The search shards a hybrid group over a node's GPUs of one tensor-parallel rank.
    const int group = std::max(1, per_node / tp);
    if (get_or(l, "shard_group", group) != group)
      return row_error(l["shard_group"], "layout.shard_group",
                       "a scenario's fsdp_hybrid shards over a node's " + std::to_string(group) +
                           " data-parallel ranks, not " + l["shard_group"].Scalar());
  } else if (sharding != "none") {
    return row_error(l, "layout.sharding", "unknown sharding '" + sharding + "'");
  }
  const std::string recompute = get_or<std::string>(l, "recompute", "none");
  if (recompute != "none" && recompute != "selective" && recompute != "full")
    return row_error(l["recompute"], "layout.recompute", "expected none, selective or full");
  const bool sequence_parallel = get_or(l, "sp", tp > 1);

  YAML::Emitter out;
  out << YAML::BeginMap;
  emit_row_header(out, row);
  out << YAML::Key << "workload" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "type" << YAML::Value << "training";
  if (preset) {
    out << YAML::Key << "model" << YAML::Value << m.Scalar();
    out << YAML::Key << "seq_len" << YAML::Value << seq_len;
  } else {
    out << YAML::Key << "model" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const char* key : {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab"})
      if (m[key]) out << YAML::Key << key << YAML::Value << m[key].Scalar();
    out << YAML::Key << "seq_len" << YAML::Value << seq_len;
    for (const char* key : {"gated_mlp", "experts", "experts_per_token", "head_dim"})
      if (m[key]) out << YAML::Key << key << YAML::Value << m[key].Scalar();
    out << YAML::EndMap;
  }
  // Step figures do not depend on the run's length: a thousand steps' tokens.
  out << YAML::Key << "tokens" << YAML::Value << std::to_string(static_cast<long long>(global_batch) * seq_len * 1000);
  out << YAML::Key << "global_batch" << YAML::Value << global_batch;
  out << YAML::Key << "precision" << YAML::Value << get_or<std::string>(row, "precision", "bf16");
  for (const char* key : {"attention", "kernels", "fp8_weight_cast", "fp8_scaling", "moe_dispatch"})
    if (row[key]) out << YAML::Key << key << YAML::Value << row[key].Scalar();
  for (const char* key : {"tp_comm_overlap", "tp_comm_overlap_backward", "grad_reduce_overlap", "grad_reduce", "p2p_overlap"})
    if (l && l[key]) out << YAML::Key << key << YAML::Value << l[key].Scalar();
  out << YAML::EndMap;
  out << YAML::Key << "hardware" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "nodes" << YAML::Value << YAML::Flow << YAML::BeginSeq << node.id << YAML::EndSeq;
  if (nics && !node.nics_match)
    out << YAML::Key << "scale_out" << YAML::Value << std::to_string(nics->count) + " x " + nics->id;
  out << YAML::Key << "min_gpus" << YAML::Value << gpus;
  out << YAML::Key << "max_gpus" << YAML::Value << gpus;
  out << YAML::EndMap;
  out << YAML::Key << "search" << YAML::Value << YAML::BeginMap;
  write_list(out, "tensor_parallel", std::vector<int>{tp});
  write_list(out, "pipeline_parallel", std::vector<int>{pp});
  write_list(out, "virtual_stages", virtual_stages);
  write_list(out, "context_parallel", std::vector<int>{cp});
  write_list(out, "expert_parallel", std::vector<int>{ep});
  write_list(out, "micro_batch", micro_batches);
  write_list(out, "zero_stage", std::vector<int>{zero});
  out << YAML::Key << "fsdp_hybrid" << YAML::Value << YAML::Flow << YAML::BeginSeq << hybrid << YAML::EndSeq;
  write_list(out, "recompute", std::vector<std::string>{recompute});
  if (l && l["recompute_fraction"])
    write_list(out, "recompute_fraction", std::vector<std::string>{l["recompute_fraction"].Scalar()});
  out << YAML::Key << "sequence_parallel" << YAML::Value << YAML::Flow << YAML::BeginSeq << sequence_parallel
      << YAML::EndSeq;
  out << YAML::EndMap;
  out << YAML::EndMap;

  WrittenRow w;
  w.scenario.text = std::string(out.c_str()) + "\n";
  w.scenario.command = "run";
  w.tags = std::move(tags);
  return w;
}

}  // namespace

Result<RowScenario> training_row_scenario(const YAML::Node& row, const hardware::Catalog& catalog) {
  auto written = write_row(row, catalog);
  if (!written) return written.errors();
  return std::move(written->scenario);
}

Result<RowPrediction> predict_training_row(const YAML::Node& row, const hardware::Catalog& catalog) {
  using namespace models;
  auto written = write_row(row, catalog);
  if (!written) return written.errors();
  auto scenario = load_scenario(row["id"].as<std::string>() + ".yaml", written->scenario.text, catalog);
  if (!scenario) return scenario.errors();
  auto plan = make_plan(*scenario, catalog);
  if (!plan) return plan.errors();
  if (!plan->sizing || !plan->sizing->search.recommended)
    return row_error(row, "layout", "the plan holds no training configuration");
  const Candidate& c = *plan->sizing->search.recommended;
  const NodeType& node = plan->sizing->search.node_types[static_cast<std::size_t>(c.node_type)];
  const TransformerShape& s = std::get<TransformerShape>(scenario->training.model);
  const int gpus = c.gpus(plan->sizing->search.node_types);
  const double step = c.step_time.value();
  // The tokens the source counted: its own batch, not the one rounded up to whole micro-batches.
  const double tokens = static_cast<double>(row["global_batch"].as<int>()) * s.seq_len;

  const YAML::Node meas = row["measured"];
  RowPrediction r;
  r.metric = meas["metric"].as<std::string>();
  r.published = meas["value"].as<double>();
  r.step_time_s = step;
  if (r.metric == "tokens_per_s_per_gpu") r.predicted = tokens / step / gpus;
  else if (r.metric == "tokens_per_s") r.predicted = tokens / step;
  else if (r.metric == "step_time_s") r.predicted = step;
  else if (r.metric == "tflops_per_gpu" || r.metric == "mfu") {
    // The source's FLOP convention, as its paper counts a token (not capsim's model).
    const std::string convention = get_or<std::string>(meas, "flop_convention", "unknown");
    double flops_per_token = 0;
    const double fwd = forward_flops_per_token(s);
    const double logits = 2.0 * s.vocab * s.hidden;
    const double attention = 2.0 * 2.0 * s.layers * static_cast<double>(s.seq_len) * s.heads * s.head_dim();
    if (convention == "megatron-with-recompute") flops_per_token = 4.0 * (fwd - logits) + 3.0 * logits;
    else if (convention == "model-6n") flops_per_token = 6.0 * active_parameter_count(s);
    else if (convention == "hardware") flops_per_token = -1;
    else flops_per_token = 6.0 * (active_parameter_count(s) - embedding_parameter_count(s)) +
                           3.0 * attention + 3.0 * logits;  // model-6n-attn (PaLM appendix B)
    const double rate = flops_per_token < 0 ? c.achieved_flops_per_gpu.value() : flops_per_token * tokens / step / gpus;
    if (r.metric == "tflops_per_gpu") {
      r.predicted = rate / 1e12;
    } else {
      // MFU against the dense bf16 peak, as papers report it even for FP8 runs.
      const auto peak = node.cluster.gpu.peak("bf16");
      if (!peak) return row_error(meas, "measured.metric", "the GPU has no bf16 peak for MFU");
      r.predicted = rate / peak->value();
      if (r.published > 1.0) r.predicted *= 100.0;  // published in percent
    }
  } else {
    return row_error(meas, "measured.metric", "unknown metric '" + r.metric + "'");
  }
  r.tags = std::move(written->tags);
  if (gpus >= 1000) r.tags.push_back("ge-1000-gpus");
  if (c.par.interleave > 1) r.tags.push_back("interleaved");
  if (c.par.zero_stage == 3) r.tags.push_back("zero3-fsdp");
  if (scenario->training.options.compute == Precision::fp8) r.tags.push_back("fp8");
  if (s.experts > 1) r.tags.push_back("moe");
  if (s.seq_len >= 8192) r.tags.push_back("long-seq");
  r.detail = describe_layout(c.par) + ", " + std::string(bottleneck_name(static_cast<Bottleneck>(c.bottleneck))) +
             " on " + node.id;
  return r;
}

}  // namespace capsim::scenarios::accuracy
