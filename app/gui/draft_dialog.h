#pragma once
// "Train draft…": output folder and steps, then training on a worker thread with a progress
// bar and live loss / step-0 accuracy curves; Cancel stops it through the CancelToken (core
// checkpoints on cancel) and "Resume from checkpoint" continues from there. After training,
// the draft is evaluated on held-out prompts and tau shows in a small table. A second tab
// starts SpecForge as an external process (SpecForgePanel) and charts its log the same way.
#include <QDialog>
#include <memory>
#include <optional>

#include "draft_training.h"

class QCheckBox;
class QChart;
class QChartView;
class QLabel;
class QLineSeries;
class QTableWidget;
class QValueAxis;
class QLineEdit;
class QScatterSeries;
class QTabWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace wl {

class SpecForgePanel;

class DraftDialog : public QDialog {
    Q_OBJECT
public:
    DraftDialog(DraftTrainingRequest request, DraftTrainingService* service, QWidget* parent = nullptr);
    ~DraftDialog() override;

    // For tests and screenshots: one point per training update.
    QLineSeries* lossSeries() const { return loss_series_; }
    QLineSeries* accuracySeries() const { return accuracy_series_; }
    QTableWidget* tauTable() const { return tau_table_; }
    // SpecForge runs: per-epoch training objective (sum_i 0.8^i pLoss_i) from its summaries.
    QScatterSeries* objectiveSeries() const { return objective_series_; }
    SpecForgePanel* specForgePanel() const { return specforge_; }

private:
    void start();
    void startCompare();
    void setRunning(bool running);
    void onUpdate(const QString& phase, int step, int total, double loss, double accuracy);
    void onFinished(const QString& message, bool ok, const std::optional<DraftEvalSummary>& eval);
    void onCompared(const QString& message, const std::vector<DraftEvalSummary>& rows);
    void addTauRow(const DraftEvalSummary& eval);
    void refreshResume();
    void onSpecForgeStarted();
    void onSpecForgePoint(double x, double loss, double accuracy, bool summary, bool evaluation, bool by_step);
    void showLocalButtons(bool show);

    DraftTrainingRequest request_;
    DraftTrainingService* service_;
    std::shared_ptr<CancelToken> cancel_;
    bool running_ = false;
    QLineEdit* out_ = nullptr;
    QSpinBox* steps_ = nullptr;
    QSpinBox* tree_top_k_ = nullptr;
    QCheckBox* resume_ = nullptr;
    QChartView* chart_view_ = nullptr;
    QLineSeries* loss_series_ = nullptr;
    QLineSeries* accuracy_series_ = nullptr;
    QScatterSeries* objective_series_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    SpecForgePanel* specforge_ = nullptr;
    QValueAxis* step_axis_ = nullptr;
    QValueAxis* loss_axis_ = nullptr;
    double max_loss_ = 0;
    QTableWidget* tau_table_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* status_ = nullptr;
    QPushButton* start_ = nullptr;
    QPushButton* compare_ = nullptr;
    QPushButton* close_ = nullptr;
};

}  // namespace wl
