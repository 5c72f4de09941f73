#pragma once
// Evaluating a trained draft by speculative decoding (plain C++ interface; see
// speculative_decoding.h for the algorithm).
//   tau (block efficiency) = tokens committed by verify rounds / verify rounds
//                          = mean (accepted draft tokens + 1) per round.
//   acceptance[j] = share of rounds in which draft position j+1 was accepted.
//   speedup = plain greedy wall time / speculative wall time over the same prompts.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "util/cancel.h"

namespace wl {

struct DraftEvalOptions {
    std::string model_path;
    std::string draft_dir;
    std::string data_path;           // empty = bundled default calibration set
    std::string tokenizer_path;
    int64_t k = 4;                   // draft tokens per round (chain), or the tree's depth
    int64_t tree_top_k = 1;          // > 1: draft a tree keeping this many nodes per level
    int64_t max_new_tokens = 64;
    int64_t max_prompts = 16;        // 0 = all
    int64_t prompt_offset = 0;       // skip the first prompts (e.g. those used for training)
    int64_t max_prompt_tokens = 64;
    bool add_bos = true;
    std::string chat_template = "none";
    bool run_baseline = true;        // plain greedy decoding for speedup + lossless check
    bool stop_at_eos = true;
    std::string device = "auto";
    int64_t threads = 0;
};

struct DraftEvalResult {
    int64_t prompts = 0;
    int64_t k = 0;
    int64_t tree_top_k = 1;
    int64_t rounds = 0;
    int64_t round_tokens = 0;
    int64_t generated_tokens = 0;    // including each prompt's first (prefill) token
    double tau = 0.0;
    std::vector<double> acceptance;  // [k]
    double verify_tokens_per_round = 0.0;   // k + 1 for a chain; up to top_k * k + 1 for a tree
    double spec_seconds = 0.0;
    double baseline_seconds = 0.0;
    double speedup = 0.0;            // 0 when no baseline ran
    bool lossless_checked = false;
    int64_t lossless_mismatches = 0; // prompts whose speculative output differs from greedy
};

DraftEvalResult runDraftEval(const DraftEvalOptions& options, CancelToken* cancel = nullptr,
                             const std::function<void(int64_t done, int64_t total)>& progress = {});

}  // namespace wl
