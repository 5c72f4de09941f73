#pragma once
// The result file of `wavelab-cli select` (and of the GUI's selection run): everything
// needed to reproduce, display and export a selection. Plain C++; no torch.
// Schema: README.md, "Analysis, selection and the result JSON".
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/layer_analyzer.h"
#include "selection/elsi.h"

namespace wl {

struct ReportModelInfo {
    std::string name;           // display name
    std::string path;           // as given
    std::string architecture;
    std::string source_format;  // "hf" / "llama2c"
    int64_t num_layers = 0;     // N decoder layers (num_states = N + 1)
    int64_t hidden_size = 0;
    int64_t vocab_size = 0;
};

struct ReportDataInfo {
    std::string path;
    std::string format;
    int64_t prompts_total = 0;   // in the file
    int64_t prompts_used = 0;
    int64_t max_tokens_per_prompt = 0;
};

// Capture settings of the run (recorded so a result says how it was produced).
struct ReportCaptureInfo {
    int64_t max_prompts = 0;            // 0 = all
    int64_t max_tokens_per_prompt = 0;
    int64_t batch_size = 0;
    bool add_bos = true;
    std::string chat_template;
    std::string device;
    std::string dtype;
    std::string tokenizer;              // path given, or "" = found beside the model
};

struct SelectionReport {
    static constexpr int kSchemaVersion = 1;
    std::string wavelab_version;
    std::string created_utc;            // ISO 8601
    ReportModelInfo model;
    ReportDataInfo data;
    ReportCaptureInfo capture;
    AnalysisOptions analysis_options;
    AnalysisSnapshot analysis;          // final snapshot (curves, CKA, boundaries, counts)
    SelectionResult selection;          // chosen set, trace, baselines (HF indices)
    double capture_seconds = 0.0;
    double analysis_seconds = 0.0;
};

nlohmann::json toJson(const SelectionReport& r);
// Throws wl::Error(source, problem) on malformed JSON, a wrong schema_version or
// inconsistent fields (states outside [0, num_layers]).
SelectionReport selectionReportFromJson(const nlohmann::json& j, const std::string& source);
SelectionReport loadSelectionReport(const std::string& path);
void saveSelectionReport(const SelectionReport& r, const std::string& path);  // atomic

}  // namespace wl
