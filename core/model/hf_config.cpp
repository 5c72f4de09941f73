#include "model/hf_config.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "util/error.h"

using nlohmann::json;

namespace wl {

namespace {
int64_t getInt(const json& j, const char* key, const std::string& path, int64_t fallback, bool required) {
    if (!j.contains(key) || j[key].is_null()) {
        if (required) throw Error(path, std::string("missing \"") + key + "\"");
        return fallback;
    }
    if (!j[key].is_number_integer()) throw Error(path, std::string("\"") + key + "\" is not an integer");
    return j[key].get<int64_t>();
}
double getDouble(const json& j, const char* key, const std::string& path, double fallback) {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_number()) throw Error(path, std::string("\"") + key + "\" is not a number");
    return j[key].get<double>();
}
bool getBool(const json& j, const char* key, const std::string& path, bool fallback) {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_boolean()) throw Error(path, std::string("\"") + key + "\" is not true/false");
    return j[key].get<bool>();
}
int64_t firstTokenId(const json& j, const char* key) {
    if (!j.contains(key)) return -1;
    const json& v = j[key];
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_array() && !v.empty() && v[0].is_number_integer()) return v[0].get<int64_t>();
    return -1;
}
}  // namespace

void validateModelConfig(const ModelConfig& c, const std::string& source) {
    auto positive = [&](int64_t v, const char* what) {
        if (v <= 0) throw Error(source, std::string(what) + " must be positive, got " + std::to_string(v));
    };
    positive(c.vocab_size, "vocab_size");
    positive(c.hidden_size, "hidden_size");
    positive(c.intermediate_size, "intermediate_size");
    positive(c.num_layers, "num_hidden_layers");
    positive(c.num_heads, "num_attention_heads");
    positive(c.num_kv_heads, "num_key_value_heads");
    positive(c.head_dim, "head_dim");
    positive(c.max_position_embeddings, "max_position_embeddings");
    if (c.num_heads % c.num_kv_heads != 0)
        throw Error(source, "num_attention_heads " + std::to_string(c.num_heads) + " is not a multiple of num_key_value_heads " +
                                std::to_string(c.num_kv_heads));
    if (c.head_dim % 2 != 0) throw Error(source, "head_dim " + std::to_string(c.head_dim) + " must be even for RoPE");
    if (c.rms_norm_eps <= 0) throw Error(source, "rms_norm_eps must be positive");
    if (c.rope_theta <= 0) throw Error(source, "rope_theta must be positive");
    if (c.rope_scaling.type == "llama3") {
        if (c.rope_scaling.factor <= 0 || c.rope_scaling.original_max_position_embeddings <= 0 ||
            c.rope_scaling.high_freq_factor <= c.rope_scaling.low_freq_factor || c.rope_scaling.low_freq_factor <= 0)
            throw Error(source, "llama3 rope_scaling needs factor > 0, 0 < low_freq_factor < high_freq_factor, "
                                "original_max_position_embeddings > 0");
    } else if (c.rope_scaling.type != "none") {
        throw Error(source, "unsupported rope_scaling type '" + c.rope_scaling.type + "'");
    }
}

ModelConfig parseHfConfig(const std::string& path) {
    json j;
    try {
        j = json::parse(readFile(path));
    } catch (const json::exception& e) {
        throw Error(path, std::string("malformed JSON: ") + e.what());
    }
    if (!j.is_object()) throw Error(path, "config is not a JSON object");
    ModelConfig c;
    c.source_format = "hf";
    c.source_path = std::filesystem::path(path).parent_path().string();
    c.name = std::filesystem::path(c.source_path).filename().string();
    if (!j.contains("architectures") || !j["architectures"].is_array() || j["architectures"].empty() ||
        !j["architectures"][0].is_string())
        throw Error(path, "missing \"architectures\"");
    c.architecture = j["architectures"][0].get<std::string>();
    const bool llama = c.architecture == "LlamaForCausalLM", mistral = c.architecture == "MistralForCausalLM",
               qwen2 = c.architecture == "Qwen2ForCausalLM", qwen3 = c.architecture == "Qwen3ForCausalLM";
    if (!llama && !mistral && !qwen2 && !qwen3)
        throw Error(path, "unsupported architecture '" + c.architecture +
                              "' (supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM)");
    if (j.contains("hidden_act") && j["hidden_act"].is_string() && j["hidden_act"] != "silu")
        throw Error(path, "unsupported hidden_act '" + j["hidden_act"].get<std::string>() + "' (only silu)");
    c.vocab_size = getInt(j, "vocab_size", path, 0, true);
    c.hidden_size = getInt(j, "hidden_size", path, 0, true);
    c.intermediate_size = getInt(j, "intermediate_size", path, 0, true);
    c.num_layers = getInt(j, "num_hidden_layers", path, 0, true);
    c.num_heads = getInt(j, "num_attention_heads", path, 0, true);
    c.num_kv_heads = getInt(j, "num_key_value_heads", path, c.num_heads, false);
    if (c.num_heads <= 0) throw Error(path, "num_attention_heads must be positive");
    if (!j.contains("head_dim") || j["head_dim"].is_null()) {
        if (c.hidden_size % c.num_heads != 0)
            throw Error(path, "hidden_size " + std::to_string(c.hidden_size) + " is not divisible by num_attention_heads " +
                                  std::to_string(c.num_heads));
        c.head_dim = c.hidden_size / c.num_heads;
    } else {
        c.head_dim = getInt(j, "head_dim", path, 0, true);
    }
    c.max_position_embeddings = getInt(j, "max_position_embeddings", path, 2048, false);
    c.rms_norm_eps = getDouble(j, "rms_norm_eps", path, 1e-6);
    c.rope_theta = getDouble(j, "rope_theta", path, 10000.0);
    c.tie_word_embeddings = getBool(j, "tie_word_embeddings", path, false);
    c.qk_norm = qwen3;
    c.attention_bias = qwen2 || getBool(j, "attention_bias", path, false);
    if (mistral) c.sliding_window = getInt(j, "sliding_window", path, 0, false);
    if ((qwen2 || qwen3) && getBool(j, "use_sliding_window", path, false))
        throw Error(path, "use_sliding_window is not supported");
    if (j.contains("rope_scaling") && !j["rope_scaling"].is_null()) {
        const json& rs = j["rope_scaling"];
        if (!rs.is_object()) throw Error(path, "\"rope_scaling\" is not an object");
        std::string type = rs.contains("rope_type") && rs["rope_type"].is_string() ? rs["rope_type"].get<std::string>()
                           : rs.contains("type") && rs["type"].is_string()      ? rs["type"].get<std::string>()
                                                                                : "";
        if (type == "default" || type.empty()) {
            c.rope_scaling.type = "none";
        } else if (type == "llama3") {
            c.rope_scaling.type = "llama3";
            c.rope_scaling.factor = getDouble(rs, "factor", path, 1.0);
            c.rope_scaling.low_freq_factor = getDouble(rs, "low_freq_factor", path, 1.0);
            c.rope_scaling.high_freq_factor = getDouble(rs, "high_freq_factor", path, 4.0);
            c.rope_scaling.original_max_position_embeddings =
                getInt(rs, "original_max_position_embeddings", path, 8192, false);
        } else {
            throw Error(path, "unsupported rope_scaling type '" + type + "' (supported: llama3)");
        }
    }
    if (j.contains("torch_dtype") && j["torch_dtype"].is_string()) c.torch_dtype = j["torch_dtype"].get<std::string>();
    c.bos_token_id = firstTokenId(j, "bos_token_id");
    c.eos_token_id = firstTokenId(j, "eos_token_id");
    c.rope_interleaved = false;
    validateModelConfig(c, path);
    return c;
}

std::string hfConfigJson(const ModelConfig& c, bool synthetic) {
    json j;
    j["architectures"] = {c.architecture.empty() ? "LlamaForCausalLM" : c.architecture};
    const std::string& a = j["architectures"][0].get_ref<const std::string&>();
    j["model_type"] = a == "Qwen3ForCausalLM" ? "qwen3" : a == "Qwen2ForCausalLM" ? "qwen2" : a == "MistralForCausalLM" ? "mistral" : "llama";
    j["vocab_size"] = c.vocab_size;
    j["hidden_size"] = c.hidden_size;
    j["intermediate_size"] = c.intermediate_size;
    j["num_hidden_layers"] = c.num_layers;
    j["num_attention_heads"] = c.num_heads;
    j["num_key_value_heads"] = c.num_kv_heads;
    j["head_dim"] = c.head_dim;
    j["hidden_act"] = "silu";
    j["max_position_embeddings"] = c.max_position_embeddings;
    j["rms_norm_eps"] = c.rms_norm_eps;
    j["rope_theta"] = c.rope_theta;
    j["tie_word_embeddings"] = c.tie_word_embeddings;
    if (a != "Qwen2ForCausalLM") j["attention_bias"] = c.attention_bias;
    if (a == "MistralForCausalLM") j["sliding_window"] = c.sliding_window > 0 ? json(c.sliding_window) : json(nullptr);
    if (c.rope_scaling.type == "llama3") {
        j["rope_scaling"] = {{"rope_type", "llama3"},
                             {"factor", c.rope_scaling.factor},
                             {"low_freq_factor", c.rope_scaling.low_freq_factor},
                             {"high_freq_factor", c.rope_scaling.high_freq_factor},
                             {"original_max_position_embeddings", c.rope_scaling.original_max_position_embeddings}};
    } else {
        j["rope_scaling"] = nullptr;
    }
    j["torch_dtype"] = c.torch_dtype;
    if (c.bos_token_id >= 0) j["bos_token_id"] = c.bos_token_id;
    if (c.eos_token_id >= 0) j["eos_token_id"] = c.eos_token_id;
    if (synthetic) j["wavelab_synthetic"] = true;
    return j.dump(2) + "\n";
}

}  // namespace wl
