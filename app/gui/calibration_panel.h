#pragma once
// "Calibration" panel: data set, prompt count, token budget, token-entropy filter, entropy
// order, Start / Pause / Cancel, and the progress of the running capture.
#include <QGroupBox>
#include <QJsonObject>

#include "gui_types.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSlider;
class QSpinBox;

namespace wl {

class CalibrationPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit CalibrationPanel(QWidget* parent = nullptr);

    RunOptions options() const;
    QJsonObject toJson() const;
    void fromJson(const QJsonObject& json);

    void setRunning(bool running, bool paused = false);
    void setCanStart(bool can_start);
    void showProgress(const RunProgress& progress);
    void showFinished(const QString& message);

    QPushButton* startButton() const { return start_; }
    QPushButton* pauseButton() const { return pause_; }
    QPushButton* cancelButton() const { return cancel_; }
    QComboBox* dataCombo() const { return data_; }
    QSpinBox* promptsSpin() const { return prompts_; }
    QSpinBox* tokensSpin() const { return tokens_; }

Q_SIGNALS:
    void startRequested();
    void pauseToggled(bool pause);
    void cancelRequested();

private:
    void updateFilterControls();
    QComboBox* data_ = nullptr;
    QSpinBox* prompts_ = nullptr;
    QSpinBox* tokens_ = nullptr;
    QComboBox* filter_mode_ = nullptr;
    QSlider* filter_slider_ = nullptr;
    QLabel* filter_value_ = nullptr;
    QComboBox* alpha_ = nullptr;
    QPushButton* start_ = nullptr;
    QPushButton* pause_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* stats_ = nullptr;
    bool can_start_ = false;
    bool running_ = false;
};

}  // namespace wl
