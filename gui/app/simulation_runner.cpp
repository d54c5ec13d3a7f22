#include "simulation_runner.hpp"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QPointer>
#include <chrono>

#include "capsim/core/progress.hpp"

namespace capsim::gui {
namespace {

// Forwards progress to the runner's thread; cancelled() reads the shared flag.
class Observer : public ProgressObserver {
 public:
  Observer(QPointer<SimulationRunner> runner, std::shared_ptr<std::atomic<bool>> flag)
      : runner_(std::move(runner)), flag_(std::move(flag)) {}
  void progress(double fraction, std::string_view what) override {
    const QString text = QString::fromUtf8(what.data(), static_cast<qsizetype>(what.size()));
    QPointer<SimulationRunner> r = runner_;
    if (r) QMetaObject::invokeMethod(r, [r, fraction, text] { if (r) emit r->progress(fraction, text); }, Qt::QueuedConnection);
  }
  bool cancelled() const override { return flag_->load(); }

 private:
  QPointer<SimulationRunner> runner_;
  std::shared_ptr<std::atomic<bool>> flag_;
};

}  // namespace

SimulationRunner::SimulationRunner(std::shared_ptr<const hardware::Catalog> catalog, QObject* parent)
    : QObject(parent), catalog_(std::move(catalog)) {}

SimulationRunner::~SimulationRunner() {
  if (thread_ != nullptr) {
    cancel_flag_->store(true);
    thread_->wait();
  }
}

bool SimulationRunner::start(const scenarios::Scenario& scenario, const WhatIf& what_if) {
  if (thread_ != nullptr) return false;
  cancel_flag_ = std::make_shared<std::atomic<bool>>(false);
  auto flag = cancel_flag_;
  auto catalog = catalog_;
  QPointer<SimulationRunner> self(this);
  thread_ = QThread::create([self, flag, catalog, scenario, what_if] {
    const auto start = std::chrono::steady_clock::now();
    Observer observer(self, flag);
    observer.progress(0.0, "starting");
    std::shared_ptr<scenarios::RunResult> result;
    QString errors;
    auto patched = apply_what_if(scenario, what_if, *catalog);
    if (!patched) {
      errors = QString::fromStdString(format_diagnostics(patched.errors()));
    } else {
      auto run = scenarios::run_scenario(*patched, *catalog, &observer);
      if (!run) {
        errors = QString::fromStdString(format_diagnostics(run.errors()));
      } else {
        result = std::make_shared<scenarios::RunResult>(std::move(run).value());
        if (result->cost) {
          if (auto st = apply_cost_overrides(*result->cost, what_if); !st.empty())
            errors = QString::fromStdString(format_diagnostics(st));
        }
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool was_cancelled = flag->load();
    std::shared_ptr<const scenarios::RunResult> done = result;
    if (self)
      QMetaObject::invokeMethod(
          self,
          [self, done, errors, seconds, was_cancelled] {
            if (!self) return;
            if (was_cancelled) emit self->cancelled();
            else emit self->finished(done, errors, seconds);
          },
          Qt::QueuedConnection);
  });
  connect(thread_, &QThread::finished, this, [this] {
    thread_->deleteLater();
    thread_ = nullptr;
  });
  thread_->start();
  return true;
}

void SimulationRunner::cancel() {
  if (cancel_flag_) cancel_flag_->store(true);
}

bool SimulationRunner::wait(int timeout_ms) {
  QElapsedTimer timer;
  timer.start();
  while (thread_ != nullptr && timer.elapsed() < timeout_ms) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(5);
  }
  QCoreApplication::processEvents();  // deliver the queued result
  return thread_ == nullptr;
}

}  // namespace capsim::gui
