#pragma once
// "Train draft…": output folder and steps, then training on a worker thread with a progress
// bar and live loss; Cancel stops it through the CancelToken (core checkpoints on cancel).
#include <QDialog>
#include <memory>

#include "draft_training.h"

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace wl {

class DraftDialog : public QDialog {
    Q_OBJECT
public:
    DraftDialog(DraftTrainingRequest request, DraftTrainingService* service, QWidget* parent = nullptr);
    ~DraftDialog() override;

private:
    void start();
    void onUpdate(const QString& phase, int step, int total, double loss, double accuracy);
    void onFinished(const QString& message, bool ok);

    DraftTrainingRequest request_;
    DraftTrainingService* service_;
    std::shared_ptr<CancelToken> cancel_;
    bool running_ = false;
    QLineEdit* out_ = nullptr;
    QSpinBox* steps_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* status_ = nullptr;
    QPushButton* start_ = nullptr;
    QPushButton* close_ = nullptr;
};

}  // namespace wl
