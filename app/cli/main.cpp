// wavelab-cli: the headless WaveLab pipeline. Commands live in cmd_*.cpp files.
#include <cstdio>
#include <exception>
#include <iostream>

#include "command.h"
#include "util/error.h"

namespace wl::cli {

std::map<std::string, Command>& registry() {
    static std::map<std::string, Command> commands;
    return commands;
}

Args::Args(std::vector<std::string> argv) : raw_(argv) {
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a.rfind("--", 0) != 0) throw Error(a, "unexpected argument (options look like --name value)");
        auto eq = a.find('=');
        if (eq != std::string::npos) {
            values_[a.substr(2, eq - 2)] = a.substr(eq + 1);
        } else if (i + 1 < argv.size() && argv[i + 1].rfind("--", 0) != 0) {
            values_[a.substr(2)] = argv[++i];
        } else {
            values_[a.substr(2)] = "";
        }
    }
}

std::string Args::get(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end() || it->second.empty()) throw Error("--" + name, "is required");
    return it->second;
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() || it->second.empty() ? fallback : it->second;
}

long long Args::getInt(const std::string& name, long long fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    try {
        size_t used = 0;
        long long v = std::stoll(it->second, &used);
        if (used != it->second.size()) throw std::invalid_argument("trailing");
        return v;
    } catch (const std::exception&) {
        throw Error("--" + name, "expected an integer, got '" + it->second + "'");
    }
}

double Args::getDouble(const std::string& name, double fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    try {
        size_t used = 0;
        double v = std::stod(it->second, &used);
        if (used != it->second.size()) throw std::invalid_argument("trailing");
        return v;
    } catch (const std::exception&) {
        throw Error("--" + name, "expected a number, got '" + it->second + "'");
    }
}

bool Args::has(const std::string& name) const { return values_.count(name) > 0; }

void Args::allowOnly(const std::vector<std::string>& known) const {
    for (const auto& [k, v] : values_) {
        bool ok = false;
        for (const auto& n : known) ok = ok || n == k;
        if (!ok) throw Error("--" + k, "unknown option");
    }
}

}  // namespace wl::cli

namespace {
void printUsage() {
    std::cout << "usage: wavelab-cli <command> [--option value ...]\n\ncommands:\n";
    for (const auto& [name, cmd] : wl::cli::registry())
        std::cout << "  " << name << std::string(name.size() < 10 ? 10 - name.size() : 1, ' ') << cmd.help << "\n";
}
}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "help") {
        printUsage();
        return argc < 2 ? 2 : 0;
    }
    const std::string name = argv[1];
    auto& commands = wl::cli::registry();
    auto it = commands.find(name);
    if (it == commands.end()) {
        std::cerr << "wavelab-cli: " << name << ": unknown command (see wavelab-cli --help)\n";
        return 2;
    }
    try {
        wl::cli::Args args(std::vector<std::string>(argv + 2, argv + argc));
        return it->second.run(args);
    } catch (const wl::Cancelled&) {
        std::cerr << "wavelab-cli: cancelled\n";
        return 130;
    } catch (const wl::Error& e) {
        std::cerr << "wavelab-cli: " << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "wavelab-cli: " << name << ": " << e.what() << "\n";
        return 1;
    }
}
