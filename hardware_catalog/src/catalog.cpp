#include "capsim/hardware/catalog.hpp"

#include <charconv>

#include "capsim/core/suggest.hpp"

namespace capsim::hardware {

namespace {

bool parse_int(std::string_view s, int& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Splits "LEFT x RIGHT" at the last " x" / "x" separator; false when there is none.
bool split_times(std::string_view text, std::string_view& left, std::string_view& right) {
  const std::size_t at = text.rfind('x');
  if (at == std::string_view::npos || at == 0) return false;
  left = trim(text.substr(0, at));
  right = trim(text.substr(at + 1));
  return !left.empty() && !right.empty();
}

}  // namespace

bool is_valid_id(std::string_view id) {
  if (id.empty() || id.front() == '-' || id.back() == '-') return false;
  char previous = 0;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok || (c == '-' && previous == '-')) return false;
    previous = c;
  }
  return true;
}

std::optional<CountedRef> parse_counted_ref(std::string_view text) {
  // "COUNT x ID": the count comes first, so split at the first 'x'.
  const std::size_t at = text.find('x');
  if (at == std::string_view::npos) return std::nullopt;
  CountedRef ref;
  const std::string_view id = trim(text.substr(at + 1));
  if (!parse_int(trim(text.substr(0, at)), ref.count) || ref.count <= 0 || !is_valid_id(id)) return std::nullopt;
  ref.id = std::string(id);
  return ref;
}

std::optional<MigProfile> parse_mig_profile(std::string_view text) {
  // NVIDIA names: "<slices>g.<memory>gb", optionally with a "+me" media-extension suffix,
  // then "x<max instances>".
  std::string_view name, count;
  if (!split_times(trim(text), name, count)) return std::nullopt;
  MigProfile p;
  p.name = std::string(name);
  std::string_view body = name;
  if (body.ends_with("+me")) body.remove_suffix(3);
  const std::size_t g = body.find("g.");
  if (g == std::string_view::npos || !body.ends_with("gb")) return std::nullopt;
  int memory = 0;
  if (!parse_int(body.substr(0, g), p.compute_slices) ||
      !parse_int(body.substr(g + 2, body.size() - g - 4), memory) || !parse_int(count, p.max_instances))
    return std::nullopt;
  if (p.compute_slices < 1 || p.compute_slices > 8 || memory <= 0 || p.max_instances < 1 || p.max_instances > 8)
    return std::nullopt;
  p.memory_gb = memory;
  return p;
}

const FieldValue* Entity::find(std::string_view name) const {
  auto it = fields.find(name);
  return it == fields.end() ? nullptr : &it->second;
}

std::string Entity::text(std::string_view name) const {
  const FieldValue* v = find(name);
  return v == nullptr ? std::string{} : v->text;
}

std::optional<long long> Entity::integer(std::string_view name) const {
  const FieldValue* v = find(name);
  if (v == nullptr || v->type != FieldType::integer) return std::nullopt;
  return static_cast<long long>(v->number);
}

std::optional<FlopsPerSecond> GpuSpec::peak(std::string_view precision) const {
  if (auto it = peak_dense.find(precision); it != peak_dense.end()) return it->second;
  // Chips without a bf16 path run bf16 work as fp16 would not: they lack the format. But
  // tf32 on chips without tensor-float falls back to fp32 math in every framework.
  if (precision == "tf32") return peak("fp32");
  return std::nullopt;
}

std::optional<double> GpuSpec::max_achievable_fraction(std::string_view precision) const {
  const auto p = peak(precision);
  const auto it = max_achievable.find(precision);
  if (!p || !(p->value() > 0) || it == max_achievable.end()) return std::nullopt;
  return it->second.value() / p->value();
}

std::optional<double> GpuSpec::flops_per_clock_per_sm(std::string_view precision) const {
  const auto p = peak(precision);
  if (!p || sm_count <= 0 || !(boost_clock_hz > 0)) return std::nullopt;
  return p->value() / (sm_count * boost_clock_hz);
}

void Catalog::add(Entity e) {
  auto& list = entities_[e.kind];
  index_[e.id] = {e.kind, list.size()};
  list.push_back(std::move(e));
}

bool Catalog::merge(const Entity& overlay) {
  auto it = index_.find(overlay.id);
  if (it == index_.end() || it->second.first != overlay.kind) return false;
  Entity& target = entities_[it->second.first][it->second.second];
  for (const auto& [name, value] : overlay.fields) target.fields.insert_or_assign(name, value);
  return true;
}

const std::vector<Entity>& Catalog::all(EntityKind k) const {
  static const std::vector<Entity> empty;
  auto it = entities_.find(k);
  return it == entities_.end() ? empty : it->second;
}

std::size_t Catalog::size() const {
  std::size_t n = 0;
  for (const auto& [kind, list] : entities_) n += list.size();
  return n;
}

const Entity* Catalog::find(std::string_view id) const {
  auto it = index_.find(id);
  if (it == index_.end()) return nullptr;
  return &entities_.at(it->second.first)[it->second.second];
}

const Entity* Catalog::find(EntityKind k, std::string_view id) const {
  const Entity* e = find(id);
  return e != nullptr && e->kind == k ? e : nullptr;
}

std::vector<std::string> Catalog::ids(EntityKind k) const {
  std::vector<std::string> out;
  for (const auto& e : all(k)) out.push_back(e.id);
  return out;
}

Result<const Entity*> Catalog::get(EntityKind k, std::string_view id) const {
  if (const Entity* e = find(k, id)) return e;
  std::string message = "unknown " + std::string(kind_name(k)) + " '" + std::string(id) + "'";
  if (const Entity* other = find(id))
    message += " (it is a " + std::string(kind_name(other->kind)) + ")";
  return Diagnostic{{}, {}, message, did_you_mean(id, ids(k))};
}

Result<GpuSpec> Catalog::gpu(std::string_view id) const {
  auto e = get(EntityKind::gpu, id);
  if (!e) return e.errors();
  GpuSpec spec = to_gpu_spec(**e);
  if (const MeasuredFigures* m = find_measured(id)) {
    spec.measured = *m;
    spec.figures_source = m->describe();
  }
  return spec;
}

Result<EngineSpec> Catalog::engine(std::string_view id) const {
  auto e = get(EntityKind::engine, id);
  if (!e) return e.errors();
  return to_engine_spec(**e);
}

bool EngineSpec::runs(std::string_view precision) const {
  for (const auto& p : precisions)
    if (p == precision) return true;
  return false;
}

EngineSpec to_engine_spec(const Entity& e) {
  EngineSpec s;
  s.id = e.id;
  s.name = e.text("name");
  s.kind = e.text("kind");
  if (const FieldValue* p = e.find("precisions")) s.precisions = p->items;
  auto flag = [&](std::string_view name) {
    const FieldValue* v = e.find(name);
    return v != nullptr && v->number != 0;
  };
  s.folds_batch_norm = flag("folds_batch_norm");
  s.fuses_epilogue = flag("fuses_epilogue");
  if (e.has("layout")) s.layout = e.text("layout");
  s.casts_per_layer = flag("casts_per_layer");
  s.host_overlaps_gpu = flag("host_overlaps_gpu");
  s.host_time_per_kernel = e.quantity<Seconds>("host_time_per_kernel").value_or(Seconds(0.0));
  s.host_time_per_call = e.quantity<Seconds>("host_time_per_call").value_or(Seconds(0.0));
  if (const FieldValue* c = e.find("gemm_ceiling")) s.gemm_ceiling = c->number;
  if (const FieldValue* h = e.find("gemm_half_saturation")) s.gemm_half_saturation = h->number;
  return s;
}

void Catalog::set_measured(std::string gpu_id, MeasuredFigures figures) {
  measured_.insert_or_assign(std::move(gpu_id), std::move(figures));
}

const MeasuredFigures* Catalog::find_measured(std::string_view gpu_id) const {
  auto it = measured_.find(gpu_id);
  return it == measured_.end() ? nullptr : &it->second;
}

GpuSpec to_gpu_spec(const Entity& e) {
  GpuSpec g;
  g.id = e.id;
  g.name = e.text("name");
  g.vendor = e.text("vendor");
  g.architecture = e.text("architecture");
  g.memory = e.quantity<Bytes>("memory").value_or(Bytes{});
  g.memory_bandwidth = e.quantity<BytesPerSecond>("memory_bandwidth").value_or(BytesPerSecond{});
  for (auto p : kPrecisions)
    if (auto v = e.quantity<FlopsPerSecond>("peak_dense." + std::string(p))) g.peak_dense.emplace(p, *v);
  for (std::string_view p : {"fp16", "bf16", "fp8"})
    if (auto v = e.quantity<FlopsPerSecond>("max_achievable." + std::string(p))) g.max_achievable.emplace(p, *v);
  g.tdp = e.quantity<Watts>("tdp").value_or(Watts{});
  if (auto sms = e.integer("sm_count")) g.sm_count = static_cast<int>(*sms);
  if (const FieldValue* clock = e.find("boost_clock"); clock != nullptr && clock->type == FieldType::quantity)
    g.boost_clock_hz = clock->number;
  g.l2_cache = e.quantity<Bytes>("l2_cache").value_or(Bytes{});
  if (auto gen = e.integer("pcie.generation")) g.pcie_generation = static_cast<int>(*gen);
  g.nvlink_bandwidth = e.quantity<BytesPerSecond>("nvlink.bandwidth");
  // A TPU's chips talk over ICI, the counterpart of NVLink for the collective models: same
  // convention (total per chip, both directions).
  if (!g.nvlink_bandwidth) g.nvlink_bandwidth = e.quantity<BytesPerSecond>("ici.bandwidth");
  if (const FieldValue* mig = e.find("mig_profiles"))
    for (const auto& item : mig->items)
      if (auto p = parse_mig_profile(item)) g.mig_profiles.push_back(*p);
  g.list_price = e.quantity<Money>("list_price");
  return g;
}

}  // namespace capsim::hardware
