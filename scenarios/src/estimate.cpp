// capsim estimate: the step of one layout with every term's arithmetic.
#include "capsim/scenarios/estimate.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/sizing.hpp"
#include "capsim/scenarios/table.hpp"

namespace capsim::scenarios {
namespace {

std::string ms(double seconds) {
  const double v = seconds * 1e3;
  if (v >= 100) return fmt::format("{:.0f} ms", v);
  if (v >= 1) return fmt::format("{:.2f} ms", v);
  return fmt::format("{:.1f} us", v * 1e3);
}

bool pinned_layout(const Scenario& s) {
  const auto& g = s.search;
  return g.tensor_parallel.size() == 1 && g.pipeline_parallel.size() == 1 && g.micro_batch.size() == 1 &&
         g.zero_stage.size() == 1 && g.recompute.size() == 1 && g.virtual_stages.size() == 1;
}

// How the data-parallel gradients are reduced: the collectives, their precision and what
// hides them.
std::string data_parallel_how(const models::Parallelism& par, const models::TrainingOptions& o,
                              const models::TrainingEstimate& r) {
  if (!(r.data_parallel_all_reduce.value() > 0)) return "no gradient all-reduce";
  const bool distributed = par.zero_stage >= 1 && par.zero_stage < 3;
  std::string how = "gradient all-reduce of " + to_string(r.gradient_bytes_per_gpu) + " per GPU over d x cp=" +
                    std::to_string(par.data * par.context) + " ranks: " + ms(r.data_parallel_all_reduce.value());
  if (o.fp32_gradient_reduce)
    how += distributed ? " (fp32 gradients; the parameters are gathered in 16 bits)" : " (fp32 gradients)";
  if (!o.overlap_gradient_reduce)
    return how + (distributed ? " as a reduce-scatter and an all-gather of the updated parameters" : "") +
           " after the last micro-batch's backward, not overlapped";
  if (par.interleave > 1 && par.zero_stage < 3) {
    const std::string chunks =
        fmt::format("per model chunk (v={}): each chunk's 1/v starts after that chunk's last backward and hides under "
                    "the backward of the chunks the cool-down still runs",
                    par.interleave);
    how += distributed ? " as a reduce-scatter and an all-gather of the updated parameters, " + chunks +
                             ", the all-gather likewise under the next step's warm-up, chunk 0 first, each except "
                             "its last bucket"
                       : ", " + chunks + ", except chunk 0's last bucket";
  } else {
    how += distributed ? " as a reduce-scatter hidden under the last micro-batch's backward and an all-gather of the "
                         "updated parameters under the next step's first forward, each except its last bucket"
                       : ", hidden under the last micro-batch's backward except the last bucket";
  }
  return how + fmt::format("; overlapped collectives hold SMs, so {:.0f} % of their hidden time counts",
                           100 * models::kOverlapComputeSlowdown());
}

void transformer_parts(StepEstimate& e, const models::Parallelism& par, const models::TrainingOptions& o) {
  const auto& r = e.step;
  const auto& b = r.breakdown;
  const std::string m = fmt::format("{:.0f}", r.microbatches);
  const std::string stage = fmt::format("{} layers{}", r.stage_layers,
                                        par.pipeline > 1 ? " on the slowest of p=" + std::to_string(par.pipeline) +
                                                               " stages"
                                                         : " (one stage) + output layer");
  e.parts.push_back({"compute", b.compute, b.compute,
                     "m=" + m + " micro-batches x (forward " + ms(r.forward_per_microbatch.value()) + " + backward " +
                         ms(r.backward_per_microbatch.value()) + ") of " + stage +
                         " (GEMM roofline at the size-dependent efficiency, element-wise work at HBM bandwidth" +
                         (r.moe_routing_per_microbatch.value() > 0
                              ? "; of it, MoE routing " + ms(r.moe_routing_per_microbatch.value()) +
                                    " per micro-batch: token permutations and the router"
                              : "") +
                         (o.compute == models::Precision::fp8
                              ? std::string("; FP8 casts of each GEMM input, the weights ") +
                                    (o.fp8_weights_cast_once_per_step ? "once per step" : "every micro-batch") +
                                    (o.fp8_rowwise_scaling
                                         ? fmt::format("; row-wise scales: casts per axis, backward outputs "
                                                       "rescaled, GEMMs saturating at {:g}x the dimension",
                                                       models::kRowwiseFp8HalfSaturationFactor())
                                         : std::string())
                              : "") +
                         ")"});
  e.parts.push_back({"recompute", b.recompute, b.recompute,
                     par.recompute == models::Recompute::none ? "no activation recompute"
                     : r.recompute_per_microbatch.value() == 0
                         ? "selective recompute has nothing to redo: flash attention recomputes the scores in its own backward"
                         : "m=" + m + " x " + ms(r.recompute_per_microbatch.value()) + " (" +
                               std::string(models::recompute_name(par.recompute)) + " recompute of the forward)"});
  e.parts.push_back({"tensor_parallel_comm", b.tensor_parallel_comm, b.tensor_parallel_comm,
                     par.tensor > 1 ? "m=" + m + " x " + ms(r.tensor_parallel_per_microbatch.value()) +
                                          ": 4 all-reduces of [b s h] per layer over t=" + std::to_string(par.tensor) +
                                          (par.sequence_parallel ? " (as all-gather + reduce-scatter)" : "") +
                                          (o.tp_comm_overlap
                                               ? std::string(", each in t chunks under the linear layers' GEMMs: the "
                                                             "first chunk and what outlasts the GEMMs are exposed") +
                                                     (o.tp_comm_overlap_backward ? "" : " (forward only: the backward's collectives are exposed)")
                                               : std::string(", not overlapped"))
                                    : "no tensor parallelism"});
  e.parts.push_back({"pipeline_bubble", b.pipeline_bubble, b.pipeline_bubble,
                     par.pipeline > 1
                         ? fmt::format("(p-1)/(m v) = {}/({} x {}) of the busy time + m x {} point-to-point sends{}",
                                       par.pipeline - 1, m, par.interleave,
                                       ms(r.point_to_point_per_microbatch.value()),
                                       par.interleave > 1 && o.overlap_p2p
                                           ? fmt::format(" (each under the next chunk: what outlasts it, and {:.0f} % "
                                                         "of the rest for the SMs it holds)",
                                                         100 * models::kOverlapComputeSlowdown())
                                           : std::string())
                         : "no pipeline parallelism"});
  e.parts.push_back({"context_parallel_comm", b.context_parallel_comm, b.context_parallel_comm,
                     par.context > 1 ? "K/V all-gather over cp=" + std::to_string(par.context) +
                                           " ranks per layer, overlapped with the attention it feeds"
                                     : "no context parallelism"});
  e.parts.push_back({"expert_parallel_comm", b.expert_parallel_comm, b.expert_parallel_comm,
                     par.expert > 1
                         ? "4 all-to-alls (dispatch, combine; forward and backward) per MoE layer over ep=" +
                               std::to_string(par.expert) +
                               (par.sequence_parallel && par.tensor > 1
                                    ? ", each of a GPU's 1/t of the tokens, with an all-gather (reduce-scatter) of "
                                      "the routed tokens over t=" + std::to_string(par.tensor)
                                    : std::string()) +
                               (o.moe_dispatch_per_node
                                    ? std::string("; each token crosses the NIC once per other node holding one of "
                                                  "its experts, and NVLink once (per-node dispatch)")
                                    : std::string("; other nodes' shares cross the NIC, the node's own NVLink"))
                         : "no expert parallelism"});
  e.parts.push_back({"host_overhead", b.host_overhead, b.host_overhead,
                     r.moe_routing_per_microbatch.value() > 0
                         ? fmt::format("the GPU waits where a MoE layer's forward or backward runs shorter than the "
                                       "host takes to issue it: {} per layer and micro-batch, a third of it the "
                                       "forward's (router, token dispatch with its host sync, per-expert GEMMs)",
                                       ms(models::kMoeLayerHostSeconds()))
                         : "dense layers: no host floor"});
  e.parts.push_back({"data_parallel_comm", b.data_parallel_comm_exposed, r.data_parallel_all_reduce,
                     data_parallel_how(par, o, r)});
  e.parts.push_back({"zero_comm", b.zero_comm, r.zero_comm_total,
                     r.zero_ranks > 1
                         ? fmt::format("per layer and micro-batch: all-gather {} (forward, backward{}) + reduce-scatter "
                                       "{} over {} ranks; total {} x {} layers x m={}, exposed where a layer's "
                                       "communication outruns its compute, plus the first layer's gather",
                                       ms(r.zero_layer_all_gather.value()),
                                       par.recompute == models::Recompute::full ? ", recompute" : "",
                                       ms(r.zero_layer_reduce_scatter.value()), r.zero_ranks,
                                       ms(r.zero_comm_total.value() / std::max(1.0, r.microbatches) /
                                          std::max(1, r.stage_layers)),
                                       r.stage_layers, m)
                         : "no ZeRO-3 / FSDP parameter sharding"});
  e.parts.push_back({"optimizer", b.optimizer, b.optimizer,
                     "Adam over " + human_count(r.optimizer_params_per_gpu) +
                         " parameters per GPU, memory-bound on its states"});
}

}  // namespace

Result<StepEstimate> estimate_scenario(const Scenario& s, const hardware::Catalog& catalog) {
  if (s.inference)
    return placed(s, {Diagnostic{{}, "workload.type", "capsim estimate takes a training scenario",
                                 "capsim simulate for serving"}});
  if (s.training.service)  // no model to step: a service states its GPUs
    return placed(s, {Diagnostic{{}, "workload.type",
                                 "capsim estimate takes a training scenario; a service states its GPUs and has no step "
                                 "to break down",
                                 "capsim cost for what it costs"}});
  // The step of the plan's configuration, on the plan's node (the cost comparison's choice
  // where the scenario prices options), as every other command shows it.
  auto plan = make_plan(s, catalog);
  if (!plan) return plan.errors();
  const auto& search = plan->sizing->search;
  if (!search.recommended)
    return placed(s, {Diagnostic{{}, "deadline", "no configuration meets the scenario's constraints",
                                 search.recommendation}});
  const models::Candidate& c = *search.recommended;
  const models::NodeType& type = search.node_types[c.node_type];

  // The precision the search used on this node type (a fallback where the GPU lacks the
  // requested one, as sizing reports it).
  models::TrainingOptions options = s.training.options;
  if (type.compute) options.compute = *type.compute;

  StepEstimate e;
  e.scenario = s.name;
  e.pinned = pinned_layout(s);
  e.node_type = type.id;
  e.nodes = c.nodes;
  e.gpus = c.par.gpus();
  e.gpu = type.cluster.gpu.id;
  if (const auto* shape = std::get_if<models::TransformerShape>(&s.training.model)) {
    auto step = models::estimate_training_step(*shape, c.par, type.cluster, options);
    if (!step) return step.errors();
    e.step = *step;
    e.layout = models::describe_layout(c.par);
    e.memory = models::training_memory_per_gpu(*shape, c.par, options);
    transformer_parts(e, c.par, options);
    if (!e.pinned)
      e.notes.push_back("the layout is the sizing recommendation; give one-element search lists "
                        "(tensor_parallel, pipeline_parallel, virtual_stages, micro_batch, zero_stage, recompute) to pin one");
  } else {
    const auto& model = std::get<models::SampleModel>(s.training.model);
    auto step = models::estimate_sample_model_step(model, c.batch_per_gpu, e.gpus, type.cluster, options);
    if (!step) return step.errors();
    e.step = *step;
    e.transformer = false;
    e.layout = "data " + std::to_string(e.gpus) + ", batch " + std::to_string(c.batch_per_gpu) + "/GPU";
    e.memory = models::sample_model_training_memory(model, c.batch_per_gpu, options);
    const auto& b = step->breakdown;
    e.parts.push_back({"compute", b.compute, b.compute, "forward + backward of the batch on one GPU"});
    e.parts.push_back({"data_parallel_comm", b.data_parallel_comm_exposed, step->data_parallel_all_reduce,
                       e.gpus > 1 ? "gradient all-reduce of " + to_string(step->gradient_bytes_per_gpu) +
                                        (options.fp32_gradient_reduce ? " (fp32 gradients)" : "") + " over " +
                                        std::to_string(e.gpus) + " GPUs, " +
                                        (options.overlap_gradient_reduce ? "overlapped with backward"
                                                                         : "after the backward, not overlapped")
                                  : "one GPU: no gradient all-reduce"});
    e.parts.push_back({"optimizer", b.optimizer, b.optimizer, "optimizer step, memory-bound on its states"});
    e.parts.push_back({"data_loading", b.data_loading, b.data_loading, "input transfer not hidden under compute"});
  }
  return e;
}

std::string estimate_text(const StepEstimate& e) {
  std::string out = "Step estimate: " + e.scenario + "\n";
  out += "  " + std::to_string(e.nodes) + " x " + e.node_type + " (" + std::to_string(e.gpus) + " x " + e.gpu + "), " +
         e.layout + (e.pinned ? " (pinned by the scenario)" : " (the sizing recommendation)") + "\n";
  out += fmt::format("  step {}, {} {}/s, {:.0f} TFLOPS per GPU ({:.0f} % MFU), constraint {}\n\n",
                     ms(e.step.step_time.value()), human_count(e.step.tokens_per_second),
                     e.transformer ? "tokens" : "samples",
                     e.step.achieved_flops_per_gpu.value() / 1e12, e.step.mfu * 100,
                     std::string(models::bottleneck_name(e.step.bottleneck)));
  Table t;
  t.columns = {"part", "exposed", "share", "before overlap"};
  t.right_align = {false, true, true, true};
  const double step = e.step.step_time.value();
  for (const auto& p : e.parts)
    t.rows.push_back({p.part, ms(p.time.value()), fmt::format("{:.1f} %", step > 0 ? p.time.value() / step * 100 : 0.0),
                      ms(p.total.value())});
  out += render_text(t) + "\nHow:\n";
  for (const auto& p : e.parts) out += "  " + p.part + ": " + p.formula + "\n";
  out += "\nMemory per GPU: " + to_string(e.memory.total()) + "\n";
  for (const auto& f : e.memory.formulas) out += "  " + f + "\n";
  for (const auto& n : e.notes) out += "\nNote: " + n + "\n";
  return out;
}

std::string estimate_json(const StepEstimate& e) {
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& p : e.parts)
    parts.push_back({{"part", p.part}, {"exposed_s", p.time.value()}, {"total_s", p.total.value()}, {"formula", p.formula}});
  nlohmann::json memory = {{"weights_bytes", e.memory.weights.value()},
                           {"gradients_bytes", e.memory.gradients.value()},
                           {"optimizer_bytes", e.memory.optimizer.value()},
                           {"activations_bytes", e.memory.activations.value()},
                           {"overhead_bytes", e.memory.overhead.value()},
                           {"total_bytes", e.memory.total().value()},
                           {"formulas", e.memory.formulas}};
  nlohmann::json j = {{"schema", "capsim.estimate"},
                      {"version", 1},
                      {"scenario", e.scenario},
                      {"pinned", e.pinned},
                      {"node_type", e.node_type},
                      {"nodes", e.nodes},
                      {"gpus", e.gpus},
                      {"gpu", e.gpu},
                      {"layout", e.layout},
                      {"step_time_s", e.step.step_time.value()},
                      {e.transformer ? "tokens_per_second" : "samples_per_second", e.step.tokens_per_second},
                      {"achieved_flops_per_gpu", e.step.achieved_flops_per_gpu.value()},
                      {"mfu", e.step.mfu},
                      {"bottleneck", std::string(models::bottleneck_name(e.step.bottleneck))},
                      {"parts", parts},
                      {"memory", memory},
                      {"notes", e.notes}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace capsim::scenarios
