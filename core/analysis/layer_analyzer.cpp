// Streaming layer analysis. See layer_analyzer.h for the definitions and the complexity.
#include "analysis/layer_analyzer.h"

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <thread>

#include "analysis/blas_lapack.h"
#include "analysis/matrix_entropy.h"
#include "util/error.h"

namespace wl {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using MatrixD = Eigen::MatrixXd;  // column-major

// numpy's default ("linear") percentile of unsorted values.
double percentileOf(std::vector<float> v, double p) {
    if (v.empty()) return kNaN;
    std::sort(v.begin(), v.end());
    const double pos = std::clamp(p, 0.0, 100.0) / 100.0 * (v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (pos - lo) * (double(v[hi]) - v[lo]);
}

// While our own workers each call BLAS, OpenBLAS's own threads would oversubscribe the
// cores (measured: 4.4x slower on 2 cores, bench/NOTES.md). Ask OpenBLAS for one thread for
// the duration and restore the setting after (no-ops on another BLAS, see blas_lapack.h).
class SingleThreadedBlas {
public:
    SingleThreadedBlas() : previous_(blas::threads()) { blas::setThreads(1); }
    ~SingleThreadedBlas() { blas::setThreads(previous_); }

private:
    int previous_ = 0;
};

// Runs f(i, worker) for i in [0, n) on up to `threads` threads; worker in [0, threads)
// indexes per-worker buffers that outlive the call.
template <typename F>
void parallelForWorkers(int n, int threads, F f) {
    threads = std::max(1, std::min(threads, n));
    if (threads == 1) {
        for (int i = 0; i < n; ++i) f(i, 0);
        return;
    }
    SingleThreadedBlas blas_guard;
    std::vector<std::thread> pool;
    std::exception_ptr error;
    std::mutex error_mutex;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            try {
                for (int i = t; i < n; i += threads) f(i, t);
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mutex);
                error = std::current_exception();
            }
        });
    for (auto& th : pool) th.join();
    if (error) std::rethrow_exception(error);
}

// Runs f(i) for i in [0, n) on up to `threads` threads.
template <typename F>
void parallelFor(int n, int threads, F f) {
    parallelForWorkers(n, threads, [&f](int i, int) { f(i); });
}

int workerThreads() {
    unsigned hw = std::thread::hardware_concurrency();
    return static_cast<int>(std::clamp(hw, 1u, 4u));
}

// Sum of u u^T and of u over a set of row-normalised token rows, float64. The symmetric
// D x D sum is kept as its packed lower triangle (column-major), D(D+1)/2 doubles.
struct MomentAccumulator {
    int64_t d = 0;
    std::vector<double> packed_lower;  // column c holds rows c..d-1
    Eigen::VectorXd sum_rows;          // D
    int64_t count = 0;

    static size_t columnStart(int64_t c, int64_t d) { return static_cast<size_t>(c * d - c * (c - 1) / 2); }
    void init(int64_t dim) {
        d = dim;
        packed_lower.assign(static_cast<size_t>(d * (d + 1) / 2), 0.0);
        sum_rows = Eigen::VectorXd::Zero(d);
    }
    // rows: row-major k x d, already row-normalised.
    void add(const std::vector<float>& rows, int k, std::vector<float>& scratch) {
        if (k == 0) return;
        const int di = static_cast<int>(d);
        scratch.resize(static_cast<size_t>(d * d));  // SYRK (beta = 0) writes the lower triangle
        blas::gramOfRowsLower(rows.data(), k, di, scratch.data());
        for (int64_t c = 0; c < d; ++c) {
            double* dst = packed_lower.data() + columnStart(c, d) - c;  // dst[r] for r >= c
            const float* src = scratch.data() + c * d;
            for (int64_t r = c; r < d; ++r) dst[r] += src[r];
        }
        for (int i = 0; i < k; ++i)
            for (int64_t j = 0; j < d; ++j) sum_rows[j] += rows[static_cast<size_t>(i) * d + j];
        count += k;
    }
};

// Centred second moment C = sum u u^T - n mu mu^T of one or two accumulators, symmetric
// (row-major == column-major). Built straight into the returned buffer, which the caller
// hands on to the eigensolver by move: at D = 2560 each extra D x D copy costs 52 MB of
// page faults and writes per state.
std::vector<double> centredMoment(const MomentAccumulator& a, const MomentAccumulator* b) {
    const int64_t d = a.d;
    Eigen::VectorXd sum = a.sum_rows;
    int64_t n = a.count;
    if (b) {
        sum += b->sum_rows;
        n += b->count;
    }
    const double inv_n = n > 0 ? 1.0 / static_cast<double>(n) : 0.0;
    std::vector<double> out(static_cast<size_t>(d * d));
    for (int64_t c = 0; c < d; ++c) {
        const double* pa = a.packed_lower.data() + MomentAccumulator::columnStart(c, d) - c;
        const double* pb = b ? b->packed_lower.data() + MomentAccumulator::columnStart(c, d) - c : nullptr;
        double* col = out.data() + c * d;
        const double mean_c = sum[c] * inv_n;
        for (int64_t r = c; r < d; ++r) col[r] = pa[r] + (pb ? pb[r] : 0.0) - sum[r] * mean_c;
    }
    // Mirror the lower triangle in tiles so both sides of the copy stay in cache.
    constexpr int64_t kTile = 64;
    for (int64_t c0 = 0; c0 < d; c0 += kTile)
        for (int64_t r0 = c0; r0 < d; r0 += kTile)
            for (int64_t c = c0; c < std::min(c0 + kTile, d); ++c)
                for (int64_t r = std::max(r0, c + 1); r < std::min(r0 + kTile, d); ++r)
                    out[r * d + c] = out[c * d + r];
    return out;
}

void rowNormalise(const float* src, float* dst, int64_t d) {
    double norm2 = 0;
    for (int64_t j = 0; j < d; ++j) norm2 += double(src[j]) * src[j];
    const float inv = norm2 > 0 ? static_cast<float>(1.0 / std::sqrt(norm2)) : 0.0f;
    for (int64_t j = 0; j < d; ++j) dst[j] = src[j] * inv;
}

}  // namespace

struct LayerAnalyzer::Impl {
    int L = 0;
    int64_t D = 0;
    bool initialised = false;
    bool finished = false;

    int64_t prompts_seen = 0, tokens_seen = 0, tokens_candidates = 0;
    std::vector<float> candidate_entropies;  // all candidate tokens (percentile, histogram)

    // Percentile warm-up.
    std::vector<CapturedPrompt> warmup;
    int64_t warmup_tokens = 0;
    bool threshold_frozen = false;
    double threshold = kNaN;

    std::vector<MomentAccumulator> kept, rejected;  // per state
    std::vector<std::vector<float>> worker_rows, worker_syrk;   // per parallel worker (process())

    // Prompt-level and dataset-level variants.
    std::vector<double> prompt_level_sum;
    int64_t prompt_level_count = 0;
    std::vector<std::vector<float>> pooled;  // per state: P x D
    int64_t pooled_count = 0;

    // Minibatch CKA: raw kept rows buffered per state.
    std::vector<std::vector<float>> cka_buffer;  // per state: n x D
    int64_t cka_fill = 0;
    MatrixD hsic_sum;                             // L x L
    int64_t cka_batches = 0;

    // Reservoir of kept tokens (row-normalised rows per state).
    std::vector<std::vector<float>> reservoir;   // per state: R x D
    int64_t reservoir_fill = 0, reservoir_seen = 0;
    std::mt19937_64 rng;

    double seconds_in_add = 0;
};

LayerAnalyzer::LayerAnalyzer(AnalysisOptions options) : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
    const auto& o = options_;
    if (!(o.alpha > 0) || !std::isfinite(o.alpha)) throw Error("analysis options", "alpha must be a positive number");
    if (o.cka_batch_tokens < 4) throw Error("analysis options", "cka_batch_tokens must be >= 4");
    if (o.reservoir_tokens < 2) throw Error("analysis options", "reservoir_tokens must be >= 2");
    if (o.filter.mode == TokenFilterMode::Percentile && !(o.filter.percentile >= 0 && o.filter.percentile < 100))
        throw Error("analysis options", "percentile must be in [0, 100)");
    if (o.filter.warmup_tokens < 1) throw Error("analysis options", "warmup_tokens must be >= 1");
    impl_->rng.seed(o.seed);
}

LayerAnalyzer::~LayerAnalyzer() = default;

int64_t LayerAnalyzer::numStates() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return impl_->L;
}

int64_t LayerAnalyzer::hiddenSize() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return impl_->D;
}

namespace {

void validatePrompt(const CapturedPrompt& p, const AnalysisOptions& o) {
    const std::string src = "prompt " + std::to_string(p.prompt_index);
    if (p.num_states < 1 || p.hidden_size < 1 || p.num_tokens < 0) throw Error(src, "empty or negative shape");
    if (static_cast<int64_t>(p.states.size()) != p.num_states * p.num_tokens * p.hidden_size)
        throw Error(src, "states hold " + std::to_string(p.states.size()) + " floats, expected " +
                             std::to_string(p.num_states * p.num_tokens * p.hidden_size));
    if (o.filter.mode != TokenFilterMode::None && static_cast<int64_t>(p.token_entropy.size()) != p.num_tokens)
        throw Error(src, "token_entropy has " + std::to_string(p.token_entropy.size()) + " values for " +
                             std::to_string(p.num_tokens) + " tokens");
    for (float e : p.token_entropy)
        if (!std::isfinite(e)) throw Error(src, "token entropy is NaN or Inf");
    for (int64_t h = 0; h < p.num_states; ++h) {
        const float* s = p.state(h);
        for (int64_t i = 0, n = p.num_tokens * p.hidden_size; i < n; ++i)
            if (!std::isfinite(s[i]))
                throw Error(src, "hidden state " + std::to_string(h) + " has NaN or Inf at token " +
                                     std::to_string(i / p.hidden_size));
    }
}

std::vector<int64_t> candidatePositions(const CapturedPrompt& p, const TokenFilterOptions& f) {
    std::vector<int64_t> out;
    for (int64_t t = 0; t < p.num_tokens; ++t) {
        if (f.drop_bos && p.has_bos && t == 0) continue;
        if (t < f.drop_first) continue;
        out.push_back(t);
    }
    return out;
}

// The minibatch HSIC matrix of one batch of n raw rows per state.
MatrixD batchHsic(const std::vector<std::vector<float>>& rows, int64_t n, int64_t d, CkaEstimator est) {
    const int L = static_cast<int>(rows.size());
    const int64_t nn = n * n;
    MatrixD vecs(nn, L);      // vec of the modified Gram per state
    MatrixD row_sums(n, L);   // unbiased: K~ 1
    Eigen::VectorXd totals(L);
    parallelFor(L, workerThreads(), [&](int h) {
        std::vector<float> g(static_cast<size_t>(nn));
        blas::gramOfTokensLower(rows[h].data(), static_cast<int>(n), static_cast<int>(d), g.data());
        MatrixD k(n, n);
        for (int64_t c = 0; c < n; ++c)
            for (int64_t r = c; r < n; ++r) k(r, c) = k(c, r) = g[c * n + r];
        if (est == CkaEstimator::MinibatchUnbiased) {
            k.diagonal().setZero();
            row_sums.col(h) = k.rowwise().sum();
            totals[h] = k.sum();
        } else {
            Eigen::VectorXd col_mean = k.colwise().mean().transpose();
            const double all_mean = col_mean.mean();
            // H K H = K - 1 m^T - m 1^T + mean (K symmetric: row means = column means)
            k.rowwise() -= col_mean.transpose();
            k.colwise() -= col_mean;
            k.array() += all_mean;
        }
        vecs.col(h) = Eigen::Map<Eigen::VectorXd>(k.data(), nn);
    });
    MatrixD frob = vecs.transpose() * vecs;
    const double dn = static_cast<double>(n);
    if (est == CkaEstimator::MinibatchBiased) return frob / ((dn - 1) * (dn - 1));
    MatrixD cross = row_sums.transpose() * row_sums;
    MatrixD hsic = frob + totals * totals.transpose() / ((dn - 1) * (dn - 2)) - cross * (2.0 / (dn - 2));
    return hsic / (dn * (dn - 3));
}

}  // namespace

void LayerAnalyzer::add(const CapturedPrompt& prompt) {
    validatePrompt(prompt, options_);
    std::lock_guard<std::mutex> lock(mutex_);
    Impl& m = *impl_;
    if (m.finished) throw Error("analysis", "add() after finish()");
    const auto start = std::chrono::steady_clock::now();
    if (!m.initialised) {
        m.L = static_cast<int>(prompt.num_states);
        m.D = prompt.hidden_size;
        m.kept.resize(m.L);
        for (auto& a : m.kept) a.init(m.D);
        if (options_.unfiltered_curve && options_.filter.mode != TokenFilterMode::None) {
            m.rejected.resize(m.L);
            for (auto& a : m.rejected) a.init(m.D);
        }
        m.prompt_level_sum.assign(m.L, 0.0);
        m.pooled.assign(m.L, {});
        m.cka_buffer.assign(m.L, std::vector<float>(static_cast<size_t>(options_.cka_batch_tokens * m.D)));
        m.hsic_sum = MatrixD::Zero(m.L, m.L);
        m.reservoir.assign(m.L, std::vector<float>(static_cast<size_t>(options_.reservoir_tokens * m.D)));
        m.initialised = true;
    } else if (prompt.num_states != m.L || prompt.hidden_size != m.D) {
        throw Error("prompt " + std::to_string(prompt.prompt_index),
                    "shape " + std::to_string(prompt.num_states) + " states x " + std::to_string(prompt.hidden_size) +
                        " differs from the first prompt's " + std::to_string(m.L) + " x " + std::to_string(m.D));
    }
    m.prompts_seen++;
    m.tokens_seen += prompt.num_tokens;
    auto cand = candidatePositions(prompt, options_.filter);
    m.tokens_candidates += static_cast<int64_t>(cand.size());
    if (!prompt.token_entropy.empty())
        for (int64_t t : cand) m.candidate_entropies.push_back(prompt.token_entropy[t]);

    if (options_.filter.mode == TokenFilterMode::Percentile && !m.threshold_frozen) {
        m.warmup.push_back(prompt);
        m.warmup_tokens += static_cast<int64_t>(cand.size());
        if (m.warmup_tokens >= options_.filter.warmup_tokens) {
            freezeAndFlushWarmup();
        }
    } else {
        process(prompt);
    }
    m.seconds_in_add += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void LayerAnalyzer::freezeAndFlushWarmup() {
    Impl& m = *impl_;
    std::vector<float> window;
    for (const auto& p : m.warmup)
        for (int64_t t : candidatePositions(p, options_.filter)) window.push_back(p.token_entropy[t]);
    m.threshold = percentileOf(window, options_.filter.percentile);
    m.threshold_frozen = true;
    std::vector<CapturedPrompt> buffered;
    buffered.swap(m.warmup);
    m.warmup_tokens = 0;
    for (const auto& p : buffered) process(p);
}

void LayerAnalyzer::process(const CapturedPrompt& p) {
    Impl& m = *impl_;
    const auto& f = options_.filter;
    const int64_t D = m.D;
    std::vector<int64_t> keep, drop;
    for (int64_t t : candidatePositions(p, f)) {
        bool k = true;
        if (f.mode == TokenFilterMode::Threshold) k = p.token_entropy[t] >= f.threshold_nats;
        if (f.mode == TokenFilterMode::Percentile) k = p.token_entropy[t] >= m.threshold;
        (k ? keep : drop).push_back(t);
    }
    const int nk = static_cast<int>(keep.size()), nd = static_cast<int>(drop.size());

    // Reservoir slots for the kept tokens (decided once, applied to every state).
    std::vector<std::pair<int, int64_t>> reservoir_writes;  // (index in keep, slot)
    for (int i = 0; i < nk; ++i) {
        m.reservoir_seen++;
        if (m.reservoir_fill < options_.reservoir_tokens) {
            reservoir_writes.push_back({i, m.reservoir_fill++});
        } else {
            std::uniform_int_distribution<int64_t> pick(0, m.reservoir_seen - 1);
            int64_t j = pick(m.rng);
            if (j < options_.reservoir_tokens) reservoir_writes.push_back({i, j});
        }
    }

    const bool want_prompt_level = options_.prompt_level && nk >= 2;
    std::vector<double> prompt_entropy(m.L, 0.0);
    // States are independent: one worker per core, BLAS pinned to one thread in each. The
    // row and D x D SYRK buffers are kept per worker: allocating them per state and prompt
    // cost page faults and zero-fills worth a fifth of the stream at D = 2560.
    if (m.worker_rows.size() < static_cast<size_t>(workerThreads())) {
        m.worker_rows.resize(workerThreads());
        m.worker_syrk.resize(workerThreads());
    }
    parallelForWorkers(m.L, workerThreads(), [&](int h, int worker) {
        std::vector<float>& rows = m.worker_rows[worker];
        std::vector<float>& scratch = m.worker_syrk[worker];
        if (rows.size() < static_cast<size_t>(std::max(nk, nd)) * D) rows.resize(static_cast<size_t>(std::max(nk, nd)) * D);
        const float* state = p.state(h);
        for (int i = 0; i < nk; ++i) rowNormalise(state + keep[i] * D, rows.data() + i * D, D);
        for (auto [i, slot] : reservoir_writes)
            std::copy(rows.data() + i * D, rows.data() + (i + 1) * D, m.reservoir[h].data() + slot * D);
        m.kept[h].add(rows, nk, scratch);
        if (!m.rejected.empty() && nd > 0) {
            for (int i = 0; i < nd; ++i) rowNormalise(state + drop[i] * D, rows.data() + i * D, D);
            m.rejected[h].add(rows, nd, scratch);
        }
        if (want_prompt_level || options_.dataset_level) {
            std::vector<float> raw(static_cast<size_t>(nk) * D);
            for (int i = 0; i < nk; ++i) std::copy(state + keep[i] * D, state + (keep[i] + 1) * D, raw.data() + i * D);
            if (want_prompt_level)
                prompt_entropy[h] = matrixEntropy(raw, nk, D, options_.alpha, options_.normalization);
            if (options_.dataset_level && nk > 0) {
                auto& pooled = m.pooled[h];
                size_t base = pooled.size();
                pooled.resize(base + D, 0.0f);
                for (int i = 0; i < nk; ++i)
                    for (int64_t j = 0; j < D; ++j) pooled[base + j] += raw[i * D + j] / nk;
            }
        }
    });
    if (want_prompt_level) {
        for (int h = 0; h < m.L; ++h) m.prompt_level_sum[h] += prompt_entropy[h];
        m.prompt_level_count++;
    }
    if (options_.dataset_level && nk > 0) m.pooled_count++;

    // Minibatch CKA over kept raw rows.
    const int64_t n = options_.cka_batch_tokens;
    for (int i = 0; i < nk; ++i) {
        for (int h = 0; h < m.L; ++h) {
            const float* src = p.row(h, keep[i]);
            std::copy(src, src + D, m.cka_buffer[h].data() + m.cka_fill * D);
        }
        if (++m.cka_fill == n) {
            m.hsic_sum += batchHsic(m.cka_buffer, n, D, options_.cka);
            m.cka_batches++;
            m.cka_fill = 0;
        }
    }
}

void LayerAnalyzer::finish() {
    std::lock_guard<std::mutex> lock(mutex_);
    Impl& m = *impl_;
    if (m.finished) return;
    if (!m.warmup.empty()) freezeAndFlushWarmup();
    const int64_t min_batch = options_.cka == CkaEstimator::MinibatchUnbiased ? 4 : 2;
    if (m.initialised && m.cka_fill >= min_batch) {
        std::vector<std::vector<float>> part(m.L);
        for (int h = 0; h < m.L; ++h) part[h].assign(m.cka_buffer[h].begin(), m.cka_buffer[h].begin() + m.cka_fill * m.D);
        m.hsic_sum += batchHsic(part, m.cka_fill, m.D, options_.cka);
        m.cka_batches++;
        m.cka_fill = 0;
    }
    m.finished = true;
}

AnalysisSnapshot LayerAnalyzer::snapshot(bool full) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const Impl& m = *impl_;
    AnalysisSnapshot s;
    s.num_states = m.L;
    s.hidden_size = m.D;
    s.prompts_seen = m.prompts_seen;
    s.tokens_seen = m.tokens_seen;
    s.tokens_candidates = m.tokens_candidates;
    s.tokens_kept = m.initialised ? m.kept[0].count : 0;
    s.tokens_pending = m.warmup_tokens;
    s.threshold_frozen = m.threshold_frozen;
    s.entropy_threshold_nats = options_.filter.mode == TokenFilterMode::Threshold ? options_.filter.threshold_nats
                               : options_.filter.mode == TokenFilterMode::Percentile ? m.threshold
                                                                                     : kNaN;
    s.entropy_percentile_all = percentileOf(m.candidate_entropies, options_.filter.percentile);
    s.mean_token_entropy = m.candidate_entropies.empty()
                               ? kNaN
                               : std::accumulate(m.candidate_entropies.begin(), m.candidate_entropies.end(), 0.0) /
                                     m.candidate_entropies.size();
    s.normalization = options_.normalization;
    s.cka_estimator = options_.cka;
    s.finished = m.finished;
    s.seconds_in_add = m.seconds_in_add;
    // Histogram of candidate token entropies.
    if (!m.candidate_entropies.empty()) {
        const int bins = 40;
        float hi = *std::max_element(m.candidate_entropies.begin(), m.candidate_entropies.end());
        if (!(hi > 0)) hi = 1.0f;
        s.token_entropy_edges.resize(bins + 1);
        for (int b = 0; b <= bins; ++b) s.token_entropy_edges[b] = hi * double(b) / bins;
        s.token_entropy_counts.assign(bins, 0);
        for (float e : m.candidate_entropies)
            s.token_entropy_counts[std::clamp(static_cast<int>(e / hi * bins), 0, bins - 1)]++;
    }
    if (!m.initialised) return s;

    const bool cheap = !full && options_.alpha != 2.0 && m.D > options_.live_eig_max_dim;
    s.curve_alpha = cheap ? 2.0 : options_.alpha;
    s.entropy_filtered.assign(m.L, kNaN);
    if (options_.unfiltered_curve) s.entropy_unfiltered.assign(m.L, kNaN);
    parallelFor(m.L, workerThreads(), [&](int h) {
        const int64_t nk = m.kept[h].count;
        if (nk > 0)
            s.entropy_filtered[h] = normalizeEntropy(psdMatrixEntropy(centredMoment(m.kept[h], nullptr), m.D, s.curve_alpha),
                                                     options_.normalization, nk, m.D);
        if (options_.unfiltered_curve) {
            if (m.rejected.empty()) {  // filter mode none: every candidate is kept
                s.entropy_unfiltered[h] = s.entropy_filtered[h];
            } else {
                const int64_t na = nk + m.rejected[h].count;
                if (na > 0)
                    s.entropy_unfiltered[h] = normalizeEntropy(
                        psdMatrixEntropy(centredMoment(m.kept[h], &m.rejected[h]), m.D, s.curve_alpha),
                        options_.normalization, na, m.D);
            }
        }
    });
    if (options_.prompt_level) {
        s.entropy_prompt_level.assign(m.L, kNaN);
        if (m.prompt_level_count > 0)
            for (int h = 0; h < m.L; ++h) s.entropy_prompt_level[h] = m.prompt_level_sum[h] / m.prompt_level_count;
    }
    if (options_.dataset_level) {
        s.entropy_dataset_level.assign(m.L, kNaN);
        if (m.pooled_count > 0)
            for (int h = 0; h < m.L; ++h)
                s.entropy_dataset_level[h] =
                    matrixEntropy(m.pooled[h], m.pooled_count, m.D, options_.alpha, options_.normalization);
    }

    // CKA: committed minibatches, or the partial one while none is complete.
    MatrixD hsic = m.hsic_sum;
    int64_t batches = m.cka_batches;
    const int64_t min_batch = options_.cka == CkaEstimator::MinibatchUnbiased ? 4 : 2;
    if (batches == 0 && m.cka_fill >= min_batch) {
        std::vector<std::vector<float>> part(m.L);
        for (int h = 0; h < m.L; ++h) part[h].assign(m.cka_buffer[h].begin(), m.cka_buffer[h].begin() + m.cka_fill * m.D);
        hsic = batchHsic(part, m.cka_fill, m.D, options_.cka);
        batches = 1;
    }
    s.cka_batches = batches;
    if (batches > 0) {
        s.cka.assign(static_cast<size_t>(m.L) * m.L, kNaN);
        for (int a = 0; a < m.L; ++a)
            for (int b = 0; b < m.L; ++b) {
                const double denom = std::sqrt(hsic(a, a) * hsic(b, b));
                double v = a == b ? 1.0 : (denom > 0 ? hsic(a, b) / denom : kNaN);
                s.cka[a * m.L + b] = v;
            }
        s.boundaries = detectBoundaries(s.cka, m.L, options_.boundaries);
    }
    s.segments = segmentsFromBoundaries(s.boundaries, m.L);
    return s;
}

std::shared_ptr<const LayerSetEntropy> LayerAnalyzer::setEntropyModel() const {
    std::lock_guard<std::mutex> lock(mutex_);
    const Impl& m = *impl_;
    const int64_t n = m.reservoir_fill;
    if (!m.initialised || n < 2) throw Error("analysis", "fewer than 2 tokens kept: cannot score layer sets");
    std::vector<std::vector<double>> grams(m.L);
    parallelFor(m.L, workerThreads(), [&](int h) {
        // Centre the reservoir rows, then the token Gram.
        std::vector<float> rows(m.reservoir[h].begin(), m.reservoir[h].begin() + n * m.D);
        std::vector<double> mean(m.D, 0.0);
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < m.D; ++j) mean[j] += rows[i * m.D + j];
        for (auto& v : mean) v /= n;
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < m.D; ++j) rows[i * m.D + j] = static_cast<float>(rows[i * m.D + j] - mean[j]);
        std::vector<float> g(static_cast<size_t>(n * n));
        blas::gramOfTokensLower(rows.data(), static_cast<int>(n), static_cast<int>(m.D), g.data());
        auto& out = grams[h];
        out.resize(static_cast<size_t>(n * n));
        for (int64_t c = 0; c < n; ++c)
            for (int64_t r = c; r < n; ++r) out[r * n + c] = out[c * n + r] = g[c * n + r];
    });
    return std::make_shared<LayerSetEntropy>(std::move(grams), n, m.D, options_.alpha, options_.normalization);
}

// ---------------------------------------------------------------------------------------

LayerSetEntropy::LayerSetEntropy(std::vector<std::vector<double>> grams, int64_t n, int64_t hidden_size,
                                 double alpha, EntropyNormalization normalization)
    : grams_(std::move(grams)), n_(n), hidden_size_(hidden_size), alpha_(alpha), normalization_(normalization) {
    for (const auto& g : grams_)
        if (static_cast<int64_t>(g.size()) != n * n) throw Error("set entropy", "Gram size mismatch");
}

double LayerSetEntropy::entropy(const std::vector<int>& states, SetObjective objective) const {
    if (states.empty()) throw Error("set entropy", "empty layer set");
    for (int h : states)
        if (h < 0 || h >= numStates()) throw Error("set entropy", "state " + std::to_string(h) + " out of range");
    const size_t nn = static_cast<size_t>(n_ * n_);
    std::vector<double> a(nn, objective == SetObjective::Concat ? 0.0 : 1.0);
    for (int h : states) {
        const auto& g = grams_[h];
        if (objective == SetObjective::Concat) {
            for (size_t i = 0; i < nn; ++i) a[i] += g[i];
        } else {
            double trace = 0;
            for (int64_t i = 0; i < n_; ++i) trace += g[i * n_ + i];
            const double inv = trace > 0 ? 1.0 / trace : 0.0;
            for (size_t i = 0; i < nn; ++i) a[i] *= g[i] * inv;
        }
    }
    const double e = psdMatrixEntropy(std::move(a), n_, alpha_);
    return normalizeEntropy(e, normalization_, n_, hidden_size_ * static_cast<int64_t>(states.size()));
}

// ---------------------------------------------------------------------------------------

int64_t estimateAnalyzerBytes(int64_t num_states, int64_t hidden_size, const AnalysisOptions& options,
                              int64_t max_prompt_tokens, int workers) {
    const int64_t L = std::max<int64_t>(1, num_states), D = std::max<int64_t>(1, hidden_size);
    const int64_t T = std::max<int64_t>(1, max_prompt_tokens);
    const int64_t packed = D * (D + 1) / 2 * 8;
    const bool rejected = options.unfiltered_curve && options.filter.mode != TokenFilterMode::None;
    const int64_t moments = L * packed * (rejected ? 2 : 1);
    const int64_t scratch = std::max(1, workers) * (D * D * 4 + T * D * 4);   // per-worker SYRK + row buffers
    // The warm-up holds whole prompts until it has warmup_tokens: up to one prompt more.
    const int64_t warmup = options.filter.mode == TokenFilterMode::Percentile ? options.filter.warmup_tokens + T : 0;
    const int64_t buffers = (options.cka_batch_tokens + options.reservoir_tokens + warmup) * L * D * 4;
    const int64_t snapshot = std::max(1, workers) * D * D * 8;
    const int64_t R = options.reservoir_tokens;
    const int64_t set_model = L * R * R * 8;
    return moments + scratch + buffers + snapshot + set_model + L * L * 8;
}

std::vector<int> detectBoundaries(const std::vector<double>& cka, int L, const BoundaryOptions& options) {
    if (L < 2 || static_cast<int>(cka.size()) != L * L) return {};
    std::vector<double> drop(L, 0.0);  // drop[h] = 1 - CKA(h-1, h), h >= 1
    std::vector<double> finite;
    for (int h = 1; h < L; ++h) {
        double v = cka[(h - 1) * L + h];
        drop[h] = std::isfinite(v) ? 1.0 - v : 0.0;
        finite.push_back(drop[h]);
    }
    double threshold = options.threshold;
    if (!(threshold > 0)) {
        std::vector<double> sorted = finite;
        std::sort(sorted.begin(), sorted.end());
        const size_t k = sorted.size();
        const double median = k % 2 ? sorted[k / 2] : 0.5 * (sorted[k / 2 - 1] + sorted[k / 2]);
        threshold = std::max(0.02, 2.0 * median);
    }
    std::vector<int> order;
    for (int h = 1; h < L; ++h)
        if (drop[h] > threshold) order.push_back(h);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return drop[a] > drop[b]; });
    const int min_len = std::max(1, options.min_segment_length);
    std::vector<int> accepted;
    for (int h : order) {
        if (options.max_boundaries > 0 && static_cast<int>(accepted.size()) >= options.max_boundaries) break;
        if (h < min_len || L - h < min_len) continue;
        bool ok = true;
        for (int a : accepted) ok = ok && std::abs(a - h) >= min_len;
        if (ok) accepted.push_back(h);
    }
    std::sort(accepted.begin(), accepted.end());
    return accepted;
}

std::vector<LayerSegment> segmentsFromBoundaries(const std::vector<int>& boundaries, int L) {
    std::vector<LayerSegment> out;
    if (L <= 0) return out;
    int first = 0;
    for (int b : boundaries) {
        if (b <= first || b >= L) continue;
        out.push_back({first, b - 1});
        first = b;
    }
    out.push_back({first, L - 1});
    return out;
}

}  // namespace wl
