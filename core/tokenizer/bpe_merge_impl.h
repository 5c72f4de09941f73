#pragma once
// Implementation of wl::mergePairs (header-only: the lookup is inlined per tokenizer).
#include <queue>

namespace wl {

template <class Lookup>
void mergePairs(std::vector<int32_t>& ids, const Lookup& lookup) {
    const int n = static_cast<int>(ids.size());
    if (n < 2) return;
    std::vector<int> prev(n), next(n);
    std::vector<char> alive(n, 1);
    for (int i = 0; i < n; ++i) {
        prev[i] = i - 1;
        next[i] = i + 1 < n ? i + 1 : -1;
    }
    struct Candidate {
        double priority;
        int left;
        int32_t left_id, right_id, merged;
        bool operator<(const Candidate& o) const {  // max-heap: invert to pop best first
            if (priority != o.priority) return priority > o.priority;
            return left > o.left;
        }
    };
    std::priority_queue<Candidate> heap;
    const auto push = [&](int left) {
        if (left < 0) return;
        const int right = next[left];
        if (right < 0) return;
        PairMerge m;
        if (lookup(ids[left], ids[right], m)) heap.push({m.priority, left, ids[left], ids[right], m.merged});
    };
    for (int i = 0; i + 1 < n; ++i) push(i);
    while (!heap.empty()) {
        const Candidate c = heap.top();
        heap.pop();
        // Stale if either side has changed since the candidate was pushed.
        if (!alive[c.left] || ids[c.left] != c.left_id) continue;
        const int right = next[c.left];
        if (right < 0 || ids[right] != c.right_id) continue;
        ids[c.left] = c.merged;
        alive[right] = 0;
        next[c.left] = next[right];
        if (next[right] >= 0) prev[next[right]] = c.left;
        push(prev[c.left]);
        push(c.left);
    }
    std::vector<int32_t> out;
    out.reserve(n);
    for (int i = 0; i >= 0; i = next[i]) out.push_back(ids[i]);
    ids.swap(out);
}

}  // namespace wl
