// Drives the real WaveLab window end to end on stories260K (5 layers -> 6 hidden states):
// load, calibrate, select, export (config, figure pack, result JSON), session round trip,
// screenshot; then the `wavelab --screenshot --run` binary. Runs under Xvfb or `offscreen`.
#include <gtest/gtest.h>

#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QLineEdit>
#include <QSpinBox>
#include <QImage>
#include <QLabel>
#include <QThread>
#include <QLineSeries>
#include <QProcess>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QTableWidget>
#include <QTest>
#include <nlohmann/json.hpp>

#include "activation_wave_chart.h"
#include "calibration_panel.h"
#include "cka_heatmap.h"
#include "draft_dialog.h"
#include "util/cancel.h"
#include "engine.h"
#include "entropy_surface_view.h"
#include "figure_data_io.h"
#include "gui_test_util.h"
#include "main_window.h"
#include "model/memory_guard.h"
#include "model_panel.h"
#include "pipeline/select_pipeline.h"
#include "selection/selection_report.h"
#include "selection_panel.h"
#include "util/atomic_file.h"
#include "util/error.h"

using namespace wl;

namespace {

const QString kModel = QStringLiteral(WAVELAB_MODELS_DIR "/stories260K/stories260K.bin");
constexpr int kStates = 6;   // stories260K: 5 decoder layers + embeddings

bool waitFor(QSignalSpy& spy, int timeout_ms) { return spy.count() > 0 || spy.wait(timeout_ms); }

// One window run through the whole pipeline, shared by the tests below (the run takes a few
// seconds; the tests inspect different parts of its outcome).
class WindowPipeline : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        ASSERT_TRUE(QFileInfo::exists(kModel)) << "missing shared model " << kModel.toStdString();
        window_ = new MainWindow;
        window_->setInteractive(false);
        window_->resize(1600, 1000);
        window_->show();
        ASSERT_TRUE(QTest::qWaitForWindowExposed(window_));
        QSignalSpy errors(window_, &MainWindow::errorShown);
        QSignalSpy ready(window_, &MainWindow::modelReady);
        window_->openModel(kModel);
        ASSERT_TRUE(window_->modelPanel()->loadButton()->isEnabled()) << "stories260K refused before loading";
        QTest::mouseClick(window_->modelPanel()->loadButton(), Qt::LeftButton);
        ASSERT_TRUE(waitFor(ready, 60000)) << (errors.isEmpty() ? "" : errors[0][0].toString().toStdString());

        window_->calibrationPanel()->promptsSpin()->setValue(24);
        window_->calibrationPanel()->tokensSpin()->setValue(64);
        QSignalSpy done(window_, &MainWindow::runCompleted);
        QSignalSpy live(window_->engine(), &Engine::liveSnapshot);
        QSignalSpy progress(window_->engine(), &Engine::runProgress);
        ASSERT_TRUE(window_->calibrationPanel()->startButton()->isEnabled());
        QTest::mouseClick(window_->calibrationPanel()->startButton(), Qt::LeftButton);
        // While running, the UI thread stays responsive: the event loop keeps turning.
        ASSERT_TRUE(waitFor(done, 300000)) << (errors.isEmpty() ? "" : errors[0][0].toString().toStdString());
        progress_count_ = progress.count();
        live_count_ = live.count();

        QSignalSpy selected(window_, &MainWindow::selectionCompleted);
        QSignalSpy steps(window_->engine(), &Engine::selectionStep);
        ASSERT_TRUE(window_->selectionPanel()->runButton()->isEnabled());
        QTest::mouseClick(window_->selectionPanel()->runButton(), Qt::LeftButton);
        ASSERT_TRUE(waitFor(selected, 120000)) << (errors.isEmpty() ? "" : errors[0][0].toString().toStdString());
        step_count_ = steps.count();
        QApplication::processEvents();
    }
    static void TearDownTestSuite() {
        delete window_;
        window_ = nullptr;
    }

    static MainWindow* window_;
    static int progress_count_;
    static int live_count_;
    static int step_count_;
};

MainWindow* WindowPipeline::window_ = nullptr;
int WindowPipeline::progress_count_ = 0;
int WindowPipeline::step_count_ = 0;
int WindowPipeline::live_count_ = 0;

}  // namespace

TEST_F(WindowPipeline, ChartsHaveOnePointPerHiddenState) {
    ActivationWaveChart* wave = window_->waveChart();
    EXPECT_EQ(wave->filteredSeries()->count(), kStates);
    EXPECT_EQ(wave->unfilteredSeries()->count(), kStates);
    for (int h = 0; h < kStates; ++h) {
        EXPECT_DOUBLE_EQ(wave->filteredSeries()->at(h).x(), h);
        EXPECT_TRUE(std::isfinite(wave->filteredSeries()->at(h).y()));
    }
    EXPECT_EQ(window_->heatmap()->data().size, kStates);
    // CKA is a similarity: unit diagonal, symmetric.
    const CkaData& cka = window_->heatmap()->data();
    for (int i = 0; i < kStates; ++i) {
        EXPECT_NEAR(cka.at(i, i), 1.0, 1e-6);
        for (int j = 0; j < kStates; ++j) EXPECT_NEAR(cka.at(i, j), cka.at(j, i), 1e-9);
    }
    EXPECT_GE(progress_count_, 1);
    EXPECT_GE(live_count_, 1) << "no live snapshot reached the window during the run";
    EXPECT_EQ(window_->surfaceView()->surface().rows, kStates);
    EXPECT_GE(window_->surfaceView()->surface().cols, 2);
}

TEST_F(WindowPipeline, SelectionShowsStepsAndMarksChosenLayers) {
    const SelectionOptions o = window_->selectionPanel()->options();
    EXPECT_EQ(step_count_, o.m);   // one beam step per set size
    EXPECT_GE(window_->selectionPanel()->stepsTable()->rowCount(), o.m);
    EXPECT_GE(window_->selectionPanel()->resultTable()->rowCount(), 2);   // chosen + baselines
    ActivationWaveChart* wave = window_->waveChart();
    const WaveData& w = wave->wave();
    ASSERT_EQ(static_cast<int>(w.chosen.size()), o.m);
    EXPECT_EQ(wave->chosenSeries()->count(), o.m);
    for (int k = 0; k < o.m; ++k) {
        const QPointF p = wave->chosenSeries()->at(k);
        EXPECT_DOUBLE_EQ(p.y(), wave->filteredSeries()->at(static_cast<int>(p.x())).y()) << "marker off the curve";
    }
    EXPECT_GE(wave->eagle3Series()->count(), 1);
    EXPECT_TRUE(window_->selectionPanel()->exportButton()->isEnabled());
    EXPECT_TRUE(window_->selectionPanel()->trainButton()->isEnabled());
}

TEST_F(WindowPipeline, ExportsConfigFigurePackAndResult) {
    const QString dir = test::workDir(QStringLiteral("window_export"));
    // vLLM: ids are the HF hidden-state indices themselves (input-of-layer convention).
    window_->exportConfig(QStringLiteral("vllm"), dir + QStringLiteral("/vllm.json"));
    const nlohmann::json vllm = nlohmann::json::parse(readFile((dir + QStringLiteral("/vllm.json")).toStdString()));
    const std::string text = vllm.dump();
    ASSERT_NE(text.find("eagle_aux_hidden_state_layer_ids"), std::string::npos) << text;
    std::vector<int> chosen = window_->waveChart()->wave().chosen;
    std::function<bool(const nlohmann::json&)> find_ids = [&](const nlohmann::json& j) {
        if (!j.is_object()) return false;
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (it.key() == "eagle_aux_hidden_state_layer_ids") return it.value().get<std::vector<int>>() == chosen;
            if (find_ids(it.value())) return true;
        }
        return false;
    };
    EXPECT_TRUE(find_ids(vllm)) << text;

    const QStringList written = window_->exportFigurePack(dir + QStringLiteral("/pack"), 150);
    EXPECT_TRUE(written.contains(QStringLiteral("result.json")));
    const QString pack = dir + QStringLiteral("/pack/");
    const QImage wave_png(pack + QStringLiteral("activation_wave.png"));
    EXPECT_FALSE(wave_png.isNull());
    EXPECT_TRUE(QSvgRenderer(pack + QStringLiteral("cka_heatmap.svg")).isValid());
    EXPECT_TRUE(QSvgRenderer(pack + QStringLiteral("activation_wave.svg")).isValid());
    EXPECT_TRUE(test::readAll(pack + QStringLiteral("activation_wave.pdf")).startsWith("%PDF-"));
    EXPECT_TRUE(test::readAll(pack + QStringLiteral("cka_heatmap.pdf")).startsWith("%PDF-"));
    const QStringList csv = QString::fromLatin1(test::readAll(pack + QStringLiteral("activation_wave.csv"))).trimmed().split('\n');
    EXPECT_EQ(csv.size(), kStates + 1);
    const FigureSet back = figureSetFromJson(test::readAll(pack + QStringLiteral("figures.json")).toStdString(), "figures.json");
    EXPECT_EQ(back.wave.numPoints(), kStates);
    EXPECT_EQ(back.wave.chosen, chosen);
    // The result JSON is the CLI's format.
    const SelectionReport report = loadSelectionReport((pack + QStringLiteral("result.json")).toStdString());
    EXPECT_EQ(report.analysis.num_states, kStates);
    EXPECT_EQ(report.selection.chosen.states, chosen);
    if (EntropySurfaceView::openGLAvailable()) EXPECT_TRUE(written.contains(QStringLiteral("entropy_surface.png")));
}

TEST_F(WindowPipeline, SessionRoundTripRestoresResults) {
    const QString dir = test::workDir(QStringLiteral("session"));
    const QString path = dir + QStringLiteral("/s.wavelab.json");
    window_->saveSession(path);
    MainWindow other;
    other.setInteractive(false);
    other.loadSession(path);
    EXPECT_TRUE(other.hasRunResult());
    EXPECT_TRUE(other.hasSelection());
    EXPECT_EQ(other.waveChart()->filteredSeries()->count(), kStates);
    EXPECT_EQ(other.waveChart()->wave().chosen, window_->waveChart()->wave().chosen);
    EXPECT_EQ(other.waveChart()->wave().filtered, window_->waveChart()->wave().filtered);
    EXPECT_EQ(other.heatmap()->data().values, window_->heatmap()->data().values);
    EXPECT_EQ(other.surfaceView()->surface().values, window_->surfaceView()->surface().values);
    EXPECT_EQ(other.modelPanel()->modelPath(), kModel);
    EXPECT_EQ(other.calibrationPanel()->promptsSpin()->value(), 24);
    // A corrupt session names the file and changes nothing.
    writeFileAtomic((dir + QStringLiteral("/bad.json")).toStdString(), "{\"wavelab_session\": 1, \"result\": {\"schema_version\": 99}}");
    MainWindow third;
    third.setInteractive(false);
    try {
        third.loadSession(dir + QStringLiteral("/bad.json"));
        FAIL() << "no error for a corrupt session";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(third.hasRunResult());
    EXPECT_THROW(third.loadSession(dir + QStringLiteral("/missing.json")), Error);
}

TEST_F(WindowPipeline, ScreenshotIsKeptAsArtifact) {
    const QImage image = window_->screenshot();
    ASSERT_FALSE(image.isNull());
    EXPECT_GE(image.width(), 1200);
    const QString name = EntropySurfaceView::openGLAvailable() ? QStringLiteral("/window.png") : QStringLiteral("/window_offscreen.png");
    ASSERT_TRUE(image.save(test::artifactDir() + name));
}

TEST(WindowControls, PauseHoldsAndCancelStopsTheRun) {
    MainWindow window;
    window.setInteractive(false);
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.openModel(kModel);
    window.loadModel();
    ASSERT_TRUE(waitFor(ready, 60000));
    window.calibrationPanel()->promptsSpin()->setValue(64);
    window.calibrationPanel()->tokensSpin()->setValue(64);
    QSignalSpy progress(window.engine(), &Engine::runProgress);
    QSignalSpy cancelled(window.engine(), &Engine::runCancelled);
    QSignalSpy finished(window.engine(), &Engine::runFinished);
    window.startRun();
    ASSERT_TRUE(waitFor(progress, 60000));
    QTest::mouseClick(window.calibrationPanel()->pauseButton(), Qt::LeftButton);
    EXPECT_TRUE(window.engine()->isPaused());
    QTest::qWait(1500);   // the batch in flight still finishes and reports
    const int held = progress.count();
    QTest::qWait(800);
    EXPECT_EQ(progress.count(), held) << "progress while paused";
    EXPECT_TRUE(window.engine()->isBusy());
    QTest::mouseClick(window.calibrationPanel()->pauseButton(), Qt::LeftButton);   // resume
    EXPECT_FALSE(window.engine()->isPaused());
    QTest::mouseClick(window.calibrationPanel()->cancelButton(), Qt::LeftButton);
    ASSERT_TRUE(waitFor(cancelled, 60000) || finished.count() > 0);
    QTest::qWait(50);
    EXPECT_FALSE(window.engine()->isBusy());
    EXPECT_TRUE(window.calibrationPanel()->startButton()->isEnabled());
    EXPECT_FALSE(window.hasRunResult() && cancelled.count() > 0);
}

namespace {
// Stands in for core/draft: reports three steps from the worker thread, or waits to be
// cancelled; evaluation returns a fixed tau row.
class FakeTrainer : public DraftTrainingService {
public:
    bool wait_for_cancel = false;
    DraftTrainingRequest seen;
    std::optional<DraftEvalRequest> seen_eval;
    QString train(const DraftTrainingRequest& r, CancelToken* cancel,
                  const std::function<void(const DraftTrainingUpdate&)>& progress) override {
        seen = r;
        for (int step = 1; step <= 3; ++step) progress({QStringLiteral("training"), step, 3, 1.0 / step, 0.1 * step});
        while (wait_for_cancel) {
            cancel->checkpoint();
            QThread::msleep(10);
        }
        return QStringLiteral("fake training done");
    }
    std::optional<DraftEvalSummary> evaluate(const DraftEvalRequest& r, CancelToken*) override {
        seen_eval = r;
        DraftEvalSummary s;
        s.set_name = QStringLiteral("trained");
        s.tau = 2.25;
        s.acceptance = {0.75, 0.5};
        s.lossless_checked = true;
        return s;
    }
    std::vector<DraftEvalSummary> compare(const DraftTrainingRequest&, const std::vector<DraftLayerSet>& sets, CancelToken*,
                                          const std::function<void(const DraftTrainingUpdate&)>& progress) override {
        std::vector<DraftEvalSummary> rows;
        for (size_t i = 0; i < sets.size(); ++i) {
            progress({QStringLiteral("%1: training").arg(sets[i].name), 1, 1, 0.5, 0.5});
            DraftEvalSummary s;
            s.set_name = sets[i].name;
            s.layers = sets[i].layers;
            s.tau = 2.0 + 0.5 * static_cast<double>(i);
            s.acceptance = {0.5};
            s.lossless_checked = true;
            s.lossless_mismatches = static_cast<int>(i);
            rows.push_back(s);
        }
        return rows;
    }
};
}  // namespace

TEST(DraftDialogTest, TrainsOnWorkerAndCancels) {
    FakeTrainer trainer;
    DraftTrainingRequest request;
    request.layers = {1, 3, 5};
    request.out_dir = test::workDir(QStringLiteral("draft"));
    {
        DraftDialog dialog(request, &trainer);
        auto* start = dialog.findChild<QPushButton*>(QStringLiteral("startTraining"));
        auto* status = dialog.findChild<QLabel*>(QStringLiteral("draftStatus"));
        auto* tree_top_k = dialog.findChild<QSpinBox*>(QStringLiteral("evalTreeTopK"));
        ASSERT_TRUE(start && status && tree_top_k);
        tree_top_k->setValue(3);
        start->click();
        EXPECT_TRUE(QTest::qWaitFor([&] { return status->text().contains(QStringLiteral("fake training done")); }, 10000))
            << status->text().toStdString();
        EXPECT_EQ(trainer.seen.layers, request.layers);
        EXPECT_FALSE(trainer.seen.resume);
        // One chart point per update, at the reported step and values.
        QLineSeries* loss = dialog.lossSeries();
        QLineSeries* accuracy = dialog.accuracySeries();
        ASSERT_EQ(loss->count(), 3);
        ASSERT_EQ(accuracy->count(), 3);
        for (int i = 0; i < 3; ++i) {
            const int step = i + 1;
            EXPECT_EQ(loss->at(i).x(), step);
            EXPECT_DOUBLE_EQ(loss->at(i).y(), 1.0 / step);
            EXPECT_DOUBLE_EQ(accuracy->at(i).y(), 0.1 * step);
        }
        // Held-out evaluation starts after the training prompts, and fills one tau row.
        ASSERT_TRUE(trainer.seen_eval.has_value());
        EXPECT_EQ(trainer.seen_eval->prompt_offset, request.max_prompts);
        EXPECT_EQ(trainer.seen_eval->draft_dir, request.out_dir);
        QTableWidget* tau = dialog.tauTable();
        ASSERT_EQ(tau->rowCount(), 1);
        EXPECT_EQ(tau->item(0, 0)->text(), QStringLiteral("trained [1, 3, 5]"));
        EXPECT_EQ(tau->item(0, 1)->text(), QStringLiteral("2.250"));
        EXPECT_EQ(tau->item(0, 2)->text(), QStringLiteral("0.75 · 0.50"));
        EXPECT_EQ(tau->item(0, 3)->text(), QStringLiteral("yes"));
        // The drafting shape chosen in the dialog reaches the evaluation and the table.
        EXPECT_EQ(trainer.seen_eval->tree_top_k, 3);
        EXPECT_EQ(tau->item(0, 4)->text(), QStringLiteral("tree, depth 4 × top-3"));
    }
    {
        // A checkpoint in the output folder enables "Resume", which reaches the request.
        DraftDialog dialog(request, &trainer);
        auto* resume = dialog.findChild<QCheckBox*>(QStringLiteral("resumeTraining"));
        ASSERT_TRUE(resume);
        EXPECT_FALSE(resume->isEnabled());
        QDir(request.out_dir).mkpath(QStringLiteral("checkpoint"));
        writeFileAtomic((QDir(request.out_dir).filePath(QStringLiteral("checkpoint/train_state.pt"))).toStdString(), std::string("x"));
        dialog.findChild<QLineEdit*>(QStringLiteral("draftOutDir"))->setText(request.out_dir + QStringLiteral("/"));
        ASSERT_TRUE(resume->isEnabled());
        resume->setChecked(true);
        auto* status = dialog.findChild<QLabel*>(QStringLiteral("draftStatus"));
        dialog.findChild<QPushButton*>(QStringLiteral("startTraining"))->click();
        EXPECT_TRUE(QTest::qWaitFor([&] { return status->text().contains(QStringLiteral("fake training done")); }, 10000));
        EXPECT_TRUE(trainer.seen.resume);
        QFile::remove(QDir(request.out_dir).filePath(QStringLiteral("checkpoint/train_state.pt")));
    }
    trainer.wait_for_cancel = true;
    DraftDialog dialog(request, &trainer);
    auto* status = dialog.findChild<QLabel*>(QStringLiteral("draftStatus"));
    dialog.findChild<QPushButton*>(QStringLiteral("startTraining"))->click();
    ASSERT_TRUE(QTest::qWaitFor([&] { return status->text().contains(QStringLiteral("step 3 / 3")); }, 10000)) << status->text().toStdString();
    // The Close button reads "Cancel" while training runs.
    for (QPushButton* b : dialog.findChildren<QPushButton*>())
        if (b->text() == QStringLiteral("Cancel")) b->click();
    EXPECT_TRUE(QTest::qWaitFor([&] { return status->text().contains(QStringLiteral("Cancelled")); }, 10000)) << status->text().toStdString();
}

TEST(DraftDialogTest, ComparesChosenSetWithBaselines) {
    FakeTrainer trainer;
    DraftTrainingRequest request;
    request.layers = {1, 3, 5};
    request.out_dir = test::workDir(QStringLiteral("draft_compare"));
    {
        DraftDialog plain(request, &trainer);
        EXPECT_EQ(plain.findChild<QPushButton*>(QStringLiteral("compareBaselines")), nullptr);
    }
    request.baselines = {{QStringLiteral("EAGLE3"), {2, 4, 6}}};
    DraftDialog dialog(request, &trainer);
    auto* compare = dialog.findChild<QPushButton*>(QStringLiteral("compareBaselines"));
    auto* status = dialog.findChild<QLabel*>(QStringLiteral("draftStatus"));
    ASSERT_TRUE(compare);
    compare->click();
    ASSERT_TRUE(QTest::qWaitFor([&] { return status->text().contains(QStringLiteral("Compared 2")); }, 10000))
        << status->text().toStdString();
    // Compare-phase updates go to the status line, not the training curves.
    EXPECT_EQ(dialog.lossSeries()->count(), 0);
    QTableWidget* tau = dialog.tauTable();
    ASSERT_EQ(tau->rowCount(), 2);
    EXPECT_EQ(tau->item(0, 0)->text(), QStringLiteral("chosen [1, 3, 5]"));
    EXPECT_EQ(tau->item(0, 1)->text(), QStringLiteral("2.000"));
    EXPECT_EQ(tau->item(0, 3)->text(), QStringLiteral("yes"));
    EXPECT_EQ(tau->item(1, 0)->text(), QStringLiteral("EAGLE3 [2, 4, 6]"));
    EXPECT_EQ(tau->item(1, 1)->text(), QStringLiteral("2.500"));
    EXPECT_TRUE(tau->item(1, 3)->text().startsWith(QStringLiteral("no (1")));
}

// The real service: a few steps on stories260K, then the held-out check. Greedy speculative
// decoding must reproduce plain greedy output, and tau lies in [1, k + 1] by definition.
TEST(DraftDialogTest, CoreServiceTrainsAndEvaluatesStories260K) {
    auto service = makeCoreDraftTrainingService();
    DraftTrainingRequest request;
    request.model_path = kModel;
    request.out_dir = test::workDir(QStringLiteral("draft_core"));
    request.layers = {1, 3, 4};
    request.steps = 3;
    request.max_prompts = 4;
    int updates = 0;
    const QString summary = service->train(request, nullptr, [&](const DraftTrainingUpdate&) { ++updates; });
    EXPECT_GT(updates, 0);
    EXPECT_TRUE(summary.contains(QStringLiteral("Trained 3 steps"))) << summary.toStdString();
    DraftEvalRequest eval = defaultEvalRequest(request);
    eval.max_prompts = 2;
    eval.max_new_tokens = 8;
    const std::optional<DraftEvalSummary> result = service->evaluate(eval, nullptr);
    ASSERT_TRUE(result.has_value());
    EXPECT_GE(result->tau, 1.0);
    EXPECT_LE(result->tau, eval.k + 1.0);
    EXPECT_EQ(result->acceptance.size(), static_cast<size_t>(eval.k));
    EXPECT_TRUE(result->lossless_checked);
    EXPECT_EQ(result->lossless_mismatches, 0);
    EXPECT_DOUBLE_EQ(result->verify_tokens_per_round, eval.k + 1.0);   // a chain verifies k + 1 tokens
    // Tree drafting through the same service: lossless, and wider than the chain.
    eval.tree_top_k = 2;
    const std::optional<DraftEvalSummary> tree = service->evaluate(eval, nullptr);
    ASSERT_TRUE(tree.has_value());
    EXPECT_EQ(tree->tree_top_k, 2);
    EXPECT_EQ(tree->lossless_mismatches, 0);
    EXPECT_GT(tree->verify_tokens_per_round, eval.k + 1.0);
}

TEST(WindowErrors, MissingModelIsReportedNotLoaded) {
    MainWindow window;
    window.setInteractive(false);
    window.openModel(QStringLiteral("/nonexistent/model.bin"));
    EXPECT_FALSE(window.modelPanel()->loadButton()->isEnabled());
    QSignalSpy errors(&window, &MainWindow::errorShown);
    window.loadModel();
    ASSERT_EQ(errors.count(), 1);
    EXPECT_TRUE(errors[0][0].toString().contains(QStringLiteral("/nonexistent/model.bin")));
    EXPECT_FALSE(window.engine()->hasModel());
    // Calibration and selection refuse cleanly without a model.
    window.startRun();
    window.runSelection();
    EXPECT_EQ(errors.count(), 3);
}

TEST(WindowErrors, MemoryEstimateComparesWithMemAvailable) {
    const ModelSummary s = Engine::inspect(kModel);
    EXPECT_EQ(s.config.num_layers, kStates - 1);
    EXPECT_GT(s.weight_bytes, 0);
    // The same numbers the loader and runSelection refuse with (core/model/memory_guard.h).
    EXPECT_EQ(s.weight_bytes, static_cast<double>(estimateModelBytes(s.config, "float32")));
    EXPECT_GE(s.weight_bytes, s.config.numParameters() * 4.0);
    SelectionRunOptions run;
    run.capture.max_tokens_per_prompt = RunOptions{}.max_tokens;
    run.capture.batch_size = RunOptions{}.batch_size;
    run.analysis = RunOptions{}.analysis;
    EXPECT_EQ(s.estimate_bytes, static_cast<double>(estimateSelectionMemory(s.config, run).total()));
    EXPECT_GT(s.available_bytes, 0);
    EXPECT_TRUE(s.fits);
    EXPECT_EQ(s.fits, s.estimate_bytes <= s.available_bytes);
}

TEST(WindowErrors, ModelThatWillNotFitIsRefused) {
    // A Llama-3-70B-sized config (no weights needed: only the config is read before loading).
    const QString dir = test::workDir(QStringLiteral("huge_model"));
    writeFileAtomic((dir + QStringLiteral("/config.json")).toStdString(), R"({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 128256,
        "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80,
        "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 8192,
        "rms_norm_eps": 1e-5, "rope_theta": 500000.0, "torch_dtype": "bfloat16"})");
    ModelSummary s;
    try {
        s = Engine::inspect(dir);
    } catch (const Error& e) {
        GTEST_SKIP() << "config-only HF directory not readable here: " << e.what();
    }
    ASSERT_GT(s.weight_bytes, 200e9);
    if (s.available_bytes > s.estimate_bytes) GTEST_SKIP() << "this machine has enough memory for 70B";
    EXPECT_FALSE(s.fits);
    EXPECT_TRUE(s.fitMessage().contains(QStringLiteral("will not fit")));
    MainWindow window;
    window.setInteractive(false);
    window.openModel(dir);
    EXPECT_FALSE(window.modelPanel()->loadButton()->isEnabled());
    QSignalSpy errors(&window, &MainWindow::errorShown);
    window.loadModel();
    ASSERT_EQ(errors.count(), 1);
    EXPECT_TRUE(errors[0][0].toString().contains(QStringLiteral("will not fit"))) << errors[0][0].toString().toStdString();
    EXPECT_FALSE(window.engine()->isBusy());
    EXPECT_FALSE(window.engine()->hasModel());
}

TEST(WavelabBinary, HeadlessScreenshotAfterRun) {
    const QString out = test::workDir(QStringLiteral("binary")) + QStringLiteral("/shot.png");
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral(WAVELAB_GUI_PATH), {QStringLiteral("--screenshot"), out, QStringLiteral("--model"), kModel,
                                               QStringLiteral("--run"), QStringLiteral("--timeout"), QStringLiteral("300")});
    ASSERT_TRUE(p.waitForFinished(320000));
    const QByteArray log = p.readAll();
    ASSERT_EQ(p.exitCode(), 0) << log.toStdString();
    const QImage image(out);
    ASSERT_FALSE(image.isNull()) << log.toStdString();
    EXPECT_EQ(image.width(), 1600);
    EXPECT_EQ(image.height(), 1000);
    image.save(test::artifactDir() + QStringLiteral("/wavelab_run_") + QGuiApplication::platformName() + QStringLiteral(".png"));
}
