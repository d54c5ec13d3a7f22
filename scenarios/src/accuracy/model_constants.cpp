// docs/model-constants.md from the registry of the models' constants (model_constants.hpp).
#include "capsim/scenarios/model_constants.hpp"

#include <fmt/format.h>

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <sstream>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "capsim/models/constants.hpp"
#include "capsim/scenarios/accuracy.hpp"

namespace capsim::scenarios {
namespace {

Result<AccuracySummary> overall(const hardware::Catalog& catalog, const std::filesystem::path& dir) {
  auto report = run_accuracy(catalog, dir);
  if (!report) return report.errors();
  return report->overall;
}

// A Markdown table cell: no pipe, no line break.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) out += c == '|' ? '/' : c == '\n' ? ' ' : c;
  return out;
}

std::string fit_rows_cell(std::string_view rows) {
  std::string out;
  std::size_t start = 0;
  while (start < rows.size()) {
    std::size_t end = rows.find(' ', start);
    if (end == std::string_view::npos) end = rows.size();
    if (end > start) out += (out.empty() ? "`" : ", `") + std::string(rows.substr(start, end - start)) + "`";
    start = end + 1;
  }
  return out;
}

}  // namespace

Result<ConstantSensitivities> constant_sensitivities(const hardware::Catalog& catalog,
                                                     const std::filesystem::path& validation_dir,
                                                     void (*progress)(const std::string& name), unsigned jobs) {
  // A constant that only some kinds of rows read (ModelConstant::kinds) is moved over a
  // directory of those kinds' files only: the other rows' errors cannot change, so the
  // corpus's dev mean moves by the change of those rows' |error| sum over all dev rows.
  std::map<std::string, std::vector<std::filesystem::path>> files_of_kind;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(validation_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto& path = it->path();
    if (path.extension() != ".yaml" || path.filename() == kFirstLooksFile) continue;
    std::string kind;
    try {
      const YAML::Node doc = YAML::LoadFile(path.string());
      if (doc.IsMap() && doc["kind"]) kind = doc["kind"].as<std::string>();
      else if (path.filename() == "megatron_sc21_table1.yaml") kind = "training";
    } catch (const YAML::Exception&) {
      kind = "unreadable";  // run_accuracy reports it with its line
    }
    if (!kind.empty()) files_of_kind[kind].push_back(path);
  }
  if (ec) return Diagnostic{{validation_dir.string(), 0, 0}, "", "cannot read the validation directory: " + ec.message(), {}};

  const auto scratch = std::filesystem::temp_directory_path() /
                       fmt::format("capsim-sensitivity-{}-{}", static_cast<long>(::getpid()),
                                   reinterpret_cast<std::uintptr_t>(&files_of_kind));
  std::map<std::string, std::filesystem::path> dir_of;  // kinds -> the directory predicted for them
  dir_of["all"] = validation_dir;
  for (const auto& c : models::model_constants()) {
    const std::string kinds(c.kinds);
    if (dir_of.count(kinds)) continue;
    const auto dir = scratch / std::to_string(dir_of.size());
    std::filesystem::create_directories(dir);
    if (std::filesystem::exists(validation_dir / kFirstLooksFile))
      std::filesystem::create_symlink(std::filesystem::absolute(validation_dir / kFirstLooksFile), dir / kFirstLooksFile);
    std::istringstream names(kinds);
    for (std::string kind; names >> kind;)
      for (const auto& f : files_of_kind[kind]) std::filesystem::create_symlink(std::filesystem::absolute(f), dir / f.filename());
    dir_of[kinds] = dir;
  }

  // Tasks: one baseline per directory, then two per constant, spread over threads: a constant
  // scaled on one thread is not scaled on the others (constants.hpp), and run_accuracy is a
  // pure function of its inputs.
  struct Task {
    std::string kinds;
    const models::ModelConstant* constant = nullptr;  // null: the baseline
    double factor = 1.0;
    AccuracySummary result;
    std::vector<Diagnostic> errors;
  };
  std::vector<Task> tasks;
  for (const auto& [kinds, dir] : dir_of) tasks.push_back({kinds, nullptr, 1.0, {}, {}});
  for (const auto& c : models::model_constants())
    for (const double factor : {0.9, 1.1}) tasks.push_back({std::string(c.kinds), &c, factor, {}, {}});
  std::atomic<std::size_t> next{0};
  std::mutex progress_mutex;
  auto work = [&] {
    for (std::size_t t; (t = next.fetch_add(1)) < tasks.size();) {
      Task& task = tasks[t];
      std::optional<models::ScopedConstantScale> scaled;
      if (task.constant) {
        scaled.emplace(task.constant->id, task.factor);
        if (progress && task.factor < 1) {
          const std::lock_guard lock(progress_mutex);
          progress(std::string(task.constant->name));
        }
      }
      auto r = overall(catalog, dir_of.at(task.kinds));
      if (r) task.result = *r;
      else task.errors = r.errors();
    }
  };
  const std::size_t threads = jobs > 0 ? jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (std::size_t i = 0; i < threads; ++i) pool.emplace_back(work);
  for (auto& th : pool) th.join();
  std::filesystem::remove_all(scratch, ec);
  for (const auto& task : tasks)
    if (!task.errors.empty()) return task.errors;

  // The corpus's dev mean with the moved kinds' rows replaced: (sum of |error| outside them +
  // their moved sum) / (dev rows outside them + their dev rows now).
  std::map<std::string, const AccuracySummary*> baseline;
  for (const auto& task : tasks)
    if (!task.constant) baseline[task.kinds] = &task.result;
  const AccuracySummary& all = *baseline.at("all");
  ConstantSensitivities s;
  s.dev_rows = all.dev;
  s.baseline_dev_mean = all.dev_mean_abs;
  const double all_sum = all.dev_mean_abs * all.dev;
  for (const auto& task : tasks) {
    if (!task.constant) continue;
    const AccuracySummary& base = *baseline.at(task.kinds);
    const double sum = all_sum - base.dev_mean_abs * base.dev + task.result.dev_mean_abs * task.result.dev;
    const int rows = all.dev - base.dev + task.result.dev;
    auto& one = s.by_name[std::string(task.constant->name)];
    (task.factor < 1 ? one.minus10 : one.plus10) = rows > 0 ? sum / rows - s.baseline_dev_mean : 0.0;
  }
  return s;
}

std::string model_constants_markdown(const ConstantSensitivities& s) {
  std::string md =
      "# The models' empirical constants\n\n"
      "Generated from the registry in `models/src/constants.cpp` by `capsim accuracy --constants > "
      "docs/model-constants.md`; do not edit by hand (a test regenerates the table and compares).\n\n"
      "Every number the performance, memory and serving models take from a fit, a measurement or a publication "
      "rather than from the workload, the catalog or arithmetic. **Basis**: `fit` = chosen on the validation rows "
      "named (each marked `fit: true`); `measurement` / `publication` = taken from the source named, no validation "
      "row used; `undeclared` = an assumption with no fit rows and no measurement.\n\n";
  md += fmt::format(
      "**Sensitivity**: the change of the dev mean |error| over the validation corpus ({} dev rows: neither fit nor "
      "first-look; {:.2f} % at the values below) when that constant alone is moved -10 % and +10 %, in percentage "
      "points (a constant that only some kinds of rows read is moved over those rows; the others cannot change). "
      "It says how much the corpus constrains a constant, not that a value is right: no constant was tuned "
      "on it.\n\n",
      s.dev_rows, s.baseline_dev_mean);
  md += "| constant | value | unit | basis | rows / source | sensitivity -10 % / +10 % (pp) | read by |\n";
  md += "|---|---:|---|---|---|---|---|\n";
  for (const auto& c : models::model_constants()) {
    const auto found = s.by_name.find(std::string(c.name));
    const std::string sensitivity = found == s.by_name.end()
                                        ? "not computed"
                                        : fmt::format("{:+.2f} / {:+.2f}", found->second.minus10, found->second.plus10);
    std::string source = std::string(c.basis_text);
    if (c.basis == models::ConstantBasis::fit) source = "rows " + fit_rows_cell(c.fit_rows) + ": " + source;
    const std::string read_by = c.kinds == "all" ? std::string(c.used_by)
                                                 : fmt::format("{} (rows: {})", c.used_by, c.kinds);
    md += fmt::format("| `{}` | {:g} | {} | {} | {} | {} | {} |\n", c.name, c.value, cell(c.unit),
                      models::constant_basis_name(c.basis), cell(source), sensitivity, cell(read_by));
  }
  return md;
}

}  // namespace capsim::scenarios
