#pragma once
// Speculative decoding with an EAGLE3 draft: chain drafting of k tokens (or a token tree),
// greedy verification
// by the target in one forward pass, KV caches for both (the target's cache is cut back with
// KVCache::truncate on rejection). Greedy verification makes the output identical to plain
// greedy decoding of the target. Includes torch.
#include <cstdint>
#include <vector>

#include "draft/eagle3_draft.h"
#include "util/cancel.h"

namespace wl {

class CausalLM;

struct SpecDecodeStats {
    int64_t rounds = 0;                 // verify forward passes
    int64_t round_tokens = 0;           // tokens committed by those rounds (accepted + 1 each)
    std::vector<int64_t> accepted_at;   // [k]: rounds whose draft token j was accepted
    int64_t verify_tokens = 0;          // tokens fed to the verify passes (cost of a tree)
    double seconds = 0.0;
    void add(const SpecDecodeStats& other);
    double tau() const { return rounds ? double(round_tokens) / double(rounds) : 0.0; }
};

struct SpecDecodeOutput {
    std::vector<int64_t> tokens;        // generated ids (prompt excluded)
    SpecDecodeStats stats;
};

// Generates up to `max_new` tokens after `prompt` (stops after EOS when stop_at_eos).
SpecDecodeOutput speculativeGenerate(CausalLM& target, Eagle3Draft& draft, const std::vector<int64_t>& prompt,
                                     int64_t k, int64_t max_new, bool stop_at_eos = true);

// Tree drafting (EAGLE-2's dynamic tree): each level keeps the `top_k` candidates with the
// highest cumulative draft log-probability among the top_k children of the previous level's
// nodes, down to `depth` levels (at most top_k * depth nodes). The target verifies the whole
// tree in one pass with a tree attention mask (ForwardOptions::tree_mask) and commits the
// longest path that matches its greedy choice plus its own next token, so the output equals
// plain greedy decoding. top_k = 1 drafts the same chain as speculativeGenerate(k = depth).
SpecDecodeOutput speculativeGenerateTree(CausalLM& target, Eagle3Draft& draft, const std::vector<int64_t>& prompt,
                                         int64_t depth, int64_t top_k, int64_t max_new, bool stop_at_eos = true);

// Plain decoding with the target's KV cache, one token per forward: greedy when
// temperature <= 0, else sampled with a generator seeded by `seed`.
std::vector<int64_t> decodeWithTarget(CausalLM& target, const std::vector<int64_t>& prompt, int64_t max_new,
                                      bool stop_at_eos = true, double temperature = 0.0, uint64_t seed = 0);

struct DraftEvalResult;   // eval_task.h

// Runs speculative decoding (and plain greedy decoding for speed and losslessness) over
// prompts; fills tau, per-position acceptance, timings, lossless check. tree_top_k > 1 drafts
// trees of depth k (speculativeGenerateTree), else chains of k tokens.
DraftEvalResult evaluateDraft(CausalLM& target, Eagle3Draft& draft, const std::vector<std::vector<int64_t>>& prompts,
                              int64_t k, int64_t max_new, bool run_baseline, bool stop_at_eos = true,
                              CancelToken* cancel = nullptr,
                              const std::function<void(int64_t done, int64_t total)>& progress = {},
                              int64_t tree_top_k = 1);

}  // namespace wl
