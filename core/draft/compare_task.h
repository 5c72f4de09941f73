#pragma once
// Trains one draft per layer set with identical budgets and seeds, evaluates each by
// speculative decoding on held-out prompts, and reports tau per set. Plain C++.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "draft/eval_task.h"
#include "draft/training_task.h"
#include "util/cancel.h"

namespace wl {

struct NamedLayerSet {
    std::string name;              // "elsi", "elsi-c", "eagle3", "eagle2", or the user's label
    std::vector<int64_t> layers;   // HF hidden_states indices
    std::string origin;            // where it came from (rule, result file, command line)
};

// `spec`: comma-separated names ("elsi,elsi-c,eagle3,eagle2") or explicit sets
// ("elsi=1,3,4;eagle3=2,3,4"), or a mix separated by ';'. eagle3/eagle2 come from
// core/selection's baseline rules; elsi/elsi-c from the given `wavelab-cli select` result
// files (matched by their method). Throws wl::Error naming the problem.
std::vector<NamedLayerSet> resolveLayerSets(const std::string& spec, int64_t num_decoder_layers,
                                            const std::vector<std::string>& result_paths);

struct DraftCompareRow {
    NamedLayerSet set;
    DraftTrainResult train;
    DraftEvalResult eval;
};

struct DraftCompareProgress {
    int64_t set_index = 0, num_sets = 0;
    std::string set_name;
    std::string phase;             // "training", "evaluating"
    DraftTrainProgress train;      // during training
    int64_t eval_done = 0, eval_total = 0;
};

// Each set trains into <out_root>/<name> with `train` (layers and out_dir replaced) and is
// evaluated with `eval` (model, draft_dir replaced).
std::vector<DraftCompareRow> runDraftComparison(const DraftTrainOptions& train, const DraftEvalOptions& eval,
                                                const std::vector<NamedLayerSet>& sets, const std::string& out_root,
                                                CancelToken* cancel = nullptr,
                                                const std::function<void(const DraftCompareProgress&)>& progress = {});

// Fixed-width text table: set, layers, final loss, acc@1, tau, acceptance, speedup.
std::string formatComparisonTable(const std::vector<DraftCompareRow>& rows);

}  // namespace wl
