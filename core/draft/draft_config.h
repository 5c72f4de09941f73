#pragma once
// Shape and provenance of an EAGLE3 draft head, and its HF-style config.json
// (LlamaForCausalLMEagle3, as SpecForge writes it and SGLang/vLLM read it).
// Plain C++: safe for GUI code.
//
// Layer convention: `aux_layers` are WaveLab / Hugging Face hidden_states indices
// (h = 0 embeddings, h = k output of decoder layer k-1). config.json stores them as
// eagle_config.eagle_aux_hidden_state_layer_ids in the SGLang/SpecForge convention, where
// id k means "output of decoder layer k" = hidden_states[k + 1]. So id = h - 1; h = 0 (the
// embeddings) has no SGLang id and is rejected when writing a config for those frameworks.
#include <cstdint>
#include <string>
#include <vector>

namespace wl {

struct ModelConfig;

struct DraftConfig {
    int64_t hidden_size = 0;          // = target hidden size
    int64_t intermediate_size = 0;    // MLP as the target's
    int64_t num_heads = 0;
    int64_t num_kv_heads = 0;
    int64_t head_dim = 0;
    int64_t vocab_size = 0;           // target vocabulary
    int64_t draft_vocab_size = 0;     // LM-head rows (top-k target tokens by frequency)
    int64_t max_position_embeddings = 2048;
    double rms_norm_eps = 1e-5;
    double rope_theta = 10000.0;
    std::vector<int64_t> aux_layers;  // HF hidden_states indices, ascending
    std::string target_name;
    std::string target_path;
    std::string target_architecture;
    int64_t bos_token_id = -1;
    int64_t eos_token_id = -1;

    int64_t numAux() const { return static_cast<int64_t>(aux_layers.size()); }
    // Throws wl::Error(source, ...) when shapes are inconsistent or layers are out of order.
    void validate(const std::string& source) const;
};

// A draft config mirroring `target` (attention/MLP shapes, norm eps, RoPE theta).
// `layers` (HF indices) are sorted ascending and checked against 0..num_layers.
DraftConfig draftConfigForTarget(const ModelConfig& target, std::vector<int64_t> layers,
                                 int64_t draft_vocab_size);

// HF hidden_states index <-> SGLang/SpecForge eagle_aux_hidden_state_layer_ids.
std::vector<int64_t> toEagleAuxLayerIds(const std::vector<int64_t>& hf_layers, const std::string& source);
std::vector<int64_t> fromEagleAuxLayerIds(const std::vector<int64_t>& eagle_ids);

// config.json text (LlamaForCausalLMEagle3). When some layer is 0 (no SGLang id) the
// eagle_config block is left out and wavelab.aux_hidden_state_layers still records them.
std::string draftConfigToJson(const DraftConfig& config);
// Parses config.json text written by draftConfigToJson or by SpecForge (needs
// eagle_config.eagle_aux_hidden_state_layer_ids or wavelab.aux_hidden_state_layers).
DraftConfig draftConfigFromJson(const std::string& text, const std::string& source);

// Parses "1,3,4" into ascending unique indices; throws wl::Error(source, ...).
std::vector<int64_t> parseLayerList(const std::string& text, const std::string& source);
std::string formatLayerList(const std::vector<int64_t>& layers);

}  // namespace wl
