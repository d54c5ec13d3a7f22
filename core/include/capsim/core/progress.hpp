// The narrow interface long-running work (the sizing search, simulations) reports progress
// through. The CLI draws a bar on a terminal, the GUI a progress widget; both may cancel.
#pragma once

#include <string_view>

namespace capsim {

class ProgressObserver {
 public:
  virtual ~ProgressObserver() = default;
  // fraction in [0, 1]; `what` names the current phase ("search", "simulation").
  virtual void progress(double fraction, std::string_view what) = 0;
  // Polled between units of work; true stops the work, which then returns what it has.
  virtual bool cancelled() const { return false; }
};

}  // namespace capsim
