// Simulator: the discrete-event kernel that runs one Pipeline.
//
// A plain object with no globals: many simulators may exist in one process and run in
// parallel threads (one thread per simulator; a Simulator itself is not thread-safe).
// Events are ordered by (time, priority, sequence number), where the priority is fixed per
// event kind (statistics boundaries, service completions, transfer completions, arrivals,
// batch timeouts, in that order) and the sequence number is the order of scheduling; all
// randomness comes from one Rng seeded by RunOptions::seed. So the same pipeline, options
// and seed give the same run, to the event, on every platform.
//
// The verbs: run(), run_until(t), clock(); result() reads the metrics (see metrics.hpp).
// Ownership: the Simulator copies what it needs from the Pipeline; the Pipeline may be
// destroyed or reused afterwards. Movable, not copyable.
#pragma once

#include <cstdint>
#include <memory>

#include "capsim/core/des/metrics.hpp"
#include "capsim/core/des/pipeline.hpp"
#include "capsim/core/progress.hpp"
#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"

namespace capsim::des {

struct RunOptions {
  Seconds warmup{0.0};           // >= 0: simulated time deleted from the statistics
  Seconds duration{0.0};         // > 0: measurement window after the warm-up
  std::uint64_t seed = 1;        // any value; the same seed gives the same run
  int batches = 20;              // >= 2: batches of the window for the confidence intervals
  // The most events a run may process (>= 1). A run that would need more stops with an
  // error naming the simulated time reached, instead of running on without bound.
  std::uint64_t max_events = 1'000'000'000;
};

class Simulator {
 public:
  // Fails with the pipeline's validation errors, or with invalid options.
  static Result<Simulator> create(const Pipeline& pipeline, const RunOptions& options);

  Simulator(Simulator&&) noexcept;
  Simulator& operator=(Simulator&&) noexcept;
  ~Simulator();

  // Runs to the end of the measurement window (warmup + duration). An error when the
  // event budget runs out; the simulator then stays at the time it reached. When
  // `observer` asks to cancel, it stops early without an error (result() uses the batches
  // completed so far).
  Status run(ProgressObserver* observer = nullptr);
  // Processes every event with time <= t (t is capped at the end of the window) and sets
  // the clock to t. Same errors as run().
  Status run_until(Seconds t, ProgressObserver* observer = nullptr);

  Seconds clock() const;
  std::uint64_t events() const;  // events processed so far

  // The metrics of the completed batches; an error when fewer than two have completed.
  Result<SimulationResult> result() const;

 private:
  struct State;
  explicit Simulator(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// create + run + result: the usual way to simulate a pipeline.
Result<SimulationResult> simulate(const Pipeline& pipeline, const RunOptions& options,
                                  ProgressObserver* observer = nullptr);

}  // namespace capsim::des
