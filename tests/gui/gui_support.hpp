// A QApplication for the GUI tests, on the offscreen platform unless one was chosen, with
// settings kept away from the user's (QStandardPaths test mode).
#pragma once

#include <QApplication>
#include <QStandardPaths>

#include "capsim/scenarios/workspace.hpp"
#include "support/test_support.hpp"

namespace capsim::testing {

// The tests' QApplication, made by gui_application().
inline QApplication*& test_application() {
  static QApplication* app = nullptr;
  return app;
}

inline void gui_application() {
  if (QCoreApplication::instance() != nullptr) return;
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QStandardPaths::setTestModeEnabled(true);
  static int argc = 1;
  static char name[] = "capsim_gui_tests";
  static char* argv[] = {name, nullptr};
  // Deleted by the listener in window_test.cpp when the run ends, before static destruction:
  // as a function-local static it went after Qt's own statics, and deleting QTest's input
  // devices then crashed (~QInputDevice at exit).
  test_application() = new QApplication(argc, argv);
  QApplication::setOrganizationName("capsim-tests");
  QApplication::setApplicationName("capsim-gui-tests");
}

inline scenarios::Workspace test_workspace() {
  scenarios::WorkspaceOptions options;
  options.catalog_dir = CAPSIM_TEST_DATA_DIR "/catalog";
  options.db_path = scratch_dir("gui") / "capsim.db";
  auto ws = scenarios::open_workspace(options);
  REQUIRE_MESSAGE(ws.ok(), format_diagnostics(ws.errors()));
  return std::move(ws).value();
}

}  // namespace capsim::testing
