#pragma once
// Writes a selection (HF hidden_states indices) in each serving/training framework's own
// config key and layer-id convention, and CSV tables of the analysis. Plain C++.
//
// Conventions (N = decoder layers; h = HF hidden_states index, see selection/baselines.h):
//   vLLM      eagle_aux_hidden_state_layer_ids                id k = INPUT of layer k  = h k
//   SGLang    eagle_config.eagle_aux_hidden_state_layer_ids   id k = OUTPUT of layer k = h k+1
//   SpecForge eagle_config.eagle_aux_hidden_state_layer_ids   same as SGLang (it trains for SGLang)
//   TRT-LLM   eagle3_layers_to_capture                        id k = OUTPUT of layer k = h k+1
//             (source: TensorRT-LLM EagleDecodingConfig field doc, "Defaults to {1,
//             num_layers//2-1, num_layers-4}", i.e. the EAGLE3 default h {2, N//2, N-3}
//             written as output ids)
//   ModelOpt  eagle_architecture_config.eagle_aux_hidden_state_layer_ids
//             id k = OUTPUT of layer k = h k+1 (source: NVIDIA Model-Optimizer HF plugin:
//             default [1, N//2-1, N-4] and a forward hook on decoder layer k's output)
// The embeddings (h = 0) have no layer-output id: exporting a set with h = 0 to an
// output-convention framework throws wl::Error.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "selection/selection_report.h"

namespace wl {

enum class ExportFormat { Vllm, Sglang, SpecForge, TrtLlm, ModelOpt, CsvCurve, CsvCka };

const char* toString(ExportFormat f);   // "vllm", "sglang", "specforge", "trtllm", "modelopt", "csv-curve", "csv-cka"
ExportFormat parseExportFormat(const std::string& s, const std::string& source = "");
bool isFrameworkFormat(ExportFormat f);  // not CSV

// The framework ids of HF states (and back). Throws wl::Error when a state has no id.
std::vector<int> frameworkIdsFromStates(ExportFormat f, const std::vector<int>& states);
std::vector<int> statesFromFrameworkIds(ExportFormat f, const std::vector<int>& ids);
std::string conventionText(ExportFormat f);  // one sentence, in words

struct ExportOutput {
    std::string text;                    // file content (JSON ends with a newline)
    std::vector<std::string> warnings;   // also inside the JSON under wavelab.warnings
};

// Framework formats: a JSON config fragment with the framework's key, plus a "wavelab"
// object {convention, target_model, num_layers, num_states, hf_hidden_states, method,
// entropy, warnings}. CSV formats: the entropy curve / the CKA matrix.
ExportOutput exportSelection(const SelectionReport& report, ExportFormat format);

// Reads the layer ids back from an exported framework JSON (round trip) as HF states.
std::vector<int> statesFromExportJson(const nlohmann::json& exported, ExportFormat format);

}  // namespace wl
