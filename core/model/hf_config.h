#pragma once
// Hugging Face config.json <-> ModelConfig. Plain C++ (no torch).
#include <string>

#include "model/model_config.h"

namespace wl {

// Parses an HF config.json (LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM,
// Qwen3ForCausalLM). Throws wl::Error naming the file for malformed JSON, an unsupported
// architecture or rope_scaling type, missing fields, or inconsistent sizes.
ModelConfig parseHfConfig(const std::string& config_json_path);

// Checks the sizes agree (positive, heads divide, head_dim even); throws wl::Error(source, ...).
void validateModelConfig(const ModelConfig& config, const std::string& source);

// Serialises `config` as an HF config.json text (rotate-half RoPE is implied, so it must not
// be called with rope_interleaved = true weights unless they were permuted). `synthetic`
// adds "wavelab_synthetic": true.
std::string hfConfigJson(const ModelConfig& config, bool synthetic = false);

}  // namespace wl
