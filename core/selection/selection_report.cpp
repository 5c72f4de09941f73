#include "selection/selection_report.h"

#include "selection/selection_json.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace wl {

using nlohmann::json;

nlohmann::json toJson(const SelectionReport& r) {
    return json{{"schema", "wavelab.selection"},
                {"schema_version", SelectionReport::kSchemaVersion},
                {"wavelab_version", r.wavelab_version},
                {"created_utc", r.created_utc},
                {"model",
                 {{"name", r.model.name},
                  {"path", r.model.path},
                  {"architecture", r.model.architecture},
                  {"source_format", r.model.source_format},
                  {"num_layers", r.model.num_layers},
                  {"hidden_size", r.model.hidden_size},
                  {"vocab_size", r.model.vocab_size}}},
                {"data",
                 {{"path", r.data.path},
                  {"format", r.data.format},
                  {"prompts_total", r.data.prompts_total},
                  {"prompts_used", r.data.prompts_used},
                  {"max_tokens_per_prompt", r.data.max_tokens_per_prompt}}},
                {"capture",
                 {{"max_prompts", r.capture.max_prompts},
                  {"max_tokens_per_prompt", r.capture.max_tokens_per_prompt},
                  {"batch_size", r.capture.batch_size},
                  {"add_bos", r.capture.add_bos},
                  {"chat_template", r.capture.chat_template},
                  {"device", r.capture.device},
                  {"dtype", r.capture.dtype},
                  {"tokenizer", r.capture.tokenizer}}},
                {"index_convention",
                 "HF hidden_states[h]: 0 = embeddings, h = output of decoder layer h-1, N = last layer "
                 "output before the final norm"},
                {"analysis_options", r.analysis_options},
                {"analysis", r.analysis},
                {"selection", r.selection},
                {"timing", {{"capture_seconds", r.capture_seconds}, {"analysis_seconds", r.analysis_seconds}}}};
}

SelectionReport selectionReportFromJson(const nlohmann::json& j, const std::string& source) {
    try {
        if (!j.is_object()) throw Error(source, "not a JSON object");
        if (j.value("schema", std::string()) != "wavelab.selection")
            throw Error(source, "not a WaveLab selection result (missing \"schema\": \"wavelab.selection\")");
        const int version = j.value("schema_version", 0);
        if (version != SelectionReport::kSchemaVersion)
            throw Error(source, "unsupported schema_version " + std::to_string(version));
        SelectionReport r;
        r.wavelab_version = j.value("wavelab_version", std::string());
        r.created_utc = j.value("created_utc", std::string());
        if (!j.contains("model") || !j.at("model").is_object()) throw Error(source, "missing 'model' object");
        const auto& m = j.at("model");
        r.model.name = m.value("name", std::string());
        r.model.path = m.value("path", std::string());
        r.model.architecture = m.value("architecture", std::string());
        r.model.source_format = m.value("source_format", std::string());
        r.model.num_layers = m.value("num_layers", int64_t(0));
        r.model.hidden_size = m.value("hidden_size", int64_t(0));
        r.model.vocab_size = m.value("vocab_size", int64_t(0));
        if (j.contains("data") && j.at("data").is_object()) {
            const auto& d = j.at("data");
            r.data.path = d.value("path", std::string());
            r.data.format = d.value("format", std::string());
            r.data.prompts_total = d.value("prompts_total", int64_t(0));
            r.data.prompts_used = d.value("prompts_used", int64_t(0));
            r.data.max_tokens_per_prompt = d.value("max_tokens_per_prompt", int64_t(0));
        }
        if (j.contains("capture") && j.at("capture").is_object()) {
            const auto& c = j.at("capture");
            r.capture.max_prompts = c.value("max_prompts", int64_t(0));
            r.capture.max_tokens_per_prompt = c.value("max_tokens_per_prompt", int64_t(0));
            r.capture.batch_size = c.value("batch_size", int64_t(0));
            r.capture.add_bos = c.value("add_bos", true);
            r.capture.chat_template = c.value("chat_template", std::string());
            r.capture.device = c.value("device", std::string());
            r.capture.dtype = c.value("dtype", std::string());
            r.capture.tokenizer = c.value("tokenizer", std::string());
        }
        if (j.contains("analysis_options")) from_json(j.at("analysis_options"), r.analysis_options);
        if (j.contains("analysis")) from_json(j.at("analysis"), r.analysis);
        if (!j.contains("selection")) throw Error(source, "missing 'selection' object");
        from_json(j.at("selection"), r.selection);
        if (j.contains("timing") && j.at("timing").is_object()) {
            r.capture_seconds = j.at("timing").value("capture_seconds", 0.0);
            r.analysis_seconds = j.at("timing").value("analysis_seconds", 0.0);
        }
        if (r.model.num_layers < 1) throw Error(source, "model.num_layers must be >= 1");
        if (r.selection.chosen.states.empty()) throw Error(source, "selection.chosen.states is empty");
        for (int h : r.selection.chosen.states)
            if (h < 0 || h > r.model.num_layers)
                throw Error(source, "chosen state " + std::to_string(h) + " outside 0.." +
                                        std::to_string(r.model.num_layers));
        return r;
    } catch (const Error& e) {
        if (e.source() == source) throw;
        throw Error(source, e.what());
    } catch (const nlohmann::json::exception& e) {
        throw Error(source, std::string("malformed result: ") + e.what());
    }
}

SelectionReport loadSelectionReport(const std::string& path) {
    const std::string text = readFile(path);
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        throw Error(path, std::string("malformed JSON: ") + e.what());
    }
    return selectionReportFromJson(j, path);
}

void saveSelectionReport(const SelectionReport& r, const std::string& path) {
    writeFileAtomic(path, toJson(r).dump(2) + "\n");
}

}  // namespace wl
