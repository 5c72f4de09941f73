#include "draft_training.h"

#include <QDir>
#include <QFileInfo>

#include "draft/compare_task.h"
#include "draft/eval_task.h"
#include "draft/training_task.h"

namespace wl {

namespace {

DraftTrainOptions trainOptions(const DraftTrainingRequest& r) {
    DraftTrainOptions o;
    o.model_path = r.model_path.toStdString();
    o.data_path = r.data_path.toStdString();
    o.out_dir = r.out_dir.toStdString();
    o.layers.assign(r.layers.begin(), r.layers.end());
    o.steps = r.steps;
    o.max_prompts = r.max_prompts;
    o.resume = r.resume;
    return o;
}

DraftEvalOptions evalOptions(const DraftEvalRequest& r) {
    DraftEvalOptions o;
    o.model_path = r.model_path.toStdString();
    o.data_path = r.data_path.toStdString();
    o.draft_dir = r.draft_dir.toStdString();
    o.prompt_offset = r.prompt_offset;
    o.max_prompts = r.max_prompts;
    o.max_new_tokens = r.max_new_tokens;
    o.k = r.k;
    o.tree_top_k = r.tree_top_k;
    return o;
}

DraftEvalSummary summarize(const QString& name, const std::vector<int>& layers, const DraftEvalResult& e) {
    DraftEvalSummary s;
    s.set_name = name;
    s.layers = layers;
    s.tau = e.tau;
    s.acceptance = e.acceptance;
    s.lossless_checked = e.lossless_checked;
    s.lossless_mismatches = static_cast<int>(e.lossless_mismatches);
    s.speedup = e.speedup;
    s.k = static_cast<int>(e.k);
    s.tree_top_k = static_cast<int>(e.tree_top_k);
    s.verify_tokens_per_round = e.verify_tokens_per_round;
    return s;
}

class CoreDraftTrainingService : public DraftTrainingService {
public:
    QString train(const DraftTrainingRequest& r, CancelToken* cancel,
                  const std::function<void(const DraftTrainingUpdate&)>& progress) override {
        const DraftTrainOptions o = trainOptions(r);
        const DraftTrainResult result = runDraftTraining(o, cancel, [&](const DraftTrainProgress& p) {
            DraftTrainingUpdate u;
            u.phase = QString::fromStdString(p.phase);
            u.step = static_cast<int>(p.step);
            u.total_steps = static_cast<int>(p.total_steps);
            u.loss = p.loss;
            u.accuracy0 = p.step_accuracy.empty() ? 0.0 : p.step_accuracy.front();
            if (progress) progress(u);
        });
        return QObject::tr("Trained %1 steps in %2 s; final loss %3, step-0 accuracy %4. Draft written to %5.")
            .arg(result.steps)
            .arg(result.seconds, 0, 'f', 1)
            .arg(result.final_loss, 0, 'f', 4)
            .arg(result.final_step_accuracy.empty() ? 0.0 : result.final_step_accuracy.front(), 0, 'f', 3)
            .arg(QString::fromStdString(result.out_dir));
    }

    std::optional<DraftEvalSummary> evaluate(const DraftEvalRequest& r, CancelToken* cancel) override {
        return summarize(QObject::tr("trained"), {}, runDraftEval(evalOptions(r), cancel));
    }

    std::vector<DraftEvalSummary> compare(const DraftTrainingRequest& r, const std::vector<DraftLayerSet>& sets,
                                          CancelToken* cancel,
                                          const std::function<void(const DraftTrainingUpdate&)>& progress) override {
        DraftTrainOptions train = trainOptions(r);
        train.resume = false;
        std::vector<NamedLayerSet> named;
        for (const DraftLayerSet& s : sets) {
            NamedLayerSet n;
            n.name = s.name.toStdString();
            n.layers.assign(s.layers.begin(), s.layers.end());
            n.origin = "wavelab GUI";
            named.push_back(std::move(n));
        }
        const std::string out_root = QDir(r.out_dir).filePath(QStringLiteral("compare")).toStdString();
        const auto rows = runDraftComparison(train, evalOptions(defaultEvalRequest(r)), named, out_root, cancel,
                                             [&](const DraftCompareProgress& p) {
            DraftTrainingUpdate u;
            // "set: phase" so the dialog shows it in the status line but not in the curves.
            u.phase = QStringLiteral("%1 (%2/%3): %4").arg(QString::fromStdString(p.set_name)).arg(p.set_index + 1)
                          .arg(p.num_sets).arg(QString::fromStdString(p.phase));
            u.step = static_cast<int>(p.phase == "evaluating" ? p.eval_done : p.train.step);
            u.total_steps = static_cast<int>(p.phase == "evaluating" ? p.eval_total : p.train.total_steps);
            u.loss = p.train.loss;
            u.accuracy0 = p.train.step_accuracy.empty() ? 0.0 : p.train.step_accuracy.front();
            if (progress) progress(u);
        });
        std::vector<DraftEvalSummary> out;
        for (size_t i = 0; i < rows.size(); ++i)
            out.push_back(summarize(QString::fromStdString(rows[i].set.name), sets[i].layers, rows[i].eval));
        return out;
    }
};

}  // namespace

DraftEvalRequest defaultEvalRequest(const DraftTrainingRequest& trained) {
    DraftEvalRequest e;
    e.model_path = trained.model_path;
    e.data_path = trained.data_path;
    e.draft_dir = trained.out_dir;
    e.prompt_offset = trained.max_prompts;   // held out: the prompts after the training ones
    e.tree_top_k = trained.eval_tree_top_k;
    return e;
}

bool hasDraftCheckpoint(const QString& out_dir) {
    return !out_dir.isEmpty() && QFileInfo::exists(QDir(out_dir).filePath(QStringLiteral("checkpoint/train_state.pt")));
}

std::unique_ptr<DraftTrainingService> makeCoreDraftTrainingService() { return std::make_unique<CoreDraftTrainingService>(); }

}  // namespace wl
