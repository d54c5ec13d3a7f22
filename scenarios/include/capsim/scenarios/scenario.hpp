// A scenario: the question a user asks capsim, loaded and validated from YAML.
//
// Loading checks the file against the scenario schema (unknown keys with "did you mean",
// types, units, ranges) and against the catalog (GPU, instance and server ids), and
// reports every problem at once with file:line:column and the key path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/models/parallelism.hpp"
#include "capsim/models/serving.hpp"
#include "capsim/models/serving_llm.hpp"
#include "capsim/models/serving_lengths.hpp"
#include "capsim/models/workload.hpp"
#include "capsim/scenarios/expectations.hpp"

namespace capsim::scenarios {

enum class Commitment { on_demand, spot, reserved_1yr, reserved_3yr };
std::string_view commitment_name(Commitment c);
// The catalog field holding that price: "price.on_demand".
std::string_view commitment_price_field(Commitment c);

struct TrainingWorkload {
  bool service = false;    // type: service — a steady demand for `service_gpus` GPUs, no model
  int service_gpus = 0;
  std::string model_name;  // preset name, or "custom" for an explicit shape
  models::Workload model;  // TransformerShape or SampleModel
  double tokens = 0;       // transformers: tokens to train on
  double samples = 0;      // sample models: samples per epoch
  double epochs = 1;
  int global_batch = 1024;
  models::TrainingOptions options;

  bool is_transformer() const { return std::holds_alternative<models::TransformerShape>(model); }
};

struct HardwareChoice {
  std::vector<std::string> gpus;
  std::vector<std::string> providers;  // empty: all
  std::vector<std::string> instances;  // empty: every instance with a candidate GPU
  std::vector<std::string> servers;
  std::vector<std::string> nodes;      // pinned node types (instances or servers): only these
  // hardware.scale_out: every candidate node's scale-out NICs ("8 x roce-400g"), replacing the
  // catalog's; empty: the catalog's.
  std::string scale_out_network;
  int scale_out_nics = 0;
  int max_gpus = 4096;
  int min_gpus = 1;
};

struct SearchSpace {
  std::vector<int> micro_batch{1, 2, 4, 8};
  std::vector<int> zero_stage{0, 1, 2, 3};
  std::vector<models::Recompute> recompute{models::Recompute::none, models::Recompute::selective,
                                           models::Recompute::full};
  std::vector<int> tensor_parallel;    // empty: powers of two up to the GPUs per node
  std::vector<int> pipeline_parallel;  // empty: powers of two dividing the layers, up to 128
  std::vector<int> batch_per_gpu{32, 64, 128, 256};
  std::vector<int> virtual_stages{1, 2, 4};      // interleaved 1F1B (used with p > 1)
  std::vector<bool> sequence_parallel{true};     // with t > 1
  std::vector<int> context_parallel{1};
  std::vector<int> expert_parallel{1};           // MoE models
  std::vector<bool> fsdp_hybrid{false};          // ZeRO-3 within a node, replicated across
  std::vector<double> recompute_fraction{1.0};   // with full recompute: share of layers checkpointed
};

// `simulate:`: one node's training pipeline in the discrete-event simulator.
struct SimulationSetup {
  std::string node;  // instance or server id
  int gpus = 1;
  int batch_per_gpu = 64;
  int cpu_cores = 1;
  Seconds decode_time{0.0};
  double decode_cv = 0.3;
  Bytes sample_size{0.0};
  BytesPerSecond storage_bandwidth{0.0};
  Seconds storage_latency{0.0};
  int prefetch_batches = 4;
  int checkpoint_every_steps = 0;
  BytesPerSecond checkpoint_bandwidth{0.0};
  Seconds duration = Seconds(600);
  Seconds warmup = Seconds(60);
  std::uint64_t seed = 1;
  // The event budget: the default keeps a run under a few seconds and its memory bounded.
  std::uint64_t max_events = 100'000'000;
  SourceLocation duration_at;  // simulate.duration, or simulate: when it is not given
};

// `workload: {type: inference | llm-serving}` with `arrivals:`, `slo:` and an optional
// `deployment:` to simulate.
struct InferenceSetup {
  bool llm = false;
  models::InferenceGraph graph;         // inference
  models::ExecutionOptions exec;
  models::TransformerShape shape;       // llm-serving
  models::LlmRequestMix mix;
  // llm-serving: workload.prompt_tokens / output_tokens as given: one number (fixed) or a
  // distribution; with a distribution, `mix` holds the requests sampled from the scenario's
  // seed (serving_lengths.hpp) and their rounded means.
  models::LlmLengthDistribution prompt_lengths, output_lengths;
  std::string request_lengths_file;  // llm-serving: workload.request_lengths as written, or empty
  std::vector<std::string> latency_files;  // inference: the graph's models' latency_file, as written
  models::LlmSpeculation speculation;  // llm-serving: workload.speculative (tokens 0: off)
  models::Precision kv_cache = models::Precision::bf16;  // llm-serving: KV cache precision
  int max_num_seqs = 0;                                  // llm-serving: scheduler cap; 0 = the KV cache decides
  int max_batched_tokens = models::kMaxBatchedTokens;    // llm-serving: tokens per step (chunked prefill)
  int offline_requests = 0;                              // llm-serving: offline mode, requests at t = 0
  int server_requests = 0;  // llm-serving: arrivals.requests, a benchmark client's fixed count (0: a window)
  // llm-serving: how the engine runs (workload.engine, kv_admission, batching, decode_attention,
  // kv_memory_fraction): the LlmServingSpec fields they set, vLLM's behaviour by default.
  // The engine's settings come from its catalog entry (data/catalog/llm_engines.yaml), the
  // scenario's keys override each, and capsim's defaults fill what neither gives;
  // engine_setting_origin says which, per key ("kv_admission" -> "the scenario").
  std::string llm_engine = "vllm";
  std::string llm_engine_name = "vLLM";
  models::LlmKvAdmission kv_admission = models::LlmKvAdmission::on_demand;
  models::LlmBatching batching = models::LlmBatching::continuous;
  bool gqa_shared_kv = true;
  std::optional<double> kv_memory_fraction;  // the scenario's workload.kv_memory_fraction; none: the engine's
  models::LlmKvBudget kv_budget = models::LlmKvBudget::share_of_device;  // what the fraction is a share of
  double memory_utilization = models::kVllmGpuMemoryUtilization;       // as applied
  bool chunked_prefill = true;  // false: a prompt is prefilled whole in one step
  std::string preemption = "recompute";  // the engine's, as its entry states it (shown, not modelled)
  std::map<std::string, std::string> engine_setting_origin;
  models::ArrivalSpec arrivals;
  std::optional<Seconds> p99, ttft_p99, tpot_p99;
  // deployment:
  std::string node;
  models::SharingMode sharing = models::SharingMode::exclusive;
  int tensor_parallel = 1;
  int pipeline_parallel = 1;  // llm-serving: stages of tensor_parallel GPUs per replica
  int replicas = 1;
  std::vector<models::StageDeployment> stages;
  // search: (sizing)
  std::vector<int> max_batch{1, 4, 8, 16, 32};
  std::vector<Seconds> max_queue_delay{Seconds(0.0), Seconds(0.002), Seconds(0.005)};
  std::vector<models::SharingMode> sharing_modes{models::SharingMode::exclusive, models::SharingMode::mig,
                                                 models::SharingMode::mps};
};

// One way to run the work in `cost:`.
struct CostOptionSetup {
  std::string name;
  std::string instance;  // cloud or bare metal
  std::string server;    // owned
  std::string facility;  // owned: where it stands
  std::string pricing = "on_demand";
  double interruptions_per_hour = 0;
  Seconds checkpoint_interval{0.0};
  Seconds restart_time{0.0};
  Seconds depreciation = Seconds(36 * units::month);
  Money network_per_server = usd(0);
  double maintenance_per_year = 0;
  Money licences_per_gpu_per_year = usd(0);
  double staff_fte = 0;
  std::optional<MoneyPerSecond> staff_cost_per_fte;  // per FTE-year as a rate; default: the facility's
  MoneyPerSecond space_per_server = MoneyPerSecond(0, Currency::usd);
  std::optional<double> idle_power;  // share of maximum
  int cross_connects = 0;
  std::optional<MoneyPerSecond> cross_connect_price;
  Seconds remote_hands_per_month{0.0};
  std::optional<MoneyPerSecond> remote_hands_price;
  double gpu_share = 1.0;
  SourceLocation where;
};

struct CostSetup {
  Seconds horizon = Seconds(24 * units::month);
  std::string profile = "24/7";  // 24/7, business-hours, campaigns, measured
  double hours_per_day = 10, days_per_week = 5, weeks_on = 0, period_weeks = 0, busy = 1;
  double runs_per_month = 1;
  MoneyPerSecond storage = MoneyPerSecond(0, Currency::usd);
  MoneyPerSecond egress = MoneyPerSecond(0, Currency::usd);
  std::vector<std::pair<Currency, double>> usd_per_unit;  // exchange rates
  std::vector<CostOptionSetup> options;
};

struct Scenario {
  std::string name;
  std::string description;
  std::string file;  // where it was loaded from
  TrainingWorkload training;
  HardwareChoice hardware;
  SearchSpace search;
  Commitment commitment = Commitment::on_demand;
  std::optional<Seconds> deadline;
  std::optional<Money> budget;
  std::optional<SimulationSetup> simulate;
  std::optional<CostSetup> cost;
  std::optional<InferenceSetup> inference;  // inference and llm-serving workloads
  std::vector<Expectation> expect;
  std::string text;  // the YAML as loaded, for run history
  // Where each key of the file is: dotted key paths, list entries as key[i] ("search.recompute",
  // "deployment.stages[1].replicas"), for errors found after loading (placed()).
  std::map<std::string, SourceLocation> key_at;
};

// Errors found while planning a loaded scenario (sizing, estimating, simulating), placed in
// its file: at the line and column of their key path, or of the nearest enclosing key the
// file has (a default's mapping), else at the file. A diagnostic with a line keeps it.
std::vector<Diagnostic> placed(const Scenario& s, std::vector<Diagnostic> errors);

// Loads and validates a scenario; `catalog` resolves and checks the ids it names.
Result<Scenario> load_scenario(const std::string& name, const std::string& text, const hardware::Catalog& catalog);
Result<Scenario> load_scenario_file(const std::filesystem::path& path, const hardware::Catalog& catalog);

// A scenario file (single or cluster) holds one YAML document: the error at the start of a
// second one, even a broken one, or nullopt. The documents are walked one at a time and at
// most two are looked at (yaml-cpp 0.7's LoadAll can loop forever on malformed streams).
// Throws YAML::Exception on YAML the parser rejects, like YAML::Load.
std::optional<Diagnostic> second_document(const std::string& file, const std::string& text);

// The rules for what a scenario or cluster file names and holds, one function each for both
// loaders (issue 22, issue 47; scenarios/src/input_rules.cpp):
//
// A file named by `referring_file` (a trace, a latency table, a cluster's workload scenario),
// `written` as the file writes it: relative to the referring file's folder, and inside that
// folder or below it (not absolute, no "../" out of it, no link that leads out of it), so a
// file from a pull request reads no other file of the machine it runs on. The environment
// variable CAPSIM_ALLOW_TRACE_OUTSIDE=1 lifts the rule for a file you trust. The error says
// "the <what> '<written>' is outside the <referrer>'s directory" (referrer: "scenario",
// "cluster file"); its caller places it at the key.
Result<std::filesystem::path> named_input_path(const std::string& referring_file, const std::string& written,
                                               const std::string& what, const std::string& referrer);

// Every key and value of the first YAML document of `text` that holds a control character
// (first_control_character: C0 but newline and tab, DEL, C1, bidirectional overrides and
// the like), one error each at its line and column: "contains the control character U+202E".
// Scalars are read as the parser decodes them ("\e" and "\u202e" in double quotes count), each
// once (an alias is not expanded). Throws YAML::Exception on YAML the parser rejects.
std::vector<Diagnostic> control_character_errors(const std::string& file, const std::string& text);

// The largest scenario file capsim reads (real ones are a few KB): 4 MiB.
inline constexpr std::uintmax_t kMaxScenarioBytes = 4ull * 1024 * 1024;
// A scenario file's text: a regular file of at most kMaxScenarioBytes (not /dev/zero).
Result<std::string> read_scenario_text(const std::filesystem::path& path);

}  // namespace capsim::scenarios
