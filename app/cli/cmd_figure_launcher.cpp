// wavelab-cli figure: hands its arguments to the sibling `wavelab-figure` executable, which
// renders with the Qt widgets. Figures run in their own process so wavelab-cli never loads
// Qt/VTK next to libtorch: seen here, a CLI linking both intermittently crashed or hung inside
// at::set_num_threads (libgomp "Out of memory allocating <garbage> bytes").
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "command.h"
#include "util/error.h"

namespace wl::cli {

namespace {

std::string findFigureTool() {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) throw Error("/proc/self/exe", "cannot locate wavelab-cli: " + ec.message());
    for (const auto& candidate : {self.parent_path() / "wavelab-figure", self.parent_path() / "gui" / "wavelab-figure"})
        if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    throw Error((self.parent_path() / "wavelab-figure").string(),
                "not found: `figure` needs the GUI build (configure with -DWAVELAB_BUILD_GUI=ON)");
}

int runFigure(const Args& args) {
    const std::string tool = findFigureTool();
    std::vector<std::string> argv_strings{tool, "figure"};
    argv_strings.insert(argv_strings.end(), args.raw().begin(), args.raw().end());
    std::vector<char*> argv;
    for (auto& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(tool.c_str(), argv.data());
    throw Error(tool, std::string("cannot run: ") + std::strerror(errno));
}

Registrar reg{"figure", "--result result.json --out DIR [--dpi 300]: wave + CKA figures (PNG/SVG/PDF), CSV, captions",
              runFigure};

}  // namespace
}  // namespace wl::cli
