#pragma once
// Runs wavelab-cli (WAVELAB_CLI_PATH) through the shell for the CLI tests. stderr goes to a
// file of its own (mkstemp: tests of one executable run as parallel processes under ctest -j,
// so a per-process counter would collide), or is merged into `out`.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace wl::test {

struct CliResult {
    int code = -1;       // exit status; -1 when it did not exit normally
    std::string out;     // stdout (and stderr when merged)
    std::string err;     // stderr when not merged
};

enum class Stderr { Merged, Separate };

// `env` ("VAR=value ...") is prefixed to the command line.
inline CliResult runCli(const std::string& args, Stderr stderr_mode = Stderr::Merged, const std::string& env = "") {
    std::string err_path;
    if (stderr_mode == Stderr::Separate) {
        std::string pattern = std::string(WAVELAB_TEST_WORK_DIR) + "/cli_stderr_XXXXXX";
        const int fd = mkstemp(pattern.data());
        if (fd < 0) return {};
        close(fd);
        err_path = pattern;
    }
    const std::string redirect = err_path.empty() ? " 2>&1" : " 2>" + err_path;
    const std::string cmd = (env.empty() ? "" : env + " ") + std::string(WAVELAB_CLI_PATH) + " " + args + redirect;
    CliResult r;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe) {
        std::array<char, 4096> buf{};
        size_t n;
        while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
        const int status = pclose(pipe);
        r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    if (!err_path.empty()) {
        std::ifstream f(err_path);
        std::stringstream s;
        s << f.rdbuf();
        r.err = s.str();
        std::remove(err_path.c_str());
    }
    return r;
}

}  // namespace wl::test
