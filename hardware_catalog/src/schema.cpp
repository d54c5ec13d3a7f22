#include "capsim/hardware/schema.hpp"

#include <array>

namespace capsim::hardware {
namespace {

constexpr Dim kFlopRate = dims::ops / dims::seconds;
constexpr Dim kBandwidth = dims::bytes / dims::seconds;
constexpr Dim kFrequency{.seconds = -1};
constexpr Dim kPricePerTime = dims::money / dims::seconds;
constexpr Dim kPricePerPowerTime = dims::money / dims::watts / dims::seconds;

FieldDef text(std::string_view name, bool required, std::string_view help) {
  return {name, FieldType::text, required, help};
}
FieldDef choice(std::string_view name, bool required, std::vector<std::string_view> choices,
                std::string_view help) {
  FieldDef f{name, FieldType::choice, required, help};
  f.choices = std::move(choices);
  return f;
}
FieldDef quantity(std::string_view name, Dim dim, bool required, std::string_view help) {
  FieldDef f{name, FieldType::quantity, required, help};
  f.dim = dim;
  return f;
}
FieldDef priced(std::string_view name, Dim dim, std::string_view unit, std::string_view help) {
  FieldDef f = quantity(name, dim, false, help);
  f.display_unit = unit;
  return f;
}
FieldDef integer(std::string_view name, bool required, std::string_view help) {
  return {name, FieldType::integer, required, help};
}
FieldDef reference(std::string_view name, EntityKind kind, bool required, std::string_view help) {
  FieldDef f{name, FieldType::reference, required, help};
  f.ref_kind = kind;
  return f;
}

std::vector<FieldDef> gpu_fields() {
  std::vector<FieldDef> f = {
      text("name", true, "marketing name"),
      choice("vendor", true, {"nvidia", "amd", "intel", "google"}, "chip vendor"),
      text("architecture", true, "micro-architecture, e.g. hopper"),
      choice("form_factor", true, {"sxm", "pcie", "oam", "tpu"}, "module form factor (tpu: a Cloud TPU chip)"),
      choice("segment", true, {"datacenter", "workstation", "consumer"}, "market segment"),
      quantity("memory", dims::bytes, true, "on-board memory"),
      text("memory_type", false, "HBM3, GDDR6X, ..."),
      quantity("memory_bandwidth", kBandwidth, true, "peak memory bandwidth"),
  };
  for (std::string_view name : {"peak_dense.fp64", "peak_dense.fp32", "peak_dense.tf32",
                                 "peak_dense.fp16", "peak_dense.bf16", "peak_dense.fp8",
                                 "peak_dense.int8", "peak_dense.fp4"})
    f.push_back(quantity(name, kFlopRate, false, "dense peak throughput"));
  for (auto name : {"peak_sparse.tf32", "peak_sparse.fp16", "peak_sparse.bf16", "peak_sparse.fp8",
                    "peak_sparse.int8", "peak_sparse.fp4"})
    f.push_back(quantity(name, kFlopRate, false, "2:4 structured-sparsity peak"));
  for (auto name : {"max_achievable.fp16", "max_achievable.bf16", "max_achievable.fp8"})
    f.push_back(quantity(name, kFlopRate, false,
                         "a published measured maximum achievable dense GEMM throughput (the best GEMM measured, "
                         "at the clock the chip sustains under that load)"));
  for (auto& field : f)
    if (std::string_view(field.name).ends_with(".int8")) field.display_unit = "TOPS";
  f.push_back(quantity("tdp", dims::watts, false, "board power"));
  f.push_back(integer("sm_count", false, "streaming multiprocessors (NVIDIA) or compute units (AMD) enabled on the product"));
  f.push_back(quantity("boost_clock", kFrequency, false, "the boost clock the dense peaks are quoted at"));
  f.push_back(quantity("l2_cache", dims::bytes, false, "last-level (L2) cache on the chip, all partitions together"));
  f.back().display_unit = "MiB";  // vendors' "MB" of cache are binary
  f.push_back(integer("pcie.generation", false, "PCIe generation of the host interface"));
  f.push_back(integer("pcie.lanes", false, "PCIe lanes"));
  f.push_back(integer("nvlink.generation", false, "NVLink generation"));
  f.push_back(quantity("nvlink.bandwidth", kBandwidth, false,
                       "total NVLink bandwidth per GPU, both directions"));
  f.push_back(quantity("ici.bandwidth", kBandwidth, false,
                       "TPU inter-chip interconnect bandwidth per chip, both directions"));
  f.push_back(integer("ici.ports", false, "TPU ICI ports per chip"));
  f.push_back(text("ici.topology", false, "TPU interconnect topology, e.g. '2D torus'"));
  f.push_back(integer("chips_per_host", false, "TPU chips per host VM"));
  f.push_back(integer("pod_chips", false, "TPU chips in a full pod"));
  f.push_back({"mig_profiles", FieldType::text_list, false, "MIG profiles as 'NAME xMAX'"});
  f.push_back(quantity("list_price", dims::money, false, "list or launch price"));
  f.push_back(text("launch", false, "launch date YYYY-MM"));
  return f;
}

std::vector<FieldDef> cpu_fields() {
  return {
      text("name", true, "marketing name"),
      choice("vendor", true, {"intel", "amd", "arm", "nvidia", "ampere"}, "vendor"),
      text("architecture", false, "micro-architecture"),
      integer("cores", true, "physical cores"),
      integer("threads", true, "hardware threads"),
      quantity("base_clock", kFrequency, false, "base clock"),
      quantity("boost_clock", kFrequency, false, "maximum boost clock"),
      integer("memory_channels", false, "memory channels per socket"),
      quantity("memory_bandwidth", kBandwidth, false, "peak memory bandwidth per socket"),
      quantity("tdp", dims::watts, false, "thermal design power"),
      quantity("list_price", dims::money, false, "list price"),
      text("launch", false, "launch date YYYY-MM"),
  };
}

std::vector<FieldDef> interconnect_fields() {
  return {
      text("name", true, "name"),
      choice("kind", true, {"pcie", "nvlink", "nvswitch", "nvlink-bridge", "infinity-fabric", "tpu-ici"}, "link family"),
      integer("generation", true, "generation"),
      quantity("bandwidth_per_direction", kBandwidth, true, "per GPU, per direction"),
      integer("lanes", false, "lanes (PCIe) or links (NVLink)"),
      integer("domain_gpus", false,
              "GPUs the fabric joins (2 for bridged pairs, 4 for a V100 quad); the node's GPUs talk to other "
              "groups over their PCIe. Absent: every GPU of the node"),
      quantity("latency", dims::seconds, false, "typical one-way latency"),
  };
}

std::vector<FieldDef> network_fields() {
  return {
      text("name", true, "name"),
      choice("kind", true, {"ethernet", "roce", "infiniband"}, "network family"),
      quantity("port_bandwidth", kBandwidth, true, "per port, per direction"),
      quantity("latency", dims::seconds, false, "typical port-to-port latency"),
  };
}

std::vector<FieldDef> server_fields() {
  FieldDef nics{"nics", FieldType::ref_list, false, "network ports as 'COUNT x network-id'"};
  nics.ref_kind = EntityKind::network;
  return {
      text("name", true, "model name"),
      text("vendor", true, "vendor"),
      reference("gpu", EntityKind::gpu, true, "GPU model"),
      integer("gpu_count", true, "GPUs per server"),
      reference("cpu", EntityKind::cpu, false, "CPU model"),
      integer("cpu_count", false, "CPU sockets"),
      quantity("memory", dims::bytes, false, "system memory"),
      reference("intra_node", EntityKind::interconnect, false, "GPU-to-GPU interconnect"),
      nics,
      quantity("storage", dims::bytes, false, "local storage"),
      quantity("purchase_price", dims::money, false, "purchase price"),
      quantity("power_max", dims::watts, false, "maximum system power"),
      quantity("power_typical", dims::watts, false, "typical system power under load"),
      integer("rack_units", false, "height in rack units"),
  };
}

std::vector<FieldDef> instance_fields() {
  return {
      reference("provider", EntityKind::provider, true, "the provider (an id from providers.yaml)"),
      text("name", true, "the provider's instance type"),
      text("region", true, "region the prices are for"),
      reference("gpu", EntityKind::gpu, true, "GPU model"),
      integer("gpu_count", true, "GPUs per instance"),
      reference("intra_node", EntityKind::interconnect, false,
                "GPU-to-GPU interconnect (absent: the GPUs share PCIe); give its source as {value, source, as_of}"),
      integer("vcpus", false, "virtual CPUs"),
      quantity("memory", dims::bytes, false, "system memory"),
      quantity("network_bandwidth", kBandwidth, false, "network bandwidth"),
      integer("efa_interfaces", false, "AWS Elastic Fabric Adapter interfaces (vpc.amazonaws.com/efa devices)"),
      quantity("price.on_demand", kPricePerTime, false, "on-demand price per instance-hour"),
      quantity("price.spot", kPricePerTime, false, "spot price per instance-hour"),
      quantity("price.reserved_1yr", kPricePerTime, false, "1-year commitment, per instance-hour"),
      quantity("price.reserved_3yr", kPricePerTime, false, "3-year commitment, per instance-hour"),
      quantity("price.capacity_block", kPricePerTime, false, "capacity block, per instance-hour"),
      {"bare_metal", FieldType::boolean, false, "a dedicated (bare-metal) server"},
  };
}

std::vector<FieldDef> facility_fields() {
  return {
      text("name", true, "name"),
      choice("kind", true, {"colocation", "on-prem"}, "facility kind"),
      text("region", true, "market or region"),
      priced("colocation_price", kPricePerPowerTime, "USD/kW/month", "price per kW of IT load per month"),
      priced("rack_price", kPricePerTime, "USD/month", "price per rack per month"),
      quantity("pue", dims::none, false, "power usage effectiveness"),
      priced("electricity_price", kPricePerPowerTime, "USD/kWh", "electricity price per kWh"),
      priced("staff_cost", kPricePerTime, "USD/year", "cost per FTE per year"),
      priced("cross_connect_price", kPricePerTime, "USD/month", "per cross-connect per month"),
      priced("remote_hands_price", kPricePerTime, "USD/h", "remote hands per hour"),
  };
}

std::vector<FieldDef> provider_fields() {
  return {
      text("name", true, "the company's name"),
      choice("kind", true, {"hyperscaler", "gpu-cloud", "marketplace", "dedicated-hosting", "regional-cloud"},
             "what it sells: a general cloud, a GPU cloud, a marketplace of hosts, rented servers, a regional cloud"),
      {"regions", FieldType::text_list, false, "the regions or locations it names, e.g. 'us-east-1'"},
      choice("currency", true, {"USD", "EUR", "GBP", "RUB"}, "the currency of its published prices"),
      quantity("billing_granularity", dims::seconds, false,
               "the smallest unit it bills (1 s, 1 min, 1 h, 1 month), after any minimum"),
      quantity("minimum_charge", dims::seconds, false, "the shortest period billed for one start"),
      text("pricing_page", false, "where the provider publishes its prices"),
  };
}

std::vector<FieldDef> exchange_rate_fields() {
  return {
      choice("currency", true, {"EUR", "GBP", "RUB"}, "the foreign currency"),
      quantity("usd", dims::none, true, "US dollars per one unit of the currency"),
  };
}

// An inference runtime as the CNN and serving models see it (models/cnn.hpp): which of a
// convolution's element-wise passes it removes, the layout its tensor-core kernels read,
// its host time per kernel and per call, and the GEMM tile selection it does.
std::vector<FieldDef> engine_fields() {
  std::vector<FieldDef> f = {
      text("name", true, "the runtime's name"),
      choice("kind", true, {"eager", "graph", "compiled", "llm-serving"},
             "eager: one operator at a time from Python; graph: a runtime executing a saved graph; compiled: an "
             "engine built ahead of time for one GPU; llm-serving: an LLM serving engine (workload.engine of an "
             "llm-serving scenario)"),
      {"precisions", FieldType::text_list, false,
       "the precisions its convolutions run at (fp32, tf32, fp16, bf16, int8); required but for llm-serving"},
      {"folds_batch_norm", FieldType::boolean, false, "batch norm folded into the convolution's weights (no pass)"},
      {"fuses_epilogue", FieldType::boolean, false,
       "activation and residual add run in the convolution's epilogue (no separate passes)"},
      choice("layout", false, {"nchw", "nhwc", "nhwc-when-16-bit"},
             "the layout its tensor-core convolutions read: NHWC needs no transposes; nhwc-when-16-bit: NHWC on Volta "
             "and newer when the convolutions are 16-bit, NCHW otherwise"),
      {"casts_per_layer", FieldType::boolean, false,
       "mixed precision casts each convolution's fp32 weights every forward (one more operator each)"},
      {"host_overlaps_gpu", FieldType::boolean, false,
       "kernels are queued asynchronously: the call takes the longer of host and GPU time, not their sum"},
      quantity("host_time_per_kernel", dims::seconds, false, "host time to launch one kernel (operator)"),
      quantity("host_time_per_call", dims::seconds, false, "host time of one inference call, besides its kernels"),
      quantity("gemm_ceiling", dims::none, false,
               "fraction of the dense peak its kernels reach on large GEMMs, on every GPU generation"),
      quantity("gemm_half_saturation", dims::none, false,
               "GEMM dimension at which its convolution kernels reach half their ceiling (tile selection per layer)"),
      // LLM serving engines (kind llm-serving): the scheduler settings capsim applies when the
      // scenario does not state them; a field left out takes capsim's default (models/serving_llm.hpp).
      choice("kv_admission", false, {"on-demand", "reserved"},
             "llm-serving: on-demand (KV blocks as a sequence grows, preempting when they run out) or reserved "
             "(prompt + output KV up front, never preempting)"),
      choice("preemption", false, {"recompute", "swap", "none"},
             "llm-serving: what happens to a preempted sequence (capsim models recompute)"),
      {"chunked_prefill", FieldType::boolean, false,
       "llm-serving: prompts split into chunks that ride in decode steps up to max_batched_tokens"},
      integer("max_batched_tokens", false, "llm-serving: the token budget of one engine step"),
      quantity("kv_memory_fraction", dims::none, false, "llm-serving: the share of memory given to the KV cache"),
      choice("kv_memory_of", false, {"device", "free"},
             "llm-serving: what kv_memory_fraction is a share of: the device's memory, weights included, or what the "
             "loaded weights leave free"),
  };
  return f;
}

std::vector<FieldDef> with_common(std::vector<FieldDef> f) {
  f.push_back(text("notes", false, "free text"));
  return f;
}

const std::array<std::vector<FieldDef>, 10>& table() {
  static const std::array<std::vector<FieldDef>, 10> t = {
      with_common(gpu_fields()),      with_common(cpu_fields()),      with_common(interconnect_fields()),
      with_common(network_fields()),  with_common(server_fields()),   with_common(instance_fields()),
      with_common(facility_fields()), with_common(provider_fields()), with_common(exchange_rate_fields()),
      with_common(engine_fields()),
  };
  return t;
}

}  // namespace

std::string_view kind_name(EntityKind k) {
  static constexpr std::array names = {"gpu",      "cpu",      "interconnect", "network",       "server",
                                       "instance", "facility", "provider",     "exchange_rate", "engine"};
  return names[static_cast<std::size_t>(k)];
}

std::string_view section_name(EntityKind k) {
  static constexpr std::array names = {"gpus",      "cpus",       "interconnects", "networks",       "servers",
                                       "instances", "facilities", "providers",     "exchange_rates", "engines"};
  return names[static_cast<std::size_t>(k)];
}

std::optional<EntityKind> kind_from_section(std::string_view section) {
  for (auto k : kAllKinds)
    if (section_name(k) == section) return k;
  return std::nullopt;
}

std::span<const FieldDef> fields_of(EntityKind k) { return table()[static_cast<std::size_t>(k)]; }

const FieldDef* find_field(EntityKind k, std::string_view name) {
  for (const auto& f : fields_of(k))
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace capsim::hardware
