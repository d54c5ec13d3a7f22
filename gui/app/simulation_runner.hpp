// Runs a whole scenario (run_scenario: sizing, the discrete-event simulations, cost,
// expectations) on a background thread, so the window never freezes. Progress comes back as
// signals on the thread that owns the runner; cancel() asks the work to stop (the sizing
// search stops at once, a simulation at its end) and its result is then dropped.
#pragma once

#include <QObject>
#include <QThread>
#include <atomic>
#include <memory>

#include "capsim/hardware/catalog.hpp"
#include "capsim/scenarios/runner.hpp"
#include "whatif.hpp"

namespace capsim::gui {

class SimulationRunner : public QObject {
  Q_OBJECT

 public:
  explicit SimulationRunner(std::shared_ptr<const hardware::Catalog> catalog, QObject* parent = nullptr);
  ~SimulationRunner() override;  // waits for a running job

  // Starts a run of `scenario` with the what-if values applied; false when one is running.
  bool start(const scenarios::Scenario& scenario, const WhatIf& what_if);
  void cancel();
  bool running() const { return thread_ != nullptr; }
  // Blocks (processing events) until the current run has finished; for --screenshot and tests.
  bool wait(int timeout_ms);

 signals:
  void progress(double fraction, const QString& what);
  // The run's result (when it succeeded) or its errors; not emitted for a cancelled run.
  void finished(std::shared_ptr<const scenarios::RunResult> result, const QString& errors, double seconds);
  void cancelled();

 private:
  std::shared_ptr<const hardware::Catalog> catalog_;
  QThread* thread_ = nullptr;
  std::shared_ptr<std::atomic<bool>> cancel_flag_;
};

}  // namespace capsim::gui
