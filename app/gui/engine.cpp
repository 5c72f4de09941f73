// The only GUI translation unit that includes torch (through model/causal_lm.h).
#include "engine.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QPointer>
#include <QThread>
#include <QThreadPool>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <numeric>

#include "analysis/matrix_entropy.h"
#include "capture/capture_runner.h"
#include "data/calibration_set.h"
#include "model/causal_lm.h"
#include "model/memory_guard.h"
#include "pipeline/select_pipeline.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace wl {

QString ModelSummary::fitMessage() const {
    const auto bytes = [](double b) { return QString::fromStdString(formatByteCount(static_cast<int64_t>(b))); };
    if (available_bytes <= 0) return QObject::tr("needs about %1 (free memory unknown)").arg(bytes(estimate_bytes));
    if (fits) return QObject::tr("needs about %1 of %2 available").arg(bytes(estimate_bytes), bytes(available_bytes));
    return QObject::tr("needs about %1 but only %2 is available: it will not fit in memory")
        .arg(bytes(estimate_bytes), bytes(available_bytes));
}

void registerGuiMetaTypes() {
    qRegisterMetaType<ModelSummary>();
    qRegisterMetaType<RunProgress>();
    qRegisterMetaType<RunResult>();
    qRegisterMetaType<AnalysisSnapshot>();
    qRegisterMetaType<SurfaceData>();
    qRegisterMetaType<BeamStep>();
    qRegisterMetaType<SelectionResult>();
}

namespace {

// Per-prompt surface column: matrix entropy of each hidden state over a strided sample of
// the prompt's tokens (BOS dropped), and the prompt's mean token entropy for ordering.
struct SurfaceColumn {
    double mean_token_entropy = 0;
    std::vector<double> entropy;   // [num_states]
};

SurfaceColumn surfaceColumn(const CapturedPrompt& p, int max_tokens, double alpha, EntropyNormalization norm) {
    SurfaceColumn col;
    const int64_t first = p.has_bos ? 1 : 0;
    const int64_t available = p.num_tokens - first;
    if (available < 2) return col;
    const int64_t n = std::min<int64_t>(available, max_tokens);
    std::vector<int64_t> rows(n);
    for (int64_t k = 0; k < n; ++k) rows[k] = first + (k * available) / n;
    double sum = 0;
    for (int64_t t : rows) sum += p.token_entropy[static_cast<size_t>(t)];
    col.mean_token_entropy = sum / n;
    std::vector<float> z(static_cast<size_t>(n * p.hidden_size));
    for (int64_t h = 0; h < p.num_states; ++h) {
        for (int64_t k = 0; k < n; ++k)
            std::copy_n(p.row(h, rows[k]), p.hidden_size, z.begin() + k * p.hidden_size);
        col.entropy.push_back(matrixEntropy(z, n, p.hidden_size, alpha, norm));
    }
    return col;
}

SurfaceData surfaceFrom(std::vector<SurfaceColumn> cols, int64_t num_states) {
    SurfaceData s;
    s.col_title = "prompt (by token entropy)";
    s.value_title = "entropy";
    cols.erase(std::remove_if(cols.begin(), cols.end(), [](const SurfaceColumn& c) { return c.entropy.empty(); }), cols.end());
    std::stable_sort(cols.begin(), cols.end(),
                     [](const SurfaceColumn& a, const SurfaceColumn& b) { return a.mean_token_entropy < b.mean_token_entropy; });
    s.rows = static_cast<int>(num_states);
    s.cols = static_cast<int>(cols.size());
    s.values.resize(static_cast<size_t>(s.rows) * s.cols);
    for (int c = 0; c < s.cols; ++c)
        for (int r = 0; r < s.rows; ++r) s.values[static_cast<size_t>(r) * s.cols + c] = cols[c].entropy[r];
    return s;
}

}  // namespace

struct Engine::Impl {
    QThreadPool worker;                       // one thread: model load, run, selection
    QThreadPool snapshots;                    // one thread: live snapshots
    std::atomic<bool> busy{false};
    std::atomic<bool> snapshot_in_flight{false};

    mutable std::mutex mutex;                 // guards the members below
    std::unique_ptr<CausalLM> model;
    std::unique_ptr<Tokenizer> tokenizer;
    ModelSummary summary;
    std::shared_ptr<LayerAnalyzer> analyzer;  // shared with snapshot jobs
    bool analysis_done = false;
    std::shared_ptr<CancelToken> cancel = std::make_shared<CancelToken>();
    std::vector<SurfaceColumn> surface_cols;
    int surface_limit = 48;

    Impl() {
        worker.setMaxThreadCount(1);
        snapshots.setMaxThreadCount(1);
    }
};

Engine::Engine(QObject* parent) : QObject(parent), impl_(std::make_shared<Impl>()) { registerGuiMetaTypes(); }

Engine::~Engine() {
    impl_->cancel->cancel();
    impl_->worker.waitForDone();   // shutdown only: the worker checks the token often
    impl_->snapshots.waitForDone();
}

bool Engine::cudaAvailable() { return torch::cuda::is_available(); }

ModelSummary Engine::inspect(const QString& path, const RunOptions& run) {
    ModelSummary s;
    s.path = path;
    s.config = CausalLM::readConfig(path.toStdString());
    s.device = cudaAvailable() ? QStringLiteral("cuda") : QStringLiteral("cpu");
    s.dtype = QStringLiteral("float32");
    // The same estimate runSelection and the loaders refuse with (model/memory_guard.h).
    SelectionRunOptions estimate_options;
    estimate_options.dtype = s.dtype.toStdString();
    estimate_options.capture.max_tokens_per_prompt = run.max_tokens;
    estimate_options.capture.batch_size = run.batch_size;
    estimate_options.analysis = run.analysis;
    const SelectionMemoryEstimate need = estimateSelectionMemory(s.config, estimate_options);
    s.weight_bytes = static_cast<double>(need.weights);
    s.estimate_bytes = static_cast<double>(need.total());
    s.available_bytes = static_cast<double>(availableMemoryBytes());
    s.fits = s.available_bytes <= 0 || s.estimate_bytes <= s.available_bytes;
    return s;
}

bool Engine::hasModel() const {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    return impl_->model != nullptr;
}
bool Engine::isBusy() const { return impl_->busy.load(); }
bool Engine::hasAnalysis() const {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    return impl_->analyzer && impl_->analysis_done;
}
ModelSummary Engine::modelSummary() const {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    return impl_->summary;
}
void Engine::pause() { impl_->cancel->pause(); }
void Engine::resume() { impl_->cancel->resume(); }
void Engine::cancel() { impl_->cancel->cancel(); }
bool Engine::isPaused() const { return impl_->cancel->isPaused(); }

void Engine::loadModel(const QString& path) {
    if (impl_->busy.exchange(true)) return;
    Q_EMIT busyChanged(true);
    QPointer<Engine> self(this);
    std::shared_ptr<Impl> impl = impl_;
    impl->worker.start([self, impl, path] {
        try {
            ModelSummary summary = inspect(path);
            if (!summary.fits) throw Error(path.toStdString(), summary.fitMessage().toStdString());
            LoadOptions options;
            options.device = summary.device.toStdString();
            auto model = CausalLM::load(path.toStdString(), options);
            auto tokenizer = findTokenizerForModel(path.toStdString(), model->config().vocab_size);
            summary.config = model->config();
            summary.tokenizer = QString::fromStdString(tokenizer->kind());
            {
                std::lock_guard<std::mutex> lock(impl->mutex);
                impl->model = std::move(model);
                impl->tokenizer = std::move(tokenizer);
                impl->summary = summary;
                impl->analyzer.reset();
                impl->analysis_done = false;
            }
            impl->busy = false;
            if (self) {
                Q_EMIT self->busyChanged(false);
                Q_EMIT self->modelLoaded(summary);
            }
        } catch (const std::exception& e) {
            impl->busy = false;
            const QString message = QString::fromStdString(e.what());
            if (self) {
                Q_EMIT self->busyChanged(false);
                Q_EMIT self->modelLoadFailed(message);
            }
        }
    });
}

void Engine::startRun(const RunOptions& run) {
    if (!hasModel()) {
        Q_EMIT runFailed(tr("load a model first"));
        return;
    }
    if (impl_->busy.exchange(true)) return;
    Q_EMIT busyChanged(true);
    {
        std::lock_guard<std::mutex> lock(impl_->mutex);
        impl_->cancel = std::make_shared<CancelToken>();
        impl_->analyzer = std::make_shared<LayerAnalyzer>(run.analysis);
        impl_->analysis_done = false;
        impl_->surface_cols.clear();
        impl_->surface_limit = run.surface_prompts;
    }
    QPointer<Engine> self(this);
    std::shared_ptr<Impl> impl = impl_;
    impl->worker.start([self, impl, run] {
        auto finish_busy = [&] {
            impl->busy = false;
            if (self) Q_EMIT self->busyChanged(false);
        };
        std::shared_ptr<CancelToken> cancel;
        std::shared_ptr<LayerAnalyzer> analyzer;
        {
            std::lock_guard<std::mutex> lock(impl->mutex);
            cancel = impl->cancel;
            analyzer = impl->analyzer;
        }
        try {
            const std::string data_path = run.data_path.isEmpty() ? defaultCalibrationPath() : run.data_path.toStdString();
            CalibrationSet data = loadCalibrationSet(data_path);
            CaptureOptions capture;
            capture.max_prompts = run.max_prompts;
            capture.max_tokens_per_prompt = run.max_tokens;
            capture.batch_size = run.batch_size;
            capture.keep_final_normed = false;
            RunResult result;
            result.data_path = QString::fromStdString(data_path);
            result.data_format = QString::fromStdString(data.format);
            result.prompts_in_file = static_cast<int64_t>(data.prompts.size());
            const double alpha = run.analysis.alpha;
            auto sink = [&](CapturedPrompt&& prompt) {
                analyzer->add(prompt);
                bool want_column;
                {
                    std::lock_guard<std::mutex> lock(impl->mutex);
                    want_column = static_cast<int>(impl->surface_cols.size()) < impl->surface_limit;
                }
                if (want_column) {
                    SurfaceColumn col = surfaceColumn(prompt, run.surface_tokens, alpha, EntropyNormalization::Raw);
                    std::lock_guard<std::mutex> lock(impl->mutex);
                    impl->surface_cols.push_back(std::move(col));
                }
            };
            auto progress = [&](const CaptureProgress& p) {
                RunProgress rp{p.prompts_done, p.prompts_total, p.tokens_done, p.seconds};
                result.progress = rp;
                if (self) Q_EMIT self->runProgress(rp);
            };
            CausalLM* model;
            Tokenizer* tokenizer;
            {
                std::lock_guard<std::mutex> lock(impl->mutex);
                model = impl->model.get();
                tokenizer = impl->tokenizer.get();
            }
            const CaptureProgress done = runCapture(*model, *tokenizer, data, capture, sink, cancel.get(), progress);
            result.capture_seconds = done.seconds;
            result.progress = RunProgress{done.prompts_done, done.prompts_total, done.tokens_done, done.seconds};
            cancel->checkpoint();
            analyzer->finish();
            result.snapshot = analyzer->snapshot(true);
            {
                std::lock_guard<std::mutex> lock(impl->mutex);
                result.surface = surfaceFrom(impl->surface_cols, result.snapshot.num_states);
                impl->analysis_done = true;
            }
            finish_busy();
            if (self) Q_EMIT self->runFinished(result);
        } catch (const Cancelled&) {
            finish_busy();
            if (self) Q_EMIT self->runCancelled();
        } catch (const std::exception& e) {
            finish_busy();
            const QString message = QString::fromStdString(e.what());
            if (self) Q_EMIT self->runFailed(message);
        }
    });
}

void Engine::requestLiveSnapshot() {
    std::shared_ptr<LayerAnalyzer> analyzer;
    {
        std::lock_guard<std::mutex> lock(impl_->mutex);
        analyzer = impl_->analyzer;
    }
    if (!analyzer || impl_->snapshot_in_flight.exchange(true)) return;
    QPointer<Engine> self(this);
    std::shared_ptr<Impl> impl = impl_;
    impl->snapshots.start([self, impl, analyzer] {
        try {
            if (analyzer->numStates() > 0) {
                AnalysisSnapshot snapshot = analyzer->snapshot(false);
                SurfaceData surface;
                {
                    std::lock_guard<std::mutex> lock(impl->mutex);
                    surface = surfaceFrom(impl->surface_cols, snapshot.num_states);
                }
                if (self) Q_EMIT self->liveSnapshot(snapshot, surface);
            }
        } catch (const std::exception&) {
            // A live snapshot can fail before enough tokens arrived; the next one will do.
        }
        impl->snapshot_in_flight = false;
    });
}

void Engine::runSelection(const SelectionOptions& options, int step_delay_ms) {
    if (!hasAnalysis()) {
        Q_EMIT selectionFailed(tr("run the calibration first: ELSI needs its statistics"));
        return;
    }
    if (impl_->busy.exchange(true)) return;
    Q_EMIT busyChanged(true);
    {
        std::lock_guard<std::mutex> lock(impl_->mutex);
        impl_->cancel = std::make_shared<CancelToken>();
    }
    QPointer<Engine> self(this);
    std::shared_ptr<Impl> impl = impl_;
    impl->worker.start([self, impl, options, step_delay_ms] {
        std::shared_ptr<LayerAnalyzer> analyzer;
        std::shared_ptr<CancelToken> cancel;
        {
            std::lock_guard<std::mutex> lock(impl->mutex);
            analyzer = impl->analyzer;
            cancel = impl->cancel;
        }
        auto done = [&] {
            impl->busy = false;
            if (self) Q_EMIT self->busyChanged(false);
        };
        try {
            auto on_step = [&](const BeamStep& step) {
                if (self) Q_EMIT self->selectionStep(step);
                // Teaching mode slows the search down so each step can be seen.
                for (int waited = 0; waited < step_delay_ms; waited += 20) {
                    cancel->checkpoint();
                    QThread::msleep(20);
                }
            };
            SelectionResult result = selectLayers(*analyzer, options, on_step, cancel.get());
            done();
            if (self) Q_EMIT self->selectionFinished(result);
        } catch (const Cancelled&) {
            done();
            if (self) Q_EMIT self->selectionFailed(tr("selection cancelled"));
        } catch (const std::exception& e) {
            done();
            const QString message = QString::fromStdString(e.what());
            if (self) Q_EMIT self->selectionFailed(message);
        }
    });
}

}  // namespace wl
