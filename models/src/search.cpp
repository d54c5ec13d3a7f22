#include "capsim/models/search.hpp"
#include "capsim/core/text.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <set>
#include <tuple>

#include "capsim/core/suggest.hpp"
#include "capsim/models/memory.hpp"
#include "capsim/models/performance.hpp"

namespace capsim::models {
namespace {

using hardware::Entity;
using hardware::EntityKind;

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// Per-GPU per-direction bandwidth of a GPU's own PCIe link, from the catalog's
// "pcie-gen<N>-x16" entry; zero when either is unknown.
BytesPerSecond pcie_of(const hardware::Catalog& catalog, const hardware::GpuSpec& gpu) {
  if (!gpu.pcie_generation) return BytesPerSecond{};
  const Entity* link = catalog.find(EntityKind::interconnect, "pcie-gen" + std::to_string(*gpu.pcie_generation) + "-x16");
  if (link == nullptr) return BytesPerSecond{};
  return link->quantity<BytesPerSecond>("bandwidth_per_direction").value_or(BytesPerSecond{});
}

// A cloud instance: its GPUs talk over the intra-node fabric the catalog states for it
// (instances.yaml intra_node, with its source), or share PCIe when it states none; the
// instance's network bandwidth is shared by its GPUs.
ClusterSpec instance_cluster(const hardware::Catalog& catalog, const Entity& instance, const hardware::GpuSpec& gpu) {
  const int gpus = static_cast<int>(instance.integer("gpu_count").value_or(1));
  const std::string intra = gpus > 1 ? node_intra_node_id(catalog, instance) : "";
  ClusterSpec c;
  if (auto built = cluster_from_catalog(catalog, gpu.id, gpus, intra, "", 0); built && (gpus == 1 || !intra.empty())) {
    c = std::move(built).value();
  } else {  // no fabric and no PCIe generation (a TPU host the catalog says nothing about): no link
    c.gpu = gpu;
    c.gpus_per_node = gpus;
    c.pcie_bandwidth = pcie_of(catalog, gpu);
    c.intra_node_bandwidth = c.pcie_bandwidth;
    c.intra_node_pcie = true;
    c.intra_node_latency = Seconds(kDefaultPcieLatencySeconds());
  }
  if (auto net = instance.quantity<BytesPerSecond>("network_bandwidth")) {
    c.inter_node_bandwidth = *net / static_cast<double>(c.gpus_per_node);
    c.inter_node_latency = Seconds(kDefaultInterNodeLatencySeconds());
  }
  c.description = std::to_string(c.gpus_per_node) + " x " + gpu.id + " per node" +
                  (gpus > 1 ? ", " + (intra.empty() ? std::string("no fabric in the catalog") : intra) : std::string()) +
                  (c.inter_node_bandwidth.value() > 0 ? ", " + to_string(c.inter_node_bandwidth) + " network per GPU"
                                                      : ", no network (single node)");
  return c;
}

// An owned server: the catalog names its intra-node fabric and NICs; the NIC group with
// the most bandwidth carries the collective traffic.
Result<ClusterSpec> server_cluster(const hardware::Catalog& catalog, const Entity& server) {
  const int gpus = static_cast<int>(server.integer("gpu_count").value_or(1));
  std::string network;
  int nics = 0;
  double best = 0;
  if (const auto* list = server.find("nics"))
    for (const auto& item : list->items)
      if (auto ref = hardware::parse_counted_ref(item))
        if (const Entity* n = catalog.find(EntityKind::network, ref->id)) {
          const double bw = ref->count * n->quantity<BytesPerSecond>("port_bandwidth").value_or(BytesPerSecond{}).value();
          if (bw > best) {
            best = bw;
            network = ref->id;
            nics = ref->count;
          }
        }
  // No named fabric: the GPUs share PCIe.
  const std::string intra = gpus > 1 ? node_intra_node_id(catalog, server) : "";
  return cluster_from_catalog(catalog, server.text("gpu"), gpus, intra, network, nics);
}

}  // namespace

Result<std::vector<NodeType>> node_types_from_catalog(const hardware::Catalog& catalog, const NodeTypeQuery& q) {
  std::vector<NodeType> out;
  std::vector<Diagnostic> errors;
  std::set<std::string> covered;
  for (const auto& instance : catalog.all(EntityKind::instance)) {
    const std::string gpu_id = instance.text("gpu");
    if (!q.nodes.empty() ? !contains(q.nodes, instance.id)
        : !q.instances.empty() ? !contains(q.instances, instance.id)
                               : !contains(q.gpus, gpu_id))
      continue;
    if (!q.providers.empty() && !contains(q.providers, instance.text("provider"))) continue;
    auto gpu = catalog.gpu(gpu_id);
    if (!gpu) return gpu.errors();
    NodeType t{instance.id, "instance", instance.text("provider"), instance.text("name"),
               instance_cluster(catalog, instance, *gpu), instance.quantity<MoneyPerSecond>(q.price_field), std::nullopt};
    covered.insert(gpu_id);
    out.push_back(std::move(t));
  }
  for (const auto& server : catalog.all(EntityKind::server)) {
    // Owned servers with a candidate GPU always compete (ranked by time until they have a
    // price); an explicit instance list narrows the choice to what it names.
    const bool named = contains(q.servers, server.id) || contains(q.nodes, server.id);
    if (!named && !(q.nodes.empty() && q.instances.empty() && contains(q.gpus, server.text("gpu")))) continue;
    auto cluster = server_cluster(catalog, server);
    if (!cluster) {
      // A server the scenario names must be usable; one that only carries a candidate GPU
      // but lacks a field the model needs (its intra-node fabric) is left out of the search.
      if (named)
        for (auto d : cluster.errors()) errors.push_back({{}, "hardware.servers", server.id + ": " + d.message, d.hint});
      continue;
    }
    out.push_back({server.id, "server", "owned", server.text("name"), *cluster, std::nullopt, std::nullopt});
    covered.insert(server.text("gpu"));
  }
  for (const auto& gpu : q.gpus)
    if (!covered.contains(gpu) && q.instances.empty() && q.nodes.empty())
      errors.push_back({{},
                        "hardware.gpus",
                        "no instance or server in the catalog carries gpu '" + gpu + "'" +
                            (q.providers.empty() ? "" : " from the chosen providers"),
                        "add an instance or server with this GPU to the catalog, or remove it from the scenario"});
  if (!errors.empty()) return errors;
  if (out.empty()) return Diagnostic{{}, "hardware", "no node types match the scenario's hardware", ""};
  return out;
}

Result<NodeType> node_type_by_id(const hardware::Catalog& catalog, std::string_view id, std::string_view price_field) {
  if (const Entity* instance = catalog.find(EntityKind::instance, id)) {
    auto gpu = catalog.gpu(instance->text("gpu"));
    if (!gpu) return gpu.errors();
    return NodeType{instance->id, "instance", instance->text("provider"), instance->text("name"),
                    instance_cluster(catalog, *instance, *gpu), instance->quantity<MoneyPerSecond>(price_field), std::nullopt};
  }
  if (const Entity* server = catalog.find(EntityKind::server, id)) {
    auto cluster = server_cluster(catalog, *server);
    if (!cluster) return cluster.errors();
    return NodeType{server->id, "server", "owned", server->text("name"), *cluster, std::nullopt, std::nullopt};
  }
  std::vector<std::string> ids = catalog.ids(EntityKind::instance);
  for (auto& s : catalog.ids(EntityKind::server)) ids.push_back(s);
  return Diagnostic{{}, "", "no instance or server with id '" + std::string(id) + "'", did_you_mean(id, ids)};
}

std::vector<int> node_count_grid(int min_nodes, int max_nodes) {
  std::vector<int> out;
  for (long long p = 1; p <= max_nodes; p *= 2) {
    if (p >= min_nodes) out.push_back(static_cast<int>(p));
    const long long half_step = p * 3 / 2;
    if (p >= 2 && half_step <= max_nodes && half_step >= min_nodes) out.push_back(static_cast<int>(half_step));
  }
  if (min_nodes > 1 && (out.empty() || out.front() != min_nodes)) out.push_back(min_nodes);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

std::vector<int> powers_of_two_upto(int limit) {
  std::vector<int> out;
  for (int v = 1; v <= limit; v *= 2) out.push_back(v);
  return out;
}

class Search {
 public:
  Search(const SearchRequest& r, ProgressObserver* progress)
      : r_(r),
        progress_(progress),
        fastest_of_type_(r.node_types.size()),
        first_error_(r.node_types.size()),
        devices_(r.node_types.size()) {}

  Result<SearchResult> run() {
    result_.node_types = r_.node_types;
    const std::size_t n = r_.node_types.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (progress_) {
        if (progress_->cancelled()) {
          result_.cancelled = true;
          break;
        }
        progress_->progress(static_cast<double>(i) / static_cast<double>(n), "search");
      }
      if (const auto* shape = std::get_if<TransformerShape>(&r_.model))
        search_transformer(static_cast<int>(i), *shape);
      else
        search_sample_model(static_cast<int>(i), std::get<SampleModel>(r_.model));
    }
    if (progress_) progress_->progress(1.0, "search");
    if (result_.fitting == 0) return no_fit_error();
    finish();
    return std::move(result_);
  }

 private:
  void search_transformer(int type_index, const TransformerShape& shape) {
    const NodeType& type = r_.node_types[type_index];
    const ClusterSpec& c = type.cluster;
    const int gpn = c.gpus_per_node;
    const bool has_network = c.inter_node_bandwidth.value() > 0;
    // A transformer job takes its nodes' GPUs whole: a node with more GPUs than max_gpus
    // cannot run it within the limit.
    if (gpn > r_.grid.max_gpus)
      return note_error(type_index, {Diagnostic{{}, "", plural(gpn, "GPU") + " per node, more than max_gpus " +
                                                             std::to_string(r_.grid.max_gpus), ""}});
    const int max_nodes = has_network ? std::max(1, r_.grid.max_gpus / gpn) : 1;
    const int min_nodes = std::max(1, (r_.grid.min_gpus + gpn - 1) / gpn);
    if (min_nodes > max_nodes) return note_unreachable(type_index, has_network, gpn);
    std::vector<int> tensors = r_.grid.tensor_parallel.empty() ? powers_of_two_upto(gpn) : r_.grid.tensor_parallel;
    // Pipeline degrees need not divide the layers: uneven stages (performance.hpp).
    std::vector<int> pipes = r_.grid.pipeline_parallel;
    if (pipes.empty()) pipes = powers_of_two_upto(std::min(128, shape.layers));
    const double available = c.gpu.memory.value();
    for (int nodes : node_count_grid(min_nodes, max_nodes)) {
      const int gpus = nodes * gpn;
      for (int t : tensors) {
        if (t > gpn || gpn % t != 0 || shape.heads % t != 0 || shape.kv_heads % t != 0) continue;
        for (int p : pipes)
          for (int cp : r_.grid.context_parallel) {
            if (p > shape.layers) continue;
            if (!allows(kGpuSplit, gpus % (t * p * cp) == 0)) {
              split_refused_ = {std::min(split_refused_.product, t * p * cp), std::min(split_refused_.fewest, gpus),
                                std::max(split_refused_.most, gpus)};
              continue;
            }
            if (!allows(kContextSplit, cp == 1 || shape.seq_len % (2 * cp) == 0)) continue;
            const int d = gpus / (t * p * cp);
            Parallelism par;
            par.tensor = t;
            par.pipeline = p;
            par.context = cp;
            par.data = d;
            par.global_batch = r_.global_batch;
            search_layouts(type_index, nodes, par, shape, available);
          }
      }
    }
  }

  // The remaining choices of one t x p x cp x d split: virtual stages, sequence
  // parallelism, expert parallelism, micro-batch, sharding and recompute.
  void search_layouts(int type_index, int nodes, Parallelism par, const TransformerShape& shape,
                      double available) {
    const int gpn = r_.node_types[type_index].cluster.gpus_per_node;
    const int t = par.tensor, p = par.pipeline, d = par.data;
    for (int v : r_.grid.virtual_stages) {
      if (!allows(kVirtualStages, v == 1 || (p >= 2 && p * v <= shape.layers))) continue;
      for (bool sp : r_.grid.sequence_parallel) {
        if (sp && t == 1 && r_.grid.sequence_parallel.size() > 1) continue;  // same layout twice
        for (int ep : r_.grid.expert_parallel) {
          if (!allows(kExpertParallel,
                      ep == 1 || (shape.experts > 1 && shape.experts % ep == 0 && (d * par.context) % ep == 0)))
            continue;
          smallest_data_ = std::min(smallest_data_, d);
          for (int b : r_.grid.micro_batch) {
            if (!allows(kBatchSplit, r_.global_batch % (b * d) == 0)) continue;
            for (int z : r_.grid.zero_stage) {
              // ZeRO shards over the data-parallel replicas and the context-parallel ranks
              // (Megatron's data-and-context group; torchtitan's FSDP x CP mesh).
              if (!allows(kZeroRanks, z == 0 || d * par.context > 1)) continue;
              for (bool hybrid : r_.grid.fsdp_hybrid) {
                const int group = std::max(1, gpn / t);
                if (!allows(kHybridShard, !hybrid || (z == 3 && d > group && d % group == 0))) continue;
                for (Recompute rc : r_.grid.recompute)
                  for (double fraction : r_.grid.recompute_fraction) {
                    // A fraction applies to full recompute only: the others are tried once.
                    if (rc != Recompute::full && fraction != r_.grid.recompute_fraction.front()) continue;
                    par.interleave = v;
                    par.sequence_parallel = sp && t > 1;
                    par.expert = ep;
                    par.micro_batch = b;
                    par.zero_stage = z;
                    par.shard_group = hybrid ? group : 0;
                    par.recompute = rc;
                    par.recompute_fraction = rc == Recompute::full ? fraction : 1.0;
                    evaluate_transformer(type_index, nodes, par, shape, available);
                  }
              }
            }
          }
        }
      }
    }
  }

  // The request's options, with the node type's own precision when it has one.
  TrainingOptions options_for(int type_index) const {
    TrainingOptions o = r_.options;
    if (const auto& p = r_.node_types[type_index].compute) o.compute = *p;
    return o;
  }

  // The node type's GPU at the compute precision, prepared on its first layout.
  const Result<TrainingDevices>& devices_of(int type_index, Precision compute) {
    auto& d = devices_[type_index];
    if (!d || d->first != compute) d.emplace(compute, prepare_training_devices(r_.node_types[type_index].cluster, compute));
    return d->second;
  }

  void evaluate_transformer(int type_index, int nodes, const Parallelism& par, const TransformerShape& shape,
                            double available) {
    ++result_.evaluated;
    const TrainingOptions options = options_for(type_index);
    const Bytes memory = training_memory_total_per_gpu(shape, par, options);
    Candidate cand;
    cand.node_type = type_index;
    cand.nodes = nodes;
    cand.par = par;
    cand.memory_per_gpu = memory;
    if (memory.value() > available) {
      note_miss(cand, memory, Bytes(available));
      return;
    }
    const ClusterSpec& c = r_.node_types[type_index].cluster;
    const auto& devices = devices_of(type_index, options.compute);
    auto est = devices ? estimate_training_step(shape, par, c, options, *devices)
                       : estimate_training_step(shape, par, c, options);  // its errors, the layout's first
    if (!est) return note_error(type_index, est.errors());
    const double tokens_per_step = static_cast<double>(par.global_batch) * shape.seq_len;
    fill(cand, *est, r_.tokens / tokens_per_step);
  }

  void search_sample_model(int type_index, const SampleModel& model) {
    const NodeType& type = r_.node_types[type_index];
    const int gpn = type.cluster.gpus_per_node;
    const bool has_network = type.cluster.inter_node_bandwidth.value() > 0;
    const int max_nodes = has_network ? std::max(1, r_.grid.max_gpus / gpn) : 1;
    const int min_nodes = std::max(1, (r_.grid.min_gpus + gpn - 1) / gpn);
    if (min_nodes > max_nodes) return note_unreachable(type_index, has_network, gpn);
    const double available = type.cluster.gpu.memory.value();
    for (int nodes : node_count_grid(min_nodes, max_nodes)) {
      // A node type with several GPUs may also run on fewer of them (one process per GPU).
      std::vector<int> gpu_counts{nodes * gpn};
      if (nodes == 1)
        for (int g : powers_of_two_upto(gpn - 1)) gpu_counts.push_back(g);
      for (int gpus : gpu_counts) {
        if (gpus < r_.grid.min_gpus || gpus > r_.grid.max_gpus) continue;
        for (int b : r_.grid.batch_per_gpu) {
          ++result_.evaluated;
          Candidate cand;
          cand.node_type = type_index;
          cand.nodes = nodes;
          cand.par.data = gpus;
          cand.par.global_batch = b * gpus;
          cand.batch_per_gpu = b;
          cand.memory_per_gpu = sample_model_training_memory(model, b, options_for(type_index)).total();
          if (cand.memory_per_gpu.value() > available) {
            note_miss(cand, cand.memory_per_gpu, Bytes(available));
            continue;
          }
          auto est = estimate_sample_model_step(model, b, gpus, type.cluster, options_for(type_index));
          if (!est) {
            note_error(type_index, est.errors());
            continue;
          }
          fill(cand, *est, r_.samples / (static_cast<double>(b) * gpus));
        }
      }
    }
  }

  void fill(Candidate& cand, const TrainingEstimate& est, double steps) {
    const NodeType& type = r_.node_types[cand.node_type];
    const int gpus = cand.par.gpus();
    cand.step_time = est.step_time;
    cand.throughput = est.tokens_per_second;
    cand.achieved_flops_per_gpu = est.achieved_flops_per_gpu;
    cand.mfu = est.mfu;
    cand.bottleneck = static_cast<int>(est.bottleneck);
    cand.total_time = est.step_time * steps;
    cand.gpu_hours = cand.total_time.value() / units::hour * gpus;
    if (type.price) {
      // Whole nodes are rented even when fewer of their GPUs are used.
      cand.cost = Money(type.price->value() * cand.nodes * cand.total_time.value(), type.price->currency());
    }
    ++result_.fitting;
    keep(cand);
  }

  void note_unreachable(int type_index, bool has_network, int gpus_per_node) {
    const std::string why = has_network ? "its node count cannot reach between min_gpus " +
                                              std::to_string(r_.grid.min_gpus) + " and max_gpus " +
                                              std::to_string(r_.grid.max_gpus)
                                        : "one node only (no network bandwidth in the catalog), " +
                                              plural(gpus_per_node, "GPU") + ", below min_gpus " +
                                              std::to_string(r_.grid.min_gpus);
    note_error(type_index, {Diagnostic{{}, "", why, ""}});
  }

  // The first model error of each node type, reported if the type ends with no candidate.
  void note_error(int type_index, const std::vector<Diagnostic>& errors) {
    if (first_error_[type_index].empty() && !errors.empty()) first_error_[type_index] = errors.front().message;
  }

  void note_miss(const Candidate& cand, Bytes needed, Bytes available) {
    constexpr std::size_t kKeep = 5;
    auto ratio = [](const MemoryMiss& m) { return m.needed.value() / m.available.value(); };
    MemoryMiss miss{cand, needed, available};
    auto& misses = result_.closest_misses;
    if (misses.size() == kKeep && ratio(miss) >= ratio(misses.back())) return;
    auto at = std::lower_bound(misses.begin(), misses.end(), miss,
                               [&](const MemoryMiss& a, const MemoryMiss& b) { return ratio(a) < ratio(b); });
    misses.insert(at, miss);
    if (misses.size() > kKeep) misses.pop_back();
  }

  static double cost_of(const Candidate& c) { return c.cost ? c.cost->value() : HUGE_VAL; }

  bool meets_constraints(const Candidate& c) const {
    if (r_.deadline && c.total_time > *r_.deadline) return false;
    if (r_.budget && c.cost && c.cost->value() > r_.budget->value()) return false;
    return true;
  }

  // The order every choice below ranks candidates in: by total time, then cost, then, for
  // equal time and cost (selective recompute with flash attention redoes nothing), the
  // simpler layout first (less recompute, a lower ZeRO stage, fewer virtual stages, then the
  // rest of the layout), so that the order is total and the result the same on every run.
  static bool faster(const Candidate& a, const Candidate& b) {
    if (a.total_time.value() != b.total_time.value()) return a.total_time.value() < b.total_time.value();
    if (cost_of(a) != cost_of(b)) return cost_of(a) < cost_of(b);
    const auto layout = [](const Candidate& c) {
      return std::tuple(static_cast<int>(c.par.recompute), c.par.zero_stage, c.par.interleave, c.node_type, c.nodes,
                        c.par.tensor, c.par.pipeline, c.par.data, c.par.context, c.par.expert, c.par.micro_batch,
                        c.batch_per_gpu, c.par.sequence_parallel, c.par.shard_group);
    };
    return layout(a) < layout(b);
  }

  // A fitting configuration, kept only as far as it can still be chosen: the search sees
  // hundreds of thousands, and holding and sorting them all took a fifth of its time.
  void keep(const Candidate& c) {
    if (!fastest_ || faster(c, *fastest_)) fastest_ = c;
    auto& of_type = fastest_of_type_[c.node_type];
    if (!of_type || faster(c, *of_type)) of_type = c;
    if (c.cost) keep_on_frontier(c);
    if (meets_constraints(c)) {
      if (!fastest_ok_ || faster(c, *fastest_ok_)) fastest_ok_ = c;
      if (c.cost) keep_near_cheapest(c);
    }
  }

  // The Pareto frontier in (time, cost) of what was kept so far, in `faster` order with
  // strictly falling cost: a candidate joins unless one before it costs no more, and
  // pushes out those after it that cost no less.
  void keep_on_frontier(const Candidate& c) {
    auto& f = result_.frontier;
    const auto at = std::lower_bound(f.begin(), f.end(), c, faster);
    if (at != f.begin() && cost_of(*std::prev(at)) <= cost_of(c)) return;
    auto last = at;
    while (last != f.end() && cost_of(*last) >= cost_of(c)) ++last;
    f.insert(f.erase(at, last), c);
  }

  // Candidates within kCostTie of the cheapest one meeting the constraints so far.
  void keep_near_cheapest(const Candidate& c) {
    const double cost = c.cost->value();
    if (cost > cheapest_ok_cost_ * (1 + kCostTie)) return;
    if (cost < cheapest_ok_cost_) {
      cheapest_ok_cost_ = cost;
      std::erase_if(near_cheapest_ok_,
                    [&](const Candidate& k) { return k.cost->value() > cheapest_ok_cost_ * (1 + kCostTie); });
    }
    near_cheapest_ok_.push_back(c);
  }

  void finish() {
    // The fastest fitting configuration of each node type, fastest first.
    for (const auto& c : fastest_of_type_)
      if (c) result_.fastest.push_back(*c);
    std::sort(result_.fastest.begin(), result_.fastest.end(), faster);
    for (std::size_t i = 0; i < fastest_of_type_.size(); ++i)
      if (!fastest_of_type_[i])
        result_.skipped.emplace_back(r_.node_types[i].id, first_error_[i].empty()
                                                              ? "no configuration of the grid fits in its memory"
                                                              : first_error_[i]);
    recommend();
  }

  // Costs within this fraction of the cheapest count as equal: then fewer GPUs (easier to
  // obtain, less exposed to failures) and then the shorter run win.
  static constexpr double kCostTie = 0.01;

  void recommend() {
    // Among those within kCostTie of the cheapest, the fewest GPUs, then the faster.
    const Candidate* cheapest_ok = nullptr;
    for (const Candidate& c : near_cheapest_ok_) {
      const int gpus = c.gpus(r_.node_types);
      if (cheapest_ok == nullptr || gpus < cheapest_ok->gpus(r_.node_types) ||
          (gpus == cheapest_ok->gpus(r_.node_types) && faster(c, *cheapest_ok)))
        cheapest_ok = &c;
    }
    const Candidate* fastest_ok = fastest_ok_ ? &*fastest_ok_ : nullptr;
    std::string limits;
    if (r_.deadline) limits += "the " + to_string(*r_.deadline) + " deadline";
    if (r_.budget) limits += (limits.empty() ? "the " : " and the ") + to_string(*r_.budget) + " budget";
    if (cheapest_ok) {
      result_.recommended = *cheapest_ok;
      result_.recommendation = "the cheapest configuration" + (limits.empty() ? "" : " that meets " + limits) +
                               ", fewest GPUs among those within 1 % of its cost";
    } else if (fastest_ok) {
      result_.recommended = *fastest_ok;
      result_.recommendation = "the fastest configuration" + (limits.empty() ? "" : " that meets " + limits) +
                               "; no node type that does has a catalog price";
    } else {
      result_.recommended = *fastest_;
      result_.recommendation = "no configuration meets " + limits + "; this is the fastest";
    }
  }

  Result<SearchResult> no_fit_error() const {
    const std::string model = std::holds_alternative<TransformerShape>(r_.model)
                                  ? std::get<TransformerShape>(r_.model).name
                                  : std::get<SampleModel>(r_.model).name;
    if (result_.closest_misses.empty()) {
      if (auto why = tensor_parallel_reason()) return *why;
      if (auto why = layout_rule_reasons(); !why.empty()) return why;
      return Diagnostic{{}, "hardware", "no configuration of the search grid applies to '" + model + "'",
                        "check min_gpus/max_gpus and the search lists"};
    }
    const MemoryMiss& m = result_.closest_misses.front();
    const NodeType& t = r_.node_types[m.candidate.node_type];
    const Parallelism& p = m.candidate.par;
    return Diagnostic{{},
                      "workload.model",
                      "'" + model + "' does not fit in memory on any candidate: the closest, " +
                          std::to_string(m.candidate.nodes) + " x " + t.id + " (" + describe_layout(p) +
                          "), needs " + to_string(m.needed) +
                          " per GPU of " + to_string(m.available),
                      "allow more GPUs (hardware.max_gpus), GPUs with more memory, or LoRA/QLoRA"};
  }

  // The rules a layout of the grid must pass after its t x p x cp split, in the order the
  // search applies them. Each counts the layouts that reached it and those it let through (a
  // list's neutral value -- cp, v or ep 1, ZeRO 0, no hybrid sharding -- always passes): when
  // nothing was evaluated, a rule that let none through is why (layout_rule_reasons).
  enum LayoutRule {
    kGpuSplit,
    kContextSplit,
    kVirtualStages,
    kExpertParallel,
    kBatchSplit,
    kZeroRanks,
    kHybridShard,
    kLayoutRules
  };
  bool allows(LayoutRule rule, bool ok) {
    ++reached_[rule];
    if (ok) ++passed_[rule];
    return ok;
  }

  static std::string list_text(const std::vector<int>& values) {
    std::string list;
    for (int v : values) list += (list.empty() ? "" : ", ") + std::to_string(v);
    return "[" + list + "]";
  }

  // Every rule that refused each layout reaching it, as the error of its search key.
  std::vector<Diagnostic> layout_rule_reasons() const {
    const auto* shape = std::get_if<TransformerShape>(&r_.model);
    std::vector<Diagnostic> out;
    if (shape == nullptr) return out;
    auto refused_all = [&](LayoutRule rule) { return reached_[rule] > 0 && passed_[rule] == 0; };
    const auto& g = r_.grid;
    if (refused_all(kGpuSplit)) {
      const bool context =
          std::any_of(g.context_parallel.begin(), g.context_parallel.end(), [](int c) { return c > 1; });
      const auto& [product, fewest, most] = split_refused_;
      const std::string counts =
          fewest == most ? std::to_string(fewest) : std::to_string(fewest) + " to " + std::to_string(most);
      out.push_back({{}, context ? "search.context_parallel" : "search.pipeline_parallel",
                     "no tensor x pipeline x context-parallel split of the search lists divides the GPUs of a "
                     "cluster tried: the smallest, t x p x cp = " + std::to_string(product) + ", against " + counts +
                         " GPUs",
                     "use degrees whose product divides the cluster's GPUs, or let hardware.min_gpus/max_gpus "
                     "reach a multiple of it"});
    }
    if (refused_all(kContextSplit))
      out.push_back({{}, "search.context_parallel",
                     "no degree of " + list_text(g.context_parallel) + " splits the " + std::to_string(shape->seq_len) +
                         "-token sequence into 2 x cp equal chunks (ring attention balances the causal mask "
                         "over them)",
                     "use degrees whose double divides the sequence length (workload.seq_len)"});
    if (refused_all(kVirtualStages))
      out.push_back({{}, "search.virtual_stages",
                     "virtual stages " + list_text(g.virtual_stages) +
                         " need pipeline parallelism: p >= 2 stages and p x v <= the " +
                         std::to_string(shape->layers) + " layers",
                     "add pipeline_parallel degrees of 2 or more, or allow virtual_stages: [1]"});
    if (refused_all(kExpertParallel))
      out.push_back(shape->experts <= 1
                        ? Diagnostic{{}, "search.expert_parallel",
                                     "expert parallelism " + list_text(g.expert_parallel) + " needs a mixture-of-" +
                                         "experts model; '" + shape->name + "' is dense",
                                     "use expert_parallel: [1]"}
                        : Diagnostic{{}, "search.expert_parallel",
                                     "no degree of " + list_text(g.expert_parallel) + " divides both the " +
                                         std::to_string(shape->experts) +
                                         " experts and the data x context-parallel ranks of a layout",
                                     "use a degree that divides the experts and d x cp"});
    if (refused_all(kBatchSplit))
      out.push_back({{}, "workload.global_batch",
                     "a global batch of " + std::to_string(r_.global_batch) +
                         " sequences does not split into micro-batches of " + list_text(g.micro_batch) +
                         " over the data-parallel replicas of any layout (" + std::to_string(smallest_data_) +
                         " at the fewest)",
                     "make global_batch a multiple of micro_batch x d, or take GPUs out of d with "
                     "pipeline_parallel or context_parallel"});
    if (refused_all(kZeroRanks))
      out.push_back({{}, "search.zero_stage",
                     "ZeRO stages " + list_text(g.zero_stage) +
                         " shard over the data- and context-parallel ranks, and every layout has one (d x cp = 1)",
                     "allow zero_stage 0, or more GPUs"});
    if (refused_all(kHybridShard))
      out.push_back({{}, "search.fsdp_hybrid",
                     "hybrid sharding needs ZeRO-3 and more data-parallel replicas than a node holds, in whole "
                     "nodes; no layout has them",
                     "allow fsdp_hybrid: [false], or zero_stage 3 on more nodes"});
    return out;
  }

  // When the scenario's tensor-parallel list is what left nothing to try: no degree of it
  // divides the GPUs per node of any candidate (tensor parallelism stays within a node), or
  // none divides the model's attention heads and key/value heads.
  std::optional<Diagnostic> tensor_parallel_reason() const {
    const auto* shape = std::get_if<TransformerShape>(&r_.model);
    if (shape == nullptr || r_.grid.tensor_parallel.empty() || r_.node_types.empty()) return std::nullopt;
    const std::string list = list_text(r_.grid.tensor_parallel);
    bool within_a_node = false, divides_heads = false;
    int largest_node = 0;
    for (const NodeType& type : r_.node_types) {
      const int gpn = type.cluster.gpus_per_node;
      largest_node = std::max(largest_node, gpn);
      for (int t : r_.grid.tensor_parallel) {
        within_a_node = within_a_node || (t <= gpn && gpn % t == 0);
        divides_heads = divides_heads || (shape->heads % t == 0 && shape->kv_heads % t == 0);
      }
    }
    if (!within_a_node)
      return Diagnostic{{}, "search.tensor_parallel",
                        "no degree of " + list + " divides the GPUs per node of any candidate (" +
                            std::to_string(largest_node) + " at most; tensor parallelism stays within a node)",
                        "use degrees that divide the GPUs per node, e.g. tensor_parallel: [" +
                            std::to_string(largest_node) + "], and pipeline_parallel to span nodes"};
    if (!divides_heads)
      return Diagnostic{{}, "search.tensor_parallel",
                        "no degree of " + list + " divides the " + std::to_string(shape->heads) +
                            " attention heads and " + std::to_string(shape->kv_heads) + " key/value heads of '" +
                            shape->name + "'",
                        "use a degree that divides both"};
    return std::nullopt;
  }

  const SearchRequest& r_;
  ProgressObserver* progress_;
  SearchResult result_;
  // What keep() holds of the fitting configurations (the frontier is in result_).
  std::optional<Candidate> fastest_, fastest_ok_;
  std::vector<std::optional<Candidate>> fastest_of_type_;
  double cheapest_ok_cost_ = HUGE_VAL;
  std::vector<Candidate> near_cheapest_ok_;
  std::vector<std::string> first_error_;
  std::array<long, kLayoutRules> reached_{}, passed_{};
  int smallest_data_ = INT_MAX;  // d of the layouts the batch split was tried on, the fewest
  struct SplitRefused {
    int product = INT_MAX, fewest = INT_MAX, most = 0;  // t x p x cp and the GPU counts it failed
  } split_refused_;
  std::vector<std::optional<std::pair<Precision, Result<TrainingDevices>>>> devices_;
};

}  // namespace

Result<SearchResult> run_search(const SearchRequest& request, ProgressObserver* progress) {
  if (request.node_types.empty()) return Diagnostic{{}, "hardware", "no node types to search", ""};
  const bool transformer = std::holds_alternative<TransformerShape>(request.model);
  if (transformer && !(request.tokens > 0))
    return Diagnostic{{}, "workload.tokens", "the number of training tokens must be greater than zero", ""};
  if (!transformer && !(request.samples > 0))
    return Diagnostic{{}, "workload.samples", "the number of training samples must be greater than zero", ""};
  return Search(request, progress).run();
}

}  // namespace capsim::models
