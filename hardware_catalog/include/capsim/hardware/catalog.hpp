// The hardware catalog: GPUs, CPUs, interconnects, networks, servers, cloud instances and
// facilities, each value with the source and date it came from.
//
// A Catalog is built by the loader (YAML) or the store (SQLite) and is immutable after
// that: share it as `std::shared_ptr<const Catalog>` between threads without locks.
// Lookups follow one naming rule: `find_*` returns a pointer or nullptr, `gpu(id)` etc.
// return a Result whose error says "did you mean".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"
#include "capsim/hardware/measured.hpp"
#include "capsim/hardware/schema.hpp"

namespace capsim::hardware {

struct Provenance {
  std::string source;
  std::string as_of;  // YYYY-MM or YYYY-MM-DD
  // The catalog overlay file the figure came from (a user's own quote, --catalog-overlay);
  // empty for a figure of the shipped (or --catalog) catalog.
  std::string overlay;
  bool from_overlay() const { return !overlay.empty(); }
  friend bool operator==(const Provenance&, const Provenance&) = default;
};

// One field's value as read from the catalog.
struct FieldValue {
  FieldType type = FieldType::text;
  std::string text;                 // text, choice, reference; raw text of a quantity
  double number = 0.0;              // quantity (SI), integer, boolean (0/1)
  Dim dim{};                        // quantity
  Currency currency = Currency::none;
  std::vector<std::string> items;   // text_list, ref_list ("8 x ib-ndr-400")
  std::optional<Provenance> provenance;  // numbers only
  SourceLocation where;

  friend bool operator==(const FieldValue& a, const FieldValue& b) {
    return a.type == b.type && a.text == b.text && a.number == b.number && a.dim == b.dim &&
           a.currency == b.currency && a.items == b.items && a.provenance == b.provenance;
  }
};

// Lowercase letters, digits and single inner hyphens: "h100-sxm-80gb".
bool is_valid_id(std::string_view id);

// "8 x ib-ndr-400" -> {8, "ib-ndr-400"}.
struct CountedRef {
  int count = 0;
  std::string id;
};
std::optional<CountedRef> parse_counted_ref(std::string_view text);

// "1g.10gb x7" -> a MIG profile: 1 compute slice of 7, 10 GB, at most 7 instances.
struct MigProfile {
  std::string name;      // "1g.10gb"
  int compute_slices = 0;
  double memory_gb = 0;  // as named by NVIDIA (decimal GB)
  int max_instances = 0;
};
std::optional<MigProfile> parse_mig_profile(std::string_view text);

class Entity {
 public:
  EntityKind kind = EntityKind::gpu;
  std::string id;
  SourceLocation where;
  std::map<std::string, FieldValue, std::less<>> fields;

  const FieldValue* find(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }
  // Text of a text/choice/reference field, or "" when absent.
  std::string text(std::string_view name) const;
  // Integer field, or nullopt when absent.
  std::optional<long long> integer(std::string_view name) const;

  template <class Q>
  std::optional<Q> quantity(std::string_view name) const {
    const FieldValue* v = find(name);
    if (v == nullptr || v->type != FieldType::quantity || !(v->dim == Q::dim)) return std::nullopt;
    return Q(v->number, v->currency);
  }

  friend bool operator==(const Entity& a, const Entity& b) {
    return a.kind == b.kind && a.id == b.id && a.fields == b.fields;
  }
};

// Typed view of a GPU for the models (values only; the Entity keeps provenance).
struct GpuSpec {
  std::string id;
  std::string name;
  std::string vendor;
  std::string architecture;  // "ampere", "hopper", ... (catalog field, required for GPUs)
  Bytes memory;
  BytesPerSecond memory_bandwidth;
  std::map<std::string, FlopsPerSecond, std::less<>> peak_dense;  // by precision
  // A published measured maximum achievable dense GEMM throughput, by precision (AMD's MAF
  // for its own chips, an engine's GEMM benchmark elsewhere); empty where the catalog has none.
  std::map<std::string, FlopsPerSecond, std::less<>> max_achievable;
  Watts tdp;
  // Streaming multiprocessors (compute units) and the boost clock the peaks are quoted at;
  // 0 where the catalog does not give them.
  int sm_count = 0;
  double boost_clock_hz = 0;
  // The chip's L2 cache, all partitions together; 0 where the catalog does not give it.
  Bytes l2_cache;
  std::optional<int> pcie_generation;
  std::optional<BytesPerSecond> nvlink_bandwidth;  // total, both directions
  std::vector<MigProfile> mig_profiles;
  std::optional<Money> list_price;
  // What the newest imported calibration profile measured for this GPU model (the
  // datasheet fields above stay as the catalog gives them); nullopt without a profile.
  std::optional<MeasuredFigures> measured;
  // "datasheet", or MeasuredFigures::describe() when `measured` is set.
  std::string figures_source = "datasheet";

  // Dense peak for a precision, falling back as hardware does: bf16 -> fp16 and
  // tf32 -> fp32 when the chip has no separate figure. nullopt when unsupported.
  std::optional<FlopsPerSecond> peak(std::string_view precision) const;
  // Dense FLOPs one SM issues per clock at a precision: peak / (sm_count x boost_clock).
  // nullopt without an SM count, a boost clock or that peak.
  std::optional<double> flops_per_clock_per_sm(std::string_view precision) const;
  // max_achievable / peak at a precision: the most of the datasheet peak any GEMM reaches.
  // nullopt without both figures.
  std::optional<double> max_achievable_fraction(std::string_view precision) const;
};

// Typed view of an inference engine's efficiency profile (data/catalog/engines.yaml): the
// mechanisms by which runtimes differ on the same GPU, read by models/cnn.hpp and the
// serving latency curves. Absent booleans are false, absent times zero.
struct EngineSpec {
  std::string id;
  std::string name;
  std::string kind;                     // eager, graph, compiled
  std::vector<std::string> precisions;  // what its convolutions run at
  bool folds_batch_norm = false;        // no batch-norm pass
  bool fuses_epilogue = false;          // activation and residual add in the convolution's epilogue
  std::string layout = "nchw";          // nchw, nhwc, nhwc-when-16-bit
  bool casts_per_layer = false;         // mixed precision: one cast operator per weighted layer per forward
  bool host_overlaps_gpu = false;       // asynchronous launches: max(host, GPU) instead of the sum
  Seconds host_time_per_kernel{0.0};
  Seconds host_time_per_call{0.0};
  double gemm_ceiling = 0;              // 0: the GPU generation's (performance.hpp)
  double gemm_half_saturation = 0;      // 0: the model's default (performance.hpp)

  bool runs(std::string_view precision) const;
  // Whether its tensor-core convolutions read NHWC (no transposes) at this precision.
  bool channels_last(bool sixteen_bit) const { return layout == "nhwc" || (layout == "nhwc-when-16-bit" && sixteen_bit); }
};

class Catalog {
 public:
  // Adds an entity; the caller (loader) has checked ids are unique.
  void add(Entity e);
  // An overlay's entry for an existing id of the same kind: each of its fields replaces the
  // field of that name (the others stay). False when there is no such entity.
  bool merge(const Entity& overlay);

  const std::vector<Entity>& all(EntityKind k) const;
  std::size_t size() const;
  const Entity* find(std::string_view id) const;  // any kind
  const Entity* find(EntityKind k, std::string_view id) const;
  // Like find, but the error names the kind and suggests the closest id.
  Result<const Entity*> get(EntityKind k, std::string_view id) const;
  std::vector<std::string> ids(EntityKind k) const;

  // The GPU with its measured figures when a calibration was attached (set_measured).
  Result<GpuSpec> gpu(std::string_view id) const;
  const Entity* find_gpu(std::string_view id) const { return find(EntityKind::gpu, id); }
  // An inference engine's profile; the error suggests the closest id.
  Result<EngineSpec> engine(std::string_view id) const;

  // Attaches measured figures to a GPU id (the store does this with the newest imported
  // profile while building the catalog, before it is shared); replaces earlier ones.
  void set_measured(std::string gpu_id, MeasuredFigures figures);
  const MeasuredFigures* find_measured(std::string_view gpu_id) const;
  // Whether any GPU has measured figures attached, and dropping them all (a catalog of
  // datasheet figures only, for predicting measurements made on other sites' machines).
  bool has_measured() const { return !measured_.empty(); }
  void clear_measured() { measured_.clear(); }

  // A content hash of the YAML the catalog came from (set by the loader and the store).
  std::string content_hash;

  friend bool operator==(const Catalog& a, const Catalog& b) { return a.entities_ == b.entities_; }

 private:
  std::map<EntityKind, std::vector<Entity>> entities_;
  std::map<std::string, std::pair<EntityKind, std::size_t>, std::less<>> index_;
  std::map<std::string, MeasuredFigures, std::less<>> measured_;
};

GpuSpec to_gpu_spec(const Entity& gpu);
EngineSpec to_engine_spec(const Entity& engine);

}  // namespace capsim::hardware
