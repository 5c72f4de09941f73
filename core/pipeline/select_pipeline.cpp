// Capture -> streaming analysis -> ELSI/ELSI-C. The only torch-touching part is loading the
// model and running capture; analysis and selection are plain C++.
#include "pipeline/select_pipeline.h"

#include <algorithm>
#include <chrono>
#include <ctime>

#include "data/calibration_set.h"
#include "model/causal_lm.h"
#include "model/memory_guard.h"
#include "tokenizer/tokenizer.h"

namespace wl {

namespace {
std::string utcNow() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}
double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

SelectionMemoryEstimate estimateSelectionMemory(const ModelConfig& config, const SelectionRunOptions& options) {
    SelectionMemoryEstimate e;
    e.weights = estimateModelBytes(config, options.dtype);
    int64_t tokens = options.capture.max_tokens_per_prompt > 0 ? options.capture.max_tokens_per_prompt
                                                                : config.max_position_embeddings;
    if (config.max_position_embeddings > 0) tokens = std::min(tokens, config.max_position_embeddings);
    e.capture = estimateCaptureBytes(config, tokens, options.capture.batch_size, options.dtype);
    e.analysis = estimateAnalyzerBytes(config.numHiddenStates(), config.hidden_size, options.analysis, tokens);
    return e;
}

SelectionReport runSelection(const std::string& model_path, const std::string& data_path,
                             const SelectionRunOptions& options, const SelectionRunProgressFn& progress,
                             CancelToken* cancel) {
    auto report_stage = [&](const std::string& stage) {
        if (!progress) return;
        SelectionRunProgress p;
        p.stage = stage;
        progress(p);
    };
    report_stage("load");
    LoadOptions load;
    load.device = options.device;
    load.dtype = options.dtype;
    // One check of the whole run; the load and the capture then need not repeat their parts.
    if (resolveDevice(options.device, model_path).is_cpu()) {
        const SelectionMemoryEstimate need = estimateSelectionMemory(CausalLM::readConfig(model_path), options);
        checkFits(need.total(), availableMemoryBytes(), model_path,
                  "this run (weights " + formatByteCount(need.weights) + " + capture batch " +
                      formatByteCount(need.capture) + " + analysis " + formatByteCount(need.analysis) + ")");
    }
    load.check_memory = false;
    CaptureOptions capture = options.capture;
    capture.check_memory = false;
    auto model = CausalLM::load(model_path, load);
    const ModelConfig& cfg = model->config();
    auto tokenizer = findTokenizerForModel(model_path, cfg.vocab_size, options.tokenizer_path);
    const std::string data_file = data_path.empty() ? defaultCalibrationPath() : data_path;
    const CalibrationSet data = loadCalibrationSet(data_file);
    if (cancel) cancel->checkpoint();

    SelectionReport report;
    report.wavelab_version = "0.1.0";
    report.created_utc = utcNow();
    report.model.name = cfg.name;
    report.model.path = model_path;
    report.model.architecture = cfg.architecture;
    report.model.source_format = cfg.source_format;
    report.model.num_layers = cfg.num_layers;
    report.model.hidden_size = cfg.hidden_size;
    report.model.vocab_size = cfg.vocab_size;
    report.data.path = data_file;
    report.data.format = data.format;
    report.data.prompts_total = static_cast<int64_t>(data.prompts.size());
    report.data.max_tokens_per_prompt = options.capture.max_tokens_per_prompt;
    report.analysis_options = options.analysis;
    report.capture.max_prompts = options.capture.max_prompts;
    report.capture.max_tokens_per_prompt = options.capture.max_tokens_per_prompt;
    report.capture.batch_size = options.capture.batch_size;
    report.capture.add_bos = options.capture.add_bos;
    report.capture.chat_template = options.capture.chat_template;
    report.capture.device = options.device;
    report.capture.dtype = options.dtype;
    report.capture.tokenizer = options.tokenizer_path;

    LayerAnalyzer analyzer(options.analysis);
    CaptureProgress last;
    int64_t prompts_added = 0;
    double analysis_seconds = 0;
    const auto capture_start = std::chrono::steady_clock::now();
    auto sink = [&](CapturedPrompt&& prompt) {
        const auto t0 = std::chrono::steady_clock::now();
        analyzer.add(prompt);
        analysis_seconds += secondsSince(t0);
        ++prompts_added;
        if (progress && options.snapshot_every_prompts > 0 && prompts_added % options.snapshot_every_prompts == 0) {
            AnalysisSnapshot snap = analyzer.snapshot(false);
            SelectionRunProgress p;
            p.stage = "capture";
            p.capture = last;
            p.snapshot = &snap;
            progress(p);
        }
    };
    auto on_capture = [&](const CaptureProgress& c) {
        last = c;
        if (!progress) return;
        SelectionRunProgress p;
        p.stage = "capture";
        p.capture = c;
        progress(p);
    };
    last = runCapture(*model, *tokenizer, data, capture, sink, cancel, on_capture);
    const double capture_total = secondsSince(capture_start);
    report.data.prompts_used = prompts_added;
    model.reset();  // free the model before the set-level statistics

    report_stage("analysis");
    auto t0 = std::chrono::steady_clock::now();
    analyzer.finish();
    report.analysis = analyzer.snapshot(true);
    analysis_seconds += secondsSince(t0);
    if (report.analysis.tokens_kept < 2)
        throw Error(data_file, "fewer than 2 tokens passed the token filter; nothing to analyse");

    report_stage("selection");
    auto on_step = [&](const BeamStep& step) {
        if (!progress) return;
        SelectionRunProgress p;
        p.stage = "selection";
        p.capture = last;
        p.beam_step = &step;
        progress(p);
    };
    // Reuse the final snapshot's CKA (no second round of eigensolves) and the reservoir Grams.
    auto set_model = analyzer.setEntropyModel();
    const SetObjective objective = options.selection.objective;
    SetEntropyFn entropy = [set_model, objective](const std::vector<int>& s) { return set_model->entropy(s, objective); };
    report.selection = selectLayers(entropy, static_cast<int>(report.analysis.num_states), report.analysis.cka,
                                    options.selection, on_step, cancel);
    report.capture_seconds = capture_total - analysis_seconds;
    report.analysis_seconds = analysis_seconds;
    report_stage("done");
    return report;
}

}  // namespace wl
