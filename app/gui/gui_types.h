#pragma once
// Plain data passed between the GUI's worker threads and the window through queued signals.
// Plain C++ core headers only (no torch): safe in moc'ed headers.
#include <QMetaType>
#include <QString>
#include <cstdint>
#include <string>

#include "analysis/layer_analyzer.h"
#include "capture/capture_runner.h"
#include "model/model_config.h"
#include "selection/elsi.h"
#include "wave_data.h"

namespace wl {

// What the window knows about a model before (and after) loading it.
struct ModelSummary {
    QString path;
    ModelConfig config;
    QString device;                  // "cuda" or "cpu": where it will run
    QString dtype = QStringLiteral("float32");
    double weight_bytes = 0;         // parameters x bytes per parameter
    double estimate_bytes = 0;       // weights + capture + analysis working set
    double available_bytes = 0;      // core's availableMemoryBytes() (0 = unknown)
    bool fits = true;
    QString tokenizer;               // tokenizer found for it (after loading)
    QString fitMessage() const;
};

// One calibration + analysis run.
struct RunOptions {
    QString data_path;               // empty = bundled default set
    int64_t max_prompts = 64;
    int64_t max_tokens = 128;
    int64_t batch_size = 4;
    AnalysisOptions analysis;
    int surface_prompts = 48;        // columns of the entropy surface
    int surface_tokens = 64;         // tokens sampled per prompt for a surface column
};

struct RunProgress {
    int64_t prompts_done = 0;
    int64_t prompts_total = 0;
    int64_t tokens_done = 0;
    double seconds = 0;
};

struct RunResult {
    AnalysisSnapshot snapshot;       // final (full) snapshot
    SurfaceData surface;
    RunProgress progress;
    QString data_path;
    QString data_format;
    int64_t prompts_in_file = 0;
    double capture_seconds = 0;
};

}  // namespace wl

Q_DECLARE_METATYPE(wl::ModelSummary)
Q_DECLARE_METATYPE(wl::RunProgress)
Q_DECLARE_METATYPE(wl::RunResult)
Q_DECLARE_METATYPE(wl::AnalysisSnapshot)
Q_DECLARE_METATYPE(wl::SurfaceData)
Q_DECLARE_METATYPE(wl::BeamStep)
Q_DECLARE_METATYPE(wl::SelectionResult)
