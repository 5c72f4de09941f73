// ELSI / ELSI-C beam search and exhaustive search over layer sets.
#include "selection/elsi.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "selection/baselines.h"
#include "util/error.h"

namespace wl {

const char* toString(SelectionMethod m) { return m == SelectionMethod::Elsi ? "elsi" : "elsi-c"; }
const char* toString(DiversityRule r) { return r == DiversityRule::OnePerSegment ? "segment" : "penalty"; }
const char* toString(SetObjective o) { return o == SetObjective::Concat ? "concat" : "hadamard"; }

SelectionMethod parseSelectionMethod(const std::string& s, const std::string& source) {
    if (s == "elsi") return SelectionMethod::Elsi;
    if (s == "elsi-c" || s == "elsic") return SelectionMethod::ElsiC;
    throw Error(source, "unknown selection method '" + s + "' (elsi, elsi-c)");
}
DiversityRule parseDiversityRule(const std::string& s, const std::string& source) {
    if (s == "segment") return DiversityRule::OnePerSegment;
    if (s == "penalty") return DiversityRule::CkaPenalty;
    throw Error(source, "unknown diversity rule '" + s + "' (segment, penalty)");
}
SetObjective parseSetObjective(const std::string& s, const std::string& source) {
    if (s == "concat") return SetObjective::Concat;
    if (s == "hadamard") return SetObjective::Hadamard;
    throw Error(source, "unknown set objective '" + s + "' (concat, hadamard)");
}

namespace {

// Everything the search needs besides the entropy: candidates, feasibility and score.
struct SearchRules {
    int L = 0;
    std::vector<int> candidates;
    bool penalty = false;
    double lambda = 0;
    const std::vector<double>* cka = nullptr;
    std::vector<int> segment_of;   // empty = no segment rule
    int per_segment_cap = 1;
    std::vector<std::string> warnings;
    std::vector<int> boundaries;
    std::vector<LayerSegment> segments;

    bool feasible(const std::vector<int>& set) const {
        if (segment_of.empty()) return true;
        std::map<int, int> used;
        for (int h : set)
            if (++used[segment_of[h]] > per_segment_cap) return false;
        return true;
    }
    double score(const std::vector<int>& set, double entropy) const {
        if (!penalty) return entropy;
        double sum = 0;
        for (size_t i = 0; i < set.size(); ++i)
            for (size_t j = i + 1; j < set.size(); ++j) {
                double c = (*cka)[set[i] * L + set[j]];
                sum += std::isfinite(c) ? c : 0.0;
            }
        return entropy - lambda * sum;
    }
};

SearchRules makeRules(int L, const std::vector<double>& cka, const SelectionOptions& o) {
    SearchRules r;
    r.L = L;
    if (L < 1) throw Error("selection", "no hidden states to choose from");
    if (o.m < 1 || o.m > 8) throw Error("selection", "m must be in 1..8 (got " + std::to_string(o.m) + ")");
    if (o.beam_width < 1) throw Error("selection", "beam width must be >= 1");
    if (!o.candidates.empty()) {
        std::set<int> c(o.candidates.begin(), o.candidates.end());
        for (int h : c)
            if (h < 0 || h >= L)
                throw Error("selection", "candidate state " + std::to_string(h) + " outside 0.." + std::to_string(L - 1));
        r.candidates.assign(c.begin(), c.end());
    } else {
        for (int h = o.include_embedding ? 0 : 1; h < L; ++h) r.candidates.push_back(h);
    }
    if (static_cast<int>(r.candidates.size()) < o.m)
        throw Error("selection", "m = " + std::to_string(o.m) + " but only " + std::to_string(r.candidates.size()) +
                                     " candidate states");
    const bool have_cka = static_cast<int>(cka.size()) == L * L;
    if (have_cka) {
        r.boundaries = detectBoundaries(cka, L, o.boundaries);
    }
    r.segments = segmentsFromBoundaries(r.boundaries, L);
    if (o.method == SelectionMethod::ElsiC) {
        if (!have_cka) throw Error("selection", "ELSI-C needs the L x L CKA matrix");
        r.cka = &cka;
        if (o.diversity == DiversityRule::CkaPenalty) {
            r.penalty = true;
            r.lambda = o.penalty_lambda;
        } else {
            auto assign = [&] {
                r.segments = segmentsFromBoundaries(r.boundaries, L);
                r.segment_of.assign(L, 0);
                for (size_t s = 0; s < r.segments.size(); ++s)
                    for (int h = r.segments[s].first; h <= r.segments[s].last; ++h) r.segment_of[h] = static_cast<int>(s);
                std::set<int> usable;
                for (int h : r.candidates) usable.insert(r.segment_of[h]);
                return static_cast<int>(usable.size());
            };
            int k = assign();
            // Too few segments among the candidates for m states: with the automatic threshold,
            // add cuts at the largest remaining adjacent-CKA drops inside the candidate range.
            if (k < o.m && !(o.boundaries.threshold > 0)) {
                std::vector<std::pair<double, int>> drops;
                for (int h = r.candidates.front() + 1; h <= r.candidates.back(); ++h)
                    if (std::find(r.boundaries.begin(), r.boundaries.end(), h) == r.boundaries.end())
                        drops.push_back({1.0 - cka[(h - 1) * L + h], h});
                std::sort(drops.begin(), drops.end(), [](auto& a, auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
                int added = 0;
                for (const auto& d : drops) {
                    if (k >= o.m) break;
                    r.boundaries.push_back(d.second);
                    std::sort(r.boundaries.begin(), r.boundaries.end());
                    k = assign();
                    ++added;
                }
                if (added > 0)
                    r.warnings.push_back("ELSI-C: the CKA boundaries gave fewer than m = " + std::to_string(o.m) +
                                         " segments among the candidates; added " + std::to_string(added) +
                                         " cut(s) at the largest adjacent-CKA drops");
            }
            if (k < o.m) {
                r.per_segment_cap = (o.m + k - 1) / k;
                r.warnings.push_back("ELSI-C: " + std::to_string(k) + " segment(s) hold candidates but m = " +
                                     std::to_string(o.m) + "; allowing up to " + std::to_string(r.per_segment_cap) +
                                     " states per segment");
            }
        }
    }
    return r;
}

bool better(const ScoredSet& a, const ScoredSet& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.states < b.states;  // deterministic ties
}

ScoredSet scoreSet(const SetEntropyFn& entropy, const SearchRules& r, std::vector<int> set) {
    std::sort(set.begin(), set.end());
    ScoredSet s;
    s.entropy = entropy(set);
    s.score = r.score(set, s.entropy);
    s.states = std::move(set);
    return s;
}

}  // namespace

SelectionResult selectLayers(const SetEntropyFn& entropy, int L, const std::vector<double>& cka,
                             const SelectionOptions& options, const BeamStepFn& on_step, CancelToken* cancel) {
    const auto start = std::chrono::steady_clock::now();
    SearchRules rules = makeRules(L, cka, options);
    SelectionResult result;
    result.options = options;
    result.num_states = L;
    result.candidates = rules.candidates;
    result.boundaries = rules.boundaries;
    result.segments = rules.segments;
    result.warnings = rules.warnings;

    std::vector<ScoredSet> beam{ScoredSet{}};
    for (int step = 1; step <= options.m; ++step) {
        std::set<std::vector<int>> seen;
        BeamStep record;
        record.step = step;
        for (const auto& base : beam) {
            for (int c : rules.candidates) {
                if (std::find(base.states.begin(), base.states.end(), c) != base.states.end()) continue;
                std::vector<int> set = base.states;
                set.push_back(c);
                std::sort(set.begin(), set.end());
                if (!rules.feasible(set) || !seen.insert(set).second) continue;
                if (cancel) cancel->checkpoint();
                record.candidates.push_back(scoreSet(entropy, rules, set));
            }
        }
        if (record.candidates.empty())
            throw Error("selection", "no feasible layer set of size " + std::to_string(step) + " under the diversity rule");
        std::sort(record.candidates.begin(), record.candidates.end(), better);
        const size_t keep = std::min<size_t>(options.beam_width, record.candidates.size());
        record.kept.assign(record.candidates.begin(), record.candidates.begin() + keep);
        beam = record.kept;
        if (on_step) on_step(record);
        result.trace.push_back(std::move(record));
    }
    result.chosen = beam.front();

    const int n_layers = L - 1;
    std::vector<int> e3 = eagle3DefaultStates(n_layers, &result.warnings);
    std::vector<int> e2 = eagle2DefaultStates(n_layers);
    for (auto [name, rule, states] : {std::make_tuple(std::string("EAGLE2"), std::string("[N-1] (output of the last layer)"), e2),
                                      std::make_tuple(std::string("EAGLE3"), std::string("[2, N//2, N-3]"), e3)}) {
        BaselineSet b;
        b.name = name;
        b.rule = rule;
        b.set = scoreSet(entropy, rules, states);
        result.baselines.push_back(std::move(b));
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

SelectionResult selectLayers(const LayerAnalyzer& analyzer, const SelectionOptions& options,
                             const BeamStepFn& on_step, CancelToken* cancel) {
    AnalysisSnapshot snap = analyzer.snapshot(true);
    auto model = analyzer.setEntropyModel();
    SelectionOptions o = options;
    const SetObjective objective = o.objective;
    SetEntropyFn fn = [model, objective](const std::vector<int>& set) { return model->entropy(set, objective); };
    return selectLayers(fn, static_cast<int>(snap.num_states), snap.cka, o, on_step, cancel);
}

std::vector<ScoredSet> exhaustiveSearch(const SetEntropyFn& entropy, int L, const std::vector<double>& cka,
                                        const SelectionOptions& options) {
    SearchRules rules = makeRules(L, cka, options);
    const int n = static_cast<int>(rules.candidates.size()), m = options.m;
    std::vector<ScoredSet> out;
    std::vector<int> idx(m);
    for (int i = 0; i < m; ++i) idx[i] = i;
    while (true) {
        std::vector<int> set(m);
        for (int i = 0; i < m; ++i) set[i] = rules.candidates[idx[i]];
        if (rules.feasible(set)) out.push_back(scoreSet(entropy, rules, set));
        int i = m - 1;
        while (i >= 0 && idx[i] == n - m + i) --i;
        if (i < 0) break;
        ++idx[i];
        for (int j = i + 1; j < m; ++j) idx[j] = idx[j - 1] + 1;
    }
    std::sort(out.begin(), out.end(), better);
    return out;
}

}  // namespace wl
