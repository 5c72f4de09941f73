#pragma once
// Greedy pair merging shared by the llama2.c and Hugging Face BPE tokenizers: repeatedly
// merge the adjacent pair with the best (lowest) priority, leftmost among ties, until no
// pair merges. A heap with lazy invalidation gives the same result as the naive rescan
// (llama2.c's run.c) in O(n log n), so long texts stay fast.
#include <cstdint>
#include <vector>

namespace wl {

struct PairMerge {
    double priority;   // lower merges first (a BPE rank, or minus a llama2.c score)
    int32_t merged;    // id of the merged token
};

// `lookup(left, right, out)` returns true and fills `out` when the pair merges.
template <class Lookup>
void mergePairs(std::vector<int32_t>& ids, const Lookup& lookup);

}  // namespace wl

#include "tokenizer/bpe_merge_impl.h"
