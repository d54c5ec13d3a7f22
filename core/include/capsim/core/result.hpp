// Result<T>: either a value or the list of diagnostics that explain why there is none.
//
// Loaders and planners return Result instead of throwing or exiting, so that every
// problem in a user's file is reported at once (all diagnostics, not the first one).
// A Result is a plain value type: copyable, movable, not thread-safe to mutate.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace capsim {

// Where a diagnostic points. line and column are 1-based; 0 means "unknown".
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

// Whose problem a diagnostic is: the user's input (exit code 2), or the environment
// capsim runs in (a full disk, a corrupt or unreadable database, a bad TMPDIR; exit code 3).
enum class Cause { input, environment };

// One problem found in the input. key_path is dotted with [index] for sequences,
// e.g. "gpus[3].memory_bandwidth". hint is optional ("did you mean 'memory'?").
struct Diagnostic {
  SourceLocation where;
  std::string key_path;
  std::string message;
  std::string hint;
  Cause cause = Cause::input;
};

// The same diagnostic marked as an environment failure.
inline Diagnostic environment_failure(Diagnostic d) {
  d.cause = Cause::environment;
  return d;
}

// "file:line:column" (line and column when known; empty without a file), as diagnostics
// and reports point at a place in a file.
std::string format_location(const SourceLocation& where);

// "file:line:column: error: key.path: message (hint)" — the single format users see.
std::string format_diagnostic(const Diagnostic& d);
std::string format_diagnostics(const std::vector<Diagnostic>& ds);

template <class T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Diagnostic d) : state_(std::vector<Diagnostic>{std::move(d)}) {}  // NOLINT
  Result(std::vector<Diagnostic> ds) : state_(std::move(ds)) {}            // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // Precondition: ok().
  const T& value() const& { return std::get<0>(state_); }
  T& value() & { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  const T* operator->() const { return &value(); }
  const T& operator*() const& { return value(); }

  // The diagnostics; empty when ok().
  const std::vector<Diagnostic>& errors() const {
    static const std::vector<Diagnostic> none;
    return ok() ? none : std::get<1>(state_);
  }

 private:
  std::variant<T, std::vector<Diagnostic>> state_;
};

// Result of an operation with no value: empty diagnostics means success.
using Status = std::vector<Diagnostic>;

}  // namespace capsim
