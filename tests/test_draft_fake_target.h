#pragma once
// A tiny deterministic transformer implementing wl::CausalLM, so draft training and
// speculative decoding are tested without the real loaders. Random weights (fixed seed),
// learned absolute positions, single-head attention with a KV cache, the HF hidden-state
// convention (N+1 states, last one pre-final-norm). A sharp LM head makes greedy
// continuations confident (and learnable by a draft).
#include <torch/torch.h>

#include "model/causal_lm.h"

namespace wl::testing {

class FakeTarget : public CausalLM {
public:
    explicit FakeTarget(int64_t vocab = 40, int64_t hidden = 32, int64_t layers = 3, uint64_t seed = 7) {
        config_.architecture = "FakeForCausalLM";
        config_.source_format = "test";
        config_.name = "fake";
        config_.source_path = "fake-target";
        config_.vocab_size = vocab;
        config_.hidden_size = hidden;
        config_.intermediate_size = 2 * hidden;
        config_.num_layers = layers;
        config_.num_heads = 4;
        config_.num_kv_heads = 2;
        config_.head_dim = hidden / 4;
        config_.max_position_embeddings = 256;
        config_.eos_token_id = -1;
        config_.bos_token_id = 1;
        auto gen = at::detail::createCPUGenerator(seed);
        auto randn = [&](std::vector<int64_t> shape, double scale) { return torch::randn(shape, gen) * scale; };
        embed_ = randn({vocab, hidden}, 1.0);
        pos_ = randn({config_.max_position_embeddings, hidden}, 0.3);
        const double s = 1.0 / std::sqrt(double(hidden));
        for (int64_t l = 0; l < layers; ++l) {
            wq_.push_back(randn({hidden, hidden}, s));
            wk_.push_back(randn({hidden, hidden}, s));
            wv_.push_back(randn({hidden, hidden}, s));
            wo_.push_back(randn({hidden, hidden}, s));
            w1_.push_back(randn({hidden, 2 * hidden}, s));
            w2_.push_back(randn({2 * hidden, hidden}, s / std::sqrt(2.0)));
        }
        head_ = randn({hidden, vocab}, 3.0 * s);
    }

    const ModelConfig& config() const override { return config_; }
    torch::Device device() const override { return torch::kCPU; }
    torch::ScalarType dtype() const override { return torch::kFloat32; }

    ForwardOutput forward(const torch::Tensor& input_ids, const torch::Tensor& /*attention_mask*/, KVCache* cache,
                          const ForwardOptions& options) override {
        // Right padding only (what the draft trainer uses): causal attention keeps real
        // positions independent of the padding, so the mask is not needed.
        torch::NoGradGuard no_grad;
        const int64_t T = input_ids.size(1);
        const int64_t past = cache ? cache->length() : 0;
        // Tree verification: positions past + depth, and each node sees the cache and its ancestors.
        const bool tree = options.tree_mask.defined();
        auto positions = tree ? options.tree_depth.to(torch::kInt64) + past : torch::arange(past, past + T, torch::kInt64);
        auto x = torch::embedding(embed_, input_ids) + pos_.index_select(0, positions).unsqueeze(0);
        ForwardOutput out;
        if (options.capture_hidden) out.hidden_states.push_back(x);
        if (cache && cache->keys.empty()) {
            cache->keys.resize(static_cast<size_t>(config_.num_layers));
            cache->values.resize(static_cast<size_t>(config_.num_layers));
        }
        for (int64_t l = 0; l < config_.num_layers; ++l) {
            auto h = rms(x);
            auto q = torch::matmul(h, wq_[l]);
            auto k = torch::matmul(h, wk_[l]).unsqueeze(1);   // [B,1,T,d]
            auto v = torch::matmul(h, wv_[l]).unsqueeze(1);
            if (cache) {
                auto& ck = cache->keys[static_cast<size_t>(l)];
                auto& cv = cache->values[static_cast<size_t>(l)];
                ck = ck.defined() ? torch::cat({ck, k}, 2) : k;
                cv = cv.defined() ? torch::cat({cv, v}, 2) : v;
                k = ck;
                v = cv;
            }
            const int64_t L = k.size(2);
            auto scores = torch::matmul(q, k.squeeze(1).transpose(1, 2)) / std::sqrt(double(config_.hidden_size));
            auto key_pos = torch::arange(L, torch::kInt64).view({1, L});
            auto query_pos = torch::arange(T, torch::kInt64).view({T, 1}) + (L - T);
            auto hidden = tree ? torch::cat({torch::ones({T, L - T}, torch::kBool), options.tree_mask.ne(0)}, 1).logical_not()
                               : key_pos > query_pos;
            scores = scores.masked_fill(hidden, -std::numeric_limits<float>::infinity());
            x = x + torch::matmul(torch::matmul(torch::softmax(scores, -1), v.squeeze(1)), wo_[l]);
            x = x + torch::matmul(torch::gelu(torch::matmul(rms(x), w1_[l])), w2_[l]);
            if (options.capture_hidden) out.hidden_states.push_back(x);
        }
        out.final_normed = rms(x);
        if (options.compute_logits) out.logits = torch::matmul(out.final_normed, head_);
        return out;
    }

    torch::Tensor embed(const torch::Tensor& ids) override { return torch::embedding(embed_, ids); }
    torch::Tensor lmHead(const torch::Tensor& normed) override { return torch::matmul(normed, head_); }
    std::vector<std::pair<std::string, torch::Tensor>> namedParameters() const override {
        return {{"model.embed_tokens.weight", embed_}, {"lm_head.weight", head_.t()}};
    }

    std::vector<int64_t> generateGreedy(const std::vector<int64_t>& prompt, int64_t max_total_tokens, bool stop_at_eos,
                                        const std::function<bool(int64_t)>& on_token) override {
        // Independent of KV caching: recompute the whole prefix each step.
        std::vector<int64_t> seq = prompt, out;
        while (static_cast<int64_t>(seq.size()) < max_total_tokens) {
            auto ids = torch::tensor(seq, torch::kInt64).view({1, -1});
            auto logits = forward(ids, {}, nullptr, {}).logits;
            const int64_t next = logits[0][logits.size(1) - 1].argmax().item<int64_t>();
            seq.push_back(next);
            out.push_back(next);
            if (on_token && !on_token(next)) break;
            if (stop_at_eos && next == config_.eos_token_id) break;
        }
        return out;
    }

private:
    static torch::Tensor rms(const torch::Tensor& x) { return x * torch::rsqrt(x.pow(2).mean(-1, true) + 1e-5); }

    ModelConfig config_;
    torch::Tensor embed_, pos_, head_;
    std::vector<torch::Tensor> wq_, wk_, wv_, wo_, w1_, w2_;
};

}  // namespace wl::testing
