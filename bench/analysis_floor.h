#pragma once
// The fastest this machine's BLAS/LAPACK does the two kernels the streamed entropy is made
// of, measured on their own: float32 SYRK (the D x D moments, L N D^2 flops) and a
// float64 reduction of a D x D matrix to tridiagonal form, the data-independent first part of
// every LAPACK eigenvalue solve (one per state at the end). With these, any
// implementation of the same formulas on the same libraries needs at least
//   L N (D^2 + n D) / syrk_rate  +  L x tridiagonal_seconds
// (D^2: the moments; n D: the minibatch CKA's n x n token Grams, n tokens per batch),
// which bench_entropy_cka prints as a bound next to the measured speed-up.
// Each kernel is run both ways WaveLab could run it on P cores: P independent single-
// threaded calls at once (one state per core) and one call with P BLAS threads; the best
// of three tries of the better way counts.
#include <algorithm>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "analysis/blas_lapack.h"
#include "bench_common.h"

extern "C" {
void dsytrd_(const char* uplo, const int* n, double* a, const int* lda, double* d, double* e, double* tau,
             double* work, const int* lwork, int* info);
void dsytrd_2stage_(const char* vect, const char* uplo, const int* n, double* a, const int* lda, double* d,
                    double* e, double* tau, double* hous2, const int* lhous2, double* work, const int* lwork,
                    int* info);
}

namespace wl::bench {

struct AnalysisFloor {
    int cores = 1;
    double syrk_gflops = 0;           // k D^2 flops per call (the lower triangle), all cores
    int syrk_rows = 0;                // k of the measured calls
    double tridiagonal_seconds = 0;   // per D x D matrix, all cores busy
    const char* tridiagonal_how = "";
};

namespace floor_detail {

// Runs f(worker) on `workers` threads at once and returns the wall time.
template <typename F>
double concurrently(int workers, F f) {
    const auto t0 = Clock::now();
    std::vector<std::thread> pool;
    for (int w = 0; w < workers; ++w) pool.emplace_back([&f, w] { f(w); });
    for (auto& t : pool) t.join();
    return secondsSince(t0);
}

// The reduction to tridiagonal form alone: every LAPACK eigenvalue driver does it first and
// its cost depends only on n, while the QR iterations after it depend on the spectrum. Timing
// the reduction keeps the bound below any real eigensolve.
inline void reduceToTridiagonal(std::vector<double> a, int n, bool two_stage) {
    std::vector<double> diag(n), off(n), tau(n);
    int info = 0, lwork = -1;
    double wq = 0;
    if (!two_stage) {
        dsytrd_("L", &n, a.data(), &n, diag.data(), off.data(), tau.data(), &wq, &lwork, &info);
        std::vector<double> work(static_cast<size_t>(wq));
        lwork = static_cast<int>(wq);
        dsytrd_("L", &n, a.data(), &n, diag.data(), off.data(), tau.data(), work.data(), &lwork, &info);
        return;
    }
    int lhous = -1;
    double hq = 0;
    dsytrd_2stage_("N", "L", &n, a.data(), &n, diag.data(), off.data(), tau.data(), &hq, &lhous, &wq, &lwork, &info);
    lhous = static_cast<int>(hq);
    lwork = static_cast<int>(wq);
    std::vector<double> hous(static_cast<size_t>(lhous)), work(static_cast<size_t>(lwork));
    dsytrd_2stage_("N", "L", &n, a.data(), &n, diag.data(), off.data(), tau.data(), hous.data(), &lhous, work.data(),
                   &lwork, &info);
}

}  // namespace floor_detail

inline AnalysisFloor measureAnalysisFloor(int d, int cores) {
    using namespace floor_detail;
    AnalysisFloor f;
    f.cores = std::max(1, cores);
    f.syrk_rows = 2048;  // large enough for SYRK's best rate (measured flat from k = 768 up)
    const int k = f.syrk_rows;
    std::mt19937 rng(7);
    std::normal_distribution<float> normal;
    std::vector<float> rows(static_cast<size_t>(k) * d);
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = normal(rng) / std::sqrt(1.0f + float(i % d) / 32.0f);
    const double flops = double(k) * d * d;
    const float one = 1, zero = 0;
    const int tries = 3;   // a bound takes the best try: noise on a shared VM only slows a kernel down

    // SYRK, one call per core at once, single-threaded BLAS.
    blas::setThreads(1);
    std::vector<std::vector<float>> out(f.cores, std::vector<float>(static_cast<size_t>(d) * d));
    auto syrk = [&](int w) { ssyrk_("L", "N", &d, &k, &one, rows.data(), &d, &zero, out[w].data(), &d); };
    concurrently(f.cores, syrk);  // warm-up: page in the outputs
    double best_split = 1e300, best_threaded = 1e300;
    for (int t = 0; t < tries; ++t) best_split = std::min(best_split, concurrently(f.cores, syrk));
    // SYRK, one call with all cores in BLAS.
    blas::setThreads(f.cores);
    syrk(0);
    for (int t = 0; t < tries; ++t) {
        const auto t0 = Clock::now();
        syrk(0);
        best_threaded = std::min(best_threaded, secondsSince(t0));
    }
    f.syrk_gflops = std::max(flops * f.cores / best_split, flops / best_threaded) / 1e9;

    // Tridiagonal reduction of a covariance-like matrix (the SYRK result above, in float64).
    std::vector<double> a(out[0].begin(), out[0].end());
    struct Way {
        const char* name;
        bool two_stage;
        bool split;
    };
    const Way ways[] = {{"dsytrd, one matrix per core", false, true},
                        {"dsytrd_2stage, one matrix per core", true, true},
                        {"dsytrd, all cores in BLAS", false, false},
                        {"dsytrd_2stage, all cores in BLAS", true, false}};
    f.tridiagonal_seconds = 1e300;
    for (const Way& way : ways) {
        blas::setThreads(way.split ? 1 : f.cores);
        for (int t = 0; t < tries; ++t) {
            double per_matrix;
            if (way.split) {
                per_matrix = concurrently(f.cores, [&](int) { reduceToTridiagonal(a, d, way.two_stage); }) / f.cores;
            } else {
                const auto t0 = Clock::now();
                reduceToTridiagonal(a, d, way.two_stage);
                per_matrix = secondsSince(t0);
            }
            if (per_matrix < f.tridiagonal_seconds) {
                f.tridiagonal_seconds = per_matrix;
                f.tridiagonal_how = way.name;
            }
        }
    }
    blas::setThreads(f.cores);
    return f;
}

}  // namespace wl::bench
