#pragma once
// Streaming per-layer analysis: fed one CapturedPrompt at a time, it keeps bounded
// statistics and can report a snapshot (entropy curves, CKA matrix, boundaries) at any time.
// Plain C++ (no torch, no Qt): safe to use from GUI code and worker threads.
//
// Indices: state h = 0..num_states-1 is Hugging Face hidden_states[h] (see
// capture/captured_prompt.h; num_states = num decoder layers + 1).
//
// Definition of the token-level matrix entropy of state h (what streams exactly):
//   u_t = z_t / ||z_t||  (row-normalise each token), U_c = U - 1 mu^T (centre columns),
//   C = U_c^T U_c = sum u u^T - n mu mu^T  (D x D, float64),  p = eig(C) / tr(C),
//   S_alpha = ln(sum p^alpha) / (1 - alpha),  alpha = 1: -sum p ln p.
// The nonzero spectrum of C equals that of the token Gram U_c U_c^T, so this is the
// "smaller Gram" form. Row-normalising BEFORE centring is the order that streams exactly
// (row norms do not depend on the mean); analysis/matrix_entropy.h has the direct formula.
//
// Complexity per prompt of T kept tokens, L states, hidden size D:
//   entropy: one f32 SYRK (T x D) per state into f64 accumulators -> O(L T D^2) flops;
//   CKA: per full minibatch of n tokens, one n x n Gram per state O(L n^2 D), then
//        L^2/2 Frobenius products O(L^2 n^2);
//   snapshot: one D x D eigensolve per state (dsyevd, O(L D^3)) unless alpha = 2 (O(L D^2)).
// Memory (independent of the number of tokens N):
//   L D(D+1)/2 doubles (x2 with unfiltered_curve and a filter) + one D x D float scratch
//   + (n + reservoir + warm-up) x L x D floats + L^2 doubles; a full snapshot adds one
//   D x D double per worker thread. E.g. L = 37, D = 2560: ~1.9 GB (x2 unfiltered).
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "analysis/analysis_options.h"
#include "capture/captured_prompt.h"

namespace wl {

struct LayerSegment {
    int first = 0;   // first state index (inclusive)
    int last = 0;    // last state index (inclusive)
};

struct AnalysisSnapshot {
    int64_t num_states = 0;          // L = num decoder layers + 1
    int64_t hidden_size = 0;         // D
    int64_t prompts_seen = 0;
    int64_t tokens_seen = 0;         // all real tokens handed in
    int64_t tokens_candidates = 0;   // after dropping BOS / sink positions
    int64_t tokens_kept = 0;         // after the entropy filter (in the statistics)
    int64_t tokens_pending = 0;      // buffered in the percentile warm-up, not yet counted

    double entropy_threshold_nats = 0.0;   // threshold in use (NaN while warming up / mode None)
    bool threshold_frozen = false;         // percentile mode: warm-up finished
    double entropy_percentile_all = 0.0;   // exact percentile over all candidate tokens so far
    double mean_token_entropy = 0.0;       // over candidate tokens

    double curve_alpha = 1.0;        // alpha the curves below were computed with
    EntropyNormalization normalization = EntropyNormalization::Raw;
    std::vector<double> entropy_filtered;       // [L] token-level, kept tokens
    std::vector<double> entropy_unfiltered;     // [L] token-level, all candidate tokens (or empty)
    std::vector<double> entropy_prompt_level;   // [L] or empty
    std::vector<double> entropy_dataset_level;  // [L] or empty

    std::vector<double> cka;         // [L*L] row-major, symmetric, unit diagonal (or empty)
    int64_t cka_batches = 0;         // minibatches in the CKA estimate
    CkaEstimator cka_estimator = CkaEstimator::MinibatchUnbiased;

    std::vector<int> boundaries;     // b: a cut between states b-1 and b (ascending)
    std::vector<LayerSegment> segments;  // cover 0..L-1, split at boundaries

    // Histogram of candidate-token entropies for display: edges [bins+1], counts [bins].
    std::vector<double> token_entropy_edges;
    std::vector<int64_t> token_entropy_counts;

    bool finished = false;           // finish() ran: exact final values
    double seconds_in_add = 0.0;     // time spent in add() (statistics), for throughput display
};

// Set-level matrix entropies over the cached reservoir tokens (no activation re-reading).
// For a set S of states: concatenation [U_c,l for l in S] (per-layer row-normalised,
// reservoir-centred) has token Gram sum_{l in S} K_l; the Hadamard objective uses
// (prod_l K_l / tr K_l) elementwise, trace-normalised (Sanchez Giraldo et al. joint entropy).
enum class SetObjective { Concat, Hadamard };

class LayerSetEntropy {
public:
    // grams[h]: centred token Gram K_h (n x n, row-major) of state h over the reservoir.
    LayerSetEntropy(std::vector<std::vector<double>> grams, int64_t n, int64_t hidden_size,
                    double alpha, EntropyNormalization normalization);
    double entropy(const std::vector<int>& states, SetObjective objective) const;
    int64_t numStates() const { return static_cast<int64_t>(grams_.size()); }
    int64_t numTokens() const { return n_; }

private:
    std::vector<std::vector<double>> grams_;
    int64_t n_ = 0, hidden_size_ = 0;
    double alpha_ = 1.0;
    EntropyNormalization normalization_ = EntropyNormalization::Raw;
};

class LayerAnalyzer {
public:
    explicit LayerAnalyzer(AnalysisOptions options = {});
    ~LayerAnalyzer();
    LayerAnalyzer(const LayerAnalyzer&) = delete;
    LayerAnalyzer& operator=(const LayerAnalyzer&) = delete;

    // Adds one prompt. The first prompt fixes num_states and D; a later mismatch, NaN/Inf
    // states or a wrong-sized token_entropy throw wl::Error("prompt <i>", ...).
    // Thread-safe against snapshot() (an internal mutex).
    void add(const CapturedPrompt& prompt);
    // Flushes the warm-up buffer and the partial CKA minibatch (>= 4 tokens). add() after
    // finish() throws. Idempotent.
    void finish();

    // `full` = false: a live estimate (see AnalysisOptions::live_eig_max_dim). `full` = true:
    // exact for what is in the statistics (valid before finish(); costs L eigensolves of
    // D x D). Prompts still in the percentile warm-up buffer (tokens_pending) enter the
    // statistics when the warm-up completes or at finish().
    AnalysisSnapshot snapshot(bool full = false) const;

    // Set-entropy model over the reservoir for ELSI. Throws wl::Error if no token was kept.
    std::shared_ptr<const LayerSetEntropy> setEntropyModel() const;

    const AnalysisOptions& options() const { return options_; }
    int64_t numStates() const;
    int64_t hiddenSize() const;

private:
    struct Impl;
    void process(const CapturedPrompt& prompt);   // caller holds mutex_
    void freezeAndFlushWarmup();                  // caller holds mutex_
    AnalysisOptions options_;
    std::unique_ptr<Impl> impl_;
    mutable std::mutex mutex_;
};

// Bytes an analyzer over `num_states` states of width `hidden_size` holds at its peak: the
// moment accumulators, scratch, CKA/reservoir/warm-up buffers (see "Memory" above), a full
// snapshot's D x D eigensolve copy on each of `workers` threads and the set-entropy model's
// reservoir Grams. Independent of the number of tokens (pooled dataset-level rows aside);
// the per-worker row buffers and the warm-up's last prompt grow with the longest prompt,
// `max_prompt_tokens`.
int64_t estimateAnalyzerBytes(int64_t num_states, int64_t hidden_size, const AnalysisOptions& options,
                              int64_t max_prompt_tokens, int workers = 2);

// Boundaries and segments from an L x L CKA matrix (row-major). See BoundaryOptions.
std::vector<int> detectBoundaries(const std::vector<double>& cka, int num_states,
                                  const BoundaryOptions& options);
std::vector<LayerSegment> segmentsFromBoundaries(const std::vector<int>& boundaries, int num_states);

}  // namespace wl
