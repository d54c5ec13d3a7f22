// Reading SkyPilot's public catalog files (https://github.com/skypilot-org/skypilot-catalog,
// catalogs/vN/<cloud>/vms.csv, refreshed every few hours) into a catalog overlay: one instance
// entry per instance type and region, with its GPU, GPU count, vCPUs, memory, on-demand and
// spot price, each sourced to the file and its commit (or date).
//
// Columns are read by name from each file's header (the clouds order them differently):
// InstanceType, AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, Price, SpotPrice, Region
// are used; AvailabilityZone (AWS, RunPod: one row per zone) and GpuInfo are optional.
// Rows without an accelerator (CPU machines) are skipped; rows whose GPU the catalog does not
// know, or whose GPU count is not a whole number, are refused and listed. An instance type
// the catalog already has (same provider, name and region) gets an overlay entry that
// changes only its prices.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"

namespace capsim::hardware {

struct SkyPilotOptions {
  // The skypilot-catalog git commit the files come from, named in every figure's source.
  std::string commit;
  // The date the prices are as of (YYYY-MM-DD or YYYY-MM). Empty: each file's modification
  // date (UTC), which the source then says.
  std::string as_of;
  // Only rows of these regions; empty: every region.
  std::vector<std::string> regions;
};

// A row the import refused, with why.
struct SkyPilotRefusal {
  SourceLocation where;       // file and line of the CSV row
  std::string instance_type;  // "gpu_1x_gh200"
  std::string accelerator;    // "GH200"
  std::string why;            // "the catalog has no GPU for 'GH200'"
};

struct SkyPilotImport {
  std::string overlay_yaml;   // the catalog overlay (instances: ...)
  int rows = 0;               // data rows read
  int cpu_rows = 0;           // rows without an accelerator, skipped
  int new_instances = 0;      // entries with a new id
  int updated_instances = 0;  // entries changing the prices of a catalog instance
  std::vector<std::string> clouds;  // the cloud folders read
  std::vector<SkyPilotRefusal> refused;
};

// The catalog GPU id for SkyPilot's accelerator name (with the instance type and GpuInfo
// text to tell a PCIe card from an SXM module); "" when there is no rule for it. The id may
// still be missing from a given catalog.
std::string skypilot_gpu_id(std::string_view accelerator, std::string_view instance_type, std::string_view gpu_info);

// Reads DIR/<cloud>/vms.csv for every cloud folder in DIR (or DIR/vms.csv, the cloud being
// DIR's name). Errors (file:line:column): no vms.csv, a header without a required column
// (with "did you mean"), a price or count that is not a number.
Result<SkyPilotImport> import_skypilot(const std::filesystem::path& dir, const Catalog& catalog,
                                       const SkyPilotOptions& options = {});

}  // namespace capsim::hardware
