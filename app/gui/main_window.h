#pragma once
// The WaveLab window: model + calibration on the left, the activation wave, CKA heatmap and 3D
// entropy surface in the centre, ELSI on the right. All long work runs in wl::Engine.
#include <QMainWindow>
#include <memory>
#include <optional>

#include "gui_types.h"
#include "selection/selection_report.h"

class QComboBox;
class QLabel;
class QTimer;
class QCheckBox;

namespace wl {

class ActivationWaveChart;
class CalibrationPanel;
class CkaHeatmap;
class DraftTrainingService;
class Engine;
class EntropySurfaceView;
class ModelPanel;
class SelectionPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Non-interactive (tests, --screenshot): errors go to the status bar and errorShown()
    // instead of message boxes; nothing asks for file names.
    void setInteractive(bool interactive) { interactive_ = interactive; }
    void restoreLayout();   // QSettings geometry + dock state

    // Actions, callable from tests and the command line.
    void openModel(const QString& path);     // inspect (no weights)
    void loadModel();                        // load the opened model on the worker
    void startRun();
    void runSelection();
    void runDemo(const QString& model_path = {});   // load -> calibrate -> select, one click
    void setTeachingMode(bool on);
    bool teachingMode() const { return teaching_; }
    void setSelectionStepDelay(int ms) { step_delay_ms_ = ms; }

    void saveSession(const QString& path);             // throws wl::Error
    void loadSession(const QString& path);             // throws wl::Error
    QStringList exportFigurePack(const QString& dir, int dpi = 300);  // throws wl::Error
    void exportConfig(const QString& format, const QString& path);    // throws wl::Error
    void saveResult(const QString& path);              // result JSON (wavelab-cli compatible)
    QImage screenshot();

    FigureSet figureSet() const;
    bool hasRunResult() const { return run_.has_value(); }
    bool hasSelection() const { return selection_.has_value(); }
    SelectionReport report() const;                    // throws wl::Error without a run

    Engine* engine() const { return engine_; }
    ActivationWaveChart* waveChart() const { return wave_; }
    CkaHeatmap* heatmap() const { return heatmap_; }
    EntropySurfaceView* surfaceView() const { return surface_; }
    ModelPanel* modelPanel() const { return model_panel_; }
    CalibrationPanel* calibrationPanel() const { return calibration_; }
    SelectionPanel* selectionPanel() const { return selection_panel_; }
    void setDraftTrainingService(std::unique_ptr<DraftTrainingService> service);

Q_SIGNALS:
    void modelReady();
    void runCompleted();
    void selectionCompleted();
    void demoFinished(bool ok);
    void errorShown(const QString& message);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildUi();
    void buildMenus();
    void connectEngine();
    void showError(const QString& title, const QString& message);
    void updateActions();
    void refreshViews();
    void applySnapshot(const AnalysisSnapshot& snapshot, const SurfaceData& surface);
    void addRecentModel(const QString& path);
    EntropyNormalization displayNormalization() const;
    QWidget* framed(QWidget* view, const QString& title, QLabel** caption);
    void setCaptions();
    // Menu handlers that ask for file names.
    void askExportFigure(int which);
    void askExportPack();
    void askSaveSession();
    void askOpenSession();
    void askExportConfig(const QString& format);
    void askExportData();
    void openDraftDialog();

    Engine* engine_ = nullptr;
    ModelPanel* model_panel_ = nullptr;
    CalibrationPanel* calibration_ = nullptr;
    SelectionPanel* selection_panel_ = nullptr;
    ActivationWaveChart* wave_ = nullptr;
    CkaHeatmap* heatmap_ = nullptr;
    EntropySurfaceView* surface_ = nullptr;
    QComboBox* normalization_ = nullptr;
    QCheckBox* show_unfiltered_ = nullptr;
    QLabel* wave_caption_ = nullptr;
    QLabel* cka_caption_ = nullptr;
    QLabel* surface_caption_ = nullptr;
    QLabel* teaching_banner_ = nullptr;
    QLabel* status_model_ = nullptr;
    QTimer* live_timer_ = nullptr;
    QAction* teaching_action_ = nullptr;
    QAction* demo_action_ = nullptr;

    bool interactive_ = true;
    bool teaching_ = false;
    int step_delay_ms_ = 0;
    int demo_stage_ = 0;   // 0 idle, 1 loading, 2 calibrating, 3 selecting
    std::optional<RunResult> run_;
    std::optional<AnalysisSnapshot> live_;
    SurfaceData live_surface_;
    std::optional<SelectionResult> selection_;
    RunOptions last_run_options_;
    std::unique_ptr<DraftTrainingService> draft_service_;
};

}  // namespace wl
