#include "draft/eagle3_draft.h"

#include <cmath>
#include <limits>

#include "util/error.h"

namespace wl {

namespace {
torch::nn::Linear linear(int64_t in, int64_t out) {
    return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}
// GQA: kv head h serves query heads h*rep .. h*rep+rep-1 (HF repeat_kv).
torch::Tensor repeatKV(const torch::Tensor& x, int64_t rep) {
    return rep == 1 ? x : x.repeat_interleave(rep, 1);
}
}  // namespace

RMSNormImpl::RMSNormImpl(int64_t dim, double eps_) : eps(eps_) {
    weight = register_parameter("weight", torch::ones({dim}));
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) {
    auto xf = x.to(torch::kFloat32);
    auto normed = xf * torch::rsqrt(xf.pow(2).mean(-1, true) + eps);
    return weight * normed.to(x.scalar_type());
}

DraftAttentionImpl::DraftAttentionImpl(const DraftConfig& c) {
    // The attention reads [embedding ; fused state], 2d wide (EAGLE3's midlayer).
    q_proj = register_module("q_proj", linear(2 * c.hidden_size, c.num_heads * c.head_dim));
    k_proj = register_module("k_proj", linear(2 * c.hidden_size, c.num_kv_heads * c.head_dim));
    v_proj = register_module("v_proj", linear(2 * c.hidden_size, c.num_kv_heads * c.head_dim));
    o_proj = register_module("o_proj", linear(c.num_heads * c.head_dim, c.hidden_size));
}

DraftMLPImpl::DraftMLPImpl(const DraftConfig& c) {
    gate_proj = register_module("gate_proj", linear(c.hidden_size, c.intermediate_size));
    up_proj = register_module("up_proj", linear(c.hidden_size, c.intermediate_size));
    down_proj = register_module("down_proj", linear(c.intermediate_size, c.hidden_size));
}

torch::Tensor DraftMLPImpl::forward(const torch::Tensor& x) {
    return down_proj->forward(torch::silu(gate_proj->forward(x)) * up_proj->forward(x));
}

DraftLayerImpl::DraftLayerImpl(const DraftConfig& c) {
    self_attn = register_module("self_attn", DraftAttention(c));
    mlp = register_module("mlp", DraftMLP(c));
    input_layernorm = register_module("input_layernorm", RMSNorm(c.hidden_size, c.rms_norm_eps));
    hidden_norm = register_module("hidden_norm", RMSNorm(c.hidden_size, c.rms_norm_eps));
    post_attention_layernorm = register_module("post_attention_layernorm", RMSNorm(c.hidden_size, c.rms_norm_eps));
}

void DraftKVCache::truncate(int64_t new_length) {
    if (!keys.defined() || new_length >= length()) return;
    if (new_length <= 0) {
        clear();
        return;
    }
    keys = keys.narrow(2, 0, new_length).contiguous();
    values = values.narrow(2, 0, new_length).contiguous();
}

torch::Tensor applyRope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
    const int64_t half = x.size(-1) / 2;
    auto x1 = x.narrow(-1, 0, half), x2 = x.narrow(-1, half, half);
    auto rotated = torch::cat({-x2, x1}, -1);
    return x * cos + rotated * sin;
}

Eagle3DraftImpl::Eagle3DraftImpl(const DraftConfig& config, const DraftVocab& vocab)
    : config_(config), vocab_(vocab) {
    config_.validate("draft config");
    if (vocab_.draftSize() != config_.draft_vocab_size || static_cast<int64_t>(vocab_.t2d.size()) != config_.vocab_size)
        throw Error("draft vocabulary", "d2t/t2d sizes (" + std::to_string(vocab_.draftSize()) + ", " +
                                            std::to_string(vocab_.t2d.size()) + ") do not match the config (" +
                                            std::to_string(config_.draft_vocab_size) + ", " +
                                            std::to_string(config_.vocab_size) + ")");
    const int64_t d = config_.hidden_size;
    fc = register_module("fc", linear(config_.numAux() * d, d));
    midlayer = register_module("midlayer", DraftLayer(config_));
    norm = register_module("norm", RMSNorm(d, config_.rms_norm_eps));
    lm_head = register_module("lm_head", linear(d, config_.draft_vocab_size));
    d2t = register_buffer("d2t", torch::tensor(vocab_.d2t, torch::kInt64));
    std::vector<int64_t> mask(vocab_.t2d.begin(), vocab_.t2d.end());
    t2d = register_buffer("t2d", torch::tensor(mask, torch::kInt64).to(torch::kBool));
    draft_to_target_ = torch::tensor(vocab_.targetIds(), torch::kInt64);
    inv_freq_ = 1.0 / torch::pow(config_.rope_theta,
                                 torch::arange(0, config_.head_dim, 2, torch::kFloat64) / double(config_.head_dim));
}

void Eagle3DraftImpl::setEmbeddings(const torch::Tensor& embeddings) {
    if (embeddings.dim() != 2 || embeddings.size(0) != config_.vocab_size || embeddings.size(1) != config_.hidden_size)
        throw Error("draft", "target embeddings have shape " + std::to_string(embeddings.size(0)) + "x" +
                                 std::to_string(embeddings.dim() > 1 ? embeddings.size(1) : 0) + ", expected " +
                                 std::to_string(config_.vocab_size) + "x" + std::to_string(config_.hidden_size));
    embed_tokens_ = embeddings.detach().to(torch::kFloat32).clone();
}

torch::Tensor Eagle3DraftImpl::embedTokens(const torch::Tensor& ids) const {
    if (!embed_tokens_.defined()) throw Error("draft", "embeddings were not set from the target");
    return torch::embedding(embed_tokens_.to(ids.device()), ids);
}

torch::Tensor Eagle3DraftImpl::draftToTarget(const torch::Tensor& draft_ids) const {
    return draft_to_target_.to(draft_ids.device()).index_select(0, draft_ids.flatten()).view(draft_ids.sizes());
}

torch::Tensor Eagle3DraftImpl::logits(const torch::Tensor& hidden) { return lm_head->forward(norm->forward(hidden)); }

torch::Tensor Eagle3DraftImpl::layerInput(const torch::Tensor& hidden, const torch::Tensor& ids) {
    auto emb = embedTokens(ids).to(hidden.scalar_type());
    return torch::cat({midlayer->input_layernorm->forward(emb), midlayer->hidden_norm->forward(hidden)}, -1);
}

std::pair<torch::Tensor, torch::Tensor> Eagle3DraftImpl::rope(const torch::Tensor& positions, torch::Device device) const {
    auto freqs = torch::outer(positions.to(torch::kFloat64).to(torch::kCPU), inv_freq_);
    auto emb = torch::cat({freqs, freqs}, -1);
    return {emb.cos().to(torch::kFloat32).to(device), emb.sin().to(torch::kFloat32).to(device)};
}

torch::Tensor Eagle3DraftImpl::finishLayer(const torch::Tensor& hidden, const torch::Tensor& attn_heads) {
    auto h = hidden + midlayer->self_attn->o_proj->forward(attn_heads);
    return h + midlayer->mlp->forward(midlayer->post_attention_layernorm->forward(h));
}

std::vector<torch::Tensor> Eagle3DraftImpl::forwardTTT(const torch::Tensor& aux, const torch::Tensor& ids, int64_t steps) {
    const int64_t B = aux.size(0), T = aux.size(1);
    const int64_t H = config_.num_heads, Hkv = config_.num_kv_heads, hd = config_.head_dim;
    const int64_t rep = H / Hkv;
    const double scale = 1.0 / std::sqrt(double(hd));
    auto& attn = midlayer->self_attn;
    auto hidden = project(aux);
    auto causal = torch::full({T, T}, -std::numeric_limits<float>::infinity(), aux.options().dtype(torch::kFloat32))
                      .triu(1);   // query t sees keys s <= t
    std::vector<torch::Tensor> keys, values, out;
    for (int64_t i = 0; i < steps; ++i) {
        // Step i reads token t+1+i; past the end it reads 0 (those positions carry no loss).
        auto step_ids = torch::zeros_like(ids);
        if (1 + i < T) step_ids.narrow(1, 0, T - 1 - i).copy_(ids.narrow(1, 1 + i, T - 1 - i));
        auto x = layerInput(hidden, step_ids);
        auto q = attn->q_proj->forward(x).view({B, T, H, hd}).transpose(1, 2);
        auto k = attn->k_proj->forward(x).view({B, T, Hkv, hd}).transpose(1, 2);
        auto v = attn->v_proj->forward(x).view({B, T, Hkv, hd}).transpose(1, 2);
        auto [cos, sin] = rope(torch::arange(T, torch::kInt64) + i, x.device());
        q = applyRope(q, cos, sin);
        k = applyRope(k, cos, sin);
        keys.push_back(repeatKV(k, rep));
        values.push_back(repeatKV(v, rep));
        std::vector<torch::Tensor> scores{torch::matmul(q, keys[0].transpose(2, 3)) * scale + causal};
        for (int64_t j = 1; j <= i; ++j) scores.push_back((q * keys[j]).sum(-1, true) * scale);
        auto probs = torch::softmax(torch::cat(scores, -1).to(torch::kFloat32), -1).to(q.scalar_type());
        auto o = torch::matmul(probs.narrow(-1, 0, T), values[0]);
        for (int64_t j = 1; j <= i; ++j) o = o + probs.narrow(-1, T + j - 1, 1) * values[j];
        hidden = finishLayer(hidden, o.transpose(1, 2).reshape({B, T, H * hd}));
        out.push_back(logits(hidden));
    }
    return out;
}

torch::Tensor Eagle3DraftImpl::forwardCached(const torch::Tensor& hidden, const torch::Tensor& ids,
                                             const torch::Tensor& positions, DraftKVCache& cache,
                                             const torch::Tensor& visible) {
    const int64_t B = hidden.size(0), n = hidden.size(1);
    const int64_t H = config_.num_heads, Hkv = config_.num_kv_heads, hd = config_.head_dim;
    auto& attn = midlayer->self_attn;
    auto x = layerInput(hidden, ids);
    auto q = attn->q_proj->forward(x).view({B, n, H, hd}).transpose(1, 2);
    auto k = attn->k_proj->forward(x).view({B, n, Hkv, hd}).transpose(1, 2);
    auto v = attn->v_proj->forward(x).view({B, n, Hkv, hd}).transpose(1, 2);
    auto [cos, sin] = rope(positions, x.device());
    q = applyRope(q, cos, sin);
    k = applyRope(k, cos, sin);
    cache.keys = cache.keys.defined() ? torch::cat({cache.keys, k}, 2) : k;
    cache.values = cache.values.defined() ? torch::cat({cache.values, v}, 2) : v;
    const int64_t L = cache.length(), past = L - n;
    auto scores = torch::matmul(q, repeatKV(cache.keys, H / Hkv).transpose(2, 3)) / std::sqrt(double(hd));
    // New entry r sees every cached key and new keys up to itself, unless `visible` says otherwise.
    torch::Tensor allowed;
    if (visible.defined()) {
        if (visible.dim() != 2 || visible.size(0) != n || visible.size(1) != L)
            throw Error("draft", "visible mask must be [new entries, cache + new entries]");
        allowed = visible.to(torch::kCPU).ne(0);
    } else {
        auto key_pos = torch::arange(L, torch::kInt64).view({1, L});
        auto query_pos = torch::arange(n, torch::kInt64).view({n, 1}) + past;
        allowed = key_pos <= query_pos;
    }
    auto mask = torch::where(allowed, torch::zeros({1}), torch::full({1}, -std::numeric_limits<float>::infinity()));
    auto probs = torch::softmax((scores.to(torch::kFloat32) + mask.to(scores.device())), -1).to(q.scalar_type());
    auto o = torch::matmul(probs, repeatKV(cache.values, H / Hkv));
    return finishLayer(hidden, o.transpose(1, 2).reshape({B, n, H * hd}));
}

}  // namespace wl
