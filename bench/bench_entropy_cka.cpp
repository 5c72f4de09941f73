// Matrix entropy + full L x L minibatch CKA, streamed through core/analysis's LayerAnalyzer,
// vs a straightforward numpy implementation of the same formulas on the same data
// (bench/baseline_entropy_cka.py, /usr/bin/python3, run from here in the same invocation).
// Default: L = 37 states, D = 2560 (Qwen3-4B shape), prompts of 512 tokens, N = 16384 tokens;
// peak RSS is measured per N (4096 and 16384) in a child process each (getrusage ru_maxrss),
// to show memory is O(L D^2) and independent of N. Timed: add() of every prompt, finish()
// and snapshot(full) (the L eigensolves); data generation is excluded on both sides.
// Usage: bench_entropy_cka [--quick] [--states L] [--dim D] [--sizes 4096,16384]
//                          [--baseline-dtypes float64,float32] [--no-baseline] [--no-bound]
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/layer_analyzer.h"
#include "analysis_floor.h"
#include "bench_common.h"
#include "bench_data.h"

extern char** environ;
using namespace wl::bench;
using nlohmann::json;

namespace {

constexpr long long kCkaBatch = 256;   // tokens per CKA minibatch, here and in the numpy baseline

std::string runAndCapture(const std::vector<std::string>& argv) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    std::vector<char*> cargv;
    for (const auto& s : argv) cargv.push_back(const_cast<char*>(s.c_str()));
    cargv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ) != 0)
        throw std::runtime_error("cannot start " + argv[0]);
    close(fds[1]);
    std::string out;
    char buf[65536];
    ssize_t r;
    while ((r = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(r));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    posix_spawn_file_actions_destroy(&fa);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error(argv[0] + " failed");
    return out;
}

std::vector<long long> parseList(const std::string& s) {
    std::vector<long long> v;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) v.push_back(std::stoll(item));
    return v;
}

int child(const Args& args) {
    const int64_t L = args.getInt("--states", 37), D = args.getInt("--dim", 2560), N = args.getInt("--tokens", 16384),
                  T = args.getInt("--prompt-tokens", 512), seed = args.getInt("--seed", 1234);
    wl::AnalysisOptions o;
    o.filter.mode = wl::TokenFilterMode::None;
    o.filter.drop_bos = false;
    o.unfiltered_curve = false;   // filter none: the unfiltered curve would be the same numbers
    o.cka = wl::CkaEstimator::MinibatchUnbiased;
    o.cka_batch_tokens = args.getInt("--cka-batch", kCkaBatch);
    wl::LayerAnalyzer analyzer(o);
    double gen_s = 0, add_s = 0;
    for (int64_t p = 0; p < N / T; ++p) {
        auto t0 = Clock::now();
        wl::CapturedPrompt cp = syntheticPrompt(p, L, T, D, static_cast<uint64_t>(seed));
        gen_s += secondsSince(t0);
        t0 = Clock::now();
        analyzer.add(cp);
        add_s += secondsSince(t0);
    }
    const auto t1 = Clock::now();
    analyzer.finish();
    const wl::AnalysisSnapshot s = analyzer.snapshot(true);
    const double final_s = secondsSince(t1);
    json j = {{"seconds", add_s + final_s}, {"seconds_stream", add_s}, {"seconds_final", final_s},
              {"seconds_generate", gen_s}, {"entropy", s.entropy_filtered}, {"cka", s.cka},
              {"cka_batches", s.cka_batches}, {"tokens", s.tokens_kept}, {"peak_rss_kib", peakRssKiB()}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
}

// What the same formulas cost at best with this machine's BLAS/LAPACK (analysis_floor.h),
// so the speed-up over numpy reads against what is possible here, not only against a target.
void printBound(long long L, long long D, long long N, long long cka_batch, const json& wavelab,
                const std::vector<std::pair<std::string, double>>& baselines) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const AnalysisFloor f = measureAnalysisFloor(static_cast<int>(D), cores);
    const double stream = double(L) * N * (double(D) * D + double(cka_batch) * D) / (f.syrk_gflops * 1e9);
    const double final_phase = L * f.tridiagonal_seconds;
    const double bound = stream + final_phase;
    const double measured = wavelab["seconds"].get<double>();
    std::printf("# bound on %d cores with these libraries: f32 SYRK at its best %.0f GFLOP/s (k=%d) -> stream >= "
                "L N (D^2 + n D) / rate = %.1f s (WaveLab %.1f s);\n", cores, f.syrk_gflops, f.syrk_rows, stream,
                wavelab["seconds_stream"].get<double>());
    std::printf("#   f64 tridiagonal reduction (the first part of any eigensolve) of one %lld x %lld matrix %.2f s "
                "(%s) -> final >= %.1f s (WaveLab %.1f s); "
                "total >= %.1f s, WaveLab %.1f s = %.0f%% of the bound's speed\n", D, D, f.tridiagonal_seconds, f.tridiagonal_how,
                final_phase, wavelab["seconds_final"].get<double>(), bound, measured, 100.0 * bound / measured);
    for (const auto& [label, seconds] : baselines)
        std::printf("#   => no implementation of these formulas on these libraries beats %s (%.1f s) by more than "
                    "%.2fx here\n", label.c_str(), seconds, seconds / bound);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    Args args(argc, argv);
    if (args.flag("--child")) return child(args);
    const bool quick = args.flag("--quick");
    const long long L = args.getInt("--states", 37), D = args.getInt("--dim", quick ? 1024 : 2560);
    const long long T = args.getInt("--prompt-tokens", 512);
    const std::vector<long long> sizes = parseList(args.get("--sizes", quick ? "2048,8192" : "4096,16384"));
    const std::vector<std::string> dtypes = [&] {
        std::vector<std::string> v;
        std::stringstream in(args.get("--baseline-dtypes", "float64"));
        std::string item;
        while (std::getline(in, item, ',')) v.push_back(item);
        return v;
    }();
    printMachine("bench_entropy_cka");
    std::printf("# L=%lld states, D=%lld, prompts of %lld tokens, minibatch CKA n=%lld (unbiased HSIC), "
                "alpha=1, filter none\n", L, D, T, kCkaBatch);
    std::printf("%-10s %-22s %10s %10s %10s %12s %10s\n", "N", "implementation", "stream s", "final s", "total s",
                "peak RSS MiB", "speed-up");
    const std::string self = "/proc/self/exe";
    char exe[4096] = {0};
    if (readlink(self.c_str(), exe, sizeof exe - 1) <= 0) return 1;
    json largest;
    std::vector<std::pair<std::string, double>> baselines;   // numpy runs at the largest N
    for (long long N : sizes) {
        const std::string out = runAndCapture({exe, "--child", "--states", std::to_string(L), "--dim", std::to_string(D),
                                               "--tokens", std::to_string(N), "--prompt-tokens", std::to_string(T)});
        json w = json::parse(out);
        std::printf("%-10lld %-22s %10.2f %10.2f %10.2f %12.0f %10s\n", N, "WaveLab LayerAnalyzer",
                    w["seconds_stream"].get<double>(), w["seconds_final"].get<double>(), w["seconds"].get<double>(),
                    w["peak_rss_kib"].get<double>() / 1024.0, "");
        std::fflush(stdout);
        largest = w;
        if (N != sizes.back() || args.flag("--no-baseline")) continue;
        for (const auto& dt : dtypes) {
            const std::string bout = runAndCapture({"/usr/bin/python3", std::string(WAVELAB_BENCH_DIR) + "/baseline_entropy_cka.py",
                                                    "--states", std::to_string(L), "--dim", std::to_string(D), "--tokens",
                                                    std::to_string(N), "--prompt-tokens", std::to_string(T), "--dtype", dt});
            json b = json::parse(bout);
            const double speedup = b["seconds"].get<double>() / w["seconds"].get<double>();
            char label[64];
            std::snprintf(label, sizeof label, "numpy %s (%s)", b["numpy"].get<std::string>().c_str(), dt.c_str());
            baselines.push_back({label, b["seconds"].get<double>()});
            std::printf("%-10lld %-22s %10.2f %10.2f %10.2f %12.0f %9.2fx\n", N, label, b["seconds_stream"].get<double>(),
                        b["seconds_final"].get<double>(), b["seconds"].get<double>(),
                        b["peak_rss_kib"].get<double>() / 1024.0, speedup);
            double de = 0, dc = 0;
            const auto we = w["entropy"].get<std::vector<double>>(), be = b["entropy"].get<std::vector<double>>();
            const auto wc = w["cka"].get<std::vector<double>>(), bc = b["cka"].get<std::vector<double>>();
            for (size_t i = 0; i < we.size() && i < be.size(); ++i) de = std::max(de, std::abs(we[i] - be[i]));
            for (size_t i = 0; i < wc.size() && i < bc.size(); ++i) dc = std::max(dc, std::abs(wc[i] - bc[i]));
            std::printf("#   same results: max |entropy diff| %.2e nats (entropies %.3f..%.3f), max |CKA diff| %.2e\n", de,
                        *std::min_element(we.begin(), we.end()), *std::max_element(we.begin(), we.end()), dc);
            std::fflush(stdout);
        }
    }
    std::printf("# peak RSS should not grow with N: statistics are L D^2 doubles (%.0f MiB) + reservoir/minibatch "
                "buffers, independent of N.\n", L * D * (D + 1) / 2.0 * 8 / (1 << 20));
    if (!args.flag("--no-bound") && !largest.is_null()) printBound(L, D, sizes.back(), kCkaBatch, largest, baselines);
    return 0;
}
