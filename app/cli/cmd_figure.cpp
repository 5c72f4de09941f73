// wavelab-cli figure --result result.json --out DIR [--dpi 300]
// The GUI's figure pack without a window: activation wave and CKA heatmap as PNG/SVG/PDF, the
// data as CSV/JSON, and README.txt captions. Built only with the GUI (it renders with the Qt
// widgets); runs on Qt's `offscreen` platform, so no display is needed.
#include <QApplication>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "command.h"
#include "figure_pack.h"
#include "report_adapter.h"
#include "selection/selection_report.h"
#include "analysis/analysis_options.h"
#include "util/error.h"

namespace wl::cli {

namespace {

int runFigure(const Args& args) {
    args.allowOnly({"result", "out", "dpi", "normalization"});
    const std::string result_path = args.get("result");
    const std::string out = args.get("out");
    const long long dpi = args.getInt("dpi", 300);
    if (dpi < 24 || dpi > 2400) throw Error("--dpi", "must be between 24 and 2400");
    const EntropyNormalization norm = parseEntropyNormalization(args.get("normalization", "logmin"), "--normalization");
    const SelectionReport report = loadSelectionReport(result_path);
    const FigureSet figures = figureSetFromReport(report, norm);

    // Charts are Qt widgets: they need a QApplication, not a display.
    if (!std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
    static int argc = 1;
    static char name[] = "wavelab-cli";
    static char* argv[] = {name, nullptr};
    QApplication app(argc, argv);

    FigurePackOptions options;
    options.dpi = static_cast<int>(dpi);
    const QStringList written = writeFigurePack(figures, QString::fromStdString(out), options);
    std::cout << "figure: " << written.size() << " files in " << out << "\n";
    for (const QString& f : written) std::cout << "  " << f.toStdString() << "\n";
    return 0;
}

Registrar reg{"figure", "--result result.json --out DIR [--dpi 300]: wave + CKA figures (PNG/SVG/PDF), CSV, captions",
              runFigure};

}  // namespace

}  // namespace wl::cli
