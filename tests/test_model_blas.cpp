// Guards the set-up: Debian's libtorch links libblas.so.3, which is netlib's reference BLAS
// (~7 GFLOP/s on 2048^2) unless libopenblas0-pthread is installed (~200 GFLOP/s).
// Fails when torch.mm is that slow, i.e. when the set-up is broken.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>

TEST(Blas, TorchMatmulIsNotReferenceBlas) {
    at::set_num_threads(2);
    const int64_t n = 1024;
    auto a = torch::randn({n, n});
    auto b = torch::randn({n, n});
    auto c = torch::mm(a, b);  // warm-up
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        c = torch::mm(a, b);
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::min(best, s);
    }
    double gflops = 2.0 * n * n * n / best / 1e9;
    std::printf("torch.mm %lldx%lld f32: %.1f GFLOP/s\n", (long long)n, (long long)n, gflops);
    // Reference BLAS manages ~4-7 GFLOP/s; OpenBLAS > 100 on this machine. 25 leaves a wide
    // margin for a loaded CI machine while still catching the reference-BLAS setup.
    EXPECT_GT(gflops, 25.0) << "torch.mm is running on reference BLAS: install libopenblas0-pthread";
    // Correctness against a float64 reference, so a fast-but-wrong BLAS also fails.
    auto ref = torch::mm(a.to(torch::kFloat64), b.to(torch::kFloat64));
    EXPECT_LT((c.to(torch::kFloat64) - ref).abs().max().item<double>(), 1e-2);
}
