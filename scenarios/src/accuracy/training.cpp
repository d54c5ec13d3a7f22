// Training rows: a published step time, throughput or FLOP rate of a transformer on a GPU
// cluster, predicted with the analytic step model (models/performance.hpp) for the layout
// as published. The published figure is compared in its own metric; a FLOP rate is
// converted with the FLOP convention the source used, so the comparison is like for like.
#include <cmath>
#include <string>

#include "capsim/models/cluster.hpp"
#include "capsim/models/memory.hpp"
#include "capsim/models/performance.hpp"
#include "predictors.hpp"

namespace capsim::scenarios::accuracy {
namespace {

Diagnostic row_error(const YAML::Node& n, std::string key, std::string message) {
  const YAML::Mark m = n.Mark();
  return Diagnostic{{{}, m.line + 1, m.column + 1}, std::move(key), std::move(message), {}};
}

template <class T>
T get_or(const YAML::Node& n, const char* key, T fallback) {
  return n && n[key] ? n[key].as<T>() : fallback;
}

// The network a row's cluster used when its source does not say: the reference design of
// the GPU's DGX/HGX generation, one NIC per GPU (DGX A100: 8 x HDR 200 Gb/s; DGX H100:
// 8 x NDR 400 Gb/s; NVIDIA DGX A100 / H100 user guides), as many as the row's node has GPUs
// (a 4-GPU node gets 4, not a DGX's 8). The row is tagged network-assumed.
std::string assumed_network(const std::string& gpu, int gpus_per_node) {
  const std::string nics = std::to_string(gpus_per_node) + " x ";
  if (gpu.rfind("h100", 0) == 0 || gpu.rfind("h200", 0) == 0 || gpu.rfind("b200", 0) == 0)
    return nics + "ib-ndr-400";
  return nics + "ib-hdr-200";
}

}  // namespace

Result<RowPrediction> predict_training_row(const YAML::Node& row, const hardware::Catalog& catalog) {
  using namespace models;
  const YAML::Node m = row["model"];
  if (!m) return row_error(row, "model", "a training row needs its model");
  TransformerShape s;
  if (m.IsScalar()) {
    const auto* preset = find_transformer_preset(m.as<std::string>());
    if (!preset) return row_error(m, "model", "unknown model preset '" + m.as<std::string>() + "'");
    s = preset->shape;
  } else {
    if (m["preset"]) {
      const auto* preset = find_transformer_preset(m["preset"].as<std::string>());
      if (!preset) return row_error(m, "model.preset", "unknown model preset");
      s = preset->shape;
    }
    s.name = get_or<std::string>(m, "name", s.name.empty() ? row["id"].as<std::string>() : s.name);
    s.layers = get_or(m, "layers", s.layers);
    s.hidden = get_or(m, "hidden", s.hidden);
    s.heads = get_or(m, "heads", s.heads);
    s.kv_heads = get_or(m, "kv_heads", s.kv_heads > 0 ? s.kv_heads : s.heads);
    s.head_dim_override = get_or(m, "head_dim", s.head_dim_override);
    s.ffn_hidden = get_or(m, "ffn_hidden", s.ffn_hidden > 0 ? s.ffn_hidden : 4 * s.hidden);
    s.gated_mlp = get_or(m, "gated_mlp", s.gated_mlp);
    s.vocab = get_or(m, "vocab", s.vocab);
    s.experts = get_or(m, "experts", s.experts);
    s.experts_per_token = get_or(m, "experts_per_token", s.experts_per_token);
  }
  if (!row["seq_len"] || !row["global_batch"])
    return row_error(row, "seq_len", "a training row needs seq_len and global_batch (sequences)");
  s.seq_len = row["seq_len"].as<int>();

  const YAML::Node hw = row["hardware"];
  if (!hw || !hw["gpu"] || !hw["gpus"]) return row_error(row, "hardware", "needs gpu and gpus");
  const std::string gpu = hw["gpu"].as<std::string>();
  const int gpus = hw["gpus"].as<int>();
  const int per_node = std::min(gpus, get_or(hw, "gpus_per_node", 8));
  std::vector<std::string> tags;
  std::string network = get_or<std::string>(hw, "inter_node", "unknown");
  if (network == "unknown" || network.empty()) {
    network = assumed_network(gpu, per_node);
    if (gpus > per_node) tags.push_back("network-assumed");
  }
  std::string intra = get_or<std::string>(hw, "intra_node", "unknown");
  if (intra == "unknown" || intra.empty()) intra = catalog_intra_node_for_gpu(catalog, gpu, per_node);
  const auto nics = hardware::parse_counted_ref(network);
  if (!nics) return row_error(hw, "hardware.inter_node", "expected 'N x network-id', got '" + network + "'");
  auto cluster = cluster_from_catalog(catalog, gpu, per_node, per_node > 1 ? intra : "",
                                      gpus > per_node ? nics->id : "", gpus > per_node ? nics->count : 0);
  if (!cluster) return cluster.errors();
  ClusterSpec spec = *cluster;
  // The GPUs as the source ran them when they differ from the catalog part: a configured
  // power limit, or another memory (Meta's Grand Teton H100s: 96 GB HBM2e at 2.4 TB/s, 500 W).
  if (hw["power_limit"]) {
    auto limit = parse_as<Watts>(hw["power_limit"].Scalar());
    if (!limit) return row_error(hw["power_limit"], "hardware.power_limit", limit.errors().front().message);
    spec.power_limit = *limit;
  }
  if (hw["memory_bandwidth"]) {
    auto bandwidth = parse_as<BytesPerSecond>(hw["memory_bandwidth"].Scalar());
    if (!bandwidth)
      return row_error(hw["memory_bandwidth"], "hardware.memory_bandwidth", bandwidth.errors().front().message);
    spec.gpu.memory_bandwidth = *bandwidth;
  }

  const YAML::Node l = row["layout"];
  Parallelism par;
  par.tensor = get_or(l, "tp", 1);
  par.pipeline = get_or(l, "pp", 1);
  par.context = get_or(l, "cp", 1);
  par.expert = get_or(l, "ep", 1);
  // vp: tuned — the source ran an interleaved schedule and tuned its virtual stages without
  // publishing the number (Llama 3's 405B runs): the row is predicted at the count that
  // gives the fastest valid step, as the tuning would have found it.
  const bool vp_tuned = l["vp"] && l["vp"].IsScalar() && l["vp"].Scalar() == "tuned";
  par.interleave = vp_tuned ? 1 : get_or(l, "vp", 1);
  par.data = get_or(l, "dp", gpus / std::max(1, par.tensor * par.pipeline * par.context));
  par.sequence_parallel = get_or(l, "sp", par.tensor > 1);
  // micro_batch: tuned — the source tuned its micro-batch without publishing it (Megatron-LM's
  // README benchmarks): the row is predicted at the micro-batch that gives the fastest step
  // among those that divide the per-replica batch and whose memory fits the GPU, as the
  // tuning would have found it.
  const bool mb_tuned = row["micro_batch"] && row["micro_batch"].IsScalar() && row["micro_batch"].Scalar() == "tuned";
  par.micro_batch = mb_tuned ? 1 : get_or(row, "micro_batch", 1);
  par.global_batch = row["global_batch"].as<int>();
  const std::string sharding = get_or<std::string>(l, "sharding", "none");
  if (sharding == "zero1") par.zero_stage = 1;
  else if (sharding == "zero2") par.zero_stage = 2;
  else if (sharding == "zero3" || sharding == "fsdp") par.zero_stage = 3;
  else if (sharding == "fsdp-hybrid") {
    par.zero_stage = 3;
    par.shard_group = get_or(l, "shard_group", per_node);
  } else if (sharding != "none") {
    return row_error(l, "layout.sharding", "unknown sharding '" + sharding + "'");
  }
  const std::string recompute = get_or<std::string>(l, "recompute", "none");
  par.recompute = recompute == "full" ? Recompute::full
                  : recompute == "selective" ? Recompute::selective
                                             : Recompute::none;
  par.recompute_fraction = get_or(l, "recompute_fraction", 1.0);
  if (!(par.recompute_fraction > 0 && par.recompute_fraction <= 1))
    return row_error(l, "layout.recompute_fraction", "must be in (0, 1]");
  if (par.gpus() != gpus)
    return row_error(l, "layout", "t x p x cp x d = " + std::to_string(par.gpus()) + " is not the row's " +
                                      std::to_string(gpus) + " GPUs");
  // A published global batch need not be a multiple of micro-batch x d (e.g. a batch in
  // tokens); the step then runs ceil(B / (b d)) micro-batches.
  if (par.global_batch % (par.micro_batch * par.data) != 0) {
    const int per = par.micro_batch * par.data;
    par.global_batch = (par.global_batch + per - 1) / per * per;
  }

  TrainingOptions o;
  const std::string precision = get_or<std::string>(row, "precision", "bf16");
  const auto p = precision_from_name(precision);
  if (!p) return row_error(row, "precision", "unknown precision '" + precision + "'");
  o.compute = *p;
  o.mixed_precision = true;
  const std::string attention = get_or<std::string>(row, "attention", "flash");
  o.attention = attention == "eager" ? Attention::eager : Attention::flash;
  if (attention == "flash1") o.flash_kernel = FlashKernel::fa1;
  else if (attention == "flash3") o.flash_kernel = FlashKernel::fa3;
  else if (attention != "flash" && attention != "flash2" && attention != "eager")
    return row_error(row["attention"], "attention", "expected flash, flash1, flash2, flash3 or eager");
  const std::string kernels = get_or<std::string>(row, "kernels", "fused");
  if (kernels != "fused" && kernels != "eager") return row_error(row["kernels"], "kernels", "expected fused or eager");
  o.kernels = kernels == "eager" ? Kernels::eager : Kernels::fused;
  const std::string weight_cast = get_or<std::string>(row, "fp8_weight_cast", "once_per_step");
  if (weight_cast != "once_per_step" && weight_cast != "every_microbatch")
    return row_error(row["fp8_weight_cast"], "fp8_weight_cast", "expected once_per_step or every_microbatch");
  o.fp8_weights_cast_once_per_step = weight_cast == "once_per_step";
  const std::string scaling = get_or<std::string>(row, "fp8_scaling", "tensorwise");
  if (scaling != "tensorwise" && scaling != "rowwise")
    return row_error(row["fp8_scaling"], "fp8_scaling", "expected tensorwise or rowwise");
  o.fp8_rowwise_scaling = scaling == "rowwise";
  const std::string dispatch = get_or<std::string>(row, "moe_dispatch", "per-expert");
  if (dispatch != "per-expert" && dispatch != "per-node")
    return row_error(row["moe_dispatch"], "moe_dispatch", "expected per-expert or per-node");
  o.moe_dispatch_per_node = dispatch == "per-node";
  o.tp_comm_overlap = get_or(l, "tp_comm_overlap", false);
  o.tp_comm_overlap_backward = get_or(l, "tp_comm_overlap_backward", true);
  o.overlap_gradient_reduce = get_or(l, "grad_reduce_overlap", true);
  o.overlap_p2p = get_or(l, "p2p_overlap", true);
  const std::string grad_reduce = get_or<std::string>(l, "grad_reduce", "compute");
  if (grad_reduce != "compute" && grad_reduce != "fp32")
    return row_error(l["grad_reduce"], "layout.grad_reduce", "expected compute or fp32");
  o.fp32_gradient_reduce = grad_reduce == "fp32";

  auto est = estimate_training_step(s, par, spec, o);
  if (!est) return est.errors();
  if (vp_tuned || mb_tuned) {
    const Parallelism plain = par;
    const int per_replica = plain.global_batch / plain.data;
    const int last_v = vp_tuned ? s.layers / plain.pipeline : plain.interleave;
    const int last_b = mb_tuned ? per_replica : plain.micro_batch;
    for (int v = plain.interleave; v <= last_v; ++v) {
      for (int b = plain.micro_batch; b <= last_b; ++b) {
        if (per_replica % b != 0 || (v == plain.interleave && b == plain.micro_batch)) continue;
        Parallelism tried = plain;
        tried.interleave = v;
        tried.micro_batch = b;
        if (b > 1 && training_memory_total_per_gpu(s, tried, o).value() > spec.gpu.memory.value()) continue;
        auto candidate = estimate_training_step(s, tried, spec, o);
        if (candidate && candidate->step_time.value() < est->step_time.value()) {
          est = std::move(candidate);
          par = tried;
        }
      }
    }
  }
  const double step = est->step_time.value();
  const double tokens = static_cast<double>(row["global_batch"].as<int>()) * s.seq_len;

  const YAML::Node meas = row["measured"];
  RowPrediction r;
  r.metric = meas["metric"].as<std::string>();
  r.published = meas["value"].as<double>();
  if (r.metric == "tokens_per_s_per_gpu") r.predicted = tokens / step / gpus;
  else if (r.metric == "tokens_per_s") r.predicted = tokens / step;
  else if (r.metric == "step_time_s") r.predicted = tokens / (tokens / step);
  else if (r.metric == "tflops_per_gpu" || r.metric == "mfu") {
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
    const double rate = flops_per_token < 0 ? est->achieved_flops_per_gpu.value()
                                            : flops_per_token * tokens / step / gpus;
    if (r.metric == "tflops_per_gpu") {
      r.predicted = rate / 1e12;
    } else {
      // MFU against the dense bf16 peak, as papers report it even for FP8 runs.
      const auto peak = spec.gpu.peak("bf16");
      if (!peak) return row_error(meas, "measured.metric", "the GPU has no bf16 peak for MFU");
      r.predicted = rate / peak->value();
      if (r.published > 1.0) r.predicted *= 100.0;  // published in percent
    }
  } else {
    return row_error(meas, "measured.metric", "unknown metric '" + r.metric + "'");
  }
  if (gpus >= 1000) tags.push_back("ge-1000-gpus");
  if (par.interleave > 1) tags.push_back("interleaved");
  if (par.zero_stage == 3) tags.push_back("zero3-fsdp");
  if (o.compute == Precision::fp8) tags.push_back("fp8");
  if (s.experts > 1) tags.push_back("moe");
  if (s.seq_len >= 8192) tags.push_back("long-seq");
  r.tags = std::move(tags);
  r.detail = describe_layout(par) + ", " + std::string(bottleneck_name(est->bottleneck));
  return r;
}

}  // namespace capsim::scenarios::accuracy
