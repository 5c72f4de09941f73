#pragma once
// Capture -> streaming analysis -> ELSI/ELSI-C in one task, for the CLI (`select`) and the
// GUI. Plain C++ header (the implementation uses torch): safe to include from GUI code.
#include <functional>
#include <string>

#include "analysis/layer_analyzer.h"
#include "capture/capture_runner.h"
#include "model/model_config.h"
#include "selection/elsi.h"
#include "selection/selection_report.h"
#include "util/cancel.h"

namespace wl {

struct SelectionRunOptions {
    CaptureOptions capture;
    AnalysisOptions analysis;
    SelectionOptions selection;
    std::string device = "auto";     // LoadOptions::device
    std::string dtype = "float32";   // LoadOptions::dtype
    std::string tokenizer_path;      // empty = found beside the model (findTokenizerForModel)
    // Live snapshots for progress displays: every this many prompts (0 = never). Each costs
    // what AnalyzerSnapshot(full = false) costs.
    int64_t snapshot_every_prompts = 0;
};

struct SelectionRunProgress {
    std::string stage;                          // "load", "capture", "analysis", "selection", "done"
    CaptureProgress capture;                    // counts so far
    const AnalysisSnapshot* snapshot = nullptr; // set when a live snapshot was taken (valid during the call)
    const BeamStep* beam_step = nullptr;        // set once per beam step during "selection"
};
using SelectionRunProgressFn = std::function<void(const SelectionRunProgress&)>;

// Host memory a selection run holds at its peak: the weights, one capture batch (padded to
// the longest allowed prompt) and the streaming analyzer. Shown before loading (GUI) and
// checked by runSelection, which refuses with these numbers when they exceed MemAvailable.
struct SelectionMemoryEstimate {
    int64_t weights = 0;
    int64_t capture = 0;
    int64_t analysis = 0;
    int64_t total() const { return weights + capture + analysis; }
};
SelectionMemoryEstimate estimateSelectionMemory(const ModelConfig& config, const SelectionRunOptions& options);

// `data_path` empty = defaultCalibrationPath(). Throws wl::Error on bad input (model,
// tokenizer, data, NaN states, not enough memory), wl::Cancelled when `cancel` fires.
SelectionReport runSelection(const std::string& model_path, const std::string& data_path,
                             const SelectionRunOptions& options,
                             const SelectionRunProgressFn& progress = {}, CancelToken* cancel = nullptr);

}  // namespace wl
