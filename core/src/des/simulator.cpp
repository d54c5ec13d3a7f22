// The discrete-event kernel. Hot-path rules: events are 24-byte values in a binary heap
// whose storage is reserved up front and reused (no std::function, no allocation per
// event); the batch boundaries of the statistics are not events in the heap but one
// "next boundary" time the loop compares with the heap's top; items live in a pool indexed
// by 32-bit ids and are recycled; queues are power-of-two ring buffers; exponential times
// come from the ziggurat; percentiles from fixed-memory sketches (quantile_sketch.hpp).
#include "capsim/core/des/simulator.hpp"
#include "capsim/core/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>
#include <vector>

#include "quantile_sketch.hpp"
#include "statistics.hpp"

namespace capsim::des {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// The hot path of an event (pop, dispatch, a station's start and departure, the queue and
// calendar operations) is forced inline: GCC at -O2 leaves these as calls (they form a
// cycle through back-pressure, which resume() breaks by staying out of line), and the
// calls and their register saves cost more than the work. Slow paths stay out of line.
#define CAPSIM_HOT [[gnu::always_inline]] inline
#define CAPSIM_COLD [[gnu::noinline]]

// Event kinds double as priorities at equal times (smaller first). Batch boundaries come
// before all of them: the loop takes a boundary before any event at the same time.
enum Kind : std::uint8_t {
  kServiceDone = 1,   // target station, aux server
  kTransferDone = 2,  // target conveyor, aux generation (stale when it differs)
  kLatencyDone = 3,   // target conveyor, aux item
  kArrival = 4,       // target source, aux trace index
  kThinkDone = 5,     // target source, aux item
  kBatchTimeout = 6,  // target station
};

struct Event {
  double time;
  std::uint64_t order;  // kind << 56 | sequence number
  std::uint32_t target;
  std::uint32_t aux;
  Kind kind() const { return static_cast<Kind>(order >> 56); }
};

// Ties in time are rare, so the second test almost never runs (measured: a branch-free form
// of this comparison was 3-5 % slower on the tandem bench).
inline bool before(const Event& a, const Event& b) {
  return a.time < b.time || (a.time == b.time && a.order < b.order);
}

// The event calendar: a binary min-heap on (time, kind, sequence) in one vector, which
// reserve() sizes for the events a pipeline can have pending at once so that it never
// reallocates in a run (it still grows, by doubling, if a run needs more).
class Calendar {
 public:
  void reserve(std::size_t events) {
    if (events > heap_.size()) heap_.resize(events);
  }
  CAPSIM_HOT void push(double time, Kind kind, std::uint32_t target, std::uint32_t aux) {
    const Event e{time, (static_cast<std::uint64_t>(kind) << 56) | sequence_++, target, aux};
    if (size_ == heap_.size()) grow();
    std::size_t i = size_++;
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  bool empty() const { return size_ == 0; }
  const Event& top() const { return heap_[0]; }
  CAPSIM_HOT Event pop() {
    const Event top = heap_[0];
    const std::size_t n = --size_;
    const Event last = heap_[n];
    if (n == 0) return top;
    std::size_t i = 0;
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], last)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = last;
    return top;
  }

 private:
  CAPSIM_COLD void grow() { heap_.resize(heap_.empty() ? 64 : 2 * heap_.size()); }
  std::vector<Event> heap_;  // heap_[0, size_) is the heap; the rest is room to grow into
  std::size_t size_ = 0;
  std::uint64_t sequence_ = 0;
};

// A FIFO ring buffer with power-of-two capacity that grows by doubling.
template <class T>
class Ring {
 public:
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& front() const { return buffer_[head_]; }
  CAPSIM_HOT void push_back(T value) {
    if (size_ == capacity_) grow();
    buffer_[(head_ + size_) & mask_] = value;
    ++size_;
  }
  CAPSIM_HOT T pop_front() {
    const T value = buffer_[head_];
    head_ = (head_ + 1) & mask_;
    --size_;
    return value;
  }

 private:
  CAPSIM_COLD void grow() {
    std::vector<T> bigger(buffer_.empty() ? 16 : buffer_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = buffer_[(head_ + i) & mask_];
    buffer_ = std::move(bigger);
    head_ = 0;
    capacity_ = buffer_.size();
    mask_ = capacity_ - 1;
  }
  std::vector<T> buffer_;
  std::size_t head_ = 0, size_ = 0, mask_ = 0, capacity_ = 0;
};

// A LIFO stack that grows by doubling (idle servers, recycled item ids).
template <class T>
class Stack {
 public:
  bool empty() const { return size_ == 0; }
  CAPSIM_HOT void push(T value) {
    if (size_ == buffer_.size()) grow();
    buffer_[size_++] = value;
  }
  CAPSIM_HOT T pop() { return buffer_[--size_]; }

 private:
  CAPSIM_COLD void grow() { buffer_.resize(buffer_.empty() ? 16 : 2 * buffer_.size()); }
  std::vector<T> buffer_;
  std::size_t size_ = 0;
};

struct Item {
  double created = 0.0;   // at its source (or latest re-entry of a closed source)
  double arrived = 0.0;   // at its current station
  double bytes = 0.0;
  std::uint32_t source = 0;
  std::uint32_t route = kNone;  // edge chosen while waiting to be placed
};

// Who is waiting for space at a full queue or conveyor.
struct Waiter {
  enum Kind : std::uint8_t { from_source, from_server, from_conveyor } kind;
  std::uint32_t index;   // source, station or conveyor
  std::uint32_t server;  // server of the station
};

struct Node {
  NodeKind kind;
  std::uint32_t index;  // into sources_, stations_ or sinks_
  std::uint32_t first_edge, edge_count;
};

struct Edge {
  std::uint32_t to;        // node
  std::uint32_t conveyor;  // kNone: instantaneous
  double cumulative;       // cumulative routing probability
};

struct StationSeries {
  std::vector<double> utilization, queue_length, in_station, waiting, sojourn, p50, p95, p99,
      throughput, blocked, starved;
};

struct StationRt {
  std::string name;
  std::uint32_t node = 0;
  int servers = 1, max_batch = 1;
  double max_delay = 0.0;
  std::size_t capacity = 0;  // 0: unbounded
  ServiceTime service;
  Ring<std::uint32_t> queue;
  std::vector<std::uint32_t> slots;  // servers * max_batch items in service
  std::vector<std::uint32_t> slot_count, next_to_place;
  std::vector<std::uint8_t> server_blocked;
  Stack<std::uint32_t> idle;
  int busy = 0, blocked = 0;
  std::uint32_t in_station = 0;
  bool timeout_pending = false;
  Ring<Waiter> waiters;
  // Starved: every server idle, none busy, none blocked.
  int starved() const { return busy == 0 && blocked == 0; }
  // Accumulators of the current batch. The time averages are running sums: when a count
  // x steps by d at time t its sum gets -d·t, so at any time T the integral of x over the
  // batch so far is sum + x(T)·T (a batch starting at a starts with sum = -x(a)·a). That
  // is one add per change instead of integrating every count at every event.
  double busy_sum = 0.0, queue_sum = 0.0, in_sum = 0.0, blocked_sum = 0.0, starved_sum = 0.0,
         wait_sum = 0.0, sojourn_sum = 0.0;
  std::uint64_t started = 0, departures = 0;
  detail::QuantileSketch sojourns;  // of the current batch
  StationSeries series;
};

struct Transfer {
  double tag;  // virtual time at which its last byte is sent
  std::uint64_t sequence;
  std::uint32_t item;
};
inline bool later(const Transfer& a, const Transfer& b) {
  return a.tag > b.tag || (a.tag == b.tag && a.sequence > b.sequence);
}

struct ConveyorRt {
  std::string name;
  std::uint32_t to = 0;  // node
  double bandwidth = 0.0, latency = 0.0;
  std::size_t capacity = 0;
  // Processor sharing by virtual time: vtime grows at bandwidth / n while n items are in
  // the bandwidth phase, so an item that starts at vtime v with s bytes ends when vtime
  // reaches v + s, whatever starts or ends meanwhile (the completion time is recomputed on
  // every start and finish).
  double vtime = 0.0, vtime_at = 0.0;
  std::vector<Transfer> sending;  // min-heap on tag
  std::uint64_t sequence = 0;
  std::uint32_t generation = 0;
  std::size_t in_transit = 0;
  Ring<std::uint32_t> exit_blocked;
  Ring<Waiter> waiters;
  double last = 0.0, busy_time = 0.0, transit_area = 0.0;
  std::uint64_t delivered = 0;
  std::vector<double> s_utilization, s_in_transit, s_throughput;
};

struct SourceRt {
  std::uint32_t node = 0;
  SourceSpec::Kind kind = SourceSpec::Kind::poisson;
  double rate = 0.0, max_rate = 0.0;
  std::array<double, 24> hourly{};
  std::vector<double> trace;
  int population = 0;
  double think = 0.0, bytes = 0.0;
  Ring<std::uint32_t> pending;
  bool blocked = false;
};

struct SinkSeries {
  std::vector<double> throughput, latency, p50, p95, p99;
  std::vector<std::vector<double>> quantiles;  // all sinks only: kCdfFractions per batch
};

// The percentiles every station and sink reports (metrics.hpp: Percentiles).
constexpr double kPercentiles[3] = {0.50, 0.95, 0.99};

// The fractions at which the latency distribution is reported (SimulationResult::latency_cdf).
const std::vector<double>& cdf_fractions() {
  static const std::vector<double> fractions = [] {
    std::vector<double> f;
    for (int i = 0; i <= 20; ++i) f.push_back(i / 20.0);
    return f;
  }();
  return fractions;
}

struct SinkRt {
  std::string name;
  std::uint64_t count = 0;
  double latency_sum = 0.0;
  detail::QuantileSketch latencies;  // of the current batch
  SinkSeries series;
};

// "%g", but large times in full ("1000000", not "1e+06").
std::string number(double v) {
  return capsim::significant(v, 6);
}

}  // namespace

struct Simulator::State {
  explicit State(std::uint64_t seed) : rng(seed) {}

  // --- configuration
  RunOptions options;
  double end = 0.0, batch_length = 0.0;
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<StationRt> stations;
  std::vector<ConveyorRt> conveyors;
  std::vector<SourceRt> sources;
  std::vector<SinkRt> sinks;

  // --- dynamic state
  Rng rng;
  Calendar calendar;
  double now = 0.0;
  std::uint64_t events = 0;
  std::vector<Item> items;
  Stack<std::uint32_t> free_items;
  bool recording = false, finished = false;
  int batches_done = 0;
  // The statistics' boundaries: index 0 ends the warm-up, index i the i-th batch; each is
  // at warmup + i * batch_length and is taken before any event at the same time.
  int next_boundary_index = 0;
  double next_boundary = 0.0;
  SinkRt all_sinks;  // the sinks together (with one sink, that sink's accumulators serve)

  void build(const Pipeline& p);
  void start();
  Status run_until(double t, ProgressObserver* observer);
  void dispatch(const Event& e);
  SimulationResult collect() const;

  CAPSIM_HOT std::uint32_t new_item(std::uint32_t source) {
    std::uint32_t id;
    if (!free_items.empty()) {
      id = free_items.pop();
    } else {
      id = static_cast<std::uint32_t>(items.size());
      items.emplace_back();
    }
    Item& it = items[id];
    it.created = now;
    it.source = source;
    it.bytes = sources[source].bytes;
    it.route = kNone;
    return id;
  }

  // --- routing and back-pressure
  CAPSIM_HOT std::uint32_t choose_edge(std::uint32_t node) {
    const Node& n = nodes[node];
    if (n.edge_count == 1) return n.first_edge;
    const double u = rng.uniform();
    for (std::uint32_t e = n.first_edge; e + 1 < n.first_edge + n.edge_count; ++e)
      if (u < edges[e].cumulative) return e;
    return n.first_edge + n.edge_count - 1;
  }
  bool try_place(std::uint32_t item, std::uint32_t from_node, Waiter self);
  bool deliver(std::uint32_t item, std::uint32_t node, Waiter self);
  void resume(Waiter w);

  // --- stations: the steps of the counts behind the time averages (see StationRt)
  // A server becomes busy or blocked: the station stops being starved if it was.
  CAPSIM_HOT void stop_starving(StationRt& s) {
    if (s.busy == 0 && s.blocked == 0) s.starved_sum += now;
  }
  // A server stops being busy or blocked: the station starts starving if none is left.
  CAPSIM_HOT void maybe_starve(StationRt& s) {
    if (s.busy == 0 && s.blocked == 0) s.starved_sum -= now;
  }
  CAPSIM_HOT void start_busy(StationRt& s) {
    stop_starving(s);
    ++s.busy;
    s.busy_sum -= now;
  }
  CAPSIM_HOT void end_busy(StationRt& s) {
    --s.busy;
    s.busy_sum += now;
    maybe_starve(s);
  }
  CAPSIM_HOT void start_blocked(StationRt& s) {
    stop_starving(s);
    ++s.blocked;
    s.blocked_sum -= now;
  }
  CAPSIM_HOT void end_blocked(StationRt& s) {
    --s.blocked;
    s.blocked_sum += now;
    maybe_starve(s);
  }
  void enqueue(std::uint32_t station, std::uint32_t item);
  void try_start(std::uint32_t station);
  void depart(std::uint32_t station, std::uint32_t server);
  CAPSIM_HOT void notify(StationRt& s) {
    while (!s.waiters.empty() && (s.capacity == 0 || s.queue.size() < s.capacity))
      resume(s.waiters.pop_front());
  }

  // --- conveyors
  void touch(ConveyorRt& c) {
    const double dt = now - c.last;
    if (dt <= 0.0) return;
    if (!c.sending.empty()) c.busy_time += dt;
    c.transit_area += static_cast<double>(c.in_transit) * dt;
    c.last = now;
  }
  void advance_vtime(ConveyorRt& c) {
    if (!c.sending.empty())
      c.vtime += (now - c.vtime_at) * c.bandwidth / static_cast<double>(c.sending.size());
    c.vtime_at = now;
  }
  void reschedule(std::uint32_t conveyor);
  void start_transfer(std::uint32_t conveyor, std::uint32_t item);
  void transfer_done(std::uint32_t conveyor, std::uint32_t generation);
  void conveyor_exit(std::uint32_t conveyor, std::uint32_t item);
  void resume_exit(std::uint32_t conveyor);
  void notify(ConveyorRt& c) {
    while (!c.waiters.empty() && (c.capacity == 0 || c.in_transit < c.capacity))
      resume(c.waiters.pop_front());
  }

  // --- sources and sinks
  void flush(std::uint32_t source);
  void arrival(std::uint32_t source, std::uint32_t trace_index);
  double next_diurnal(const SourceRt& s, double from);
  void sink_arrival(std::uint32_t sink, std::uint32_t item);

  // --- statistics
  void boundary();  // the next one, at next_boundary
  void close_batch();
  void reset_accumulators();
};

// ---------------------------------------------------------------------------------------
// Building

void Simulator::State::build(const Pipeline& p) {
  const auto n = static_cast<std::uint32_t>(p.node_count());
  nodes.resize(n);
  for (std::uint32_t v = 0; v < n; ++v) {
    const NodeId id{v};
    Node& node = nodes[v];
    node.kind = p.kind(id);
    switch (node.kind) {
      case NodeKind::source: {
        const SourceSpec& spec = p.source(id);
        SourceRt s;
        s.node = v;
        s.kind = spec.kind;
        s.rate = spec.rate.value();
        s.hourly = spec.hourly;
        s.max_rate = s.rate * *std::max_element(spec.hourly.begin(), spec.hourly.end());
        for (Seconds t : spec.arrivals) s.trace.push_back(t.value());
        s.population = spec.population;
        s.think = spec.think_time.value();
        s.bytes = spec.item_size.value();
        node.index = static_cast<std::uint32_t>(sources.size());
        sources.push_back(std::move(s));
        break;
      }
      case NodeKind::station: {
        const StationSpec& spec = p.station(id);
        StationRt s;
        s.name = spec.name;
        s.node = v;
        s.servers = spec.servers;
        s.max_batch = spec.max_batch;
        s.max_delay = spec.max_queue_delay.value();
        s.capacity = static_cast<std::size_t>(spec.queue_capacity);
        s.service = spec.service;
        s.slots.assign(static_cast<std::size_t>(spec.servers) * spec.max_batch, kNone);
        s.slot_count.assign(spec.servers, 0);
        s.next_to_place.assign(spec.servers, 0);
        s.server_blocked.assign(spec.servers, 0);
        for (int i = spec.servers - 1; i >= 0; --i) s.idle.push(static_cast<std::uint32_t>(i));
        node.index = static_cast<std::uint32_t>(stations.size());
        stations.push_back(std::move(s));
        break;
      }
      case NodeKind::sink: {
        SinkRt s;
        s.name = p.sink(id).name;
        node.index = static_cast<std::uint32_t>(sinks.size());
        sinks.push_back(std::move(s));
        break;
      }
    }
  }
  for (std::uint32_t v = 0; v < n; ++v) {
    nodes[v].first_edge = static_cast<std::uint32_t>(edges.size());
    double cumulative = 0.0;
    for (const Connection& c : p.connections_from(NodeId{v})) {
      cumulative += c.probability;
      Edge e{c.to.index, kNone, cumulative};
      if (c.conveyor) {
        ConveyorRt conv;
        conv.name = c.conveyor->name;
        conv.to = c.to.index;
        conv.bandwidth = c.conveyor->bandwidth.value();
        conv.latency = c.conveyor->latency.value();
        conv.capacity = static_cast<std::size_t>(c.conveyor->capacity);
        e.conveyor = static_cast<std::uint32_t>(conveyors.size());
        conveyors.push_back(std::move(conv));
      }
      edges.push_back(e);
    }
    nodes[v].edge_count = static_cast<std::uint32_t>(edges.size()) - nodes[v].first_edge;
  }
  all_sinks.name = "all sinks";
}

void Simulator::State::start() {
  next_boundary_index = 0;
  next_boundary = options.warmup.value();
  // What can be pending at once: an arrival per open source or its population if closed, a
  // completion and a batch timeout per server, a transfer per conveyor; more if conveyors
  // hold many items (the heap then grows by doubling, once).
  std::size_t pending = 64;
  for (const SourceRt& s : sources) pending += static_cast<std::size_t>(std::max(s.population, 1));
  for (const StationRt& s : stations) pending += 2 * static_cast<std::size_t>(s.servers);
  pending += 2 * conveyors.size();
  calendar.reserve(pending);
  for (std::uint32_t i = 0; i < sources.size(); ++i) {
    SourceRt& s = sources[i];
    switch (s.kind) {
      case SourceSpec::Kind::poisson:
        calendar.push(rng.exponential_ziggurat() / s.rate, kArrival, i, 0);
        break;
      case SourceSpec::Kind::diurnal:
        calendar.push(next_diurnal(s, 0.0), kArrival, i, 0);
        break;
      case SourceSpec::Kind::trace:
        calendar.push(s.trace.front(), kArrival, i, 0);
        break;
      case SourceSpec::Kind::closed:
        for (int k = 0; k < s.population; ++k) {
          const std::uint32_t item = new_item(i);
          calendar.push(s.think > 0.0 ? s.think * rng.exponential_ziggurat() : 0.0, kThinkDone, i, item);
        }
        break;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Routing and back-pressure

CAPSIM_HOT bool Simulator::State::try_place(std::uint32_t item, std::uint32_t from_node, Waiter self) {
  if (items[item].route == kNone) items[item].route = choose_edge(from_node);
  const Edge& e = edges[items[item].route];
  if (e.conveyor != kNone) {
    ConveyorRt& c = conveyors[e.conveyor];
    if (c.capacity != 0 && c.in_transit >= c.capacity) {
      c.waiters.push_back(self);
      return false;
    }
    items[item].route = kNone;
    start_transfer(e.conveyor, item);
    return true;
  }
  if (!deliver(item, e.to, self)) return false;
  items[item].route = kNone;
  return true;
}

CAPSIM_HOT bool Simulator::State::deliver(std::uint32_t item, std::uint32_t node, Waiter self) {
  const Node& n = nodes[node];
  if (n.kind == NodeKind::sink) {
    items[item].route = kNone;
    sink_arrival(n.index, item);
    return true;
  }
  StationRt& s = stations[n.index];
  if (s.capacity != 0 && s.queue.size() >= s.capacity) {
    s.waiters.push_back(self);
    return false;
  }
  items[item].route = kNone;
  enqueue(n.index, item);
  return true;
}

// Out of line: the back-pressure path, which closes the cycle depart -> try_place -> ...
// -> try_start -> notify -> resume -> depart; the common path inlines without it.
[[gnu::noinline]] void Simulator::State::resume(Waiter w) {
  switch (w.kind) {
    case Waiter::from_source:
      sources[w.index].blocked = false;
      flush(w.index);
      break;
    case Waiter::from_server:
      depart(w.index, w.server);
      break;
    case Waiter::from_conveyor:
      resume_exit(w.index);
      break;
  }
}

// ---------------------------------------------------------------------------------------
// Stations

CAPSIM_HOT void Simulator::State::enqueue(std::uint32_t station, std::uint32_t item) {
  StationRt& s = stations[station];
  items[item].arrived = now;
  s.queue.push_back(item);
  s.queue_sum -= now;
  ++s.in_station;
  s.in_sum -= now;
  try_start(station);
}

CAPSIM_HOT void Simulator::State::try_start(std::uint32_t station) {
  StationRt& s = stations[station];
  bool freed = false;
  while (!s.idle.empty() && !s.queue.empty()) {
    const std::size_t waiting = s.queue.size();
    if (waiting < static_cast<std::size_t>(s.max_batch) && s.max_delay > 0.0) {
      // The dynamic batcher waits for a full batch until the oldest item has waited
      // max_queue_delay.
      const double deadline = items[s.queue.front()].arrived + s.max_delay;
      if (now < deadline) {
        if (!s.timeout_pending) {
          calendar.push(deadline, kBatchTimeout, station, 0);
          s.timeout_pending = true;
        }
        break;
      }
    }
    const auto k = static_cast<std::uint32_t>(std::min<std::size_t>(waiting, s.max_batch));
    const std::uint32_t server = s.idle.pop();
    std::uint32_t* slot = &s.slots[static_cast<std::size_t>(server) * s.max_batch];
    for (std::uint32_t j = 0; j < k; ++j) {
      const std::uint32_t item = s.queue.pop_front();
      slot[j] = item;
      s.wait_sum += now - items[item].arrived;
    }
    s.queue_sum += k * now;
    s.started += k;
    s.slot_count[server] = k;
    s.next_to_place[server] = 0;
    start_busy(s);
    calendar.push(now + s.service.sample(static_cast<int>(k), rng).value(), kServiceDone,
                  station, server);
    freed = true;
  }
  if (freed) notify(s);
}

// Moves the finished items of `server` downstream, in order; stays blocked at the first
// one that finds no space, and frees the server when all have left.
CAPSIM_HOT void Simulator::State::depart(std::uint32_t station, std::uint32_t server) {
  StationRt& s = stations[station];
  const std::size_t base = static_cast<std::size_t>(server) * s.max_batch;
  while (s.next_to_place[server] < s.slot_count[server]) {
    const std::uint32_t item = s.slots[base + s.next_to_place[server]];
    const double sojourn = now - items[item].arrived;
    if (!try_place(item, s.node, Waiter{Waiter::from_server, station, server})) {
      if (!s.server_blocked[server]) {
        s.server_blocked[server] = 1;
        start_blocked(s);
      }
      return;
    }
    --s.in_station;
    s.in_sum += now;
    ++s.departures;
    s.sojourn_sum += sojourn;
    if (recording) s.sojourns.add(sojourn);
    ++s.next_to_place[server];
  }
  if (s.server_blocked[server]) {
    s.server_blocked[server] = 0;
    end_blocked(s);
  }
  s.idle.push(server);
  try_start(station);
}

// ---------------------------------------------------------------------------------------
// Conveyors

void Simulator::State::reschedule(std::uint32_t conveyor) {
  ConveyorRt& c = conveyors[conveyor];
  ++c.generation;
  if (c.sending.empty()) return;
  const double remaining = c.sending.front().tag - c.vtime;
  const double at = now + std::max(0.0, remaining) * static_cast<double>(c.sending.size()) /
                              c.bandwidth;
  calendar.push(at, kTransferDone, conveyor, c.generation);
}

void Simulator::State::start_transfer(std::uint32_t conveyor, std::uint32_t item) {
  ConveyorRt& c = conveyors[conveyor];
  touch(c);
  ++c.in_transit;
  const double bytes = items[item].bytes;
  if (bytes <= 0.0) {
    if (c.latency > 0.0) {
      calendar.push(now + c.latency, kLatencyDone, conveyor, item);
    } else {
      conveyor_exit(conveyor, item);
    }
    return;
  }
  advance_vtime(c);
  c.sending.push_back({c.vtime + bytes, c.sequence++, item});
  std::push_heap(c.sending.begin(), c.sending.end(), later);
  reschedule(conveyor);
}

void Simulator::State::transfer_done(std::uint32_t conveyor, std::uint32_t generation) {
  ConveyorRt& c = conveyors[conveyor];
  if (generation != c.generation || c.sending.empty()) return;  // superseded
  touch(c);
  advance_vtime(c);
  // The scheduled item is done by construction; rounding must not leave it a few bytes short.
  c.vtime = std::max(c.vtime, c.sending.front().tag);
  while (!c.sending.empty() && c.sending.front().tag <= c.vtime) {
    std::pop_heap(c.sending.begin(), c.sending.end(), later);
    const std::uint32_t item = c.sending.back().item;
    c.sending.pop_back();
    if (c.latency > 0.0) {
      calendar.push(now + c.latency, kLatencyDone, conveyor, item);
    } else {
      conveyor_exit(conveyor, item);
    }
  }
  reschedule(conveyor);
}

void Simulator::State::conveyor_exit(std::uint32_t conveyor, std::uint32_t item) {
  ConveyorRt& c = conveyors[conveyor];
  if (!c.exit_blocked.empty()) {  // keep FIFO order behind items already waiting
    c.exit_blocked.push_back(item);
    return;
  }
  if (!deliver(item, c.to, Waiter{Waiter::from_conveyor, conveyor, 0})) {
    c.exit_blocked.push_back(item);
    return;
  }
  touch(c);
  --c.in_transit;
  ++c.delivered;
  notify(c);
}

void Simulator::State::resume_exit(std::uint32_t conveyor) {
  ConveyorRt& c = conveyors[conveyor];
  while (!c.exit_blocked.empty()) {
    if (!deliver(c.exit_blocked.front(), c.to, Waiter{Waiter::from_conveyor, conveyor, 0})) return;
    c.exit_blocked.pop_front();
    touch(c);
    --c.in_transit;
    ++c.delivered;
  }
  notify(c);
}

// ---------------------------------------------------------------------------------------
// Sources and sinks

CAPSIM_HOT void Simulator::State::flush(std::uint32_t source) {
  SourceRt& s = sources[source];
  while (!s.blocked && !s.pending.empty()) {
    if (!try_place(s.pending.front(), s.node, Waiter{Waiter::from_source, source, 0})) {
      s.blocked = true;
      return;
    }
    s.pending.pop_front();
  }
}

// Thinning (Lewis & Shedler 1979): candidates at the peak rate, each kept with probability
// rate(t) / peak rate.
double Simulator::State::next_diurnal(const SourceRt& s, double from) {
  double t = from;
  for (;;) {
    t += rng.exponential_ziggurat() / s.max_rate;
    const auto hour = static_cast<std::size_t>(std::fmod(t, units::day) / units::hour) % 24;
    if (rng.uniform() * s.max_rate < s.rate * s.hourly[hour]) return t;
  }
}

CAPSIM_HOT void Simulator::State::arrival(std::uint32_t source, std::uint32_t trace_index) {
  SourceRt& s = sources[source];
  const std::uint32_t item = new_item(source);
  switch (s.kind) {
    case SourceSpec::Kind::poisson:
      calendar.push(now + rng.exponential_ziggurat() / s.rate, kArrival, source, 0);
      break;
    case SourceSpec::Kind::diurnal:
      calendar.push(next_diurnal(s, now), kArrival, source, 0);
      break;
    case SourceSpec::Kind::trace:
      if (trace_index + 1 < s.trace.size())
        calendar.push(s.trace[trace_index + 1], kArrival, source, trace_index + 1);
      break;
    case SourceSpec::Kind::closed:
      break;
  }
  // What flush() would do with the item at the back, without the round trip through
  // `pending` when nothing waits there (nothing does unless the source is blocked).
  if (s.blocked || !s.pending.empty()) {
    s.pending.push_back(item);
    flush(source);
  } else if (!try_place(item, s.node, Waiter{Waiter::from_source, source, 0})) {
    s.pending.push_back(item);
    s.blocked = true;
  }
}

CAPSIM_HOT void Simulator::State::sink_arrival(std::uint32_t sink, std::uint32_t item) {
  const double latency = now - items[item].created;
  auto record = [&](SinkRt& k) {
    ++k.count;
    k.latency_sum += latency;
    if (recording) k.latencies.add(latency);
  };
  record(sinks[sink]);
  if (sinks.size() > 1) record(all_sinks);
  const std::uint32_t source = items[item].source;
  if (sources[source].kind == SourceSpec::Kind::closed) {
    const double think = sources[source].think;
    calendar.push(now + (think > 0.0 ? think * rng.exponential_ziggurat() : 0.0), kThinkDone, source,
                  item);
  } else {
    free_items.push(item);
  }
}

// ---------------------------------------------------------------------------------------
// Statistics

void Simulator::State::reset_accumulators() {
  for (StationRt& s : stations) {
    // The batch starts now: each running sum starts at -x(now)·now (see StationRt).
    s.busy_sum = -s.busy * now;
    s.queue_sum = -static_cast<double>(s.queue.size()) * now;
    s.in_sum = -static_cast<double>(s.in_station) * now;
    s.blocked_sum = -s.blocked * now;
    s.starved_sum = -s.starved() * now;
    s.wait_sum = s.sojourn_sum = 0.0;
    s.started = s.departures = 0;
    s.sojourns.clear();
  }
  for (ConveyorRt& c : conveyors) {
    c.busy_time = c.transit_area = 0.0;
    c.delivered = 0;
  }
  for (std::size_t i = 0; i <= sinks.size(); ++i) {
    SinkRt& sink = i < sinks.size() ? sinks[i] : all_sinks;
    sink.count = 0;
    sink.latency_sum = 0.0;
    sink.latencies.clear();
  }
}

void Simulator::State::close_batch() {
  const double len = batch_length;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto ratio = [nan](double a, std::uint64_t n) { return n ? a / static_cast<double>(n) : nan; };
  for (StationRt& s : stations) {
    // The integrals over the batch that ends now (see StationRt).
    const double busy_area = s.busy_sum + s.busy * now;
    const double queue_area = s.queue_sum + static_cast<double>(s.queue.size()) * now;
    const double in_area = s.in_sum + static_cast<double>(s.in_station) * now;
    const double blocked_area = s.blocked_sum + s.blocked * now;
    const double starved_time = s.starved_sum + s.starved() * now;
    StationSeries& z = s.series;
    z.utilization.push_back(busy_area / (s.servers * len));
    z.queue_length.push_back(queue_area / len);
    z.in_station.push_back(in_area / len);
    z.waiting.push_back(ratio(s.wait_sum, s.started));
    z.sojourn.push_back(ratio(s.sojourn_sum, s.departures));
    double p[3];
    s.sojourns.quantiles(kPercentiles, 3, p);
    z.p50.push_back(p[0]);
    z.p95.push_back(p[1]);
    z.p99.push_back(p[2]);
    z.throughput.push_back(static_cast<double>(s.departures) / len);
    z.blocked.push_back(blocked_area / (s.servers * len));
    z.starved.push_back(starved_time / len);
  }
  for (ConveyorRt& c : conveyors) {
    touch(c);
    c.s_utilization.push_back(c.busy_time / len);
    c.s_in_transit.push_back(c.transit_area / len);
    c.s_throughput.push_back(static_cast<double>(c.delivered) / len);
  }
  for (std::size_t i = 0; i <= sinks.size(); ++i) {
    SinkRt& k = i < sinks.size() ? sinks[i] : all_sinks;
    // With one sink, the sinks together are that sink (sink_arrival records it once).
    const SinkRt& from = i == sinks.size() && sinks.size() == 1 ? sinks[0] : k;
    k.series.throughput.push_back(static_cast<double>(from.count) / len);
    k.series.latency.push_back(ratio(from.latency_sum, from.count));
    double p[3];
    from.latencies.quantiles(kPercentiles, 3, p);
    k.series.p50.push_back(p[0]);
    k.series.p95.push_back(p[1]);
    k.series.p99.push_back(p[2]);
    if (&k == &all_sinks && from.latencies.count() > 0) {
      std::vector<double> q(cdf_fractions().size());
      from.latencies.quantiles(cdf_fractions().data(), q.size(), q.data());
      k.series.quantiles.push_back(std::move(q));
    }
  }
  ++batches_done;
}

void Simulator::State::boundary() {
  const int index = next_boundary_index++;
  next_boundary = options.warmup.value() + next_boundary_index * batch_length;
  for (ConveyorRt& c : conveyors) touch(c);
  if (index == 0) {
    recording = true;
  } else {
    close_batch();
  }
  reset_accumulators();
  if (index == options.batches) finished = true;
}

// ---------------------------------------------------------------------------------------
// The loop

CAPSIM_HOT void Simulator::State::dispatch(const Event& e) {
  switch (e.kind()) {
    case kServiceDone: {
      end_busy(stations[e.target]);
      depart(e.target, e.aux);
      break;
    }
    case kTransferDone: transfer_done(e.target, e.aux); break;
    case kLatencyDone: conveyor_exit(e.target, e.aux); break;
    case kArrival: arrival(e.target, e.aux); break;
    case kThinkDone:
      items[e.aux].created = now;
      sources[e.target].pending.push_back(e.aux);
      flush(e.target);
      break;
    case kBatchTimeout:
      stations[e.target].timeout_pending = false;
      try_start(e.target);
      break;
  }
}

Status Simulator::State::run_until(double t, ProgressObserver* observer) {
  const double stop = std::min(t, end);
  while (!finished) {
    // A boundary goes before the events at its time; the calendar is empty only when no
    // source has anything left to send and nothing is in flight.
    const bool boundary_next = calendar.empty() || next_boundary <= calendar.top().time;
    if ((boundary_next ? next_boundary : calendar.top().time) > stop) break;
    if (events >= options.max_events) {
      return {Diagnostic{{}, "run.max_events",
                         "simulation stopped: the event budget of " +
                             std::to_string(options.max_events) +
                             " events ran out at simulated time " + number(now) + " s of " +
                             number(end) + " s",
                         "shorten the duration or raise max_events"}};
    }
    ++events;
    if (boundary_next) {
      now = next_boundary;
      boundary();
    } else {
      const Event e = calendar.pop();
      now = e.time;
      dispatch(e);
    }
    // Refuse early a run that, at the pace so far, would need more than its budget,
    // instead of spending most of the budget before saying so.
    if ((events & 0xfffff) == 0 && now > 0.0) {
      const double projected = static_cast<double>(events) * (end / now);
      if (projected > 1.05 * static_cast<double>(options.max_events)) {
        const std::string about = capsim::significant(projected, 3);
        return {Diagnostic{{}, "run.max_events",
                           "simulation refused: at the pace of its first " + std::to_string(events) +
                               " events (" + number(now) + " s of simulated time) the run needs about " +
                               about + " events for " + number(end) +
                               " s, over the event budget of " + std::to_string(options.max_events),
                           "shorten the duration or raise max_events"}};
      }
    }
    if (observer != nullptr && (events & 0xffff) == 0) {
      observer->progress(now / end, "simulation");
      if (observer->cancelled()) return {};
    }
  }
  if (!finished && now < stop) now = stop;
  if (observer != nullptr && finished) observer->progress(1.0, "simulation");
  return {};
}

SimulationResult Simulator::State::collect() const {
  using detail::batch_means_interval;
  SimulationResult r;
  for (const StationRt& s : stations) {
    const StationSeries& z = s.series;
    r.stations.push_back({s.name, batch_means_interval(z.utilization),
                          batch_means_interval(z.queue_length), batch_means_interval(z.in_station),
                          batch_means_interval(z.waiting), batch_means_interval(z.sojourn),
                          {batch_means_interval(z.p50), batch_means_interval(z.p95),
                           batch_means_interval(z.p99)},
                          batch_means_interval(z.throughput), batch_means_interval(z.blocked),
                          batch_means_interval(z.starved)});
  }
  for (const ConveyorRt& c : conveyors)
    r.conveyors.push_back({c.name, batch_means_interval(c.s_utilization),
                           batch_means_interval(c.s_in_transit),
                           batch_means_interval(c.s_throughput)});
  auto sink_metrics = [](const SinkRt& k) {
    return SinkMetrics{k.name, batch_means_interval(k.series.throughput),
                       batch_means_interval(k.series.latency),
                       {batch_means_interval(k.series.p50), batch_means_interval(k.series.p95),
                        batch_means_interval(k.series.p99)}};
  };
  for (const SinkRt& k : sinks) r.sinks.push_back(sink_metrics(k));
  const SinkMetrics all = sink_metrics(all_sinks);
  r.throughput = all.throughput;
  r.latency = all.latency;
  r.latency_percentiles = all.latency_percentiles;
  if (!all_sinks.series.quantiles.empty()) {
    const auto& batches = all_sinks.series.quantiles;
    for (std::size_t q = 0; q < cdf_fractions().size(); ++q) {
      double sum = 0;
      for (const auto& b : batches) sum += b[q];
      r.latency_cdf.emplace_back(sum / static_cast<double>(batches.size()), cdf_fractions()[q]);
    }
  }

  // The constraint and what elevating it buys (see metrics.hpp).
  std::vector<std::pair<double, std::string>> used;
  for (const StationMetrics& s : r.stations) used.emplace_back(s.utilization.mean, s.name);
  for (const ConveyorMetrics& c : r.conveyors) used.emplace_back(c.utilization.mean, c.name);
  std::stable_sort(used.begin(), used.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (!used.empty()) {
    r.constraint = used[0].second;
    r.constraint_utilization = used[0].first;
    if (used.size() > 1 && used[1].first > 0.0) {
      r.next_constraint = used[1].second;
      r.elevation_gain = 1.0 / used[1].first - 1.0;
    }
  }
  r.events = events;
  r.simulated_time = Seconds(now);
  r.batch_length = Seconds(batch_length);
  r.batches = batches_done;
  return r;
}

// ---------------------------------------------------------------------------------------
// The public face

Simulator::Simulator(std::unique_ptr<State> state) : state_(std::move(state)) {}
Simulator::Simulator(Simulator&&) noexcept = default;
Simulator& Simulator::operator=(Simulator&&) noexcept = default;
Simulator::~Simulator() = default;

Result<Simulator> Simulator::create(const Pipeline& pipeline, const RunOptions& options) {
  Status errors = pipeline.validate();
  auto bad = [&](const std::string& key, const std::string& message) {
    errors.push_back({{}, "run." + key, message, {}});
  };
  const double warmup = options.warmup.value(), duration = options.duration.value();
  if (!(warmup >= 0.0) || !std::isfinite(warmup))
    bad("warmup", "warmup must be >= 0 s (got " + number(warmup) + " s)");
  if (!(duration > 0.0) || !std::isfinite(duration))
    bad("duration", "duration must be > 0 s (got " + number(duration) + " s)");
  if (options.batches < 2)
    bad("batches", "batches must be >= 2 for confidence intervals (got " +
                       std::to_string(options.batches) + ")");
  if (options.max_events < 1) bad("max_events", "max_events must be >= 1 (got 0)");
  if (!errors.empty()) return errors;

  auto state = std::make_unique<State>(options.seed);
  state->options = options;
  state->end = warmup + duration;
  state->batch_length = duration / options.batches;
  state->build(pipeline);
  state->start();
  return Simulator(std::move(state));
}

Status Simulator::run(ProgressObserver* observer) {
  return state_->run_until(state_->end, observer);
}
Status Simulator::run_until(Seconds t, ProgressObserver* observer) {
  return state_->run_until(t.value(), observer);
}
Seconds Simulator::clock() const { return Seconds(state_->now); }
std::uint64_t Simulator::events() const { return state_->events; }

Result<SimulationResult> Simulator::result() const {
  if (state_->batches_done < 2)
    return Diagnostic{{}, "run",
                      "only " + std::to_string(state_->batches_done) +
                          " batches of the measurement window have completed; confidence "
                          "intervals need at least 2",
                      {}};
  return state_->collect();
}

Result<SimulationResult> simulate(const Pipeline& pipeline, const RunOptions& options,
                                  ProgressObserver* observer) {
  auto sim = Simulator::create(pipeline, options);
  if (!sim) return sim.errors();
  Simulator simulator = std::move(sim).value();
  if (Status errors = simulator.run(observer); !errors.empty()) return errors;
  return simulator.result();
}

}  // namespace capsim::des
