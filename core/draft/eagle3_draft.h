#pragma once
// The EAGLE3 draft head in libtorch. Includes torch: never include from moc'ed headers.
//
// Architecture (as SpecForge's LlamaForCausalLMEagle3, specforge/modeling/draft/llama3_eagle.py):
//   g      = fc(concat(aux states, ascending layer order))       Linear(m*d -> d, no bias)
//   x      = concat(input_layernorm(embed(token)), hidden_norm(g))  [.., 2d]
//   g'     = g + o_proj(attn(q/k/v_proj(x)))                     q/k/v: 2d -> heads
//   g''    = g' + mlp(post_attention_layernorm(g'))              SiLU-gated, target's sizes
//   logits = lm_head(norm(g''))                                  over the draft vocabulary
// g'' (pre-norm) is the "hidden state" fed to the next draft step in place of fc(aux).
// Parameter names equal the SpecForge / SGLang / vLLM EAGLE3 checkpoint names (fc.weight,
// midlayer.self_attn.q_proj.weight, midlayer.hidden_norm.weight, norm.weight,
// lm_head.weight, ...); embed_tokens is the target's, frozen, and not a parameter.
#include <torch/torch.h>

#include <vector>

#include "draft/draft_config.h"
#include "draft/draft_vocab.h"

namespace wl {

struct RMSNormImpl : torch::nn::Module {
    RMSNormImpl(int64_t dim, double eps);
    torch::Tensor forward(const torch::Tensor& x);
    torch::Tensor weight;
    double eps;
};
TORCH_MODULE(RMSNorm);

struct DraftAttentionImpl : torch::nn::Module {
    explicit DraftAttentionImpl(const DraftConfig& c);
    torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
};
TORCH_MODULE(DraftAttention);

struct DraftMLPImpl : torch::nn::Module {
    explicit DraftMLPImpl(const DraftConfig& c);
    torch::Tensor forward(const torch::Tensor& x);
    torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
};
TORCH_MODULE(DraftMLP);

struct DraftLayerImpl : torch::nn::Module {
    explicit DraftLayerImpl(const DraftConfig& c);
    DraftAttention self_attn{nullptr};
    DraftMLP mlp{nullptr};
    RMSNorm input_layernorm{nullptr}, hidden_norm{nullptr}, post_attention_layernorm{nullptr};
};
TORCH_MODULE(DraftLayer);

// The draft's own key/value cache during decoding: [B, kv_heads, L, head_dim].
struct DraftKVCache {
    torch::Tensor keys, values;
    int64_t length() const { return keys.defined() ? keys.size(2) : 0; }
    void truncate(int64_t new_length);
    void clear() {
        keys = torch::Tensor();
        values = torch::Tensor();
    }
};

class Eagle3DraftImpl : public torch::nn::Module {
public:
    Eagle3DraftImpl(const DraftConfig& config, const DraftVocab& vocab);

    const DraftConfig& config() const { return config_; }
    const DraftVocab& vocab() const { return vocab_; }

    // Frozen token embeddings [vocab, d] (the target's). Must be set before forward.
    void setEmbeddings(const torch::Tensor& embeddings);
    const torch::Tensor& embeddings() const { return embed_tokens_; }

    // fc over concatenated aux states [.., m*d] -> [.., d].
    torch::Tensor project(const torch::Tensor& aux) { return fc->forward(aux); }
    torch::Tensor logits(const torch::Tensor& hidden);   // lm_head(norm(hidden)), draft vocab
    torch::Tensor draftToTarget(const torch::Tensor& draft_ids) const;   // via d2t

    // Training-time test (SpecForge's unrolled attention): aux [B,T,m*d], ids [B,T].
    // Step i (0..steps-1) at position t reads token ids[t+1+i] (0 past the end) with hidden
    // fc(aux[t]) at i = 0 or the step-(i-1) output at t, rotary position t+i; its query
    // sees step-0 keys at positions <= t and the keys of steps 1..i at t itself, exactly what
    // chain decoding with a KV cache sees. Returns per-step logits [B,T,draft_vocab].
    std::vector<torch::Tensor> forwardTTT(const torch::Tensor& aux, const torch::Tensor& ids, int64_t steps);

    // Incremental step: hidden [B,n,d] (fc output or a previous step's output), ids [B,n],
    // rotary positions [n]; attends to everything in `cache` plus the new entries causally,
    // appends them. Returns the pre-norm outputs [B,n,d]. `visible` [n, cache + n] bool, when
    // given, replaces the causal rule (tree drafting: a node sees the committed prefix and its
    // own ancestors, not its cousins).
    torch::Tensor forwardCached(const torch::Tensor& hidden, const torch::Tensor& ids,
                                const torch::Tensor& positions, DraftKVCache& cache,
                                const torch::Tensor& visible = {});

    torch::nn::Linear fc{nullptr};
    DraftLayer midlayer{nullptr};
    RMSNorm norm{nullptr};
    torch::nn::Linear lm_head{nullptr};
    torch::Tensor d2t, t2d;   // buffers: int64 [draft_vocab], bool [vocab]

private:
    torch::Tensor embedTokens(const torch::Tensor& ids) const;
    torch::Tensor layerInput(const torch::Tensor& hidden, const torch::Tensor& ids);
    std::pair<torch::Tensor, torch::Tensor> rope(const torch::Tensor& positions, torch::Device device) const;
    torch::Tensor finishLayer(const torch::Tensor& hidden, const torch::Tensor& attn_heads);

    DraftConfig config_;
    DraftVocab vocab_;
    torch::Tensor embed_tokens_;
    torch::Tensor draft_to_target_;
    torch::Tensor inv_freq_;
};
TORCH_MODULE(Eagle3Draft);

// Rotate-half RoPE on [B, H, T, hd] with cos/sin [T, hd].
torch::Tensor applyRope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);

}  // namespace wl
