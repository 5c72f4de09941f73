#pragma once
// The "Train draft…" seam: the window asks a DraftTrainingService to train an EAGLE3 draft
// on the chosen layers. The default service runs core/draft's runDraftTraining on a worker
// thread; tests or other front ends can install their own.
#include <QObject>
#include <QString>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace wl {

class CancelToken;

// A named layer set to compare against, e.g. the EAGLE3 / EAGLE2 baseline rules.
struct DraftLayerSet {
    QString name;
    std::vector<int> layers;          // HF hidden_states indices
};

struct DraftTrainingRequest {
    QString model_path;
    QString data_path;                // empty = bundled default set
    QString out_dir;
    std::vector<int> layers;          // HF hidden_states indices
    int steps = 200;
    int max_prompts = 64;
    bool resume = false;              // continue from <out_dir>/checkpoint/train_state.pt
    int eval_tree_top_k = 1;          // held-out check: 1 = chain drafting, > 1 = tree keeping this many per level
    std::vector<DraftLayerSet> baselines;   // offered by "Compare with baselines"
};

// Held-out speculative-decoding check of a trained draft (core/draft's runDraftEval).
struct DraftEvalRequest {
    QString model_path;
    QString data_path;                // empty = bundled default set
    QString draft_dir;
    int prompt_offset = 0;            // skip the prompts used for training
    int max_prompts = 8;
    int max_new_tokens = 32;
    int k = 4;                        // draft tokens per round (chain), or the tree's depth
    int tree_top_k = 1;               // > 1: tree drafting keeping this many nodes per level
};

struct DraftEvalSummary {
    QString set_name;                 // e.g. "trained"; one row of the tau table
    std::vector<int> layers;
    double tau = 0;                   // mean committed tokens per verify round
    std::vector<double> acceptance;   // [k] share of rounds accepting draft position j+1
    bool lossless_checked = false;
    int lossless_mismatches = 0;
    double speedup = 0;               // 0 when no baseline ran
    int k = 0, tree_top_k = 1;        // drafting shape evaluated (0 = unknown)
    double verify_tokens_per_round = 0;   // tokens the target verified per round
};

struct DraftTrainingUpdate {
    QString phase;                    // "generating", "training", "checkpoint", "done"
    int step = 0, total_steps = 0;
    double loss = 0;
    double accuracy0 = 0;             // top-1 agreement at TTT step 0
};

class DraftTrainingService {
public:
    virtual ~DraftTrainingService() = default;
    // Blocking; called on a worker thread. Throws wl::Error / wl::Cancelled. Returns a
    // one-paragraph summary.
    virtual QString train(const DraftTrainingRequest& request, CancelToken* cancel,
                          const std::function<void(const DraftTrainingUpdate&)>& progress) = 0;
    // Blocking; called on a worker thread after training succeeded. Services that cannot
    // evaluate return nullopt and the dialog shows no tau table.
    virtual std::optional<DraftEvalSummary> evaluate(const DraftEvalRequest& request, CancelToken* cancel) {
        (void)request;
        (void)cancel;
        return std::nullopt;
    }
    // Blocking; trains one draft per set with the request's budget (into <out_dir>/compare/<name>)
    // and evaluates each like evaluate(); one summary per set, in order. Default: unsupported (empty).
    virtual std::vector<DraftEvalSummary> compare(const DraftTrainingRequest& request,
                                                  const std::vector<DraftLayerSet>& sets, CancelToken* cancel,
                                                  const std::function<void(const DraftTrainingUpdate&)>& progress) {
        (void)request;
        (void)sets;
        (void)cancel;
        (void)progress;
        return {};
    }
};

// The default held-out evaluation after training a request: prompts after the training ones.
DraftEvalRequest defaultEvalRequest(const DraftTrainingRequest& trained);
// True when `out_dir` holds a training checkpoint that `resume` can continue from.
bool hasDraftCheckpoint(const QString& out_dir);

// core/draft's runDraftTraining.
std::unique_ptr<DraftTrainingService> makeCoreDraftTrainingService();

}  // namespace wl
