#include "export/framework_export.h"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "selection/baselines.h"
#include "util/error.h"

namespace wl {

using nlohmann::json;

const char* toString(ExportFormat f) {
    switch (f) {
        case ExportFormat::Vllm: return "vllm";
        case ExportFormat::Sglang: return "sglang";
        case ExportFormat::SpecForge: return "specforge";
        case ExportFormat::TrtLlm: return "trtllm";
        case ExportFormat::ModelOpt: return "modelopt";
        case ExportFormat::CsvCurve: return "csv-curve";
        case ExportFormat::CsvCka: return "csv-cka";
    }
    return "?";
}

ExportFormat parseExportFormat(const std::string& s, const std::string& source) {
    for (auto f : {ExportFormat::Vllm, ExportFormat::Sglang, ExportFormat::SpecForge, ExportFormat::TrtLlm,
                   ExportFormat::ModelOpt, ExportFormat::CsvCurve, ExportFormat::CsvCka})
        if (s == toString(f)) return f;
    if (s == "tensorrt-llm" || s == "trt-llm") return ExportFormat::TrtLlm;
    throw Error(source, "unknown export format '" + s +
                            "' (vllm, sglang, specforge, trtllm, modelopt, csv-curve, csv-cka)");
}

bool isFrameworkFormat(ExportFormat f) { return f != ExportFormat::CsvCurve && f != ExportFormat::CsvCka; }

namespace {
bool usesInputIds(ExportFormat f) { return f == ExportFormat::Vllm; }

// Frameworks whose EAGLE3 draft heads (as WaveLab knows them) fuse exactly three states.
bool needsThree(ExportFormat f) {
    return f == ExportFormat::Vllm || f == ExportFormat::Sglang || f == ExportFormat::SpecForge ||
           f == ExportFormat::TrtLlm;
}
}  // namespace

std::vector<int> frameworkIdsFromStates(ExportFormat f, const std::vector<int>& states) {
    if (!isFrameworkFormat(f)) throw Error(toString(f), "not a framework format");
    std::vector<int> ids;
    for (int h : states) {
        if (usesInputIds(f)) {
            ids.push_back(inputIdFromHfState(h));
        } else {
            if (h < 1)
                throw Error(toString(f), "hidden state 0 (the embeddings) has no layer-output id in this "
                                         "framework's convention; choose a set without h = 0");
            ids.push_back(outputIdFromHfState(h));
        }
    }
    return ids;
}

std::vector<int> statesFromFrameworkIds(ExportFormat f, const std::vector<int>& ids) {
    std::vector<int> states;
    for (int k : ids) states.push_back(usesInputIds(f) ? hfStateFromInputId(k) : hfStateFromOutputId(k));
    return states;
}

std::string conventionText(ExportFormat f) {
    switch (f) {
        case ExportFormat::Vllm:
            return "vLLM: eagle_aux_hidden_state_layer_ids, id k = input of decoder layer k = HF hidden_states[k]";
        case ExportFormat::Sglang:
            return "SGLang: eagle_config.eagle_aux_hidden_state_layer_ids, id k = output of decoder layer k = HF "
                   "hidden_states[k+1]";
        case ExportFormat::SpecForge:
            return "SpecForge: eagle_config.eagle_aux_hidden_state_layer_ids (SGLang convention), id k = output of "
                   "decoder layer k = HF hidden_states[k+1]";
        case ExportFormat::TrtLlm:
            return "TensorRT-LLM: eagle3_layers_to_capture, id k = output of decoder layer k = HF hidden_states[k+1] "
                   "(from its documented default {1, N//2-1, N-4}; not verified against a running TensorRT-LLM)";
        case ExportFormat::ModelOpt:
            return "ModelOpt: eagle_architecture_config.eagle_aux_hidden_state_layer_ids, id k = output of decoder "
                   "layer k = HF hidden_states[k+1] (from its default [1, N//2-1, N-4] and decoder-layer output "
                   "hooks; not verified against a running ModelOpt)";
        default: return "";
    }
}

namespace {

std::string number(double v) {
    if (!std::isfinite(v)) return "";
    std::ostringstream s;
    s << std::setprecision(10) << v;
    return s.str();
}

std::string curveCsv(const SelectionReport& r) {
    const auto& a = r.analysis;
    std::ostringstream out;
    out << "state,layer_output_of,entropy_filtered,entropy_unfiltered,entropy_prompt_level,entropy_dataset_level,"
           "segment,chosen\n";
    auto at = [](const std::vector<double>& v, int64_t i) { return i < static_cast<int64_t>(v.size()) ? v[i] : NAN; };
    const int64_t L = a.num_states > 0 ? a.num_states : r.model.num_layers + 1;
    for (int64_t h = 0; h < L; ++h) {
        int segment = 0;
        for (size_t s = 0; s < a.segments.size(); ++s)
            if (h >= a.segments[s].first && h <= a.segments[s].last) segment = static_cast<int>(s);
        bool chosen = false;
        for (int c : r.selection.chosen.states) chosen = chosen || c == h;
        out << h << "," << (h == 0 ? std::string("embeddings") : std::to_string(h - 1)) << ","
            << number(at(a.entropy_filtered, h)) << "," << number(at(a.entropy_unfiltered, h)) << ","
            << number(at(a.entropy_prompt_level, h)) << "," << number(at(a.entropy_dataset_level, h)) << ","
            << segment << "," << (chosen ? 1 : 0) << "\n";
    }
    return out.str();
}

std::string ckaCsv(const SelectionReport& r) {
    const auto& a = r.analysis;
    const int64_t L = a.num_states;
    if (L <= 0 || static_cast<int64_t>(a.cka.size()) != L * L)
        throw Error("csv-cka", "the result holds no CKA matrix");
    std::ostringstream out;
    out << "state";
    for (int64_t b = 0; b < L; ++b) out << "," << b;
    out << "\n";
    for (int64_t i = 0; i < L; ++i) {
        out << i;
        for (int64_t b = 0; b < L; ++b) out << "," << number(a.cka[i * L + b]);
        out << "\n";
    }
    return out.str();
}

}  // namespace

ExportOutput exportSelection(const SelectionReport& r, ExportFormat f) {
    ExportOutput out;
    if (f == ExportFormat::CsvCurve) {
        out.text = curveCsv(r);
        return out;
    }
    if (f == ExportFormat::CsvCka) {
        out.text = ckaCsv(r);
        return out;
    }
    const std::vector<int>& states = r.selection.chosen.states;
    const std::vector<int> ids = frameworkIdsFromStates(f, states);
    if (needsThree(f) && states.size() != 3)
        out.warnings.push_back(std::string(toString(f)) + ": its EAGLE3 draft head fuses exactly 3 hidden states "
                               "(fc input 3 x hidden); this set has " + std::to_string(states.size()));
    json j;
    switch (f) {
        case ExportFormat::Vllm: j["eagle_aux_hidden_state_layer_ids"] = ids; break;
        case ExportFormat::Sglang:
        case ExportFormat::SpecForge:
            j["eagle_config"] = {{"eagle_aux_hidden_state_layer_ids", ids}, {"use_aux_hidden_state", true}};
            break;
        case ExportFormat::TrtLlm: j["eagle3_layers_to_capture"] = ids; break;
        case ExportFormat::ModelOpt:
            j["eagle_architecture_config"] = {{"eagle_aux_hidden_state_layer_ids", ids}, {"use_aux_hidden_state", true}};
            break;
        default: break;
    }
    j["wavelab"] = {{"format", toString(f)},
                    {"convention", conventionText(f)},
                    {"target_model", r.model.name},
                    {"target_model_path", r.model.path},
                    {"architecture", r.model.architecture},
                    {"num_layers", r.model.num_layers},
                    {"num_states", r.model.num_layers + 1},
                    {"hf_hidden_states", states},
                    {"method", toString(r.selection.options.method)},
                    {"entropy", r.selection.chosen.entropy},
                    {"warnings", out.warnings}};
    out.text = j.dump(2) + "\n";
    return out;
}

std::vector<int> statesFromExportJson(const json& j, ExportFormat f) {
    const json* ids = nullptr;
    try {
        switch (f) {
            case ExportFormat::Vllm: ids = &j.at("eagle_aux_hidden_state_layer_ids"); break;
            case ExportFormat::Sglang:
            case ExportFormat::SpecForge: ids = &j.at("eagle_config").at("eagle_aux_hidden_state_layer_ids"); break;
            case ExportFormat::TrtLlm: ids = &j.at("eagle3_layers_to_capture"); break;
            case ExportFormat::ModelOpt:
                ids = &j.at("eagle_architecture_config").at("eagle_aux_hidden_state_layer_ids");
                break;
            default: throw Error(toString(f), "not a framework format");
        }
        return statesFromFrameworkIds(f, ids->get<std::vector<int>>());
    } catch (const json::exception& e) {
        throw Error(toString(f), std::string("export has no layer ids: ") + e.what());
    }
}

}  // namespace wl
