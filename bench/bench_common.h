#pragma once
// Small helpers shared by the benchmarks: timing, argument parsing, machine description.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace wl::bench {

using Clock = std::chrono::steady_clock;
inline double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// --name value / --flag parsing over argv.
struct Args {
    std::vector<std::string> a;
    Args(int argc, char** argv) : a(argv + 1, argv + argc) {}
    bool flag(const std::string& name) const {
        for (const auto& s : a)
            if (s == name) return true;
        return false;
    }
    std::string get(const std::string& name, const std::string& fallback) const {
        for (size_t i = 0; i + 1 < a.size(); ++i)
            if (a[i] == name) return a[i + 1];
        return fallback;
    }
    long long getInt(const std::string& name, long long fallback) const {
        const std::string v = get(name, "");
        return v.empty() ? fallback : std::atoll(v.c_str());
    }
};

inline std::string cpuModel() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown";
}

inline double loadAverage1() {
    double l[3] = {0, 0, 0};
    return getloadavg(l, 3) > 0 ? l[0] : -1;
}

inline void printMachine(const char* bench) {
    std::printf("# %s on %s, %u hardware threads, 1-min load average %.1f\n", bench, cpuModel().c_str(),
                std::thread::hardware_concurrency(), loadAverage1());
}

inline long peakRssKiB() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

}  // namespace wl::bench
