// Writes a run's sizing report, the format chosen by the file's extension:
//   .html  one self-contained file, charts embedded as PNG images
//   .pdf   the same document through Qt's PDF writer
//   .md    Markdown (tables, no charts)
//   .csv   one file per table: FILE's stem + "-NAME.csv" (scenarios::write_csv_report)
//   .json  the run result (docs/run-result.md)
// Charts are the Qt Charts the desktop app shows, drawn headless. The file is written to a
// temporary name and renamed, so an interrupted run leaves the previous report intact.
// Not thread-safe (Qt): call from one thread.
#pragma once

#include <filesystem>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/scenarios/cluster.hpp"
#include "capsim/scenarios/runner.hpp"

namespace capsim::render {

Status write_report(const scenarios::RunResult& run, const hardware::Catalog& catalog,
                    const std::filesystem::path& file);
// A cluster plan's report (capsim plan --report), the same formats; .json is the plan's JSON.
Status write_cluster_report(const scenarios::ClusterPlan& plan, const std::filesystem::path& file);

}  // namespace capsim::render
