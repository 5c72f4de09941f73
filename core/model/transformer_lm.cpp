#include "model/transformer_lm.h"

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "util/error.h"

namespace wl {

void KVCache::truncate(int64_t new_length) {
    if (new_length < 0) new_length = 0;
    if (new_length >= length()) return;
    for (auto& k : keys)
        if (k.defined()) k = k.narrow(2, 0, new_length).contiguous();
    for (auto& v : values)
        if (v.defined()) v = v.narrow(2, 0, new_length).contiguous();
}

torch::Device resolveDevice(const std::string& device, const std::string& source) {
    if (device == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
    torch::Device resolved(torch::kCPU);
    try {
        resolved = torch::Device(device);
    } catch (const std::exception&) {
        throw Error(source, "unknown device '" + device + "'");
    }
    if (resolved.is_cuda() && !torch::cuda::is_available())
        throw Error(source, "device '" + device + "' requested but CUDA is not available");
    return resolved;
}

void KVCache::keepRows(int64_t prefix, const std::vector<int64_t>& rows) {
    if (keys.empty() || !keys[0].defined()) return;
    std::vector<int64_t> index(static_cast<size_t>(std::max<int64_t>(prefix, 0)));
    for (int64_t i = 0; i < prefix; ++i) index[static_cast<size_t>(i)] = i;
    for (int64_t r : rows) {
        if (r < prefix || r >= length() || (!index.empty() && r <= index.back()))
            throw Error("KV cache", "rows to keep must be ascending and in [prefix, length)");
        index.push_back(r);
    }
    auto idx = torch::tensor(index, torch::kInt64).to(keys[0].device());
    for (auto& k : keys)
        if (k.defined()) k = k.index_select(2, idx);
    for (auto& v : values)
        if (v.defined()) v = v.index_select(2, idx);
}

std::vector<double> ropeInverseFrequencies(const ModelConfig& c) {
    const int64_t half = c.head_dim / 2;
    std::vector<double> inv(half);
    for (int64_t i = 0; i < half; ++i) inv[i] = 1.0 / std::pow(c.rope_theta, (2.0 * i) / c.head_dim);
    if (c.rope_scaling.type == "llama3") {
        // Same formula as HF's _compute_llama3_parameters.
        const auto& s = c.rope_scaling;
        const double old_len = static_cast<double>(s.original_max_position_embeddings);
        const double low_wavelen = old_len / s.low_freq_factor, high_wavelen = old_len / s.high_freq_factor;
        for (auto& f : inv) {
            const double wavelen = 2.0 * M_PI / f;
            if (wavelen < high_wavelen) continue;              // high frequency: unchanged
            if (wavelen > low_wavelen) { f = f / s.factor; continue; }   // low frequency: scaled
            const double smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
            f = (1.0 - smooth) * f / s.factor + smooth * f;
        }
    }
    return inv;
}

namespace {

std::string shapeString(at::IntArrayRef shape) {
    std::ostringstream s;
    s << "[";
    for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
    s << "]";
    return s.str();
}

struct Layer {
    torch::Tensor attn_norm, mlp_norm;        // float32
    torch::Tensor wqkv, bqkv, wo, bo;         // wqkv: [q + 2 kv, d]
    torch::Tensor q_norm, k_norm;             // float32 [head_dim]
    torch::Tensor w_gate_up, w_down;          // w_gate_up: [2 I, d]
};

int cpuThreads(int requested) {
    if (requested > 0) return requested;
    if (const char* env = std::getenv("WAVELAB_THREADS")) {
        const int n = std::atoi(env);
        if (n > 0) return n;
    }
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

class TransformerLM final : public CausalLM {
public:
    TransformerLM(const ModelConfig& config, WeightMap weights, const LoadOptions& options)
        : config_(config), device_(torch::kCPU) {
        at::set_num_threads(cpuThreads(options.threads));
        const std::string& src = config.source_path;
        // Device and dtype.
        device_ = resolveDevice(options.device, src);
        if (options.dtype == "float32" || options.dtype == "f32") dtype_ = torch::kFloat32;
        else if (options.dtype == "bfloat16" || options.dtype == "bf16") dtype_ = torch::kBFloat16;
        else if (options.dtype == "float16" || options.dtype == "f16") {
            if (!device_.is_cuda())
                throw Error(src, "float16 compute needs a CUDA device; use float32 or bfloat16 on the CPU");
            dtype_ = torch::kFloat16;
        } else {
            throw Error(src, "unknown compute dtype '" + options.dtype + "' (float32, bfloat16, float16)");
        }

        const auto& c = config_;
        const int64_t d = c.hidden_size, hd = c.head_dim, q = c.num_heads * hd, kv = c.num_kv_heads * hd;
        auto take = [&](const std::string& name, std::vector<int64_t> shape) {
            auto it = weights.find(name);
            if (it == weights.end()) throw Error(src, "missing tensor '" + name + "'");
            torch::Tensor t = it->second;
            weights.erase(it);
            if (t.sizes() != at::IntArrayRef(shape))
                throw Error(src, "tensor '" + name + "' has shape " + shapeString(t.sizes()) + " but the config implies " +
                                     shapeString(shape));
            return t;
        };
        auto weight = [&](const torch::Tensor& t) { return t.to(device_, dtype_).contiguous(); };
        auto norm = [&](const torch::Tensor& t) { return t.to(device_, torch::kFloat32).contiguous(); };

        embed_ = weight(take("model.embed_tokens.weight", {c.vocab_size, d}));
        for (int64_t i = 0; i < c.num_layers; ++i) {
            const std::string p = "model.layers." + std::to_string(i) + ".";
            Layer L;
            L.attn_norm = norm(take(p + "input_layernorm.weight", {d}));
            L.mlp_norm = norm(take(p + "post_attention_layernorm.weight", {d}));
            auto wq = take(p + "self_attn.q_proj.weight", {q, d});
            auto wk = take(p + "self_attn.k_proj.weight", {kv, d});
            auto wv = take(p + "self_attn.v_proj.weight", {kv, d});
            L.wqkv = weight(torch::cat({wq.to(torch::kFloat32), wk.to(torch::kFloat32), wv.to(torch::kFloat32)}, 0));
            if (c.attention_bias) {
                auto bq = take(p + "self_attn.q_proj.bias", {q});
                auto bk = take(p + "self_attn.k_proj.bias", {kv});
                auto bv = take(p + "self_attn.v_proj.bias", {kv});
                L.bqkv = weight(torch::cat({bq.to(torch::kFloat32), bk.to(torch::kFloat32), bv.to(torch::kFloat32)}, 0));
            }
            L.wo = weight(take(p + "self_attn.o_proj.weight", {d, q}));
            if (weights.count(p + "self_attn.o_proj.bias")) L.bo = weight(take(p + "self_attn.o_proj.bias", {d}));
            if (c.qk_norm) {
                L.q_norm = norm(take(p + "self_attn.q_norm.weight", {hd}));
                L.k_norm = norm(take(p + "self_attn.k_norm.weight", {hd}));
            }
            auto wg = take(p + "mlp.gate_proj.weight", {c.intermediate_size, d});
            auto wu = take(p + "mlp.up_proj.weight", {c.intermediate_size, d});
            L.w_gate_up = weight(torch::cat({wg.to(torch::kFloat32), wu.to(torch::kFloat32)}, 0));
            L.w_down = weight(take(p + "mlp.down_proj.weight", {d, c.intermediate_size}));
            layers_.push_back(std::move(L));
        }
        final_norm_ = norm(take("model.norm.weight", {d}));
        if (c.tie_word_embeddings) {
            lm_head_ = embed_;
        } else {
            lm_head_ = weight(take("lm_head.weight", {c.vocab_size, d}));
        }
        auto inv = ropeInverseFrequencies(c);
        inv_freq_ = torch::tensor(inv, torch::kFloat64);
    }

    const ModelConfig& config() const override { return config_; }
    torch::Device device() const override { return device_; }
    torch::ScalarType dtype() const override { return dtype_; }

    torch::Tensor embed(const torch::Tensor& ids) override {
        torch::NoGradGuard ng;
        checkIds(ids);
        return torch::embedding(embed_, ids.to(device_, torch::kLong));
    }

    torch::Tensor lmHead(const torch::Tensor& normed) override {
        torch::NoGradGuard ng;
        return torch::linear(normed.to(device_, dtype_), lm_head_).to(torch::kFloat32);
    }

    std::vector<std::pair<std::string, torch::Tensor>> namedParameters() const override {
        const auto& c = config_;
        const int64_t hd = c.head_dim, q = c.num_heads * hd, kv = c.num_kv_heads * hd, I = c.intermediate_size;
        std::vector<std::pair<std::string, torch::Tensor>> out;
        out.emplace_back("model.embed_tokens.weight", embed_);
        for (size_t i = 0; i < layers_.size(); ++i) {
            const auto& L = layers_[i];
            const std::string p = "model.layers." + std::to_string(i) + ".";
            out.emplace_back(p + "input_layernorm.weight", L.attn_norm);
            out.emplace_back(p + "self_attn.q_proj.weight", L.wqkv.narrow(0, 0, q));
            out.emplace_back(p + "self_attn.k_proj.weight", L.wqkv.narrow(0, q, kv));
            out.emplace_back(p + "self_attn.v_proj.weight", L.wqkv.narrow(0, q + kv, kv));
            if (L.bqkv.defined()) {
                out.emplace_back(p + "self_attn.q_proj.bias", L.bqkv.narrow(0, 0, q));
                out.emplace_back(p + "self_attn.k_proj.bias", L.bqkv.narrow(0, q, kv));
                out.emplace_back(p + "self_attn.v_proj.bias", L.bqkv.narrow(0, q + kv, kv));
            }
            out.emplace_back(p + "self_attn.o_proj.weight", L.wo);
            if (L.bo.defined()) out.emplace_back(p + "self_attn.o_proj.bias", L.bo);
            if (L.q_norm.defined()) {
                out.emplace_back(p + "self_attn.q_norm.weight", L.q_norm);
                out.emplace_back(p + "self_attn.k_norm.weight", L.k_norm);
            }
            out.emplace_back(p + "post_attention_layernorm.weight", L.mlp_norm);
            out.emplace_back(p + "mlp.gate_proj.weight", L.w_gate_up.narrow(0, 0, I));
            out.emplace_back(p + "mlp.up_proj.weight", L.w_gate_up.narrow(0, I, I));
            out.emplace_back(p + "mlp.down_proj.weight", L.w_down);
        }
        out.emplace_back("model.norm.weight", final_norm_);
        if (!c.tie_word_embeddings) out.emplace_back("lm_head.weight", lm_head_);
        return out;
    }

    ForwardOutput forward(const torch::Tensor& input_ids_in, const torch::Tensor& attention_mask_in, KVCache* cache,
                          const ForwardOptions& options) override {
        torch::NoGradGuard ng;
        const auto& c = config_;
        if (input_ids_in.dim() != 2) throw Error("forward", "input_ids must be [batch, tokens]");
        torch::Tensor ids = input_ids_in.to(device_, torch::kLong);
        checkIds(ids);
        const int64_t B = ids.size(0), T = ids.size(1);
        const int64_t past = cache ? cache->length() : 0;
        const int64_t Tk = past + T;
        const int64_t H = c.num_heads, KVH = c.num_kv_heads, hd = c.head_dim, G = H / KVH;
        if (cache && !cache->keys.empty() && cache->keys[0].defined() && cache->keys[0].size(0) != B)
            throw Error("forward", "batch size differs from the KV cache's");

        torch::Tensor mask;   // [B, Tk] bool, or undefined = all real
        if (attention_mask_in.defined()) {
            if (attention_mask_in.dim() != 2 || attention_mask_in.size(0) != B || attention_mask_in.size(1) != Tk)
                throw Error("forward", "attention_mask must be [batch, past + tokens] = [" + std::to_string(B) + ", " +
                                           std::to_string(Tk) + "]");
            mask = attention_mask_in.to(device_).ne(0);
        }
        const bool tree = options.tree_mask.defined();
        if (tree) {
            if (B != 1 || mask.defined()) throw Error("forward", "tree verification takes one sequence and no attention_mask");
            if (options.tree_mask.sizes() != torch::IntArrayRef({T, T}) || !options.tree_depth.defined() ||
                options.tree_depth.numel() != T)
                throw Error("forward", "tree_mask must be [tokens, tokens] and tree_depth [tokens]");
        }
        // Position ids: cumsum(mask) - 1 (HF), past + depth for a tree, else past + arange.
        torch::Tensor pos;   // [B, T] int64
        if (tree) {
            pos = (options.tree_depth.to(device_, torch::kLong) + past).view({1, T});
        } else if (mask.defined()) {
            pos = (mask.to(torch::kLong).cumsum(1) - 1).clamp_min(0).narrow(1, past, T);
        } else {
            pos = torch::arange(past, Tk, torch::TensorOptions().dtype(torch::kLong).device(device_)).unsqueeze(0).expand({B, T});
        }
        // RoPE tables in float64 for accuracy, then the compute dtype: [B, T, 1, hd/2].
        auto angles = pos.to(torch::kFloat64).unsqueeze(-1) * inv_freq_.to(device_).view({1, 1, -1});
        auto cos = angles.cos().to(dtype_).unsqueeze(2);
        auto sin = angles.sin().to(dtype_).unsqueeze(2);

        // Additive attention mask [B, 1, 1, T, Tk] (float32), or undefined when nothing is masked.
        torch::Tensor bias;
        if (T > 1 || mask.defined() || c.sliding_window > 0) {
            auto opts = torch::TensorOptions().dtype(torch::kLong).device(device_);
            auto qi = torch::arange(past, Tk, opts).view({T, 1});
            auto kj = torch::arange(0, Tk, opts).view({1, Tk});
            torch::Tensor allowed;
            if (tree) {
                // Every cached position, then the new token's own ancestors; the sliding
                // window compares position ids (a node's depth, not its row).
                allowed = torch::cat({torch::ones({T, past}, opts.dtype(torch::kBool)), options.tree_mask.to(device_).ne(0)}, 1);
                if (c.sliding_window > 0) {
                    auto key_pos = torch::cat({torch::arange(0, past, opts), pos.view({T})}).view({1, Tk});
                    allowed = allowed.logical_and((pos.view({T, 1}) - key_pos).lt(c.sliding_window));
                }
            } else {
                allowed = kj.le(qi);   // causal
                if (c.sliding_window > 0) allowed = allowed.logical_and((qi - kj).lt(c.sliding_window));
            }
            allowed = allowed.unsqueeze(0);   // [1, T, Tk]
            if (mask.defined()) allowed = allowed.logical_and(mask.view({B, 1, Tk}));
            // A padded query row would have no key at all; let it see itself so softmax stays finite.
            allowed = allowed.logical_or(kj.eq(qi).unsqueeze(0));
            bias = torch::zeros(allowed.sizes(), torch::TensorOptions().dtype(torch::kFloat32).device(device_))
                       .masked_fill_(allowed.logical_not(), -1e30)
                       .view({allowed.size(0), 1, 1, T, Tk});
        }

        ForwardOutput out;
        torch::Tensor x = torch::embedding(embed_, ids);   // [B, T, d]
        if (options.capture_hidden) out.hidden_states.push_back(x);
        if (cache && cache->keys.size() != layers_.size()) {
            cache->keys.assign(layers_.size(), torch::Tensor());
            cache->values.assign(layers_.size(), torch::Tensor());
        }
        const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
        const int64_t qdim = H * hd, kvdim = KVH * hd;
        for (size_t li = 0; li < layers_.size(); ++li) {
            const Layer& L = layers_[li];
            auto h = rmsNorm(x, L.attn_norm);
            auto qkv = L.bqkv.defined() ? torch::linear(h, L.wqkv, L.bqkv) : torch::linear(h, L.wqkv);
            auto q = qkv.narrow(-1, 0, qdim).view({B, T, H, hd});
            auto k = qkv.narrow(-1, qdim, kvdim).view({B, T, KVH, hd});
            auto v = qkv.narrow(-1, qdim + kvdim, kvdim).view({B, T, KVH, hd});
            if (L.q_norm.defined()) {
                q = rmsNorm(q, L.q_norm);
                k = rmsNorm(k, L.k_norm);
            }
            q = applyRope(q, cos, sin).transpose(1, 2);   // [B, H, T, hd]
            k = applyRope(k, cos, sin).transpose(1, 2);   // [B, KVH, T, hd]
            v = v.transpose(1, 2);
            if (cache) {
                auto& ck = cache->keys[li];
                auto& cv = cache->values[li];
                ck = ck.defined() ? torch::cat({ck, k}, 2) : k.contiguous();
                cv = cv.defined() ? torch::cat({cv, v}, 2) : v.contiguous();
                k = ck;
                v = cv;
            }
            // GQA without copying K/V: group the G query heads that share a KV head.
            // Scale q (hd wide) rather than the scores (Tk wide).
            auto qg = (q * scale).reshape({B, KVH, G * T, hd});
            auto scores = torch::matmul(qg, k.transpose(-1, -2));   // [B, KVH, G*T, Tk]
            if (dtype_ != torch::kFloat32) scores = scores.to(torch::kFloat32);
            if (bias.defined()) scores.view({B, KVH, G, T, Tk}).add_(bias);
            auto probs = torch::softmax(scores, -1);
            if (dtype_ != torch::kFloat32) probs = probs.to(dtype_);
            auto attn = torch::matmul(probs, v)                       // [B, KVH, G*T, hd]
                            .view({B, H, T, hd})
                            .transpose(1, 2)
                            .reshape({B, T, qdim});
            auto o = L.bo.defined() ? torch::linear(attn, L.wo, L.bo) : torch::linear(attn, L.wo);
            x = x + o;
            auto h2 = rmsNorm(x, L.mlp_norm);
            auto gu = torch::linear(h2, L.w_gate_up);
            const int64_t I = c.intermediate_size;
            auto act = torch::silu(gu.narrow(-1, 0, I)).mul_(gu.narrow(-1, I, I));
            x = x + torch::linear(act, L.w_down);
            if (options.capture_hidden) out.hidden_states.push_back(x);
        }
        auto normed = rmsNorm(x, final_norm_);
        out.final_normed = normed;   // always: cheap, and lets callers apply lmHead to a few rows
        if (options.compute_logits) out.logits = torch::linear(normed, lm_head_).to(torch::kFloat32);
        return out;
    }

    std::vector<int64_t> generateGreedy(const std::vector<int64_t>& prompt_ids, int64_t max_total_tokens, bool stop_at_eos,
                                        const std::function<bool(int64_t)>& on_token) override {
        torch::NoGradGuard ng;
        std::vector<int64_t> generated;
        if (prompt_ids.empty()) throw Error("generate", "empty prompt");
        const int64_t limit = std::min<int64_t>(max_total_tokens, config_.max_position_embeddings);
        if (static_cast<int64_t>(prompt_ids.size()) >= limit) return generated;
        KVCache cache;
        auto ids = torch::tensor(prompt_ids, torch::kLong).view({1, -1});
        int64_t total = static_cast<int64_t>(prompt_ids.size());
        ForwardOptions fo;
        fo.compute_logits = false;   // only the last position's logits are needed
        while (total < limit) {
            auto out = forward(ids, {}, &cache, fo);
            const int64_t next = lmHead(out.final_normed[0][out.final_normed.size(1) - 1]).argmax().item<int64_t>();
            generated.push_back(next);
            ++total;
            if (on_token && !on_token(next)) break;
            if (stop_at_eos && config_.eos_token_id >= 0 && next == config_.eos_token_id) break;
            ids = torch::full({1, 1}, next, torch::kLong);
        }
        return generated;
    }

private:
    void checkIds(const torch::Tensor& ids) const {
        if (ids.numel() == 0) return;
        const int64_t lo = ids.min().item<int64_t>(), hi = ids.max().item<int64_t>();
        if (lo < 0 || hi >= config_.vocab_size)
            throw Error("input_ids", "token id " + std::to_string(lo < 0 ? lo : hi) + " outside the vocabulary [0, " +
                                         std::to_string(config_.vocab_size) + ")");
    }

    // RMSNorm in float32 (weight float32), result in the compute dtype.
    torch::Tensor rmsNorm(const torch::Tensor& x, const torch::Tensor& w) const {
        auto xf = x.to(torch::kFloat32);
        auto r = torch::rsqrt(xf.pow(2).mean(-1, true).add_(config_.rms_norm_eps));
        return (xf * r).mul_(w).to(dtype_);
    }

    // x: [B, T, heads, hd]; cos/sin: [B, T, 1, hd/2].
    torch::Tensor applyRope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) const {
        const int64_t half = config_.head_dim / 2;
        if (config_.rope_interleaved) {   // llama2.c: pairs (2i, 2i+1)
            auto xv = x.reshape({x.size(0), x.size(1), x.size(2), half, 2});
            auto x0 = xv.select(-1, 0), x1 = xv.select(-1, 1);
            return torch::stack({x0 * cos - x1 * sin, x0 * sin + x1 * cos}, -1).flatten(-2);
        }
        auto x1 = x.narrow(-1, 0, half), x2 = x.narrow(-1, half, half);   // HF rotate-half
        return torch::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
    }

    ModelConfig config_;
    torch::Device device_;
    torch::ScalarType dtype_ = torch::kFloat32;
    torch::Tensor embed_, final_norm_, lm_head_, inv_freq_;
    std::vector<Layer> layers_;
};

}  // namespace

std::unique_ptr<CausalLM> makeTransformerLM(const ModelConfig& config, WeightMap weights, const LoadOptions& options) {
    return std::make_unique<TransformerLM>(config, std::move(weights), options);
}

}  // namespace wl
