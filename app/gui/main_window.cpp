#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QJsonDocument>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include "activation_wave_chart.h"
#include "analysis/analysis_json.h"
#include "calibration_panel.h"
#include "cka_heatmap.h"
#include "draft_dialog.h"
#include "engine.h"
#include "entropy_surface_view.h"
#include "export/framework_export.h"
#include "figure_data_io.h"
#include "figure_pack.h"
#include "model_panel.h"
#include "report_adapter.h"
#include "selection/selection_json.h"
#include "selection_panel.h"
#include "util/atomic_file.h"
#include "util/error.h"

#ifndef WAVELAB_VERSION
#define WAVELAB_VERSION "0.1.0"
#endif

// The icon resource lives in this static library: register it explicitly.
static void initWaveLabResources() { Q_INIT_RESOURCE(wavelab); }

namespace wl {

namespace {

constexpr int kSessionVersion = 1;
constexpr int kMaxRecent = 8;
constexpr int kLiveIntervalMs = 250;   // live snapshots: 4 per second at most

const char* kWaveCaption =
    "Activation wave: how spread-out (high matrix entropy) the hidden states are at each depth. "
    "Stars mark the layers ELSI picks for the draft, triangles the fixed EAGLE3 rule, shaded bands the CKA segments.";
const char* kCkaCaption =
    "CKA: similarity of every pair of depths (1 = same representation up to rotation and scale). "
    "Bright blocks on the diagonal are groups of similar layers; ELSI-C takes at most one layer per block.";
const char* kSurfaceCaption =
    "Entropy surface: the wave for each calibration prompt (ordered by how uncertain the model was on it). "
    "Drag to rotate, wheel to zoom.";

std::string sessionPath(const QString& path) { return path.toStdString(); }

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), draft_service_(makeCoreDraftTrainingService()) {
    initWaveLabResources();
    setObjectName(QStringLiteral("WaveLabMainWindow"));
    setWindowTitle(tr("WaveLab — layer selection for EAGLE3 drafts"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/wavelab.svg")));
    setAcceptDrops(true);
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);
    engine_ = new Engine(this);
    buildUi();
    buildMenus();
    connectEngine();
    live_timer_ = new QTimer(this);
    live_timer_->setInterval(kLiveIntervalMs);
    connect(live_timer_, &QTimer::timeout, engine_, &Engine::requestLiveSnapshot);
    QSettings settings;
    model_panel_->setRecent(settings.value(QStringLiteral("recentModels")).toStringList());
    setTeachingMode(false);
    refreshViews();
    updateActions();
}

MainWindow::~MainWindow() = default;

QWidget* MainWindow::framed(QWidget* view, const QString& title, QLabel** caption) {
    auto* frame = new QWidget(this);
    auto* layout = new QVBoxLayout(frame);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(2);
    auto* heading = new QLabel(QStringLiteral("<b>%1</b>").arg(title), frame);
    heading->setStyleSheet(QStringLiteral("color: #37474f; font-size: 11pt;"));
    layout->addWidget(heading);
    *caption = new QLabel(frame);
    (*caption)->setWordWrap(true);
    (*caption)->setStyleSheet(QStringLiteral("QLabel { background: #fff8e1; border: 1px solid #ffe082; border-radius: 3px; padding: 4px; color: #5d4037; }"));
    layout->addWidget(*caption);
    layout->addWidget(view, 1);
    return frame;
}

void MainWindow::buildUi() {
    // Centre: the wave on top, CKA and the 3D surface below.
    wave_ = new ActivationWaveChart(this);
    wave_->setMinimumHeight(260);
    heatmap_ = new CkaHeatmap(this);
    heatmap_->setTitle(QString());   // the frame heading names it; exports keep their title
    surface_ = new EntropySurfaceView(this);

    auto* wave_box = new QWidget(this);
    auto* wave_layout = new QVBoxLayout(wave_box);
    wave_layout->setContentsMargins(0, 0, 0, 0);
    auto* wave_controls = new QHBoxLayout;
    wave_controls->addWidget(new QLabel(tr("Normalisation"), wave_box));
    normalization_ = new QComboBox(wave_box);
    normalization_->setObjectName(QStringLiteral("normalization"));
    normalization_->addItem(tr("÷ ln min(N, D)"), static_cast<int>(EntropyNormalization::LogMinND));
    normalization_->addItem(tr("÷ ln D"), static_cast<int>(EntropyNormalization::LogD));
    normalization_->addItem(tr("÷ ln N"), static_cast<int>(EntropyNormalization::LogN));
    normalization_->addItem(tr("raw (nats)"), static_cast<int>(EntropyNormalization::Raw));
    wave_controls->addWidget(normalization_);
    show_unfiltered_ = new QCheckBox(tr("all-token curve"), wave_box);
    show_unfiltered_->setChecked(true);
    wave_controls->addWidget(show_unfiltered_);
    wave_controls->addStretch(1);
    wave_layout->addLayout(wave_controls);
    wave_layout->addWidget(wave_, 1);
    connect(normalization_, qOverload<int>(&QComboBox::currentIndexChanged), this, &MainWindow::refreshViews);
    connect(show_unfiltered_, &QCheckBox::toggled, this, &MainWindow::refreshViews);

    auto* bottom = new QSplitter(Qt::Horizontal, this);
    bottom->addWidget(framed(heatmap_, tr("Layer similarity (linear CKA)"), &cka_caption_));
    bottom->addWidget(framed(surface_, tr("Entropy surface (3D)"), &surface_caption_));
    bottom->setStretchFactor(0, 1);
    bottom->setStretchFactor(1, 1);
    auto* centre = new QSplitter(Qt::Vertical, this);
    centre->setObjectName(QStringLiteral("centreSplitter"));
    centre->addWidget(framed(wave_box, tr("Activation wave"), &wave_caption_));
    centre->addWidget(bottom);
    centre->setStretchFactor(0, 5);
    centre->setStretchFactor(1, 4);
    centre->setChildrenCollapsible(false);

    auto* central = new QWidget(this);
    auto* central_layout = new QVBoxLayout(central);
    central_layout->setContentsMargins(2, 2, 2, 2);
    teaching_banner_ = new QLabel(central);
    teaching_banner_->setObjectName(QStringLiteral("teachingBanner"));
    teaching_banner_->setWordWrap(true);
    teaching_banner_->setStyleSheet(QStringLiteral("QLabel { background: #e3f2fd; border: 1px solid #90caf9; border-radius: 4px; padding: 6px; color: #0d47a1; }"));
    central_layout->addWidget(teaching_banner_);
    central_layout->addWidget(centre, 1);
    setCentralWidget(central);

    // Left dock: model and calibration.
    model_panel_ = new ModelPanel(this);
    calibration_ = new CalibrationPanel(this);
    auto* left = new QWidget(this);
    auto* left_layout = new QVBoxLayout(left);
    left_layout->addWidget(model_panel_);
    left_layout->addWidget(calibration_);
    left_layout->addStretch(1);
    auto* left_scroll = new QScrollArea(this);
    left_scroll->setWidget(left);
    left_scroll->setWidgetResizable(true);
    left_scroll->setFrameShape(QFrame::NoFrame);
    auto* left_dock = new QDockWidget(tr("Model & calibration"), this);
    left_dock->setObjectName(QStringLiteral("modelDock"));
    left_dock->setWidget(left_scroll);
    left_dock->setMinimumWidth(340);
    addDockWidget(Qt::LeftDockWidgetArea, left_dock);

    // Right dock: selection.
    selection_panel_ = new SelectionPanel(this);
    auto* right_dock = new QDockWidget(tr("Layer selection"), this);
    right_dock->setObjectName(QStringLiteral("selectionDock"));
    right_dock->setWidget(selection_panel_);
    right_dock->setMinimumWidth(330);
    right_dock->setMaximumWidth(430);
    addDockWidget(Qt::RightDockWidgetArea, right_dock);

    status_model_ = new QLabel(tr("no model"), this);
    statusBar()->addPermanentWidget(status_model_);
    statusBar()->showMessage(tr("Open a model to begin (File ▸ Open model, or drop a model folder here)."));

    connect(model_panel_, &ModelPanel::pathChosen, this, [this](const QString&) { updateActions(); });
    connect(model_panel_, &ModelPanel::loadRequested, this, [this](const QString&) { loadModel(); });
    connect(calibration_, &CalibrationPanel::startRequested, this, &MainWindow::startRun);
    connect(calibration_, &CalibrationPanel::pauseToggled, this, [this](bool pause) {
        if (pause) engine_->pause();
        else engine_->resume();
        calibration_->setRunning(true, pause);
        statusBar()->showMessage(pause ? tr("Paused.") : tr("Resumed."));
    });
    connect(calibration_, &CalibrationPanel::cancelRequested, this, [this] {
        engine_->cancel();
        statusBar()->showMessage(tr("Cancelling…"));
    });
    connect(selection_panel_, &SelectionPanel::runRequested, this, &MainWindow::runSelection);
    connect(selection_panel_, &SelectionPanel::exportRequested, this, &MainWindow::askExportConfig);
    connect(selection_panel_, &SelectionPanel::trainRequested, this, &MainWindow::openDraftDialog);
    connect(selection_panel_, &SelectionPanel::setHovered, this, [this](const std::vector<int>& layers) { wave_->setHighlighted(layers); });
    connect(heatmap_, &CkaHeatmap::cellClicked, this, [this](int i, int j, double v) {
        wave_->setHighlighted({i, j});
        statusBar()->showMessage(tr("CKA(h%1, h%2) = %3 — pair highlighted on the wave").arg(i).arg(j).arg(v, 0, 'f', 4));
    });
    connect(wave_, &ActivationWaveChart::layerClicked, this, [this](int h) {
        heatmap_->setSelectedPair(h, h);
        statusBar()->showMessage(tr("Hidden state h = %1 selected").arg(h));
    });
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open model…"), model_panel_, [this] {
        QString path = QFileDialog::getOpenFileName(this, tr("Open model"), QString(), tr("Models (*.bin config.json);;All files (*)"));
        if (path.endsWith(QStringLiteral("config.json"))) path = QFileInfo(path).absolutePath();
        if (!path.isEmpty()) openModel(path);
    });
    open->setShortcut(QKeySequence::Open);
    file->addAction(tr("Open model &folder…"), this, [this] {
        const QString path = QFileDialog::getExistingDirectory(this, tr("Hugging Face model folder"));
        if (!path.isEmpty()) openModel(path);
    });
    file->addSeparator();
    file->addAction(tr("Open &session…"), this, &MainWindow::askOpenSession);
    file->addAction(tr("&Save session…"), this, &MainWindow::askSaveSession)->setShortcut(QKeySequence::Save);
    file->addAction(tr("Save result &JSON…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Result JSON"), QStringLiteral("result.json"), tr("JSON (*.json)"));
        if (path.isEmpty()) return;
        try {
            saveResult(path);
        } catch (const std::exception& e) {
            showError(tr("Save result"), QString::fromStdString(e.what()));
        }
    });
    file->addSeparator();
    QMenu* exp = file->addMenu(tr("&Export"));
    exp->addAction(tr("&Figure pack (all figures, all formats, data, captions)…"), this, &MainWindow::askExportPack);
    exp->addAction(tr("Activation &wave (PNG/SVG/PDF)…"), this, [this] { askExportFigure(0); });
    exp->addAction(tr("&CKA heatmap (PNG/SVG/PDF)…"), this, [this] { askExportFigure(1); });
    exp->addAction(tr("&3D surface (PNG)…"), this, [this] { askExportFigure(2); });
    exp->addAction(tr("&Data (CSV + JSON)…"), this, &MainWindow::askExportData);
    exp->addAction(tr("Window &screenshot…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Screenshot"), QStringLiteral("wavelab.png"), tr("PNG (*.png)"));
        if (!path.isEmpty()) screenshot().save(path);
    });
    file->addSeparator();
    file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcut(QKeySequence::Quit);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(tr("&Load model"), this, &MainWindow::loadModel);
    run->addAction(tr("&Start calibration"), this, &MainWindow::startRun)->setShortcut(Qt::CTRL | Qt::Key_R);
    run->addAction(tr("&Pause / resume"), this, [this] { calibration_->pauseButton()->toggle(); });
    run->addAction(tr("&Cancel"), this, [this] { engine_->cancel(); });
    run->addAction(tr("Run &selection"), this, &MainWindow::runSelection)->setShortcut(Qt::CTRL | Qt::Key_E);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (QDockWidget* dock : findChildren<QDockWidget*>()) view->addAction(dock->toggleViewAction());
    view->addAction(tr("Reset 3D camera"), surface_, &EntropySurfaceView::resetCamera);
    view->addSeparator();
    teaching_action_ = view->addAction(tr("&Teaching mode"));
    teaching_action_->setCheckable(true);
    connect(teaching_action_, &QAction::toggled, this, &MainWindow::setTeachingMode);
    demo_action_ = view->addAction(tr("Run the &guided demo (stories260K)"), this, [this] {
        setTeachingMode(true);
        runDemo();
    });

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About WaveLab"), this, [this] {
        QMessageBox::about(this, tr("About WaveLab"),
                           tr("<b>WaveLab %1</b><p>Streams calibration prompts through a model, measures the per-layer "
                              "matrix entropy (the activation wave) and CKA, and picks EAGLE3 draft layers with "
                              "ELSI / ELSI-C.</p>").arg(QStringLiteral(WAVELAB_VERSION)));
    });

    auto* tools = addToolBar(tr("Main"));
    tools->setObjectName(QStringLiteral("mainToolBar"));
    tools->setMovable(false);
    tools->setToolButtonStyle(Qt::ToolButtonTextOnly);
    tools->addAction(open);
    tools->addAction(tr("Load"), this, &MainWindow::loadModel);
    tools->addAction(tr("Calibrate"), this, &MainWindow::startRun);
    tools->addAction(tr("Select layers"), this, &MainWindow::runSelection);
    tools->addSeparator();
    tools->addAction(tr("Figure pack…"), this, &MainWindow::askExportPack);
    tools->addAction(tr("Save session…"), this, &MainWindow::askSaveSession);
    tools->addSeparator();
    tools->addAction(teaching_action_);
    tools->addAction(demo_action_);
}

void MainWindow::connectEngine() {
    connect(engine_, &Engine::busyChanged, this, [this](bool) { updateActions(); });
    connect(engine_, &Engine::modelLoaded, this, [this](const ModelSummary& s) {
        model_panel_->showSummary(s, true);
        status_model_->setText(tr("%1 · %2 layers · %3").arg(QString::fromStdString(s.config.name)).arg(s.config.num_layers).arg(s.device.toUpper()));
        statusBar()->showMessage(tr("Model loaded. Start the calibration to measure the activation wave."), 8000);
        addRecentModel(s.path);
        run_.reset();
        live_.reset();
        selection_.reset();
        selection_panel_->clear();
        refreshViews();
        updateActions();
        Q_EMIT modelReady();
        if (demo_stage_ == 1) {
            demo_stage_ = 2;
            startRun();
        }
    });
    connect(engine_, &Engine::modelLoadFailed, this, [this](const QString& message) {
        model_panel_->showError(message);
        demo_stage_ = 0;
        showError(tr("Load model"), message);
        Q_EMIT demoFinished(false);
    });
    connect(engine_, &Engine::runProgress, this, [this](const RunProgress& p) { calibration_->showProgress(p); });
    connect(engine_, &Engine::liveSnapshot, this, [this](const AnalysisSnapshot& s, const SurfaceData& surface) {
        if (!engine_->isBusy() || run_) return;   // a late snapshot after the final one
        applySnapshot(s, surface);
    });
    connect(engine_, &Engine::runFinished, this, [this](const RunResult& r) {
        live_timer_->stop();
        run_ = r;
        live_.reset();
        calibration_->setRunning(false);
        calibration_->showProgress(r.progress);
        calibration_->showFinished(tr("Done: %1 prompts, %2 tokens (%3 kept) in %4 s.")
                                       .arg(r.snapshot.prompts_seen).arg(r.snapshot.tokens_seen)
                                       .arg(r.snapshot.tokens_kept).arg(r.capture_seconds, 0, 'f', 1));
        refreshViews();
        updateActions();
        statusBar()->showMessage(tr("Calibration finished. Run the layer selection (ELSI) next."), 8000);
        Q_EMIT runCompleted();
        if (demo_stage_ == 2) {
            demo_stage_ = 3;
            runSelection();
        }
    });
    connect(engine_, &Engine::runFailed, this, [this](const QString& message) {
        live_timer_->stop();
        calibration_->setRunning(false);
        calibration_->showFinished(tr("Failed: %1").arg(message));
        demo_stage_ = 0;
        updateActions();
        showError(tr("Calibration"), message);
        Q_EMIT demoFinished(false);
    });
    connect(engine_, &Engine::runCancelled, this, [this] {
        live_timer_->stop();
        calibration_->setRunning(false);
        calibration_->showFinished(tr("Cancelled. The curves show the prompts processed so far."));
        demo_stage_ = 0;
        updateActions();
        statusBar()->showMessage(tr("Calibration cancelled."), 8000);
    });
    connect(engine_, &Engine::selectionStep, this, [this](const BeamStep& step) {
        selection_panel_->addStep(step);
        if (!step.kept.empty()) wave_->setHighlighted(step.kept.front().states);
        statusBar()->showMessage(tr("Beam search step %1: best %2").arg(step.step)
                                     .arg(QString::fromStdString(step.kept.empty() ? std::string() : layersText(step.kept.front().states))));
    });
    connect(engine_, &Engine::selectionFinished, this, [this](const SelectionResult& r) {
        selection_ = r;
        selection_panel_->showResult(r);
        refreshViews();
        updateActions();
        statusBar()->showMessage(tr("Chosen layers %1. Export the config or train a draft.").arg(QString::fromStdString(layersText(r.chosen.states))), 10000);
        Q_EMIT selectionCompleted();
        if (demo_stage_ == 3) {
            demo_stage_ = 0;
            if (teaching_) teaching_banner_->setText(tr("<b>Demo complete.</b> The stars on the wave are the layers ELSI chose; "
                                                        "compare their entropy with the EAGLE3 rule in the table on the right. "
                                                        "Try another m, method or filter, or export a figure pack."));
            Q_EMIT demoFinished(true);
        }
    });
    connect(engine_, &Engine::selectionFailed, this, [this](const QString& message) {
        demo_stage_ = 0;
        updateActions();
        showError(tr("Layer selection"), message);
        Q_EMIT demoFinished(false);
    });
}

void MainWindow::showError(const QString& title, const QString& message) {
    statusBar()->showMessage(tr("%1: %2").arg(title, message));
    Q_EMIT errorShown(message);
    if (interactive_) QMessageBox::warning(this, title, message);
}

void MainWindow::updateActions() {
    const bool busy = engine_->isBusy();
    model_panel_->setBusy(busy);
    calibration_->setCanStart(engine_->hasModel() && !busy);
    selection_panel_->setCanRun(engine_->hasAnalysis() && !busy);
    selection_panel_->setHasResult(selection_.has_value() && !busy);
}

EntropyNormalization MainWindow::displayNormalization() const {
    return static_cast<EntropyNormalization>(normalization_->currentData().toInt());
}

void MainWindow::applySnapshot(const AnalysisSnapshot& s, const SurfaceData& surface) {
    live_ = s;
    live_surface_ = surface;
    refreshViews();
}

FigureSet MainWindow::figureSet() const {
    FigureSet f;
    const AnalysisSnapshot* s = run_ ? &run_->snapshot : live_ ? &*live_ : nullptr;
    if (!s) return f;
    f.model_name = engine_->modelSummary().config.name;
    f.wave = waveFromSnapshot(*s, displayNormalization());
    if (!show_unfiltered_->isChecked()) f.wave.unfiltered.clear();
    f.cka = ckaFromSnapshot(*s);
    f.surface = run_ ? run_->surface : live_surface_;
    if (selection_) {
        applySelection(*selection_, f.wave);
        f.cka.segment_starts = f.wave.segment_starts;
        f.table = selectionTable(*selection_);
    }
    if (!f.model_name.empty()) f.wave.subtitle = f.model_name + ", " + f.wave.subtitle;
    return f;
}

void MainWindow::refreshViews() {
    const FigureSet f = figureSet();
    wave_->setWave(f.wave);
    heatmap_->setData(f.cka);
    // The 3D surface is rebuilt only when its shape or the run changes (it is the heaviest view).
    if (f.surface.rows != surface_->surface().rows || f.surface.cols != surface_->surface().cols ||
        f.surface.values != surface_->surface().values)
        surface_->setSurface(f.surface);
}

void MainWindow::openModel(const QString& path) {
    model_panel_->setModelPath(path);
    updateActions();
}

void MainWindow::loadModel() {
    const QString path = model_panel_->modelPath();
    if (path.isEmpty()) {
        showError(tr("Load model"), tr("choose a model first"));
        return;
    }
    if (!model_panel_->canLoad()) {
        // Re-inspect to give the reason (missing file, or it will not fit).
        try {
            const ModelSummary s = Engine::inspect(path);
            if (!s.fits) {
                showError(tr("Load model"), tr("%1: %2").arg(path, s.fitMessage()));
                demo_stage_ = 0;
                Q_EMIT demoFinished(false);
                return;
            }
        } catch (const std::exception& e) {
            showError(tr("Load model"), QString::fromStdString(e.what()));
            demo_stage_ = 0;
            Q_EMIT demoFinished(false);
            return;
        }
    }
    if (engine_->isBusy()) return;
    statusBar()->showMessage(tr("Loading %1…").arg(path));
    engine_->loadModel(path);
}

void MainWindow::startRun() {
    if (!engine_->hasModel() || engine_->isBusy()) {
        if (!engine_->hasModel()) showError(tr("Calibration"), tr("load a model first"));
        return;
    }
    last_run_options_ = calibration_->options();
    run_.reset();
    live_.reset();
    live_surface_ = {};
    selection_.reset();
    selection_panel_->clear();
    refreshViews();
    calibration_->setRunning(true);
    engine_->startRun(last_run_options_);
    live_timer_->start();
    statusBar()->showMessage(tr("Capturing hidden states…"));
}

void MainWindow::runSelection() {
    if (!engine_->hasAnalysis() || engine_->isBusy()) {
        if (!engine_->hasAnalysis()) showError(tr("Layer selection"), tr("run the calibration first: ELSI needs its statistics"));
        return;
    }
    selection_.reset();
    selection_panel_->clear();
    refreshViews();
    engine_->runSelection(selection_panel_->options(), teaching_ ? std::max(step_delay_ms_, 500) : step_delay_ms_);
}

void MainWindow::runDemo(const QString& model_path) {
    QString path = model_path;
    if (path.isEmpty()) path = QStringLiteral(WAVELAB_MODELS_DIR "/stories260K/stories260K.bin");
    if (engine_->isBusy()) return;
    teaching_banner_->setText(tr("<b>Guided demo.</b> 1) load the tiny stories260K model, 2) stream the bundled calibration "
                                 "prompts through it and watch the wave build up, 3) let ELSI-C pick 3 layers. "
                                 "Each view explains itself in its yellow caption."));
    calibration_->promptsSpin()->setValue(32);
    calibration_->tokensSpin()->setValue(64);
    openModel(path);
    if (engine_->hasModel() && engine_->modelSummary().path == path) {
        demo_stage_ = 2;
        startRun();
    } else {
        demo_stage_ = 1;
        loadModel();
    }
}

void MainWindow::setTeachingMode(bool on) {
    teaching_ = on;
    if (teaching_action_ && teaching_action_->isChecked() != on) teaching_action_->setChecked(on);
    setCaptions();
}

void MainWindow::setCaptions() {
    wave_caption_->setText(tr(kWaveCaption));
    cka_caption_->setText(tr(kCkaCaption));
    surface_caption_->setText(tr(kSurfaceCaption));
    for (QLabel* l : {wave_caption_, cka_caption_, surface_caption_}) l->setVisible(teaching_);
    if (teaching_ && teaching_banner_->text().isEmpty())
        teaching_banner_->setText(tr("<b>Teaching mode.</b> Click “Run the guided demo” for a one-click tour on stories260K."));
    teaching_banner_->setVisible(teaching_);
}

void MainWindow::addRecentModel(const QString& path) {
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentModels")).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecent) recent.removeLast();
    settings.setValue(QStringLiteral("recentModels"), recent);
    model_panel_->setRecent(recent);
}

void MainWindow::restoreLayout() {
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    engine_->cancel();
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls() && event->mimeData()->urls().first().isLocalFile()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    QString path = event->mimeData()->urls().first().toLocalFile();
    if (path.endsWith(QStringLiteral(".wavelab.json")) || path.endsWith(QStringLiteral(".wlsession"))) {
        try {
            loadSession(path);
        } catch (const std::exception& e) {
            showError(tr("Open session"), QString::fromStdString(e.what()));
        }
        return;
    }
    if (path.endsWith(QStringLiteral("config.json")) || path.endsWith(QStringLiteral(".safetensors"))) path = QFileInfo(path).absolutePath();
    openModel(path);
    event->acceptProposedAction();
}

SelectionReport MainWindow::report() const {
    if (!run_) throw Error("session", "no finished calibration run to report");
    SelectionReport r;
    r.wavelab_version = WAVELAB_VERSION;
    r.created_utc = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
    const ModelSummary s = engine_->modelSummary();
    r.model.name = s.config.name;
    r.model.path = s.path.toStdString();
    r.model.architecture = s.config.architecture;
    r.model.source_format = s.config.source_format;
    r.model.num_layers = s.config.num_layers > 0 ? s.config.num_layers : run_->snapshot.num_states - 1;
    r.model.hidden_size = s.config.hidden_size > 0 ? s.config.hidden_size : run_->snapshot.hidden_size;
    r.model.vocab_size = s.config.vocab_size;
    r.data.path = run_->data_path.toStdString();
    r.data.format = run_->data_format.toStdString();
    r.data.prompts_total = run_->prompts_in_file;
    r.data.prompts_used = run_->snapshot.prompts_seen;
    r.data.max_tokens_per_prompt = last_run_options_.max_tokens;
    r.analysis_options = last_run_options_.analysis;
    r.analysis = run_->snapshot;
    if (selection_) r.selection = *selection_;
    r.capture_seconds = run_->capture_seconds;
    r.analysis_seconds = run_->snapshot.seconds_in_add;
    return r;
}

void MainWindow::saveResult(const QString& path) {
    if (!selection_) throw Error(path.toStdString(), "no layer selection yet: run the selection first");
    saveSelectionReport(report(), path.toStdString());
}

void MainWindow::exportConfig(const QString& format, const QString& path) {
    if (!selection_) throw Error(path.toStdString(), "no layer selection yet: run the selection first");
    const ExportOutput out = exportSelection(report(), parseExportFormat(format.toStdString(), "export format"));
    writeFileAtomic(path.toStdString(), out.text);
    QString note = tr("Exported %1 config to %2").arg(format, path);
    for (const std::string& w : out.warnings) note += QStringLiteral(" — ⚠ ") + QString::fromStdString(w);
    statusBar()->showMessage(note, 10000);
}

QStringList MainWindow::exportFigurePack(const QString& dir, int dpi) {
    const FigureSet f = figureSet();
    if (f.wave.numPoints() == 0) throw Error(dir.toStdString(), "nothing to export yet: run the calibration first");
    FigurePackOptions options;
    options.dpi = dpi;
    options.surface_image = surface_->grabFrame();
    QStringList written = writeFigurePack(f, dir, options);
    if (run_) {
        // The result JSON too (wavelab-cli compatible) when a selection exists.
        if (selection_) {
            saveSelectionReport(report(), QDir(dir).filePath(QStringLiteral("result.json")).toStdString());
            written << QStringLiteral("result.json");
        }
    }
    statusBar()->showMessage(tr("Figure pack written to %1 (%2 files)").arg(dir).arg(written.size()), 10000);
    return written;
}

QImage MainWindow::screenshot() {
    QApplication::processEvents();
    return grab().toImage();
}

void MainWindow::setDraftTrainingService(std::unique_ptr<DraftTrainingService> service) { draft_service_ = std::move(service); }

// ---- sessions -------------------------------------------------------------------------------

void MainWindow::saveSession(const QString& path) {
    nlohmann::json j;
    j["wavelab_session"] = kSessionVersion;
    j["model_path"] = model_panel_->modelPath().toStdString();
    j["calibration"] = nlohmann::json::parse(QJsonDocument(calibration_->toJson()).toJson().toStdString());
    j["selection_options"] = nlohmann::json::parse(QJsonDocument(selection_panel_->toJson()).toJson().toStdString());
    j["display"] = {{"normalization", toString(displayNormalization())}, {"show_unfiltered", show_unfiltered_->isChecked()},
                    {"teaching", teaching_}};
    if (run_) {
        j["result"] = toJson(report());
        j["surface"] = nlohmann::json::parse(figureSetToJson(figureSet()))["surface"];
        j["run"] = {{"data_format", run_->data_format.toStdString()}, {"prompts_in_file", run_->prompts_in_file},
                    {"capture_seconds", run_->capture_seconds}, {"has_selection", selection_.has_value()}};
    }
    writeFileAtomic(sessionPath(path), j.dump(2) + "\n");
    statusBar()->showMessage(tr("Session saved to %1").arg(path), 8000);
}

void MainWindow::loadSession(const QString& path) {
    const std::string source = sessionPath(path);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(readFile(source));
    } catch (const nlohmann::json::exception& e) {
        throw Error(source, std::string("malformed session JSON: ") + e.what());
    }
    if (!j.is_object() || !j.contains("wavelab_session")) throw Error(source, "not a WaveLab session (no wavelab_session key)");
    if (j["wavelab_session"] != kSessionVersion) throw Error(source, "unsupported session version " + j["wavelab_session"].dump());
    auto to_qjson = [](const nlohmann::json& v) { return QJsonDocument::fromJson(QByteArray::fromStdString(v.dump())).object(); };
    // Parse everything before touching the window, so a bad file changes nothing.
    std::optional<SelectionReport> result;
    SurfaceData surface;
    bool has_selection = false;
    RunResult run;
    try {
        if (j.contains("result")) {
            result = selectionReportFromJson(j["result"], source);
            const nlohmann::json& r = j.value("run", nlohmann::json::object());
            has_selection = r.value("has_selection", false);
            run.snapshot = result->analysis;
            run.data_path = QString::fromStdString(result->data.path);
            run.data_format = QString::fromStdString(result->data.format);
            run.prompts_in_file = result->data.prompts_total;
            run.capture_seconds = result->capture_seconds;
            run.progress = RunProgress{result->analysis.prompts_seen, result->analysis.prompts_seen, result->analysis.tokens_seen,
                                       result->capture_seconds};
            if (j.contains("surface")) surface = figureSetFromJson(nlohmann::json{{"surface", j["surface"]}}.dump(), source).surface;
            run.surface = surface;
        }
    } catch (const nlohmann::json::exception& e) {
        throw Error(source, std::string("bad session: ") + e.what());
    }
    if (j.contains("calibration")) calibration_->fromJson(to_qjson(j["calibration"]));
    if (j.contains("selection_options")) selection_panel_->fromJson(to_qjson(j["selection_options"]));
    if (j.contains("display")) {
        const nlohmann::json& d = j["display"];
        if (d.contains("normalization")) {
            const int n = static_cast<int>(parseEntropyNormalization(d["normalization"].get<std::string>(), source));
            normalization_->setCurrentIndex(std::max(0, normalization_->findData(n)));
        }
        show_unfiltered_->setChecked(d.value("show_unfiltered", true));
        setTeachingMode(d.value("teaching", false));
    }
    const QString model_path = QString::fromStdString(j.value("model_path", std::string()));
    if (!model_path.isEmpty()) openModel(model_path);
    run_.reset();
    live_.reset();
    selection_.reset();
    selection_panel_->clear();
    if (result) {
        run_ = run;
        last_run_options_.analysis = result->analysis_options;
        last_run_options_.max_tokens = result->data.max_tokens_per_prompt;
        if (has_selection) {
            selection_ = result->selection;
            selection_panel_->showResult(*selection_);
        }
        calibration_->showFinished(tr("Loaded from session: %1 prompts, %2 tokens kept.").arg(run.snapshot.prompts_seen).arg(run.snapshot.tokens_kept));
    }
    refreshViews();
    updateActions();
    statusBar()->showMessage(tr("Session loaded from %1").arg(path), 8000);
}

// ---- dialogs --------------------------------------------------------------------------------

void MainWindow::askExportFigure(int which) {
    const QString filters = which == 2 ? tr("PNG (*.png)") : tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)");
    const QString name = which == 0 ? QStringLiteral("activation_wave.png") : which == 1 ? QStringLiteral("cka_heatmap.png") : QStringLiteral("entropy_surface.png");
    const QString path = QFileDialog::getSaveFileName(this, tr("Export figure"), name, filters);
    if (path.isEmpty()) return;
    try {
        if (which == 2) {
            const QImage frame = surface_->grabFrame();
            if (frame.isNull()) throw Error(path.toStdString(), "the 3D view is not available (no OpenGL)");
            if (!frame.save(path)) throw Error(path.toStdString(), "could not write PNG");
            return;
        }
        bool ok = true;
        int dpi = 300;
        if (path.endsWith(QStringLiteral(".png"), Qt::CaseInsensitive)) {
            dpi = QInputDialog::getInt(this, tr("PNG resolution"), tr("DPI"), 300, 72, 1200, 1, &ok);
            if (!ok) return;
        }
        const FigureSet f = figureSet();
        if (which == 0) exportWaveFigure(f.wave, path, dpi);
        else exportHeatmapFigure(f.cka, path, dpi);
        statusBar()->showMessage(tr("Exported %1").arg(path), 8000);
    } catch (const std::exception& e) {
        showError(tr("Export figure"), QString::fromStdString(e.what()));
    }
}

void MainWindow::askExportPack() {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Folder for the figure pack"));
    if (dir.isEmpty()) return;
    bool ok = true;
    const int dpi = QInputDialog::getInt(this, tr("PNG resolution"), tr("DPI"), 300, 72, 1200, 1, &ok);
    if (!ok) return;
    try {
        exportFigurePack(dir, dpi);
    } catch (const std::exception& e) {
        showError(tr("Figure pack"), QString::fromStdString(e.what()));
    }
}

void MainWindow::askExportData() {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Folder for the data (CSV + JSON)"));
    if (dir.isEmpty()) return;
    try {
        const FigureSet f = figureSet();
        const QDir out(dir);
        writeFileAtomic(out.filePath(QStringLiteral("activation_wave.csv")).toStdString(), waveCsv(f.wave));
        writeFileAtomic(out.filePath(QStringLiteral("cka.csv")).toStdString(), ckaCsv(f.cka));
        writeFileAtomic(out.filePath(QStringLiteral("entropy_surface.csv")).toStdString(), surfaceCsv(f.surface));
        writeFileAtomic(out.filePath(QStringLiteral("layer_sets.csv")).toStdString(), layerSetsCsv(f.table));
        writeFileAtomic(out.filePath(QStringLiteral("figures.json")).toStdString(), figureSetToJson(f));
        statusBar()->showMessage(tr("Data written to %1").arg(dir), 8000);
    } catch (const std::exception& e) {
        showError(tr("Export data"), QString::fromStdString(e.what()));
    }
}

void MainWindow::askSaveSession() {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save session"), QStringLiteral("session.wavelab.json"), tr("WaveLab session (*.wavelab.json *.json)"));
    if (path.isEmpty()) return;
    try {
        saveSession(path);
    } catch (const std::exception& e) {
        showError(tr("Save session"), QString::fromStdString(e.what()));
    }
}

void MainWindow::askOpenSession() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open session"), QString(), tr("WaveLab session (*.wavelab.json *.json)"));
    if (path.isEmpty()) return;
    try {
        loadSession(path);
    } catch (const std::exception& e) {
        showError(tr("Open session"), QString::fromStdString(e.what()));
    }
}

void MainWindow::askExportConfig(const QString& format) {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export %1 config").arg(format), QStringLiteral("eagle3_%1.json").arg(format), tr("JSON (*.json)"));
    if (path.isEmpty()) return;
    try {
        exportConfig(format, path);
    } catch (const std::exception& e) {
        showError(tr("Export config"), QString::fromStdString(e.what()));
    }
}

void MainWindow::openDraftDialog() {
    if (!selection_) return;
    DraftTrainingRequest request;
    request.model_path = model_panel_->modelPath();
    request.data_path = last_run_options_.data_path;
    request.layers = selection_->chosen.states;
    for (const BaselineSet& b : selection_->baselines)
        request.baselines.push_back({QString::fromStdString(b.name), b.set.states});
    request.out_dir = QDir::home().filePath(QStringLiteral("wavelab-draft"));
    DraftDialog dialog(request, draft_service_.get(), this);
    dialog.exec();
}

}  // namespace wl
