// capsim: capacity planning and cluster sizing for ML workloads.
#include <CLI/CLI.hpp>

#include "accuracy_command.hpp"
#include "catalog_command.hpp"
#include "output.hpp"
#include "plan_commands.hpp"
#include "run_commands.hpp"
#include "sweep.hpp"
#include "scenario_commands.hpp"
#include "capsim/version.hpp"

int main(int argc, char** argv) {
  using namespace capsim::cli;
  CLI::App app{"capsim: capacity planning and cluster sizing for ML workloads", "capsim"};
  app.set_version_flag("--version,-V", "capsim " CAPSIM_VERSION);
  app.require_subcommand(1);
  GlobalOptions global;
  app.add_option("--db", global.db_path, "SQLite database (default: $CAPSIM_DB or the XDG data directory)")
      ->option_text("PATH");
  app.add_option("--catalog", global.catalog_dir,
                 "Catalog YAML directory (default: $CAPSIM_CATALOG or the shipped data/catalog)")
      ->option_text("DIR");
  app.fallthrough();

  int exit_code = kExitOk;
  add_catalog_command(app, global, exit_code);
  add_scenario_commands(app, global, exit_code);
  add_plan_commands(app, global, exit_code);
  add_run_commands(app, global, exit_code);
  add_sweep_command(app, global, exit_code);
  add_accuracy_command(app, global, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadInput;
  }
  return exit_code;
}
