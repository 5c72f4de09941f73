#pragma once
// The draft dialog's "SpecForge" tab: for targets too large to train a draft on this machine.
// Writes the SpecForge set-up for the chosen layers (core/draft's writeSpecForgeSetup: draft
// config, JSONL prompts, torchrun launch script), starts it as an external process
// (SpecForgeRun), shows its log, and forwards progress and curve points to the dialog's chart.
#include <QWidget>

#include "draft_training.h"

class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace wl {

class SpecForgeRun;

class SpecForgePanel : public QWidget {
    Q_OBJECT
public:
    SpecForgePanel(const DraftTrainingRequest& request, QWidget* parent = nullptr);

    bool isRunning() const;
    QPlainTextEdit* logView() const { return log_; }
    int epochs() const;

Q_SIGNALS:
    void runStarted();
    void runningChanged(bool running);
    void statusChanged(const QString& text);
    void progressChanged(qint64 done, qint64 total);
    void curvePoint(double x, double loss, double accuracy, bool summary, bool evaluation, bool by_step);

private:
    // Writes the set-up into the output folder; the launch script's path, or empty on error
    // (reported through statusChanged).
    QString writeSetup();
    void startRun();
    void onFinished(int exit_code, bool stopped, bool crashed);
    void setRunning(bool running);

    DraftTrainingRequest request_;
    SpecForgeRun* run_ = nullptr;
    QLineEdit* target_ = nullptr;
    QLineEdit* checkout_ = nullptr;
    QLineEdit* out_dir_ = nullptr;
    QLineEdit* chat_template_ = nullptr;
    QSpinBox* nproc_ = nullptr;
    QSpinBox* epochs_ = nullptr;
    QPlainTextEdit* log_ = nullptr;
    QPushButton* write_ = nullptr;
    QPushButton* start_ = nullptr;
    QPushButton* stop_ = nullptr;
    QString last_line_;
};

}  // namespace wl
