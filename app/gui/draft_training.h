#pragma once
// The "Train draft…" seam: the window asks a DraftTrainingService to train an EAGLE3 draft
// on the chosen layers. The default service runs core/draft's runDraftTraining on a worker
// thread; tests or other front ends can install their own.
#include <QObject>
#include <QString>
#include <functional>
#include <memory>
#include <vector>

namespace wl {

class CancelToken;

struct DraftTrainingRequest {
    QString model_path;
    QString data_path;                // empty = bundled default set
    QString out_dir;
    std::vector<int> layers;          // HF hidden_states indices
    int steps = 200;
    int max_prompts = 64;
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
};

// core/draft's runDraftTraining.
std::unique_ptr<DraftTrainingService> makeCoreDraftTrainingService();

}  // namespace wl
