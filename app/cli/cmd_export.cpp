// wavelab-cli export: a selection result (select --out) in a framework's config convention,
// or CSV tables of the analysis.
#include <iostream>

#include "command.h"
#include "export/framework_export.h"
#include "selection/selection_report.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace wl::cli {
namespace {

int runExport(const Args& args) {
    args.allowOnly({"result", "format", "out", "csv"});
    const std::string result_path = args.get("result");
    if (!args.has("format") && !args.has("csv"))
        throw Error("--format", "is required (vllm, sglang, specforge, trtllm, modelopt, csv-curve, csv-cka) "
                                "unless --csv DIR is given");
    const SelectionReport report = loadSelectionReport(result_path);
    if (args.has("csv")) {
        const std::string dir = args.get("csv");
        makeDirectories(dir);
        writeFileAtomic(dir + "/entropy_curve.csv", exportSelection(report, ExportFormat::CsvCurve).text);
        writeFileAtomic(dir + "/cka.csv", exportSelection(report, ExportFormat::CsvCka).text);
        std::cerr << "wrote " << dir << "/entropy_curve.csv and " << dir << "/cka.csv\n";
    }
    if (!args.has("format")) return 0;
    const ExportFormat format = parseExportFormat(args.get("format"), "--format");
    const ExportOutput out = exportSelection(report, format);
    for (const auto& w : out.warnings) std::cerr << "wavelab-cli: warning: " << w << "\n";
    if (args.has("out")) {
        writeFileAtomic(args.get("out"), out.text);
        std::cerr << "wrote " << args.get("out") << " (" << toString(format) << ")\n";
    } else {
        std::cout << out.text;
    }
    return 0;
}

Registrar reg{"export",
              "--result R.json --format vllm|sglang|specforge|trtllm|modelopt|csv-curve|csv-cka [--out F] [--csv DIR]: "
              "write the chosen layers in a framework's convention",
              runExport};

}  // namespace
}  // namespace wl::cli
