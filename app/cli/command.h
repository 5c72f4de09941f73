#pragma once
// wavelab-cli subcommands register themselves here, one file per command (cmd_<name>.cpp):
//   static wl::cli::Registrar reg{"info", "print a model's architecture", runInfo};
// Each command parses its own flags with Args and returns the process exit code.
// Errors: throw wl::Error; main prints one line "wavelab-cli: <source>: <problem>", exits 1.
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace wl::cli {

class Args {
public:
    Args(std::vector<std::string> argv);  // argv after the command name
    // "--name value" or "--name=value". Throws wl::Error("--name", ...) when missing.
    std::string get(const std::string& name) const;
    std::string get(const std::string& name, const std::string& fallback) const;
    long long getInt(const std::string& name, long long fallback) const;
    double getDouble(const std::string& name, double fallback) const;
    bool has(const std::string& name) const;   // flag present (with or without value)
    bool flag(const std::string& name) const { return has(name); }
    // Throws wl::Error for any --option not in `known` (catches typos).
    void allowOnly(const std::vector<std::string>& known) const;
    // The arguments as given (for commands that hand them to another process).
    const std::vector<std::string>& raw() const { return raw_; }

private:
    std::map<std::string, std::string> values_;
    std::vector<std::string> raw_;
};

using CommandFn = std::function<int(const Args&)>;

struct Command {
    std::string name;
    std::string help;   // one line; first word(s) may show usage
    CommandFn run;
};

std::map<std::string, Command>& registry();

struct Registrar {
    Registrar(const std::string& name, const std::string& help, CommandFn fn) {
        registry()[name] = Command{name, help, std::move(fn)};
    }
};

}  // namespace wl::cli
