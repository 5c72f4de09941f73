#pragma once
// HF-style draft directories: config.json (LlamaForCausalLMEagle3, see draft_config.h) and
// model.safetensors with SpecForge/SGLang/vLLM EAGLE3 tensor names:
//   fc.weight, midlayer.self_attn.{q,k,v,o}_proj.weight, midlayer.mlp.{gate,up,down}_proj.weight,
//   midlayer.input_layernorm.weight, midlayer.hidden_norm.weight,
//   midlayer.post_attention_layernorm.weight, norm.weight, lm_head.weight, d2t (I64), t2d (BOOL).
// Names matched against sgl-project/SpecForge specforge/modeling/draft/llama3_eagle.py
// (LlamaForCausalLMEagle3: self.fc, self.midlayer = LlamaDecoderLayer with hidden_norm /
// input_layernorm / post_attention_layernorm, self.norm, self.lm_head, buffers d2t / t2d;
// its training script drops embed_tokens when saving, as we do: the target's embeddings
// are used at load time).
#include <string>

#include "draft/eagle3_draft.h"

namespace wl {

// Writes config.json and model.safetensors (float32) atomically into `dir` (created).
void saveDraft(Eagle3Draft& draft, const std::string& dir);
// Reads a draft directory. `embeddings` [vocab, d] come from the target (frozen); throws
// wl::Error naming the file on missing/mis-shaped tensors or a bad config.
Eagle3Draft loadDraft(const std::string& dir, const torch::Tensor& embeddings);
DraftConfig readDraftConfig(const std::string& dir);

}  // namespace wl
