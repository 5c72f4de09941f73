// analysis: matrix entropy, CKA/HSIC, the streaming analyzer, set entropies, JSON.
// References: brute-force float64 formulas written here (Eigen's own eigensolver, token-side
// Gram), numpy-generated data with published CKA values, and closed forms.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <atomic>

#include "analysis/analysis_json.h"
#include "analysis/layer_analyzer.h"
#include "analysis/matrix_entropy.h"
#include "util/error.h"

namespace fs = std::filesystem;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace {

std::vector<float> randomMatrix(int64_t n, int64_t d, uint64_t seed, double scale = 1.0) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> g(0.0f, static_cast<float>(scale));
    std::vector<float> v(static_cast<size_t>(n * d));
    for (auto& x : v) x = g(rng);
    return v;
}

// Brute force: row-normalise, centre, TOKEN Gram (n x n), Eigen eigensolver, Renyi formula.
double bruteEntropy(const std::vector<float>& z, int64_t n, int64_t d, double alpha, wl::EntropyNormalization norm) {
    RowMatrix u(n, d);
    for (int64_t i = 0; i < n; ++i) {
        double s = 0;
        for (int64_t j = 0; j < d; ++j) s += double(z[i * d + j]) * z[i * d + j];
        for (int64_t j = 0; j < d; ++j) u(i, j) = z[i * d + j] / std::sqrt(s);
    }
    RowMatrix c = u.rowwise() - u.colwise().mean();
    Eigen::MatrixXd k = c * c.transpose();
    k /= k.trace();
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(k);
    double h = 0;
    if (alpha == 1.0) {
        for (int i = 0; i < es.eigenvalues().size(); ++i) {
            double p = es.eigenvalues()[i];
            if (p > 1e-15) h -= p * std::log(p);
        }
    } else {
        double s = 0;
        for (int i = 0; i < es.eigenvalues().size(); ++i) {
            double p = es.eigenvalues()[i];
            if (p > 1e-15) s += std::pow(p, alpha);
        }
        h = std::log(s) / (1 - alpha);
    }
    switch (norm) {
        case wl::EntropyNormalization::Raw: return h;
        case wl::EntropyNormalization::LogN: return h / std::log(double(n));
        case wl::EntropyNormalization::LogD: return h / std::log(double(d));
        case wl::EntropyNormalization::LogMinND: return h / std::log(double(std::min(n, d)));
    }
    return h;
}

wl::CapturedPrompt makePrompt(int64_t index, int64_t states, int64_t tokens, int64_t d, uint64_t seed,
                              bool has_bos = false) {
    wl::CapturedPrompt p;
    p.prompt_index = index;
    p.num_states = states;
    p.num_tokens = tokens;
    p.hidden_size = d;
    p.has_bos = has_bos;
    p.states = randomMatrix(states * tokens, d, seed);
    // Make states correlated with depth so CKA is not trivially ~0.
    for (int64_t h = 1; h < states; ++h)
        for (int64_t i = 0; i < tokens * d; ++i)
            p.states[h * tokens * d + i] = 0.8f * p.states[(h - 1) * tokens * d + i] + 0.6f * p.states[h * tokens * d + i];
    std::mt19937_64 rng(seed + 7);
    std::uniform_real_distribution<float> u(0.0f, 5.0f);
    p.token_entropy.resize(tokens);
    for (auto& e : p.token_entropy) e = u(rng);
    p.token_ids.assign(tokens, 1);
    return p;
}

// Rows of state h for the given (prompt, token) pairs, stacked.
std::vector<float> gatherRows(const std::vector<wl::CapturedPrompt>& ps, int64_t h,
                              const std::vector<std::pair<int, int64_t>>& which) {
    const int64_t d = ps[0].hidden_size;
    std::vector<float> out;
    for (auto [p, t] : which) {
        const float* r = ps[p].row(h, t);
        out.insert(out.end(), r, r + d);
    }
    return out;
}

std::vector<double> toDouble(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

}  // namespace

TEST(MatrixEntropy, MatchesBruteForceForAllAlphasAndNormalisations) {
    for (auto [n, d] : {std::pair<int64_t, int64_t>{30, 8}, {6, 20}}) {
        auto z = randomMatrix(n, d, 11 + n);
        for (double alpha : {0.5, 1.0, 2.0, 3.0})
            for (auto norm : {wl::EntropyNormalization::Raw, wl::EntropyNormalization::LogN,
                              wl::EntropyNormalization::LogD, wl::EntropyNormalization::LogMinND}) {
                double got = wl::matrixEntropy(z, n, d, alpha, norm);
                double want = bruteEntropy(z, n, d, alpha, norm);
                EXPECT_NEAR(got, want, 1e-9) << "n=" << n << " d=" << d << " alpha=" << alpha << " norm="
                                              << wl::toString(norm);
            }
    }
}

TEST(MatrixEntropy, ClosedForms) {
    // k orthonormal directions, centred: tokens +e_i and -e_i for i < k gives p_i = 1/k.
    const int64_t k = 4, d = 6;
    std::vector<float> z(2 * k * d, 0.0f);
    for (int64_t i = 0; i < k; ++i) {
        z[(2 * i) * d + i] = 1.0f;
        z[(2 * i + 1) * d + i] = -1.0f;
    }
    for (double alpha : {0.5, 1.0, 2.0}) EXPECT_NEAR(wl::matrixEntropy(z, 2 * k, d, alpha), std::log(4.0), 1e-12);
    // All tokens identical after row normalisation: zero variance, zero entropy.
    std::vector<float> same(5 * 3);
    for (int i = 0; i < 5; ++i) { same[i * 3] = float(i + 1); same[i * 3 + 1] = 2.0f * (i + 1); same[i * 3 + 2] = 0; }
    EXPECT_NEAR(wl::matrixEntropy(same, 5, 3, 1.0), 0.0, 1e-12);
}

TEST(MatrixEntropy, EigenvaluesMatchEigen) {
    auto z = randomMatrix(12, 12, 5);
    RowMatrix a = Eigen::Map<Eigen::Matrix<float, -1, -1, Eigen::RowMajor>>(z.data(), 12, 12).cast<double>();
    RowMatrix s = a * a.transpose();
    std::vector<double> sv(s.data(), s.data() + 144);
    auto w = wl::symmetricEigenvalues(sv, 12);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es{Eigen::MatrixXd(s)};
    for (int i = 0; i < 12; ++i) EXPECT_NEAR(w[i], es.eigenvalues()[i], 1e-9 * es.eigenvalues().maxCoeff());
}

TEST(MatrixEntropy, TwoStageDriverMatchesEigenAtBlockedSizes) {
    // Large enough that the two-stage reduction runs its blocked band stage (n > block size).
    const int n = 300;
    auto z = randomMatrix(n, n, 9);
    RowMatrix a = Eigen::Map<Eigen::Matrix<float, -1, -1, Eigen::RowMajor>>(z.data(), n, n).cast<double>();
    RowMatrix s = a * a.transpose();
    std::vector<double> sv(s.data(), s.data() + n * n);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(Eigen::MatrixXd(s), Eigen::EigenvaluesOnly);
    const double scale = es.eigenvalues().maxCoeff();
    for (auto driver : {wl::EigenDriver::OneStage, wl::EigenDriver::TwoStage}) {
        auto w = wl::symmetricEigenvalues(sv, n, driver);
        ASSERT_EQ(static_cast<int>(w.size()), n);
        double worst = 0;
        for (int i = 0; i < n; ++i) worst = std::max(worst, std::abs(w[i] - es.eigenvalues()[i]));
        EXPECT_LT(worst, 1e-11 * scale) << (driver == wl::EigenDriver::TwoStage ? "two-stage" : "one-stage");
    }
    EXPECT_NEAR(wl::spectrumEntropy(wl::symmetricEigenvalues(sv, n, wl::EigenDriver::TwoStage), 1.0),
                wl::spectrumEntropy(wl::symmetricEigenvalues(sv, n, wl::EigenDriver::OneStage), 1.0), 1e-12);
}

TEST(Cka, IdentityOrthogonalAndScaleInvariance) {
    const int64_t n = 50, d = 7;
    auto x = toDouble(randomMatrix(n, d, 3));
    EXPECT_NEAR(wl::linearCka(x, x, n, d, d), 1.0, 1e-12);
    EXPECT_NEAR(wl::debiasedLinearCka(x, x, n, d, d), 1.0, 1e-12);
    // Random orthogonal Q (QR of a Gaussian matrix) and isotropic scaling 3.7.
    auto g = toDouble(randomMatrix(d, d, 4));
    Eigen::MatrixXd q = Eigen::HouseholderQR<Eigen::MatrixXd>(Eigen::Map<RowMatrix>(g.data(), d, d)).householderQ();
    auto y = toDouble(randomMatrix(n, d, 5));
    RowMatrix ym = Eigen::Map<RowMatrix>(y.data(), n, d);
    RowMatrix yt = 3.7 * ym * q;
    std::vector<double> yv(yt.data(), yt.data() + n * d);
    EXPECT_NEAR(wl::linearCka(x, y, n, d, d), wl::linearCka(x, yv, n, d, d), 1e-10);
    EXPECT_NEAR(wl::debiasedLinearCka(x, y, n, d, d), wl::debiasedLinearCka(x, yv, n, d, d), 1e-10);
}

TEST(Cka, PublishedReferenceValuesFromNumpy) {
    const fs::path dir = fs::path(WAVELAB_TEST_WORK_DIR) / "analysis_cka";
    fs::create_directories(dir);
    const fs::path script = dir / "make_cka_data.py";
    {
        std::ofstream s(script);
        s << "import numpy as np, sys\n"
             "np.random.seed(1337)\n"
             "X = np.random.randn(100, 10)\n"
             "Y = X + np.random.randn(100, 10)\n"
             "np.savetxt(sys.argv[1], X, fmt='%.17g')\n"
             "np.savetxt(sys.argv[2], Y, fmt='%.17g')\n";
    }
    const std::string xs = (dir / "x.txt").string(), ys = (dir / "y.txt").string();
    const std::string cmd = std::string(WAVELAB_PYTHON) + " " + script.string() + " " + xs + " " + ys;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    auto load = [](const std::string& path) {
        std::ifstream f(path);
        std::vector<double> v;
        double x;
        while (f >> x) v.push_back(x);
        return v;
    };
    auto x = load(xs), y = load(ys);
    ASSERT_EQ(x.size(), 1000u);
    ASSERT_EQ(y.size(), 1000u);
    EXPECT_NEAR(wl::linearCka(x, y, 100, 10, 10), 0.55761, 5e-5);
    EXPECT_NEAR(wl::debiasedLinearCka(x, y, 100, 10, 10), 0.51346, 5e-5);
}

TEST(Hsic, MatchesBruteForceDefinitions) {
    const int64_t n = 9, d = 4;
    auto x = toDouble(randomMatrix(n, d, 21)), y = toDouble(randomMatrix(n, d, 22));
    RowMatrix xm = Eigen::Map<RowMatrix>(x.data(), n, d), ym = Eigen::Map<RowMatrix>(y.data(), n, d);
    RowMatrix k = xm * xm.transpose(), l = ym * ym.transpose();
    std::vector<double> kv(k.data(), k.data() + n * n), lv(l.data(), l.data() + n * n);
    // Biased: tr(KHLH)/(n-1)^2 by explicit sums.
    double biased = 0;
    {
        RowMatrix h = RowMatrix::Identity(n, n);
        h.array() -= 1.0 / n;
        RowMatrix t = k * h * l * h;
        biased = t.trace() / double((n - 1) * (n - 1));
    }
    EXPECT_NEAR(wl::hsicBiased(kv, lv, n), biased, 1e-10);
    // Unbiased (Song et al. 2012) as the U-statistic over 4-tuples of distinct indices:
    // HSIC = (1/(n)_4) sum_{(i,j,q,r) distinct} k_ij (l_ij + l_qr - 2 l_iq)
    // (the standard h-kernel form; brute force over all ordered tuples).
    double sum = 0;
    int64_t count = 0;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            for (int q = 0; q < n; ++q)
                for (int r = 0; r < n; ++r) {
                    if (i == j || i == q || i == r || j == q || j == r || q == r) continue;
                    sum += k(i, j) * (l(i, j) + l(q, r) - 2 * l(i, q));
                    ++count;
                }
    EXPECT_NEAR(wl::hsicUnbiased(kv, lv, n), sum / count, 1e-9 * std::abs(sum / count) + 1e-12);
}

TEST(LayerAnalyzer, StreamingMatchesDirectFormulaWithoutFilter) {
    const int64_t L = 4, d = 6;
    std::vector<wl::CapturedPrompt> ps;
    for (int i = 0; i < 5; ++i) ps.push_back(makePrompt(i, L, 7 + i, d, 100 + i));
    wl::AnalysisOptions o;
    o.filter.mode = wl::TokenFilterMode::None;
    o.filter.drop_bos = false;
    o.alpha = 1.0;
    o.prompt_level = true;
    o.dataset_level = true;
    o.cka_batch_tokens = 1000;  // one (partial) batch = all tokens: equals full debiased CKA
    wl::LayerAnalyzer an(o);
    for (auto& p : ps) an.add(p);
    an.finish();
    auto s = an.snapshot(true);
    std::vector<std::pair<int, int64_t>> all;
    for (int i = 0; i < 5; ++i)
        for (int64_t t = 0; t < ps[i].num_tokens; ++t) all.push_back({i, t});
    ASSERT_EQ(s.tokens_kept, static_cast<int64_t>(all.size()));
    for (int64_t h = 0; h < L; ++h) {
        auto rows = gatherRows(ps, h, all);
        EXPECT_NEAR(s.entropy_filtered[h], bruteEntropy(rows, all.size(), d, 1.0, wl::EntropyNormalization::Raw), 1e-6);
        EXPECT_NEAR(s.entropy_unfiltered[h], s.entropy_filtered[h], 1e-9);
        // prompt level: mean of per-prompt entropies
        double mean = 0;
        for (int i = 0; i < 5; ++i) {
            std::vector<float> pr(ps[i].state(h), ps[i].state(h) + ps[i].num_tokens * d);
            mean += bruteEntropy(pr, ps[i].num_tokens, d, 1.0, wl::EntropyNormalization::Raw) / 5;
        }
        EXPECT_NEAR(s.entropy_prompt_level[h], mean, 1e-6);
        // dataset level: mean-pooled prompt rows
        std::vector<float> pooled;
        for (int i = 0; i < 5; ++i)
            for (int64_t j = 0; j < d; ++j) {
                double m = 0;
                for (int64_t t = 0; t < ps[i].num_tokens; ++t) m += ps[i].row(h, t)[j];
                pooled.push_back(static_cast<float>(m / ps[i].num_tokens));
            }
        EXPECT_NEAR(s.entropy_dataset_level[h], bruteEntropy(pooled, 5, d, 1.0, wl::EntropyNormalization::Raw), 1e-5);
    }
    ASSERT_EQ(s.cka.size(), static_cast<size_t>(L * L));
    for (int64_t a = 0; a < L; ++a)
        for (int64_t b = 0; b < L; ++b) {
            auto xa = toDouble(gatherRows(ps, a, all)), xb = toDouble(gatherRows(ps, b, all));
            EXPECT_NEAR(s.cka[a * L + b], wl::debiasedLinearCka(xa, xb, all.size(), d, d), 1e-5) << a << "," << b;
        }
}

TEST(LayerAnalyzer, MinibatchCkaAveragesHsicOverBatches) {
    const int64_t L = 3, d = 5;
    std::vector<wl::CapturedPrompt> ps;
    for (int i = 0; i < 4; ++i) ps.push_back(makePrompt(i, L, 10, d, 300 + i));
    for (auto est : {wl::CkaEstimator::MinibatchUnbiased, wl::CkaEstimator::MinibatchBiased}) {
        wl::AnalysisOptions o;
        o.filter.mode = wl::TokenFilterMode::None;
        o.filter.drop_bos = false;
        o.cka = est;
        o.cka_batch_tokens = 8;  // 40 tokens = 5 full batches
        wl::LayerAnalyzer an(o);
        for (auto& p : ps) an.add(p);
        an.finish();
        auto s = an.snapshot(true);
        EXPECT_EQ(s.cka_batches, 5);
        std::vector<std::pair<int, int64_t>> all;
        for (int i = 0; i < 4; ++i)
            for (int64_t t = 0; t < 10; ++t) all.push_back({i, t});
        Eigen::MatrixXd hs = Eigen::MatrixXd::Zero(L, L);
        for (int b = 0; b < 5; ++b) {
            std::vector<std::pair<int, int64_t>> batch(all.begin() + b * 8, all.begin() + b * 8 + 8);
            std::vector<std::vector<double>> grams;
            for (int64_t h = 0; h < L; ++h) {
                auto x = toDouble(gatherRows(ps, h, batch));
                RowMatrix xm = Eigen::Map<RowMatrix>(x.data(), 8, d);
                RowMatrix k = xm * xm.transpose();
                grams.emplace_back(k.data(), k.data() + 64);
            }
            for (int64_t i = 0; i < L; ++i)
                for (int64_t j = 0; j < L; ++j)
                    hs(i, j) += est == wl::CkaEstimator::MinibatchUnbiased ? wl::hsicUnbiased(grams[i], grams[j], 8)
                                                                           : wl::hsicBiased(grams[i], grams[j], 8);
        }
        for (int64_t i = 0; i < L; ++i)
            for (int64_t j = 0; j < L; ++j)
                EXPECT_NEAR(s.cka[i * L + j], hs(i, j) / std::sqrt(hs(i, i) * hs(j, j)), 1e-5);
    }
}

TEST(LayerAnalyzer, PercentileFilterAndBosDropMatchDirectSelection) {
    const int64_t L = 3, d = 5;
    std::vector<wl::CapturedPrompt> ps;
    for (int i = 0; i < 4; ++i) ps.push_back(makePrompt(i, L, 12, d, 500 + i, /*has_bos=*/true));
    wl::AnalysisOptions o;
    o.filter.mode = wl::TokenFilterMode::Percentile;
    o.filter.percentile = 60;
    o.filter.warmup_tokens = 10000;  // the whole stream is the warm-up: exact percentile
    o.cka_batch_tokens = 4;
    wl::LayerAnalyzer an(o);
    for (auto& p : ps) an.add(p);
    EXPECT_EQ(an.snapshot().tokens_pending, 44);
    an.finish();
    auto s = an.snapshot(true);
    std::vector<float> cand;
    for (auto& p : ps)
        for (int64_t t = 1; t < 12; ++t) cand.push_back(p.token_entropy[t]);
    std::vector<float> sorted = cand;
    std::sort(sorted.begin(), sorted.end());
    const double pos = 0.6 * (sorted.size() - 1);
    const size_t lo = static_cast<size_t>(pos);
    const double thr = sorted[lo] + (pos - lo) * (sorted[lo + 1] - sorted[lo]);
    EXPECT_NEAR(s.entropy_threshold_nats, thr, 1e-6);
    std::vector<std::pair<int, int64_t>> kept, all;
    for (int i = 0; i < 4; ++i)
        for (int64_t t = 1; t < 12; ++t) {
            all.push_back({i, t});
            if (ps[i].token_entropy[t] >= thr) kept.push_back({i, t});
        }
    EXPECT_EQ(s.tokens_candidates, 44);
    EXPECT_EQ(s.tokens_kept, static_cast<int64_t>(kept.size()));
    for (int64_t h = 0; h < L; ++h) {
        EXPECT_NEAR(s.entropy_filtered[h], bruteEntropy(gatherRows(ps, h, kept), kept.size(), d, 1.0,
                                                        wl::EntropyNormalization::Raw), 1e-6);
        EXPECT_NEAR(s.entropy_unfiltered[h], bruteEntropy(gatherRows(ps, h, all), all.size(), d, 1.0,
                                                          wl::EntropyNormalization::Raw), 1e-6);
    }
}

TEST(LayerAnalyzer, ThresholdFilterAndLiveAlpha2Fallback) {
    const int64_t L = 2, d = 8;
    std::vector<wl::CapturedPrompt> ps;
    for (int i = 0; i < 3; ++i) ps.push_back(makePrompt(i, L, 9, d, 700 + i));
    wl::AnalysisOptions o;
    o.filter.mode = wl::TokenFilterMode::Threshold;
    o.filter.threshold_nats = 2.0;
    o.filter.drop_bos = false;
    o.live_eig_max_dim = 4;  // d = 8 > 4: live snapshot uses alpha = 2
    o.normalization = wl::EntropyNormalization::LogD;
    wl::LayerAnalyzer an(o);
    for (auto& p : ps) an.add(p);
    std::vector<std::pair<int, int64_t>> kept;
    for (int i = 0; i < 3; ++i)
        for (int64_t t = 0; t < 9; ++t)
            if (ps[i].token_entropy[t] >= 2.0f) kept.push_back({i, t});
    auto live = an.snapshot(false);
    EXPECT_EQ(live.curve_alpha, 2.0);
    auto full = an.snapshot(true);
    EXPECT_EQ(full.curve_alpha, 1.0);
    for (int64_t h = 0; h < L; ++h) {
        auto rows = gatherRows(ps, h, kept);
        EXPECT_NEAR(live.entropy_filtered[h], bruteEntropy(rows, kept.size(), d, 2.0, wl::EntropyNormalization::LogD), 1e-6);
        EXPECT_NEAR(full.entropy_filtered[h], bruteEntropy(rows, kept.size(), d, 1.0, wl::EntropyNormalization::LogD), 1e-6);
    }
}

TEST(LayerSetEntropy, ConcatAndHadamardMatchBruteForce) {
    const int64_t L = 4, d = 5;
    std::vector<wl::CapturedPrompt> ps;
    for (int i = 0; i < 3; ++i) ps.push_back(makePrompt(i, L, 8, d, 900 + i));
    wl::AnalysisOptions o;
    o.filter.mode = wl::TokenFilterMode::None;
    o.filter.drop_bos = false;
    o.reservoir_tokens = 1000;  // all 24 tokens fit: exact
    wl::LayerAnalyzer an(o);
    for (auto& p : ps) an.add(p);
    an.finish();
    auto model = an.setEntropyModel();
    ASSERT_EQ(model->numTokens(), 24);
    std::vector<std::pair<int, int64_t>> all;
    for (int i = 0; i < 3; ++i)
        for (int64_t t = 0; t < 8; ++t) all.push_back({i, t});
    auto normalised = [&](int64_t h) {
        auto rows = gatherRows(ps, h, all);
        RowMatrix u(24, d);
        for (int i = 0; i < 24; ++i) {
            double s = 0;
            for (int64_t j = 0; j < d; ++j) s += double(rows[i * d + j]) * rows[i * d + j];
            for (int64_t j = 0; j < d; ++j) u(i, j) = rows[i * d + j] / std::sqrt(s);
        }
        return u;
    };
    const std::vector<int> set = {0, 2, 3};
    // Concat: the concatenated rows, then the single-matrix brute force.
    std::vector<float> concat;
    for (int i = 0; i < 24; ++i)
        for (int h : set) {
            RowMatrix u = normalised(h);
            for (int64_t j = 0; j < d; ++j) concat.push_back(static_cast<float>(u(i, j)));
        }
    EXPECT_NEAR(model->entropy(set, wl::SetObjective::Concat),
                bruteEntropy(concat, 24, d * 3, 1.0, wl::EntropyNormalization::Raw), 1e-5);
    EXPECT_NEAR(model->entropy({2}, wl::SetObjective::Concat), an.snapshot(true).entropy_filtered[2], 1e-6);
    // Hadamard: product of trace-normalised centred Grams.
    Eigen::MatrixXd a = Eigen::MatrixXd::Ones(24, 24);
    for (int h : set) {
        RowMatrix u = normalised(h);
        RowMatrix c = u.rowwise() - u.colwise().mean();
        Eigen::MatrixXd k = c * c.transpose();
        a = a.cwiseProduct(k / k.trace());
    }
    a /= a.trace();
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(a);
    double h = 0;
    for (int i = 0; i < 24; ++i)
        if (es.eigenvalues()[i] > 1e-15) h -= es.eigenvalues()[i] * std::log(es.eigenvalues()[i]);
    EXPECT_NEAR(model->entropy(set, wl::SetObjective::Hadamard), h, 1e-5);
}

TEST(LayerAnalyzer, BadInputIsAClearError) {
    wl::AnalysisOptions o;
    wl::LayerAnalyzer an(o);
    auto p = makePrompt(3, 2, 4, 3, 1);
    p.states[5] = std::nanf("");
    try {
        an.add(p);
        FAIL();
    } catch (const wl::Error& e) {
        EXPECT_NE(std::string(e.what()).find("prompt 3"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("NaN"), std::string::npos);
    }
    auto q = makePrompt(4, 2, 4, 3, 1);
    q.token_entropy.pop_back();
    EXPECT_THROW(an.add(q), wl::Error);
    auto r = makePrompt(5, 2, 4, 3, 1);
    an.add(r);
    auto wrong = makePrompt(6, 3, 4, 3, 1);
    EXPECT_THROW(an.add(wrong), wl::Error);
    wl::AnalysisOptions bad;
    bad.alpha = -1;
    EXPECT_THROW(wl::LayerAnalyzer{bad}, wl::Error);
}

TEST(Boundaries, FoundAtKnownDropsAndSegmentsCoverAllStates) {
    const int L = 8;
    std::vector<double> cka(L * L, 0.2);
    auto block = [](int h) { return h < 3 ? 0 : h < 6 ? 1 : 2; };
    for (int a = 0; a < L; ++a)
        for (int b = 0; b < L; ++b) cka[a * L + b] = a == b ? 1.0 : block(a) == block(b) ? 0.97 : 0.3;
    wl::BoundaryOptions o;
    auto b = wl::detectBoundaries(cka, L, o);
    EXPECT_EQ(b, (std::vector<int>{3, 6}));
    auto segs = wl::segmentsFromBoundaries(b, L);
    ASSERT_EQ(segs.size(), 3u);
    EXPECT_EQ(segs[0].first, 0);
    EXPECT_EQ(segs[0].last, 2);
    EXPECT_EQ(segs[2].last, 7);
    o.max_boundaries = 1;
    EXPECT_EQ(wl::detectBoundaries(cka, L, o).size(), 1u);
    o.max_boundaries = 0;
    o.threshold = 0.9;  // above every drop
    EXPECT_TRUE(wl::detectBoundaries(cka, L, o).empty());
}

TEST(AnalysisJson, OptionsAndSnapshotRoundTrip) {
    wl::AnalysisOptions o;
    o.alpha = 2.0;
    o.filter.mode = wl::TokenFilterMode::Threshold;
    o.normalization = wl::EntropyNormalization::LogMinND;
    nlohmann::json j = o;
    auto back = j.get<wl::AnalysisOptions>();
    EXPECT_EQ(back.alpha, 2.0);
    EXPECT_EQ(back.filter.mode, wl::TokenFilterMode::Threshold);
    EXPECT_EQ(back.normalization, wl::EntropyNormalization::LogMinND);
    j["filter"]["mode"] = "sometimes";
    EXPECT_THROW(j.get<wl::AnalysisOptions>(), wl::Error);

    wl::LayerAnalyzer an([] { wl::AnalysisOptions x; x.filter.mode = wl::TokenFilterMode::None; return x; }());
    for (int i = 0; i < 2; ++i) an.add(makePrompt(i, 3, 6, 4, 40 + i));
    an.finish();
    auto s = an.snapshot(true);
    nlohmann::json js = s;
    auto s2 = js.get<wl::AnalysisSnapshot>();
    EXPECT_EQ(s2.cka.size(), s.cka.size());
    for (size_t i = 0; i < s.cka.size(); ++i) EXPECT_DOUBLE_EQ(s2.cka[i], s.cka[i]);
    EXPECT_EQ(s2.entropy_filtered, s.entropy_filtered);
    EXPECT_TRUE(js["entropy_threshold_nats"].is_null());
}

TEST(LayerAnalyzer, SnapshotsWhileAWorkerAddsPrompts) {
    const int64_t L = 3, d = 6;
    std::vector<wl::CapturedPrompt> ps;
    for (int i = 0; i < 40; ++i) ps.push_back(makePrompt(i, L, 8, d, 1200 + i));
    wl::AnalysisOptions o;
    o.filter.warmup_tokens = 50;
    o.cka_batch_tokens = 16;
    wl::LayerAnalyzer an(o);
    std::atomic<bool> done{false};
    std::thread worker([&] {
        for (auto& p : ps) an.add(p);
        done = true;
    });
    int64_t last_kept = 0;
    int snapshots = 0;
    while (!done.load()) {
        auto s = an.snapshot(false);
        EXPECT_GE(s.tokens_kept, last_kept);  // monotone while streaming
        last_kept = s.tokens_kept;
        ++snapshots;
    }
    worker.join();
    an.finish();
    auto s = an.snapshot(true);
    EXPECT_EQ(s.prompts_seen, 40);
    EXPECT_EQ(s.tokens_pending, 0);
    EXPECT_TRUE(s.threshold_frozen);
    EXPECT_GT(s.tokens_kept, 0);
    EXPECT_GT(snapshots, 0);
    // Same stream, single thread: identical result.
    wl::LayerAnalyzer again(o);
    for (auto& p : ps) again.add(p);
    again.finish();
    auto t = again.snapshot(true);
    EXPECT_EQ(t.tokens_kept, s.tokens_kept);
    for (int64_t h = 0; h < L; ++h) EXPECT_DOUBLE_EQ(t.entropy_filtered[h], s.entropy_filtered[h]);
    EXPECT_THROW(an.add(ps[0]), wl::Error);  // after finish()
}
