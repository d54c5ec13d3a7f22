#include "capsim/hardware/catalog.hpp"

#include <charconv>
#include <regex>

#include "capsim/core/suggest.hpp"

namespace capsim::hardware {

namespace {

bool parse_int(std::string_view s, int& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

}  // namespace

std::optional<CountedRef> parse_counted_ref(std::string_view text) {
  static const std::regex pattern(R"(^\s*([0-9]+)\s*x\s*([a-z0-9]+(?:-[a-z0-9]+)*)\s*$)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(text.begin(), text.end(), m, pattern)) return std::nullopt;
  CountedRef ref;
  if (!parse_int(std::string_view(&*m[1].first, static_cast<std::size_t>(m[1].length())), ref.count) ||
      ref.count <= 0)
    return std::nullopt;
  ref.id = m[2].str();
  return ref;
}

std::optional<MigProfile> parse_mig_profile(std::string_view text) {
  // NVIDIA names: "<slices>g.<memory>gb", optionally with a "+me" media-extension suffix.
  static const std::regex pattern(R"(^\s*(([1-8])g\.([0-9]+)gb(?:\+me)?)\s*x\s*([1-8])\s*$)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(text.begin(), text.end(), m, pattern)) return std::nullopt;
  MigProfile p;
  p.name = m[1].str();
  int memory = 0;
  if (!parse_int(m[2].str(), p.compute_slices) || !parse_int(m[3].str(), memory) ||
      !parse_int(m[4].str(), p.max_instances) || memory <= 0)
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

void Catalog::add(Entity e) {
  auto& list = entities_[e.kind];
  index_[e.id] = {e.kind, list.size()};
  list.push_back(std::move(e));
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
  return to_gpu_spec(**e);
}

GpuSpec to_gpu_spec(const Entity& e) {
  GpuSpec g;
  g.id = e.id;
  g.name = e.text("name");
  g.vendor = e.text("vendor");
  g.memory = e.quantity<Bytes>("memory").value_or(Bytes{});
  g.memory_bandwidth = e.quantity<BytesPerSecond>("memory_bandwidth").value_or(BytesPerSecond{});
  for (auto p : kPrecisions)
    if (auto v = e.quantity<FlopsPerSecond>("peak_dense." + std::string(p))) g.peak_dense.emplace(p, *v);
  g.tdp = e.quantity<Watts>("tdp").value_or(Watts{});
  if (auto gen = e.integer("pcie.generation")) g.pcie_generation = static_cast<int>(*gen);
  g.nvlink_bandwidth = e.quantity<BytesPerSecond>("nvlink.bandwidth");
  if (const FieldValue* mig = e.find("mig_profiles"))
    for (const auto& item : mig->items)
      if (auto p = parse_mig_profile(item)) g.mig_profiles.push_back(*p);
  g.list_price = e.quantity<Money>("list_price");
  return g;
}

}  // namespace capsim::hardware
