// Run history in the SQLite database: every `capsim run` stores the scenario as loaded, the
// catalog hash, the capsim version and the full JSON result, so a run can be reproduced
// and two runs compared (what CI needs to explain a failing expectation).
//
// Each write is one transaction; the database is in WAL mode, so concurrent `capsim run`
// processes append without losing runs (a writer waits for another's lock).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/hardware/store.hpp"
#include "capsim/scenarios/runner.hpp"

namespace capsim::scenarios {

struct RunRecord {
  long long id = 0;
  std::string started_at;
  std::string scenario;
  std::string status;
  std::string catalog_hash;
  std::string capsim_version;
  std::string scenario_text;  // the scenario YAML as it was run
  std::string results_json;   // run_json()
  std::string sweep;          // "SPEC | point" for runs of a sweep, "" otherwise
};

Result<long long> record_run(const hardware::Store& store, const RunResult& run, const std::string& sweep = {});
// Newest first; `scenario` empty for all.
Result<std::vector<RunRecord>> list_runs(const hardware::Store& store, int limit, const std::string& scenario = {});
Result<RunRecord> get_run(const hardware::Store& store, long long id);

// Runs of one sweep (its SPEC), newest first.
Result<std::vector<RunRecord>> list_sweep_runs(const hardware::Store& store, const std::string& spec);

// Copies every run of the shard database at `shard` into `store` in one transaction
// (sweep shards each write their own file); returns how many runs were copied.
Result<int> merge_runs(const hardware::Store& store, const std::filesystem::path& shard);

// What changed between two runs: scenario lines removed (-) and added (+), then every
// result value that differs, by JSON path.
std::string diff_runs(const RunRecord& a, const RunRecord& b);
// The same as JSON (schema capsim-history-diff/1): both runs' ids and provenance, the scenario
// lines removed and added, and each changed result value by JSON pointer with its old and new
// value (null when gone or new).
std::string diff_runs_json(const RunRecord& a, const RunRecord& b);

}  // namespace capsim::scenarios
