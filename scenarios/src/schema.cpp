#include "capsim/scenarios/schema.hpp"

#include <nlohmann/json.hpp>

#include "capsim/core/text.hpp"
#include "capsim/hardware/schema.hpp"

#include <algorithm>

namespace capsim::scenarios {
namespace {

SchemaNode leaf(std::string name, ValueKind kind, std::string help, std::string default_text = {},
                bool required = false) {
  SchemaNode n;
  n.name = std::move(name);
  n.kind = kind;
  n.help = std::move(help);
  n.default_text = std::move(default_text);
  n.required = required;
  return n;
}

SchemaNode integer(std::string name, double minimum, double maximum, std::string help, std::string def = {}) {
  SchemaNode n = leaf(std::move(name), ValueKind::integer, std::move(help), std::move(def));
  n.minimum = minimum;
  n.maximum = maximum;
  return n;
}

SchemaNode quantity(std::string name, Dim dim, std::string help, std::string def = {}) {
  SchemaNode n = leaf(std::move(name), ValueKind::quantity, std::move(help), std::move(def));
  n.dim = dim;
  return n;
}

// A quantity with a valid range in SI units: values outside it would print as results
// (a 1e-300 s simulation measured "throughput 0"), so the loader refuses them.
SchemaNode bounded(SchemaNode n, double minimum, double maximum) {
  n.minimum = minimum;
  n.maximum = maximum;
  return n;
}

SchemaNode choice(std::string name, std::vector<std::string> choices, std::string help, std::string def = {},
                  bool required = false) {
  SchemaNode n = leaf(std::move(name), ValueKind::choice, std::move(help), std::move(def), required);
  n.choices = std::move(choices);
  return n;
}

SchemaNode list_of(std::string name, SchemaNode item, std::string help, std::string def = {}, bool required = false) {
  SchemaNode n = leaf(std::move(name), ValueKind::list, std::move(help), std::move(def), required);
  item.name = "[]";
  n.children.push_back(std::move(item));
  return n;
}

// A list of at most `items` entries: work on these lists grows faster than linearly.
SchemaNode at_most(SchemaNode list, double items) {
  list.maximum = items;
  return list;
}

SchemaNode section(std::string name, std::string help, std::vector<SchemaNode> children, bool required = false) {
  SchemaNode n = leaf(std::move(name), ValueKind::map, std::move(help), {}, required);
  n.children = std::move(children);
  return n;
}

SchemaNode model_node() {
  SchemaNode n = leaf("model", ValueKind::model,
                      "A preset name (e.g. 'llama-3.1-70b', 'gpt3-175b', 'resnet-101'; `capsim models` lists "
                      "them) or a transformer shape (required for training)",
                      {}, false);
  n.children = {
      integer("layers", 1, 1000, "transformer layers", {}),
      integer("hidden", 1, 1 << 20, "model width", {}),
      integer("heads", 1, 4096, "attention heads", {}),
      integer("kv_heads", 1, 4096, "key/value heads (grouped-query attention)", "heads"),
      integer("ffn_hidden", 1, 1 << 22, "MLP inner width", "4 x hidden"),
      integer("vocab", 1, 1 << 24, "vocabulary size", {}),
      integer("seq_len", 1, 1 << 24, "sequence length", {}),
      leaf("gated_mlp", ValueKind::boolean, "SwiGLU-style MLP with three matrices", "false"),
      integer("experts", 1, 4096, "experts per MoE layer", "1"),
      integer("experts_per_token", 1, 4096, "experts each token is routed to", "1"),
      leaf("tied_embeddings", ValueKind::boolean, "input and output embeddings share weights", "false"),
      integer("head_dim", 1, 1 << 16, "width of one attention head", "hidden / heads"),
      integer("sliding_window", 1, 1 << 24, "keys a query attends to (sliding-window attention)",
              "the whole context"),
  };
  for (auto& c : n.children)
    c.required = c.name == "layers" || c.name == "hidden" || c.name == "heads" || c.name == "vocab" ||
                 c.name == "seq_len";
  return n;
}

// A served model: a preset name, or your own by FLOPs / bytes / parameters and/or a
// measured latency table per GPU.
SchemaNode served_model_node() {
  SchemaNode n = leaf("model", ValueKind::model,
                      "A served preset (`capsim models`), or your own model: described by flops_per_sample, "
                      "bytes_per_sample and params, and/or measured (latency or latency_file)",
                      {}, true);
  SchemaNode row = section("[]", "One measured batch",
                           {leaf("gpu", ValueKind::catalog_id, "the GPU it was measured on (catalog id)", {}, true),
                            integer("batch", 1, 1 << 16, "batch size", {}),
                            bounded(quantity("latency", dims::seconds, "latency of one batch, e.g. '4.6 ms'"),
                                    kMinBatchLatencySeconds, kMaxBatchLatencySeconds)});
  row.children[1].required = true;
  row.children[2].required = true;
  n.children = {
      leaf("name", ValueKind::text, "a label for the model", "the stage name"),
      bounded(quantity("flops_per_sample", dims::ops, "forward FLOPs per input, 2 per multiply-add, e.g. '8.2 GFLOP'"),
              1, 1e18),
      bounded(quantity("bytes_per_sample", dims::bytes,
                       "activation bytes one input writes in a forward at 2 bytes per value (read back once), e.g. "
                       "'42 MB'",
                       "0 B"),
              1, 1e15),
      bounded(leaf("params", ValueKind::count, "parameters, e.g. '25.6 M'"), 1, 1e13),
      bounded(quantity("input_bytes", dims::bytes, "the decoded input of one sample, e.g. '602 KB'", "0 B"), 1, 1e12),
      integer("resolution", 1, 1 << 16, "image side in pixels (sets the GEMM rows per sample)", "none: 1 row"),
      integer("layers", 1, 1 << 20, "layers (one fused kernel each)", "0"),
      list_of("latency", row, "measured latency per batch on each GPU (replaces the roofline on those GPUs)"),
      leaf("latency_file", ValueKind::text,
           "a CSV of measured latencies, relative to the scenario: header 'gpu,batch,latency_ms' (or latency_us, "
           "latency_s), one row per GPU and batch, e.g. exported from Triton perf_analyzer runs (-b BATCH)"),
  };
  return n;
}

// Marks the named children of the section at `path` (dotted) as required.
void mark_required(SchemaNode& root, const std::vector<std::string>& path, const std::vector<std::string>& names) {
  SchemaNode* node = &root;
  for (const auto& p : path)
    for (auto& c : node->children)
      if (c.name == p) node = &c;
  for (auto& c : node->children)
    if (std::find(names.begin(), names.end(), c.name) != names.end()) c.required = true;
}

SchemaNode number(std::string name, double minimum, double maximum, std::string help, std::string def = {}) {
  SchemaNode n = leaf(std::move(name), ValueKind::number, std::move(help), std::move(def));
  n.minimum = minimum;
  n.maximum = maximum;
  return n;
}

// A request length: a whole number of tokens, or a distribution the simulation samples
// (models/serving_lengths.hpp).
SchemaNode length_node(std::string name, std::string help, std::string def) {
  SchemaNode n = leaf(std::move(name), ValueKind::length, std::move(help), std::move(def));
  n.minimum = 1;
  n.maximum = 1 << 22;
  SchemaNode pair = at_most(list_of("[]", number("[]", 0, 1 << 22, "tokens, then weight"), "a [tokens, weight] pair"), 2);
  n.children = {
      choice("distribution", {"uniform", "normal", "lognormal", "exponential"},
             "uniform (every whole length from min to max), normal (mean, sigma in tokens), lognormal (mean, sigma "
             "of ln tokens), exponential (mean); each rounded to a token and truncated to [min, max]"),
      number("mean", 1, 1 << 22, "normal, lognormal, exponential: the mean in tokens before truncation"),
      number("sigma", 0, 1 << 22, "normal: standard deviation in tokens; lognormal: standard deviation of ln(tokens)"),
      integer("min", 1, 1 << 22, "the shortest length (uniform: required)", "1"),
      integer("max", 1, 1 << 22, "the longest length (uniform: required)", "the model's context"),
      at_most(list_of("histogram", pair,
                      "instead of distribution: [tokens, weight] pairs, e.g. [[128, 0.5], [512, 0.3], [2048, 0.2]]; "
                      "a request takes each length with probability weight / total"),
              1000),
  };
  return n;
}

// `cost:`: where to run — cloud, rented bare metal, owned servers on-prem or in colocation.
SchemaNode cost_section() {
  constexpr Dim kPricePerTime = dims::money / dims::seconds;
  SchemaNode option = section(
      "[]", "One way to run the work",
      {
          leaf("name", ValueKind::text, "label in the tables", {}, true),
          leaf("instance", ValueKind::catalog_id, "a cloud instance or rented bare-metal server (catalog id)"),
          leaf("server", ValueKind::catalog_id, "an owned server model (catalog id), with facility:"),
          leaf("facility", ValueKind::catalog_id, "where owned servers stand (catalog id: colocation or on-prem)"),
          choice("pricing", {"on_demand", "spot", "reserved_1yr", "reserved_3yr", "capacity_block"},
                 "which instance price", "on_demand"),
          number("interruptions_per_hour", 0, 100, "spot: interruptions per instance-hour", "0"),
          quantity("checkpoint_interval", dims::seconds, "spot: time between checkpoints"),
          quantity("restart_time", dims::seconds, "spot: time to restart after an interruption", "0 s"),
          quantity("depreciation", dims::seconds, "owned: straight-line depreciation period", "36 months"),
          quantity("network_per_server", dims::money, "owned: switches, NICs and cables per server", "0 USD"),
          quantity("maintenance_per_year", dims::none, "owned: support contracts per year, share of the price", "0 %"),
          quantity("licences_per_gpu_per_year", dims::money, "owned: software licences per GPU per year", "0 USD"),
          number("staff_fte", 0, 1e4, "owned: people to run it, in full-time equivalents", "0"),
          quantity("staff_cost_per_fte", kPricePerTime,
                   "owned (on-prem or colocation): cost per FTE-year, e.g. '90520 USD/year' (default: the facility's)"),
          quantity("space_per_server", kPricePerTime, "on-prem: floor space and racks per server, e.g. '150 USD/month'",
                   "0 USD/month"),
          quantity("idle_power", dims::none, "owned: power drawn idle, as a share of the server's maximum", {}),
          integer("cross_connects", 0, 1e4, "colocation: cross-connects", "0"),
          quantity("cross_connect_price", kPricePerTime, "colocation: per cross-connect (default: the facility's)"),
          quantity("remote_hands_per_month", dims::seconds, "colocation: remote-hands time per month", "0 h"),
          quantity("remote_hands_price", kPricePerTime, "colocation: per hour (default: the facility's)"),
          quantity("gpu_share", dims::none, "share of a GPU paid for (a MIG slice, an MPS share)", "100 %"),
      });
  SchemaNode rate = section("[]", "An exchange rate to the comparison's currency",
                            {choice("currency", {"EUR", "GBP", "RUB"}, "the foreign currency", {}, true),
                             number("usd", hardware::kMinUsdPerUnit, hardware::kMaxUsdPerUnit,
                                    "US dollars per unit of it (one rate per currency)", {}),
                             leaf("source", ValueKind::text, "where the rate comes from", {}, true)});
  rate.children[1].required = true;
  return section(
      "cost", "Compare where to run it: cloud, rented bare metal, owned servers on-prem or in colocation",
      {
          bounded(quantity("horizon", dims::seconds, "how long the comparison runs", "24 months"), 86400, 100 * 3.15576e7),
          section("utilization", "How much of the calendar the GPUs work",
                  {
                      choice("profile", {"24/7", "business-hours", "campaigns", "measured"}, "the pattern", "24/7"),
                      number("hours_per_day", 0.1, 24, "business-hours: hours a day", "10"),
                      number("days_per_week", 0.1, 7, "business-hours: days a week", "5"),
                      number("weeks_on", 0.1, 1e4, "campaigns: busy weeks", {}),
                      number("period_weeks", 0.1, 1e4, "campaigns: out of every so many weeks", {}),
                      quantity("busy", dims::none, "measured: the busy share, e.g. '65 %'"),
                  }),
          number("runs_per_month", 1e-6, 1e9, "training: runs a month, for the cost per run", "1"),
          quantity("storage", kPricePerTime, "storage per month, the same for every option", "0 USD/month"),
          quantity("egress", kPricePerTime, "data egress per month, the same for every option", "0 USD/month"),
          list_of("exchange_rates", rate, "rates for prices not in US dollars"),
          at_most(list_of("options", option, "the ways to compare", {}, true), 100),
      });
}

SchemaNode build() {
  SchemaNode gpu_id = leaf("[]", ValueKind::catalog_id, "a GPU id from the catalog");
  SchemaNode provider_id = leaf("[]", ValueKind::catalog_id, "a provider id from the catalog (providers.yaml)");
  SchemaNode instance_id = leaf("[]", ValueKind::catalog_id, "an instance id from the catalog");
  SchemaNode server_id = leaf("[]", ValueKind::catalog_id, "a server id from the catalog");
  SchemaNode node_id = leaf("[]", ValueKind::catalog_id, "an instance or server id from the catalog");

  SchemaNode root = section(
      "scenario", "A capacity-planning question: the workload, the candidate hardware and the constraints",
      {
          leaf("name", ValueKind::text, "short name, used in reports and run history", {}, true),
          leaf("description", ValueKind::text, "the question in a sentence"),
          section("workload", "What runs",
                  {
                      choice("type", {"training", "service", "inference", "llm-serving"},
                             "training: a model to train; service: a steady demand for GPUs (with cost:); inference: "
                             "a graph of models serving requests; llm-serving: a language model serving chat",
                             {}, true),
                      at_most(list_of("graph",
                                      section("[]", "One model of the chain",
                                              {leaf("name", ValueKind::text, "stage name", {}, true),
                                               served_model_node(),
                                               // At least one call in 10,000 requests: below that a
                                               // batch of max_batch inputs is max_batch / fan_out
                                               // requests (fan_out 0.000001 grew to 24 GB), and
                                               // plan_deployment refuses past 65536 of them.
                                               number("fan_out", 1e-4, 1e6,
                                                      "model calls per request (crops per image); a batch of "
                                                      "max_batch inputs holds max_batch / fan_out requests, at most "
                                                      "65536",
                                                      "1")}),
                                      "inference: the chain of models each request goes through"),
                              8),
                      choice("engine",
                             {"framework", "tensorflow", "onnxruntime", "tensorrt", "vllm", "sglang", "tensorrt-llm",
                              "trtllm-serve", "tgi"},
                             "the runtime. inference: an efficiency profile in data/catalog/engines.yaml (framework: "
                             "eager PyTorch; default framework). llm-serving: a serving engine in "
                             "data/catalog/llm_engines.yaml, whose scheduler settings (kv_admission, chunked_prefill, "
                             "max_batched_tokens, kv_memory_fraction and what it is a share of) apply unless the "
                             "scenario states them: vllm, sglang, tensorrt-llm (as NVIDIA's published benchmarks run "
                             "it: on-demand admission), trtllm-serve (TensorRT-LLM's defaults: reserved admission, no "
                             "chunked prefill) or tgi; default vllm",
                             "framework (inference), vllm (llm-serving)"),
                      number("engine_speedup", 0, 0,
                             "inference: an override, every latency divided by this measured factor (any positive "
                             "number; the engine profile already models the runtime)",
                             {}),
                      length_node("prompt_tokens",
                                  "llm-serving: prompt tokens per request, or their distribution; with output_tokens "
                                  "at most the model's context (131072 for llama-3.1, 4096 for llama-2)",
                                  "512"),
                      length_node("output_tokens", "llm-serving: output tokens per request, or their distribution",
                                  "128"),
                      section("speculative",
                              "llm-serving: speculative decoding: a draft proposes tokens, the model verifies them "
                              "in one step (Leviathan et al. 2023)",
                              {
                                  integer("tokens", 1, 16, "tokens the draft proposes per sequence and step", {}),
                                  number("acceptance_rate", 0, 0.999,
                                         "chance that a proposed token is accepted (the paper's alpha; a step yields "
                                         "(1 - alpha^(tokens+1)) / (1 - alpha) tokens)",
                                         {}),
                                  leaf("draft_model", ValueKind::text,
                                       "a transformer preset run as the draft on the same GPUs; left out: proposals "
                                       "cost nothing (prompt lookup, n-gram)"),
                              }),
                      leaf("request_lengths", ValueKind::text,
                           "llm-serving: instead of prompt_tokens and output_tokens, a CSV file (relative to the "
                           "scenario) with the header prompt_tokens,output_tokens and one request per line, e.g. a "
                           "dataset's lengths; the simulation's requests take them in order, cycling"),
                      choice("kv_cache", {"bf16", "fp16", "fp8", "int8"}, "llm-serving: KV cache precision",
                             "bf16; fp8 with fp8 weights on tensorrt-llm (assumed: its FP8 builds quantize the cache "
                             "too; vLLM's 'auto' keeps 16 bits)"),
                      integer("max_num_seqs", 1, 1 << 20,
                              "llm-serving: the engine's cap on running sequences (vLLM max_num_seqs)",
                              "none: the KV cache decides"),
                      integer("max_batched_tokens", 1, 1 << 22,
                              "llm-serving: tokens per engine step with chunked prefill (vLLM max_num_batched_tokens)",
                              "the engine's; 8192"),
                      leaf("chunked_prefill", ValueKind::boolean,
                           "llm-serving: prompts split into chunks that ride in decode steps up to max_batched_tokens "
                           "(Sarathi-Serve); false: a prompt is prefilled whole in one step",
                           "the engine's; true"),
                      choice("kv_admission", {"on-demand", "reserved"},
                             "llm-serving: how the scheduler admits a request: on-demand (KV blocks as the sequence "
                             "grows; a full cache preempts the newest and recomputes it later: vLLM, TensorRT-LLM's "
                             "max_utilization) or reserved (its whole prompt + output KV up front: TensorRT-LLM's "
                             "guaranteed_no_evict)",
                             "the engine's; on-demand"),
                      choice("batching", {"continuous", "static"},
                             "llm-serving: continuous (in-flight) batching, or static batches that run to their "
                             "longest sequence before the next starts (a generate() call on a batch)",
                             "continuous"),
                      choice("decode_attention", {"gqa-shared", "per-query-head"},
                             "llm-serving: decode attention reads a KV head once for its GQA group (FlashAttention, "
                             "vLLM, TensorRT-LLM's XQA) or once per query head (TensorRT-LLM before v0.7)",
                             "gqa-shared"),
                      number("kv_memory_fraction", 0.001, 1,
                             "llm-serving: the share of memory the engine gives its KV cache (vLLM "
                             "gpu_memory_utilization: of the device, weights included; TensorRT-LLM "
                             "free_gpu_memory_fraction: of what the weights leave)",
                             "the engine's; 0.9"),
                      integer("offline_requests", 1, 1 << 24,
                              "llm-serving: offline max-throughput mode: this many requests queued at t = 0 "
                              "(arrivals are then ignored)",
                              {}),
                      model_node(),
                      integer("gpus", 1, 1e6, "service: GPUs the services keep busy while they run", {}),
                      bounded(leaf("tokens", ValueKind::count, "tokens to train on (transformers), e.g. '15T'"), 1, 1e18),
                      bounded(leaf("samples", ValueKind::count, "samples per epoch (sample models such as ResNet), e.g. '1.28M'"), 1, 1e15),
                      [] {
                        SchemaNode n = leaf("epochs", ValueKind::number, "passes over the samples", "1");
                        n.minimum = 1e-6;
                        n.maximum = 1e6;
                        return n;
                      }(),
                      integer("global_batch", 1, 1 << 24,
                              "sequences (transformers) per optimizer step", "1024"),
                      integer("seq_len", 1, 1 << 24, "override the preset's sequence length", {}),
                      choice("precision", {"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4"}, "matrix-math precision (llm-serving: the weights; int4 = AWQ/GPTQ-style, 16-bit math)",
                             "bf16"),
                      leaf("mixed_precision", ValueKind::boolean,
                           "fp32 master weights and Adam states (16 bytes/param)", "true"),
                      choice("fine_tuning", {"full", "lora", "qlora"}, "train all weights or adapters only", "full"),
                      choice("attention", {"flash", "flash1", "flash2", "flash3", "eager"},
                             "attention kernels: fused flash (scores never stored, recomputed in backward; flash = "
                             "flash2, FlashAttention-2 as PyTorch SDPA runs it; flash3 = FlashAttention-3 or cuDNN "
                             "fused attention on Hopper and newer; flash1 = the 2022 kernels) or eager (scores kept: "
                             "Korthikanti's 5as/h term)",
                             "flash"),
                      choice("kernels", {"fused", "eager"},
                             "element-wise kernels: fused (Megatron-LM / Transformer Engine, torch.compile) or eager "
                             "(PyTorch eager mode: RMSNorm, rotary embedding and SwiGLU as several kernels each)",
                             "fused"),
                      leaf("tp_comm_overlap", ValueKind::boolean,
                           "tensor-parallel communication overlapped with the linear layers' GEMMs (Transformer "
                           "Engine --tp-comm-overlap, PyTorch async TP)",
                           "false"),
                      leaf("tp_comm_overlap_backward", ValueKind::boolean,
                           "with tp_comm_overlap, the backward pass's tensor-parallel collectives overlap too "
                           "(Transformer Engine); false: only the forward's (PyTorch's async TP)",
                           "true"),
                      leaf("grad_reduce_overlap", ValueKind::boolean,
                           "data-parallel gradient reduction overlapped with the last micro-batch's backward, bucket "
                           "by bucket (PyTorch DDP, Megatron --overlap-grad-reduce); false: it runs after the backward "
                           "and the step waits for it (Megatron-LM's default without that flag)",
                           "true"),
                      choice("grad_reduce", {"compute", "fp32"},
                             "precision of the gradient reduction: the compute precision's 16 bits, or fp32 (Megatron-LM "
                             "with bf16 unless --grad-reduce-in-bf16)",
                             "compute"),
                      leaf("p2p_overlap", ValueKind::boolean,
                           "interleaved pipelines (virtual stages): the point-to-point sends run while the next "
                           "chunk computes (Megatron-LM's overlap_p2p_comm, its default since October 2023); false: "
                           "each send is waited for",
                           "true"),
                      choice("fp8_weight_cast", {"once_per_step", "every_microbatch"},
                             "FP8 training: weights cast to FP8 on a step's first micro-batch and the copy reused "
                             "(Transformer Engine under Megatron-Core, NeMo), or cast again for every micro-batch "
                             "(torchao float8, Transformer Engine without is_first_microbatch)",
                             "once_per_step"),
                      choice("fp8_scaling", {"tensorwise", "rowwise"},
                             "FP8 training: one scale per tensor (Transformer Engine, torchao's default) or one per "
                             "row (torchao's rowwise recipe: kernels that saturate at larger GEMMs, and casts that "
                             "move more bytes)",
                             "tensorwise"),
                      choice("moe_dispatch", {"per-expert", "per-node"},
                             "mixture-of-experts token dispatch across nodes: a copy per routed expert over the NIC "
                             "(NCCL all-to-all, Megatron-Core's alltoall dispatcher), or once per node holding any of "
                             "a token's experts, forwarded there over NVLink (DeepEP, HybridEP: Megatron's flex "
                             "dispatcher)",
                             "per-expert"),
                      integer("lora_rank", 1, 4096, "LoRA/QLoRA adapter rank", "16"),
                      quantity("memory_overhead", dims::none,
                               "framework and fragmentation overhead on top of the computed memory", "10 %"),
                  },
                  true),
          section("hardware", "The candidate hardware",
                  {
                      list_of("gpus", gpu_id, "GPU types to consider (required for training)", {}, false),
                      list_of("providers", provider_id,
                              "price instances of these providers (default: all with a price)"),
                      list_of("instances", instance_id, "only these instance types (default: every instance with a candidate GPU)"),
                      list_of("servers", server_id, "owned server types to consider as well"),
                      list_of("nodes", node_id,
                              "pin the node types: only these instances or servers (one or several); sizing, estimate, "
                              "cost and the plan use no other. Their GPUs are the candidates when hardware.gpus is "
                              "left out"),
                      leaf("scale_out", ValueKind::text,
                           "training: the NICs each node uses for scale-out traffic, 'N x network-id' (e.g. '8 x "
                           "roce-400g'; `capsim catalog list networks` lists the ids), each GPU an equal share: replaces the "
                           "catalog's NICs of every candidate node, for a cluster built with other NICs than the "
                           "catalog's node",
                           "the catalog's NICs"),
                      integer("max_gpus", 1, 1e6, "largest cluster to consider; also bounds the GPUs a stated deployment takes", "4096"),
                      integer("min_gpus", 1, 1e6, "smallest cluster to consider", "1"),
                  },
                  false),
          section("search", "Limits on the configurations the sizing search enumerates",
                  {
                      list_of("micro_batch", integer("[]", 1, 1 << 16, "sequences per micro-batch"),
                              "micro-batch sizes", "[1, 2, 4, 8]"),
                      list_of("zero_stage", integer("[]", 0, 3, "ZeRO stage"), "ZeRO stages", "[0, 1, 2, 3]"),
                      list_of("recompute", choice("[]", {"none", "selective", "full"}, "activation recompute"),
                              "activation recompute policies", "[none, selective, full]"),
                      list_of("tensor_parallel", integer("[]", 1, 1024, "tensor-parallel degree"),
                              "tensor-parallel degrees", "powers of two up to the GPUs per node"),
                      list_of("pipeline_parallel", integer("[]", 1, 4096, "pipeline stages"),
                              "pipeline-parallel degrees", "powers of two dividing the layers, up to 128"),
                      list_of("batch_per_gpu", integer("[]", 1, 1 << 16, "samples per GPU per step"),
                              "per-GPU batch sizes for sample models", "[32, 64, 128, 256]"),
                      list_of("virtual_stages", integer("[]", 1, 64, "virtual stages per GPU"),
                              "interleaved 1F1B virtual stages (used with pipeline parallelism)", "[1, 2, 4]"),
                      list_of("sequence_parallel", leaf("[]", ValueKind::boolean, "sequence parallelism", {}),
                              "sequence parallelism with tensor parallelism", "[true]"),
                      list_of("context_parallel", integer("[]", 1, 1024, "context-parallel degree"),
                              "context-parallel degrees (ring attention over the sequence)", "[1]"),
                      list_of("expert_parallel", integer("[]", 1, 4096, "expert-parallel degree"),
                              "expert-parallel degrees (mixture-of-experts models)", "[1]"),
                      list_of("fsdp_hybrid", leaf("[]", ValueKind::boolean, "hybrid sharding", {}),
                              "ZeRO-3 sharded within a node and replicated across nodes (FSDP HYBRID_SHARD)",
                              "[false]"),
                      list_of("recompute_fraction", number("[]", 0.001, 1, "share of layers"),
                              "with recompute full: the shares of the layers checkpointed and recomputed in the "
                              "backward (PyTorch stacks that checkpoint every k-th block: 1/k; torchtitan's "
                              "selective layer AC: 0.5); 1: every layer, as Megatron-LM's full recompute",
                              "[1]"),
                      list_of("max_batch", integer("[]", 1, 1 << 16, "largest batch"),
                              "inference: dynamic-batching sizes", "[1, 4, 8, 16, 32]"),
                      list_of("max_queue_delay", quantity("[]", dims::seconds, "longest wait"),
                              "inference: batching delays", "[0 s, 2 ms, 5 ms]"),
                      list_of("sharing", choice("[]", {"exclusive", "mig", "mps", "time-slicing"}, "mode"),
                              "inference: GPU sharing modes", "[exclusive, mig, mps]"),
                  }),
          section("simulate", "The discrete-event simulation: for training, one node's pipeline (storage read, CPU "
                  "decode, PCIe, GPU step; node and host required); for inference, the run length and seed",
                  {
                      leaf("node", ValueKind::catalog_id, "training: the instance or server the job runs on"),
                      integer("gpus", 1, 1024, "GPUs of the node the job uses", "1"),
                      integer("batch_per_gpu", 1, 1 << 16, "samples per GPU per step", "64"),
                      section("host", "The host that feeds the GPUs",
                              {
                                  integer("cpu_cores", 1, 4096, "cores (vCPUs) the data loader uses", {}),
                                  bounded(quantity("decode_time", dims::seconds,
                                           "CPU time per sample on one core: read, decode, augment"), 1e-9, 3600),
                                  [] {
                                    SchemaNode n = leaf("decode_cv", ValueKind::number,
                                                        "coefficient of variation of the decode time", "0.3");
                                    n.minimum = 0;
                                    n.maximum = 10;
                                    return n;
                                  }(),
                                  quantity("sample_size", dims::bytes, "size of one sample on storage"),
                                  quantity("storage_bandwidth", dims::bytes / dims::seconds,
                                           "read bandwidth of the dataset's storage"),
                                  quantity("storage_latency", dims::seconds, "latency of one read", "0 s"),
                              },
                              false),
                      integer("prefetch_batches", 1, 1024, "batches the data loader keeps in flight", "4"),
                      section("checkpoint", "Periodic checkpoints of the model states",
                              {
                                  integer("every_steps", 1, 1 << 30, "steps between checkpoints", {}),
                                  quantity("bandwidth", dims::bytes / dims::seconds, "write bandwidth"),
                              }),
                      bounded(quantity("duration", dims::seconds, "simulated time measured", "10 min"), 1e-3, 3.15576e9),
                      quantity("warmup", dims::seconds, "simulated time discarded first", "1 min"),
                      integer("seed", 0, 1e15, "random seed: the same seed gives the same run", "1"),
                      integer("max_events", 1000, 1e10,
                              "the most events the simulation may process (about 40 bytes of memory each at "
                              "most); a run that would need more is refused, saying so",
                              "100000000"),
                  }),
          cost_section(),
          section("arrivals", "inference and llm-serving: how requests arrive",
                  {
                      choice("kind", {"poisson", "diurnal", "trace"}, "the arrival process", "poisson"),
                      number("rate", 1e-9, 1e9, "requests per second (diurnal: the base rate; not with by_hour)", {}),
                      integer("requests", 1, 1 << 24,
                              "llm-serving, poisson: a benchmark client's fixed count: this many requests at the rate, "
                              "run to the last completion and every one measured (no warm-up or window)",
                              "none: arrivals for warmup + duration"),
                      list_of("hourly", number("[]", 0, 1e6, "multiplier"),
                              "diurnal: 24 rate multipliers, hour 0 (midnight) first"),
                      at_most(list_of("by_hour", number("[]", 0, 1e9, "requests per second"),
                                      "diurnal: a day's load curve, 24 rates in requests per second from midnight, "
                                      "instead of rate and hourly (LLM sizing gives each hour its replicas)"),
                              24),
                      leaf("trace", ValueKind::text, "trace: a file of arrival times in seconds, one per line "
                                                     "(relative to the scenario)"),
                  }),
          section("slo", "inference and llm-serving: the latency objective (required to size with hardware.gpus; "
                         "a plan that misses it fails run --check)",
                  {
                      quantity("p99", dims::seconds, "inference: end-to-end p99 latency bound"),
                      quantity("ttft_p99", dims::seconds, "llm-serving: p99 time to first token"),
                      quantity("tpot_p99", dims::seconds, "llm-serving: p99 time per output token"),
                  }),
          section("deployment", "inference and llm-serving: a deployment to simulate",
                  {
                      leaf("node", ValueKind::catalog_id, "the instance or server", {}, true),
                      choice("sharing", {"exclusive", "mig", "mps", "time-slicing"}, "GPU sharing", "exclusive"),
                      integer("tensor_parallel", 1, 64, "llm-serving: GPUs per replica (per pipeline stage)", "1"),
                      integer("pipeline_parallel", 1, 256,
                              "llm-serving: pipeline stages of tensor_parallel GPUs per replica; a replica of "
                              "more than a node's GPUs takes whole nodes",
                              "1"),
                      integer("replicas", 1, 1e6, "llm-serving: replicas", "1"),
                      at_most(list_of("stages",
                              section("[]", "How one stage of the graph is deployed",
                                      {integer("replicas", 1, 1e6, "GPUs, MIG instances or shared processes", "1"),
                                       integer("instances", 1, 64, "model instances per replica", "1"),
                                       integer("max_batch", 1, 1 << 16, "dynamic batching: largest batch (1 = off)",
                                               "1"),
                                       quantity("max_queue_delay", dims::seconds,
                                                "dynamic batching: longest wait for a batch", "0 s"),
                                       leaf("mig_profile", ValueKind::text, "mig: the profile, e.g. '1g.10gb'"),
                                       quantity("mps_share", dims::none, "mps: the SM share, e.g. '50 %'")}),
                              "inference: one entry per graph stage"), 8),
                  }),
          section("pricing", "Which prices rank the options",
                  {
                      choice("commitment", {"on_demand", "spot", "reserved_1yr", "reserved_3yr"},
                             "the instance price to use", "on_demand"),
                  }),
          section("catalog", "Catalog overlays the scenario needs: your own quotes and entries on top of the catalog",
                  {
                      list_of("overlays",
                              leaf("[]", ValueKind::text,
                                   "a directory of catalog YAML files, or one file, relative to the scenario file"),
                              "loaded on top of the catalog like --catalog-overlay (before the command line's); every "
                              "figure with source and as_of"),
                  }),
          quantity("deadline", dims::seconds, "the job must finish within this time, e.g. '90 d'"),
          quantity("budget", dims::money, "the job must cost at most this, e.g. '2000000 USD'"),
          list_of("expect", leaf("[]", ValueKind::text, "METRIC OP VALUE, e.g. 'training_time < 90 d'"),
                  "what must hold for `capsim run --check` to pass; metrics: training_time, cost_per_run, "
                  "gpus, memory_per_gpu, memory_headroom, mfu, step_time, gpu_utilization, samples_per_second, monthly_cost, "
                  "total_cost, p99_latency, ttft_p99, tpot_p99, throughput"),
      });
  mark_required(root, {"simulate", "host"}, {"cpu_cores", "decode_time", "sample_size", "storage_bandwidth"});
  mark_required(root, {"simulate", "checkpoint"}, {"every_steps", "bandwidth"});
  mark_required(root, {"workload", "speculative"}, {"tokens", "acceptance_rate"});
  return root;
}

nlohmann::json json_of(const SchemaNode& n) {
  nlohmann::json j;
  if (!n.help.empty()) j["description"] = n.help + (n.default_text.empty() ? "" : " (default: " + n.default_text + ")");
  switch (n.kind) {
    case ValueKind::map: {
      j["type"] = "object";
      j["additionalProperties"] = false;
      nlohmann::json props = nlohmann::json::object();
      nlohmann::json required = nlohmann::json::array();
      for (const auto& c : n.children) {
        props[c.name] = json_of(c);
        if (c.required) required.push_back(c.name);
      }
      j["properties"] = props;
      if (!required.empty()) j["required"] = required;
      break;
    }
    case ValueKind::list:
      j["type"] = "array";
      j["items"] = json_of(n.children.at(0));
      if (n.maximum > 0) j["maxItems"] = static_cast<long long>(n.maximum);
      break;
    case ValueKind::text: j["type"] = "string"; break;
    case ValueKind::choice: j["enum"] = n.choices; break;
    case ValueKind::quantity:
      j["type"] = n.dim == dims::none ? nlohmann::json({"string", "number"}) : nlohmann::json("string");
      j["x-capsim-unit"] = describe_dimension(n.dim);
      break;
    case ValueKind::count: j["type"] = {"string", "number"}; break;
    case ValueKind::integer:
    case ValueKind::number:
      j["type"] = n.kind == ValueKind::integer ? "integer" : "number";
      if (n.minimum != 0 || n.maximum != 0) {
        j["minimum"] = n.minimum;
        j["maximum"] = n.maximum;
      }
      break;
    case ValueKind::boolean: j["type"] = "boolean"; break;
    case ValueKind::catalog_id:
      j["type"] = "string";
      j["pattern"] = "^[a-z0-9]+(-[a-z0-9]+)*$";
      break;
    case ValueKind::length: {
      SchemaNode shape = n;
      shape.kind = ValueKind::map;
      shape.help.clear();
      j["oneOf"] = {nlohmann::json{{"type", "integer"}, {"minimum", n.minimum}, {"maximum", n.maximum}},
                    json_of(shape)};
      break;
    }
    case ValueKind::model: {
      SchemaNode shape = n;
      shape.kind = ValueKind::map;
      shape.help.clear();
      j["oneOf"] = {nlohmann::json{{"type", "string"}}, json_of(shape)};
      break;
    }
  }
  return j;
}

std::string kind_text(const SchemaNode& n) {
  switch (n.kind) {
    case ValueKind::map: return "mapping";
    case ValueKind::list: return "list of " + kind_text(n.children.at(0));
    case ValueKind::text: return "text";
    case ValueKind::choice: {
      std::string out;
      for (const auto& c : n.choices) out += (out.empty() ? "" : " \\| ") + c;
      return out;
    }
    case ValueKind::quantity: return describe_dimension(n.dim);
    case ValueKind::count: return "count ('15T', '1.28M')";
    case ValueKind::integer: return "integer";
    case ValueKind::number: return "number";
    case ValueKind::boolean: return "true \\| false";
    case ValueKind::catalog_id: return "catalog id";
    case ValueKind::model: return "preset name or shape";
    case ValueKind::length: return "integer or distribution";
  }
  return "";
}

void markdown_of(const SchemaNode& n, const std::string& path, std::string& out) {
  std::vector<const SchemaNode*> nested;
  out += "\n## `" + path + "`\n\n" + n.help + "\n\n| key | type | required | default | meaning |\n|---|---|---|---|---|\n";
  for (const auto& c : n.children) {
    std::string range;
    if ((c.kind == ValueKind::integer || c.kind == ValueKind::number || c.kind == ValueKind::length) &&
        (c.minimum != 0 || c.maximum != 0)) {
      // As people read numbers: 0.000001 to 1000000, never 1e-06 to 1000000.0.
      range = " (" + significant(c.minimum, 12) + " to " + significant(c.maximum, 12) + ")";
    }
    out += "| `" + c.name + "` | " + kind_text(c) + range + " | " + (c.required ? "yes" : "no") + " | " +
           (c.default_text.empty() ? "" : "`" + c.default_text + "`") + " | " + c.help + " |\n";
    if (c.kind == ValueKind::map || c.kind == ValueKind::model || c.kind == ValueKind::length) nested.push_back(&c);
    // A list of mappings: its items' keys get a table of their own ("workload.graph[]").
    if (c.kind == ValueKind::list && !c.children.empty() &&
        (c.children[0].kind == ValueKind::map || c.children[0].kind == ValueKind::model))
      nested.push_back(&c);
  }
  for (const auto* c : nested) {
    const std::string at = path.empty() ? c->name : path + "." + c->name;
    if (c->kind == ValueKind::list) markdown_of(c->children[0], at + "[]", out);
    else markdown_of(*c, at, out);
  }
}

}  // namespace

const SchemaNode* SchemaNode::child(std::string_view key) const {
  for (const auto& c : children)
    if (c.name == key) return &c;
  return nullptr;
}

std::vector<std::string> SchemaNode::child_names() const {
  std::vector<std::string> out;
  for (const auto& c : children) out.push_back(c.name);
  return out;
}

const SchemaNode& scenario_schema() {
  static const SchemaNode root = build();
  return root;
}

std::string scenario_json_schema() {
  nlohmann::json j = json_of(scenario_schema());
  j["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  j["$id"] = "https://capsim.dev/scenario.schema.json";
  j["title"] = "capsim scenario";
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string scenario_reference_markdown() {
  std::string out =
      "# Scenario reference\n\nGenerated from the scenario schema by `capsim schema --format md`; a test keeps this "
      "file equal to that output. Quantities carry units (`80 GB`, `200 ms`, `14 d`, `2.5 USD/h`); unknown keys are "
      "errors with a suggestion.\n";
  markdown_of(scenario_schema(), "", out);
  // The root table is titled by its path; give it a readable name.
  const std::string root_title = "\n## ``\n";
  if (auto at = out.find(root_title); at != std::string::npos) out.replace(at, root_title.size(), "\n## Top level\n");
  return out;
}

bool key_applies(std::string_view path, std::string_view type) {
  // Keys of one or a few workload types; every other key applies to all.
  static const std::vector<std::pair<std::string_view, std::vector<std::string_view>>> only = {
      {"workload.graph", {"inference"}},
      {"workload.engine", {"inference", "llm-serving"}},
      {"workload.kv_admission", {"llm-serving"}},
      {"workload.batching", {"llm-serving"}},
      {"workload.decode_attention", {"llm-serving"}},
      {"workload.kv_memory_fraction", {"llm-serving"}},
      {"arrivals.requests", {"llm-serving"}},
      {"workload.engine_speedup", {"inference"}},
      {"workload.prompt_tokens", {"llm-serving"}},
      {"workload.output_tokens", {"llm-serving"}},
      {"workload.request_lengths", {"llm-serving"}},
      {"workload.speculative", {"llm-serving"}},
      {"workload.kv_cache", {"llm-serving"}},
      {"workload.max_num_seqs", {"llm-serving"}},
      {"workload.max_batched_tokens", {"llm-serving"}},
      {"workload.chunked_prefill", {"llm-serving"}},
      {"workload.offline_requests", {"llm-serving"}},
      {"workload.model", {"training", "llm-serving"}},
      {"workload.gpus", {"service"}},
      {"workload.tokens", {"training"}},
      {"workload.samples", {"training"}},
      {"workload.epochs", {"training"}},
      {"workload.global_batch", {"training"}},
      {"workload.seq_len", {"training"}},
      {"workload.precision", {"training", "inference", "llm-serving"}},
      {"workload.mixed_precision", {"training"}},
      {"workload.fine_tuning", {"training"}},
      {"workload.attention", {"training"}},
      {"workload.kernels", {"training"}},
      {"workload.tp_comm_overlap", {"training"}},
      {"workload.tp_comm_overlap_backward", {"training"}},
      {"workload.grad_reduce_overlap", {"training"}},
      {"workload.grad_reduce", {"training"}},
      {"workload.fp8_weight_cast", {"training"}},
      {"workload.fp8_scaling", {"training"}},
      {"workload.moe_dispatch", {"training"}},
      {"workload.p2p_overlap", {"training"}},
      {"workload.lora_rank", {"training"}},
      {"workload.memory_overhead", {"training", "llm-serving"}},
      {"hardware", {"training", "inference", "llm-serving"}},
      {"search", {"training", "inference", "llm-serving"}},
      {"simulate", {"training", "inference", "llm-serving"}},
      {"arrivals", {"inference", "llm-serving"}},
      {"slo", {"inference", "llm-serving"}},
      {"deployment", {"inference", "llm-serving"}},
      {"deadline", {"training"}},
      {"budget", {"training"}},
  };
  for (const auto& [key, types] : only)
    if (path == key || (path.starts_with(key) && path.size() > key.size() && path[key.size()] == '.'))
      return std::find(types.begin(), types.end(), type) != types.end();
  return true;
}

}  // namespace capsim::scenarios
