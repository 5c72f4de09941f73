#include "draft_training.h"

#include "draft/training_task.h"

namespace wl {

namespace {

class CoreDraftTrainingService : public DraftTrainingService {
public:
    QString train(const DraftTrainingRequest& r, CancelToken* cancel,
                  const std::function<void(const DraftTrainingUpdate&)>& progress) override {
        DraftTrainOptions o;
        o.model_path = r.model_path.toStdString();
        o.data_path = r.data_path.toStdString();
        o.out_dir = r.out_dir.toStdString();
        o.layers.assign(r.layers.begin(), r.layers.end());
        o.steps = r.steps;
        o.max_prompts = r.max_prompts;
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
};

}  // namespace

std::unique_ptr<DraftTrainingService> makeCoreDraftTrainingService() { return std::make_unique<CoreDraftTrainingService>(); }

}  // namespace wl
