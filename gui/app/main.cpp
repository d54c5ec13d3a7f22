// capsim-gui: the desktop what-if planner.
//   capsim-gui [SCENARIO.yaml] [--catalog DIR] [--db PATH]
// Hidden, for documentation screenshots: --screenshot FILE.png [--tab NAME] [--size WxH]
// [--request-rate R] renders the real window once its charts are populated (R: the request
// rate what-if, set as the control sets it), saves it and exits. tools/screenshots/gui.sh.
#include <QApplication>
#include <QBuffer>
#include <QCommandLineParser>
#include <QDir>
#include <QTimer>
#include <cstdio>

#include "capsim/core/files.hpp"
#include "capsim/scenarios/workspace.hpp"
#include "capsim/version.hpp"
#include "main_window.hpp"
#include "catalog_browser.hpp"
#include "simulation_runner.hpp"
#include "whatif_panel.hpp"

#include <QDoubleSpinBox>

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("capsim-gui");
  QApplication::setOrganizationName("capsim");
  QApplication::setApplicationVersion(CAPSIM_VERSION);

  QCommandLineParser parser;
  parser.setApplicationDescription("capsim: what-if capacity planning for ML workloads");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument("scenario", "A scenario YAML file to open.", "[scenario.yaml]");
  QCommandLineOption catalog_opt("catalog", "Catalog YAML directory (default: $CAPSIM_CATALOG, the shipped catalog).", "dir");
  QCommandLineOption db_opt("db", "SQLite database (default: $CAPSIM_DB, the XDG data directory).", "path");
  QCommandLineOption shot_opt("screenshot", "Save the window to FILE once populated, then exit.", "file");
  QCommandLineOption tab_opt("tab", "The view shown for --screenshot (sizing, cost, serving, catalog, ...).", "name");
  QCommandLineOption size_opt("size", "The window size for --screenshot, WxH.", "size", "1560x960");
  QCommandLineOption filter_opt("catalog-filter", "Catalog view filter for --screenshot.", "filter");
  QCommandLineOption rate_opt("request-rate", "Request rate what-if for --screenshot, requests/s.", "rate");
  rate_opt.setFlags(QCommandLineOption::HiddenFromHelp);
  shot_opt.setFlags(QCommandLineOption::HiddenFromHelp);
  tab_opt.setFlags(QCommandLineOption::HiddenFromHelp);
  size_opt.setFlags(QCommandLineOption::HiddenFromHelp);
  filter_opt.setFlags(QCommandLineOption::HiddenFromHelp);
  parser.addOptions({catalog_opt, db_opt, shot_opt, tab_opt, size_opt, filter_opt, rate_opt});
  parser.process(app);

  capsim::scenarios::WorkspaceOptions options;
  options.catalog_dir = parser.value(catalog_opt).toStdString();
  options.db_path = parser.value(db_opt).toStdString();
  auto workspace = capsim::scenarios::open_workspace(options);
  if (!workspace) {
    std::fprintf(stderr, "%s\n", capsim::format_diagnostics(workspace.errors()).c_str());
    return 2;
  }
  capsim::gui::MainWindow window(std::move(workspace).value());
  const QStringList args = parser.positionalArguments();
  if (parser.isSet(shot_opt)) {
    const QStringList wh = parser.value(size_opt).split('x');
    if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
  }
  window.show();
  if (!args.isEmpty()) window.open_file(args.front(), !parser.isSet(shot_opt) || !parser.isSet(rate_opt));
  if (!parser.isSet(shot_opt)) return QApplication::exec();
  if (parser.isSet(rate_opt)) {
    bool ok = false;
    const double rate = parser.value(rate_opt).toDouble(&ok);
    if (!ok || !(rate > 0)) {
      std::fprintf(stderr, "capsim-gui: --request-rate: expected a number above 0, got '%s'\n", qPrintable(parser.value(rate_opt)));
      return 2;
    }
    window.what_if_panel()->rate_box()->setValue(rate);
  }

  const QString shot = parser.value(shot_opt);
  const QString tab = parser.value(tab_opt);
  const QString filter = parser.value(filter_opt);
  int status = 0;
  QTimer::singleShot(300, &window, [&] {
    window.runner()->wait(120000);
    if (!tab.isEmpty() && !window.show_tab(tab)) {
      std::fprintf(stderr, "capsim-gui: no view named '%s'\n", qPrintable(tab));
      status = 2;
    }
    if (!filter.isEmpty() &&
        !window.catalog_browser()->show_kind(capsim::hardware::EntityKind::gpu, filter, "memory_bandwidth", true))
      status = 2;
    QApplication::processEvents();
    QTimer::singleShot(500, &window, [&] {
      QApplication::processEvents();
      // Into memory, then through the one atomic writer: a full disk is reported and
      // leaves no truncated PNG.
      QByteArray bytes;
      QBuffer buffer(&bytes);
      buffer.open(QIODevice::WriteOnly);
      const bool rendered = window.grab().save(&buffer, "PNG");
      const auto written = rendered ? capsim::write_file_atomically(
                                          shot.toStdString(), std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())))
                                    : capsim::Status{};
      if (!rendered || !written.empty()) {
        std::fprintf(stderr, "capsim-gui: cannot write %s%s\n", qPrintable(shot),
                     written.empty() ? "" : (": " + written.front().message).c_str());
        status = 1;
      }
      QApplication::exit(status);
    });
  });
  return QApplication::exec();
}
