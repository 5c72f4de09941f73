#include "draft/draft_vocab.h"

#include <algorithm>
#include <numeric>

#include "util/error.h"

namespace wl {

std::vector<int64_t> DraftVocab::targetIds() const {
    std::vector<int64_t> ids(d2t.size());
    for (size_t i = 0; i < d2t.size(); ++i) ids[i] = static_cast<int64_t>(i) + d2t[i];
    return ids;
}

std::vector<int64_t> DraftVocab::draftIdsOfTargets() const {
    std::vector<int64_t> map(t2d.size(), -1);
    for (size_t i = 0; i < d2t.size(); ++i) map[static_cast<size_t>(static_cast<int64_t>(i) + d2t[i])] = static_cast<int64_t>(i);
    return map;
}

DraftVocab buildDraftVocab(const std::vector<int64_t>& counts, int64_t draft_vocab_size) {
    const int64_t vocab = static_cast<int64_t>(counts.size());
    if (draft_vocab_size <= 0 || draft_vocab_size > vocab)
        throw Error("draft vocabulary", "size " + std::to_string(draft_vocab_size) + " must be in 1.." + std::to_string(vocab));
    // Seen tokens by frequency, then (as SpecForge pads) unseen ids from 0 upwards.
    std::vector<int64_t> order(static_cast<size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const bool sa = counts[a] > 0, sb = counts[b] > 0;
        if (sa != sb) return sa;
        if (sa) return counts[a] > counts[b];
        return a < b;
    });
    std::vector<int64_t> used(order.begin(), order.begin() + draft_vocab_size);
    std::sort(used.begin(), used.end());
    DraftVocab v;
    v.d2t.resize(used.size());
    v.t2d.assign(static_cast<size_t>(vocab), 0);
    for (size_t i = 0; i < used.size(); ++i) {
        v.d2t[i] = used[i] - static_cast<int64_t>(i);
        v.t2d[static_cast<size_t>(used[i])] = 1;
    }
    return v;
}

}  // namespace wl
