#pragma once
// The draft's reduced vocabulary: the `draft_vocab_size` most frequent target tokens of the
// training data, stored as SpecForge stores it (specforge/data/preprocessing.py,
// process_token_dict_to_mappings):
//   used = top-k token ids by frequency (ties: smaller id first), padded with the smallest
//          unseen ids when fewer than k tokens occur, then sorted ascending;
//   d2t[i] = used[i] - i          (offset form: target id = i + d2t[i])
//   t2d[t] = t is in `used`       (bool mask over the target vocabulary)
// Plain C++.
#include <cstdint>
#include <vector>

namespace wl {

struct DraftVocab {
    std::vector<int64_t> d2t;   // [draft_vocab_size] offsets
    std::vector<uint8_t> t2d;   // [target_vocab_size] 0/1

    int64_t draftSize() const { return static_cast<int64_t>(d2t.size()); }
    int64_t targetId(int64_t draft_id) const { return draft_id + d2t[draft_id]; }
    std::vector<int64_t> targetIds() const;        // draft id -> target id
    // Target id -> draft id, or -1 when the token is not in the draft vocabulary.
    std::vector<int64_t> draftIdsOfTargets() const;
};

// counts[t] = occurrences of target token t in the training data.
DraftVocab buildDraftVocab(const std::vector<int64_t>& counts, int64_t draft_vocab_size);

}  // namespace wl
