#include "draft/draft_config.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "model/model_config.h"
#include "selection/baselines.h"
#include "util/error.h"

namespace wl {

void DraftConfig::validate(const std::string& source) const {
    auto need = [&](bool ok, const std::string& what) {
        if (!ok) throw Error(source, what);
    };
    need(hidden_size > 0, "hidden_size must be positive");
    need(intermediate_size > 0, "intermediate_size must be positive");
    need(num_heads > 0 && num_kv_heads > 0, "attention heads must be positive");
    need(num_heads % num_kv_heads == 0, "num_attention_heads must be a multiple of num_key_value_heads");
    need(head_dim > 0 && head_dim % 2 == 0, "head_dim must be positive and even (RoPE)");
    need(vocab_size > 0, "vocab_size must be positive");
    need(draft_vocab_size > 0 && draft_vocab_size <= vocab_size,
         "draft_vocab_size must be in 1..vocab_size (" + std::to_string(vocab_size) + ")");
    need(!aux_layers.empty(), "no auxiliary hidden-state layers");
    for (size_t i = 0; i < aux_layers.size(); ++i) {
        need(aux_layers[i] >= 0, "layer indices must be >= 0");
        need(i == 0 || aux_layers[i] > aux_layers[i - 1], "layer indices must be ascending and unique");
    }
}

DraftConfig draftConfigForTarget(const ModelConfig& target, std::vector<int64_t> layers,
                                 int64_t draft_vocab_size) {
    std::sort(layers.begin(), layers.end());
    layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
    for (int64_t h : layers) {
        if (h < 0 || h > target.num_layers)
            throw Error("--layers", "layer " + std::to_string(h) + " is outside 0.." + std::to_string(target.num_layers) +
                                        " (hidden_states indices of a " + std::to_string(target.num_layers) +
                                        "-layer model)");
    }
    DraftConfig c;
    c.hidden_size = target.hidden_size;
    c.intermediate_size = target.intermediate_size;
    c.num_heads = target.num_heads;
    c.num_kv_heads = target.num_kv_heads;
    c.head_dim = target.head_dim > 0 ? target.head_dim : target.hidden_size / std::max<int64_t>(1, target.num_heads);
    c.vocab_size = target.vocab_size;
    c.draft_vocab_size = draft_vocab_size > 0 ? std::min(draft_vocab_size, target.vocab_size)
                                              : std::min<int64_t>(target.vocab_size, 32000);
    c.max_position_embeddings = target.max_position_embeddings;
    c.rms_norm_eps = target.rms_norm_eps;
    c.rope_theta = target.rope_theta;
    c.aux_layers = layers;
    c.target_name = target.name;
    c.target_path = target.source_path;
    c.target_architecture = target.architecture;
    c.bos_token_id = target.bos_token_id;
    c.eos_token_id = target.eos_token_id;
    c.validate("draft config");
    return c;
}

std::vector<int64_t> toEagleAuxLayerIds(const std::vector<int64_t>& hf_layers, const std::string& source) {
    std::vector<int64_t> ids;
    for (int64_t h : hf_layers) {
        if (h < 1)
            throw Error(source, "layer " + std::to_string(h) +
                                    " (the token embeddings) has no eagle_aux_hidden_state_layer_ids id in SGLang/SpecForge");
        ids.push_back(outputIdFromHfState(static_cast<int>(h)));
    }
    return ids;
}

std::vector<int64_t> fromEagleAuxLayerIds(const std::vector<int64_t>& eagle_ids) {
    std::vector<int64_t> hf;
    for (int64_t id : eagle_ids) hf.push_back(hfStateFromOutputId(static_cast<int>(id)));
    return hf;
}

std::string draftConfigToJson(const DraftConfig& c) {
    nlohmann::ordered_json j;
    j["architectures"] = {"LlamaForCausalLMEagle3"};
    j["model_type"] = "llama";
    j["hidden_act"] = "silu";
    j["hidden_size"] = c.hidden_size;
    j["intermediate_size"] = c.intermediate_size;
    j["num_attention_heads"] = c.num_heads;
    j["num_key_value_heads"] = c.num_kv_heads;
    j["head_dim"] = c.head_dim;
    j["num_hidden_layers"] = 1;
    j["rms_norm_eps"] = c.rms_norm_eps;
    j["rope_theta"] = c.rope_theta;
    j["rope_scaling"] = nullptr;
    j["max_position_embeddings"] = c.max_position_embeddings;
    j["attention_bias"] = false;
    j["tie_word_embeddings"] = false;
    j["torch_dtype"] = "float32";
    j["vocab_size"] = c.vocab_size;
    j["draft_vocab_size"] = c.draft_vocab_size;
    if (c.bos_token_id >= 0) j["bos_token_id"] = c.bos_token_id;
    if (c.eos_token_id >= 0) j["eos_token_id"] = c.eos_token_id;
    // fc maps the concatenated aux states (numAux * target hidden) to hidden_size.
    j["target_hidden_size"] = c.hidden_size;
    const bool expressible = std::all_of(c.aux_layers.begin(), c.aux_layers.end(), [](int64_t h) { return h >= 1; });
    if (expressible) {
        j["eagle_config"] = {{"eagle_aux_hidden_state_layer_ids", toEagleAuxLayerIds(c.aux_layers, "draft config")},
                             {"use_aux_hidden_state", true}};
    }
    j["wavelab"] = {{"aux_hidden_state_layers", c.aux_layers},
                    {"layer_convention", "huggingface hidden_states index (0 = embeddings)"},
                    {"target_model", c.target_name},
                    {"target_model_path", c.target_path},
                    {"target_architecture", c.target_architecture}};
    return j.dump(2) + "\n";
}

DraftConfig draftConfigFromJson(const std::string& text, const std::string& source) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const std::exception& e) {
        throw Error(source, std::string("malformed JSON: ") + e.what());
    }
    if (!j.is_object()) throw Error(source, "config is not a JSON object");
    auto geti = [&](const char* key, bool required, int64_t fallback) -> int64_t {
        if (!j.contains(key) || j[key].is_null()) {
            if (required) throw Error(source, std::string("missing '") + key + "'");
            return fallback;
        }
        if (!j[key].is_number_integer()) throw Error(source, std::string("'") + key + "' must be an integer");
        return j[key].get<int64_t>();
    };
    auto getd = [&](const char* key, double fallback) -> double {
        if (!j.contains(key) || j[key].is_null()) return fallback;
        if (!j[key].is_number()) throw Error(source, std::string("'") + key + "' must be a number");
        return j[key].get<double>();
    };
    DraftConfig c;
    try {
        c.hidden_size = geti("hidden_size", true, 0);
        c.intermediate_size = geti("intermediate_size", true, 0);
        c.num_heads = geti("num_attention_heads", true, 0);
        c.num_kv_heads = geti("num_key_value_heads", false, c.num_heads);
        c.head_dim = geti("head_dim", false, c.num_heads > 0 ? c.hidden_size / c.num_heads : 0);
        c.vocab_size = geti("vocab_size", true, 0);
        c.draft_vocab_size = geti("draft_vocab_size", false, c.vocab_size);
        c.max_position_embeddings = geti("max_position_embeddings", false, 2048);
        c.bos_token_id = geti("bos_token_id", false, -1);
        c.eos_token_id = geti("eos_token_id", false, -1);
        c.rms_norm_eps = getd("rms_norm_eps", 1e-5);
        c.rope_theta = getd("rope_theta", 10000.0);
        if (j.contains("wavelab") && j["wavelab"].is_object()) {
            const auto& w = j["wavelab"];
            if (w.contains("aux_hidden_state_layers")) c.aux_layers = w["aux_hidden_state_layers"].get<std::vector<int64_t>>();
            if (w.contains("target_model") && w["target_model"].is_string()) c.target_name = w["target_model"];
            if (w.contains("target_model_path") && w["target_model_path"].is_string()) c.target_path = w["target_model_path"];
            if (w.contains("target_architecture") && w["target_architecture"].is_string())
                c.target_architecture = w["target_architecture"];
        }
        if (c.aux_layers.empty() && j.contains("eagle_config") && j["eagle_config"].is_object() &&
            j["eagle_config"].contains("eagle_aux_hidden_state_layer_ids")) {
            c.aux_layers = fromEagleAuxLayerIds(j["eagle_config"]["eagle_aux_hidden_state_layer_ids"].get<std::vector<int64_t>>());
        }
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        throw Error(source, std::string("bad field type: ") + e.what());
    }
    if (c.aux_layers.empty())
        throw Error(source, "no eagle_config.eagle_aux_hidden_state_layer_ids (which target layers feed the draft?)");
    c.validate(source);
    return c;
}

std::vector<int64_t> parseLayerList(const std::string& text, const std::string& source) {
    std::set<int64_t> layers;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        auto b = item.find_first_not_of(" \t");
        auto e = item.find_last_not_of(" \t");
        if (b == std::string::npos) throw Error(source, "empty entry in layer list '" + text + "'");
        item = item.substr(b, e - b + 1);
        try {
            size_t used = 0;
            long long v = std::stoll(item, &used);
            if (used != item.size() || v < 0) throw std::invalid_argument("bad");
            layers.insert(v);
        } catch (const std::exception&) {
            throw Error(source, "'" + item + "' is not a layer index (expected e.g. 1,3,4)");
        }
    }
    if (layers.empty()) throw Error(source, "empty layer list");
    return {layers.begin(), layers.end()};
}

std::string formatLayerList(const std::vector<int64_t>& layers) {
    std::string s;
    for (size_t i = 0; i < layers.size(); ++i) s += (i ? "," : "") + std::to_string(layers[i]);
    return s;
}

}  // namespace wl
