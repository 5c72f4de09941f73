#pragma once
// The GUI's connection to core: loads a model, runs capture + streaming analysis and ELSI on
// a worker thread, and reports through queued signals. The UI thread never waits on it:
// pause/resume/cancel go through a wl::CancelToken; live snapshots are computed on a pool
// thread when the window's timer asks for one. Torch stays in engine.cpp (pimpl).
#include <QObject>
#include <memory>

#include "gui_types.h"

namespace wl {

class Engine : public QObject {
    Q_OBJECT
public:
    explicit Engine(QObject* parent = nullptr);
    ~Engine() override;   // cancels running work and waits for the worker (shutdown only)

    // Config only (no weights): architecture, sizes, device, memory estimate vs MemAvailable.
    // Fast; throws wl::Error naming the file.
    static ModelSummary inspect(const QString& path, const RunOptions& run = {});
    static bool cudaAvailable();

    bool hasModel() const;
    bool isBusy() const;
    bool hasAnalysis() const;      // a finished run whose statistics ELSI can use
    ModelSummary modelSummary() const;

    void loadModel(const QString& path);
    void startRun(const RunOptions& options);
    void runSelection(const SelectionOptions& options, int step_delay_ms = 0);
    void pause();
    void resume();
    void cancel();
    bool isPaused() const;
    // Asks for a live snapshot of the running analysis; emits liveSnapshot later. Ignored
    // while one is being computed (so a slow snapshot never piles up).
    void requestLiveSnapshot();

Q_SIGNALS:
    void modelLoaded(const wl::ModelSummary& summary);
    void modelLoadFailed(const QString& message);
    void runProgress(const wl::RunProgress& progress);
    void liveSnapshot(const wl::AnalysisSnapshot& snapshot, const wl::SurfaceData& surface);
    void runFinished(const wl::RunResult& result);
    void runFailed(const QString& message);
    void runCancelled();
    void selectionStep(const wl::BeamStep& step);
    void selectionFinished(const wl::SelectionResult& result);
    void selectionFailed(const QString& message);
    void busyChanged(bool busy);

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

void registerGuiMetaTypes();

}  // namespace wl
