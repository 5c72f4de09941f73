#pragma once
// ELSI / ELSI-C: choose m hidden states for an EAGLE3 draft head by maximising the matrix
// entropy of the layer set, with a beam search over cached statistics.
// Plain C++ (no torch, no Qt). Indices are HF hidden_states[h] (see selection/baselines.h
// for how they map to framework layer ids).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/layer_analyzer.h"
#include "util/cancel.h"

namespace wl {

enum class SelectionMethod { Elsi, ElsiC };
enum class DiversityRule {
    OnePerSegment,  // ELSI-C (a): at most one state per CKA segment
    CkaPenalty,     // ELSI-C (b): score = entropy - lambda * sum of pairwise CKA in the set
};

struct SelectionOptions {
    SelectionMethod method = SelectionMethod::Elsi;
    int m = 3;                       // set size, 1..8
    int beam_width = 8;              // B >= 1
    SetObjective objective = SetObjective::Concat;
    bool include_embedding = false;  // allow h = 0 as a candidate
    std::vector<int> candidates;     // explicit candidate states; empty = all (minus h = 0)
    DiversityRule diversity = DiversityRule::OnePerSegment;   // ELSI-C only
    double penalty_lambda = 0.1;                              // ELSI-C CkaPenalty only
    BoundaryOptions boundaries;      // ELSI-C: how segments are found from the CKA matrix
};

struct ScoredSet {
    std::vector<int> states;   // ascending HF hidden-state indices
    double entropy = 0.0;      // set entropy (objective), normalised as the analysis says
    double score = 0.0;        // what the search ranks by (= entropy except with CkaPenalty)
};

struct BeamStep {
    int step = 0;                       // 1..m: sets of this size
    std::vector<ScoredSet> candidates;  // every set scored at this step (score-descending)
    std::vector<ScoredSet> kept;        // the beam after this step (best first)
};
using BeamStepFn = std::function<void(const BeamStep&)>;

struct BaselineSet {
    std::string name;          // "EAGLE2", "EAGLE3"
    std::string rule;          // e.g. "[2, N//2, N-3]"
    ScoredSet set;             // states in HF hidden_states indices
};

struct SelectionResult {
    SelectionOptions options;
    int64_t num_states = 0;            // L = num decoder layers + 1
    std::vector<int> candidates;       // the candidate states actually used
    ScoredSet chosen;
    std::vector<BeamStep> trace;
    std::vector<BaselineSet> baselines;
    std::vector<int> boundaries;       // ELSI-C (also filled for ELSI for display)
    std::vector<LayerSegment> segments;
    std::vector<std::string> warnings;
    double seconds = 0.0;
};

// Entropy of a set of states (ascending indices); the analyzer's LayerSetEntropy, or any
// function in tests.
using SetEntropyFn = std::function<double(const std::vector<int>&)>;

// Beam search. `cka` (L x L row-major) is needed for ELSI-C (segments or penalty) and may be
// empty for ELSI. Throws wl::Error("selection", ...) on impossible options (m > candidates,
// m outside 1..8, beam < 1), wl::Cancelled when `cancel` fires.
SelectionResult selectLayers(const SetEntropyFn& entropy, int num_states,
                             const std::vector<double>& cka, const SelectionOptions& options,
                             const BeamStepFn& on_step = {}, CancelToken* cancel = nullptr);

// Convenience: set model + CKA + boundaries from the analyzer (calls snapshot(true)).
SelectionResult selectLayers(const LayerAnalyzer& analyzer, const SelectionOptions& options,
                             const BeamStepFn& on_step = {}, CancelToken* cancel = nullptr);

// Best set of size m over all subsets of the candidates (same rules/score as the beam
// search would apply); returns all feasible sets, score-descending.
std::vector<ScoredSet> exhaustiveSearch(const SetEntropyFn& entropy, int num_states,
                                        const std::vector<double>& cka,
                                        const SelectionOptions& options);

const char* toString(SelectionMethod m);     // "elsi", "elsi-c"
const char* toString(DiversityRule r);       // "segment", "penalty"
const char* toString(SetObjective o);        // "concat", "hadamard"
SelectionMethod parseSelectionMethod(const std::string& s, const std::string& source = "");
DiversityRule parseDiversityRule(const std::string& s, const std::string& source = "");
SetObjective parseSetObjective(const std::string& s, const std::string& source = "");

}  // namespace wl
