#include "selection/baselines.h"

#include <algorithm>

namespace wl {

std::vector<int> eagle3DefaultStates(int n, std::vector<std::string>* warnings) {
    std::vector<int> raw = {2, n / 2, n - 3};
    std::vector<int> out;
    bool clamped = false;
    for (int h : raw) {
        int c = std::clamp(h, 0, std::max(0, n));
        clamped = clamped || c != h;
        if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
    std::sort(out.begin(), out.end());
    if (warnings && (clamped || out.size() != raw.size()))
        warnings->push_back("EAGLE3 default [2, N//2, N-3] for N = " + std::to_string(n) +
                            " decoder layers collapses to " + std::to_string(out.size()) + " distinct state(s)");
    return out;
}

std::vector<int> eagle2DefaultStates(int n) { return {std::max(0, n)}; }

}  // namespace wl
