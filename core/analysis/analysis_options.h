#pragma once
// Options of the streaming layer analysis (token filter, matrix entropy, CKA, boundaries).
// Plain C++ (no torch, no Qt): safe for GUI code. JSON forms: analysis/analysis_json.h.
#include <cstdint>
#include <string>

namespace wl {

// Which tokens enter the statistics. Token entropy = CapturedPrompt::token_entropy (nats).
enum class TokenFilterMode {
    None,        // keep every (non-dropped) token
    Threshold,   // keep tokens with entropy >= threshold_nats
    Percentile,  // keep tokens with entropy >= the `percentile`-th percentile (default)
};

struct TokenFilterOptions {
    TokenFilterMode mode = TokenFilterMode::Percentile;
    double threshold_nats = 1.0;    // Threshold mode
    double percentile = 50.0;       // Percentile mode, in [0, 100): 50 keeps the upper half
    // Percentile mode in a stream: the first prompts (until warmup_tokens candidate tokens)
    // are buffered, the threshold is the exact percentile of that warm-up window, then it is
    // frozen and applied to the buffered and to all later prompts. Memory of the buffer:
    // warmup_tokens x num_states x D floats. The exact percentile over all tokens seen is
    // reported beside it (AnalysisSnapshot::entropy_percentile_all) so the drift is visible.
    int64_t warmup_tokens = 1024;
    bool drop_bos = true;           // drop position 0 when the prompt starts with BOS (attention sink)
    int64_t drop_first = 0;         // also drop positions < drop_first (further sink positions)
};

// Divides a matrix entropy (nats) by a log so it lies in [0, 1].
enum class EntropyNormalization { Raw, LogN, LogD, LogMinND };

// Linear CKA estimator used by the streaming analyzer (Nguyen et al. 2021 minibatch CKA:
// HSIC averaged over fixed-size token minibatches, then the CKA ratio).
enum class CkaEstimator { MinibatchUnbiased, MinibatchBiased };

// Boundaries from the CKA matrix: d_h = 1 - CKA(h-1, h) for adjacent states. A boundary
// at h (a cut between states h-1 and h) when d_h > threshold. threshold <= 0 means "auto":
// max(0.02, 2 * median(d)). max_boundaries > 0 keeps only the largest drops.
struct BoundaryOptions {
    double threshold = 0.0;
    int max_boundaries = 0;
    int min_segment_length = 1;     // boundaries closer than this to another are dropped
};

struct AnalysisOptions {
    TokenFilterOptions filter;

    double alpha = 1.0;             // Renyi order (> 0); 1 = von Neumann/Shannon
    EntropyNormalization normalization = EntropyNormalization::Raw;

    // Matrix-entropy variants ("Layer by Layer", Skean et al. 2025):
    bool token_level = true;        // all kept tokens as one matrix (default; always computed: ELSI needs it)
    bool prompt_level = false;      // per prompt (its kept tokens), averaged over prompts
    bool dataset_level = false;     // one mean-pooled row per prompt (keeps P x states x D floats)
    bool unfiltered_curve = true;   // also a token-level curve over all non-dropped tokens

    CkaEstimator cka = CkaEstimator::MinibatchUnbiased;
    int64_t cka_batch_tokens = 256; // minibatch size n (>= 4)

    // Set-level objectives (ELSI) use a uniform reservoir sample of kept tokens (Vitter's
    // algorithm R), exact when the kept tokens fit. Memory: reservoir x num_states x D floats.
    int64_t reservoir_tokens = 1024;
    uint64_t seed = 1234;

    // Live snapshots eigen-solve D x D per state only when D <= this; above it a live
    // snapshot reports the alpha = 2 curve (no eigensolve) and says so (curve_alpha).
    int64_t live_eig_max_dim = 512;

    BoundaryOptions boundaries;
};

const char* toString(TokenFilterMode m);
const char* toString(EntropyNormalization n);
const char* toString(CkaEstimator e);
// Parse the names above ("none","threshold","percentile"; "raw","logn","logd","logmin";
// "minibatch-unbiased","minibatch-biased"). Throw wl::Error(source, ...) on unknown names.
TokenFilterMode parseTokenFilterMode(const std::string& s, const std::string& source = "");
EntropyNormalization parseEntropyNormalization(const std::string& s, const std::string& source = "");
CkaEstimator parseCkaEstimator(const std::string& s, const std::string& source = "");

}  // namespace wl
