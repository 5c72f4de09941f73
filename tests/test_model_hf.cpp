// model: HF loader + forward pass on small synthetic checkpoints (Qwen3 with q/k norm and
// head_dim from config, Mistral with GQA + sliding window, Qwen2 with q/k/v bias, Llama-3
// rope scaling), checked against a naive float64 reference forward written here from the
// HF formulas, plus padding invariance, KV-cache decode, bf16 compute and loader errors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/safetensors.h"
#include "model/causal_lm.h"
#include "model/synthetic_checkpoint.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;
using torch::indexing::Slice;

namespace {

fs::path workDir(const std::string& name) {
    fs::path d = fs::path(WAVELAB_TEST_WORK_DIR) / "model_hf" / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

// ---- independent weight reading: raw bytes -> float64, decoding bf16/f16 by hand.
double halfToDouble(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

torch::Tensor readF64(const wl::SafetensorsSet& set, const std::string& name) {
    const auto& v = set.get(name);
    auto t = torch::empty(v.shape, torch::kFloat64);
    double* out = t.data_ptr<double>();
    for (int64_t i = 0; i < v.numel(); ++i) {
        if (v.dtype == wl::DType::F32) {
            float f;
            std::memcpy(&f, v.data + 4 * i, 4);
            out[i] = f;
        } else {
            uint16_t h;
            std::memcpy(&h, v.data + 2 * i, 2);
            if (v.dtype == wl::DType::BF16) {
                uint32_t u = uint32_t(h) << 16;
                float f;
                std::memcpy(&f, &u, 4);
                out[i] = f;
            } else {
                out[i] = halfToDouble(h);
            }
        }
    }
    return t;
}

struct RefOut {
    std::vector<torch::Tensor> hidden;   // N+1 x [T, d] f64
    torch::Tensor final_normed, logits;
};

// Naive reference: one sequence, per-head loops, float64, formulas as in HF modeling_llama /
// modeling_qwen3 / modeling_mistral.
RefOut referenceForward(const fs::path& dir, const std::vector<int64_t>& ids) {
    nlohmann::json cfg = nlohmann::json::parse(wl::readFile((dir / "config.json").string()));
    wl::SafetensorsSet set(dir.string());
    auto W = [&](const std::string& n) { return readF64(set, n); };
    const int64_t d = cfg["hidden_size"], H = cfg["num_attention_heads"], KVH = cfg["num_key_value_heads"],
                  L = cfg["num_hidden_layers"];
    const int64_t hd = cfg.contains("head_dim") ? cfg["head_dim"].get<int64_t>() : d / H;
    const double eps = cfg["rms_norm_eps"], theta = cfg["rope_theta"];
    const std::string arch = cfg["architectures"][0];
    const bool qk_norm = arch == "Qwen3ForCausalLM", bias = arch == "Qwen2ForCausalLM";
    const int64_t window = cfg.contains("sliding_window") && cfg["sliding_window"].is_number() ? cfg["sliding_window"].get<int64_t>() : 0;
    const int64_t T = ids.size();
    // inv_freq (+ llama3 scaling, written from the HF reference formula).
    std::vector<double> inv(hd / 2);
    for (int64_t i = 0; i < hd / 2; ++i) inv[i] = std::pow(theta, -(2.0 * i) / hd);
    if (cfg.contains("rope_scaling") && cfg["rope_scaling"].is_object()) {
        auto rs = cfg["rope_scaling"];
        double factor = rs["factor"], lo = rs["low_freq_factor"], hi = rs["high_freq_factor"];
        double old = rs["original_max_position_embeddings"].get<double>();
        for (auto& f : inv) {
            double wl_ = 2 * M_PI / f;
            double scaled = wl_ > old / lo ? f / factor : f;
            double smooth = (old / wl_ - lo) / (hi - lo);
            double smoothed = (1 - smooth) * scaled / factor + smooth * scaled;
            bool medium = !(wl_ < old / hi) && !(wl_ > old / lo);
            f = medium ? smoothed : scaled;
        }
    }
    auto rms = [&](const torch::Tensor& x, const torch::Tensor& w) {
        return x / torch::sqrt(x.pow(2).mean(-1, true) + eps) * w;
    };
    auto rope = [&](torch::Tensor x /* [T, heads, hd] */) {
        auto out = x.clone();
        for (int64_t t = 0; t < T; ++t)
            for (int64_t i = 0; i < hd / 2; ++i) {
                double c = std::cos(t * inv[i]), s = std::sin(t * inv[i]);
                auto a = x.index({t, Slice(), i}), b = x.index({t, Slice(), i + hd / 2});
                out.index_put_({t, Slice(), i}, a * c - b * s);
                out.index_put_({t, Slice(), i + hd / 2}, b * c + a * s);
            }
        return out;
    };
    RefOut r;
    auto E = W("model.embed_tokens.weight");
    auto x = E.index({torch::tensor(ids)});
    r.hidden.push_back(x);
    for (int64_t l = 0; l < L; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        auto h = rms(x, W(p + "input_layernorm.weight"));
        auto q = torch::matmul(h, W(p + "self_attn.q_proj.weight").t());
        auto k = torch::matmul(h, W(p + "self_attn.k_proj.weight").t());
        auto v = torch::matmul(h, W(p + "self_attn.v_proj.weight").t());
        if (bias) {
            q = q + W(p + "self_attn.q_proj.bias");
            k = k + W(p + "self_attn.k_proj.bias");
            v = v + W(p + "self_attn.v_proj.bias");
        }
        q = q.view({T, H, hd});
        k = k.view({T, KVH, hd});
        v = v.view({T, KVH, hd});
        if (qk_norm) {
            q = rms(q, W(p + "self_attn.q_norm.weight"));
            k = rms(k, W(p + "self_attn.k_norm.weight"));
        }
        q = rope(q);
        k = rope(k);
        auto attn = torch::zeros({T, H, hd}, torch::kFloat64);
        for (int64_t head = 0; head < H; ++head) {
            const int64_t kvh = head / (H / KVH);
            for (int64_t t = 0; t < T; ++t) {
                std::vector<double> sc;
                std::vector<int64_t> keys;
                for (int64_t s = 0; s <= t; ++s) {
                    if (window > 0 && t - s >= window) continue;
                    sc.push_back((q[t][head] * k[s][kvh]).sum().item<double>() / std::sqrt(double(hd)));
                    keys.push_back(s);
                }
                double m = *std::max_element(sc.begin(), sc.end()), z = 0;
                for (auto& s : sc) z += std::exp(s - m);
                auto o = torch::zeros({hd}, torch::kFloat64);
                for (size_t j = 0; j < sc.size(); ++j) o += std::exp(sc[j] - m) / z * v[keys[j]][kvh];
                attn[t][head] = o;
            }
        }
        x = x + torch::matmul(attn.view({T, H * hd}), W(p + "self_attn.o_proj.weight").t());
        auto h2 = rms(x, W(p + "post_attention_layernorm.weight"));
        auto g = torch::matmul(h2, W(p + "mlp.gate_proj.weight").t());
        auto u = torch::matmul(h2, W(p + "mlp.up_proj.weight").t());
        x = x + torch::matmul(g * torch::sigmoid(g) * u, W(p + "mlp.down_proj.weight").t());
        r.hidden.push_back(x);
    }
    r.final_normed = rms(x, W("model.norm.weight"));
    auto head = set.has("lm_head.weight") ? W("lm_head.weight") : E;
    r.logits = torch::matmul(r.final_normed, head.t());
    return r;
}

double maxDiff(const torch::Tensor& a, const torch::Tensor& b) {
    return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}
double maxAbs(const torch::Tensor& a) { return a.abs().max().item<double>(); }

// Compares model output for one sequence (batch row `row`, positions [from, from+T)) to the reference.
void expectMatchesReference(const wl::ForwardOutput& out, const RefOut& ref, int64_t row, int64_t from, double rel_tol) {
    const int64_t T = ref.logits.size(0);
    ASSERT_EQ(out.hidden_states.size(), ref.hidden.size());
    for (size_t h = 0; h < ref.hidden.size(); ++h) {
        auto got = out.hidden_states[h][row].narrow(0, from, T);
        EXPECT_LT(maxDiff(got, ref.hidden[h]), rel_tol * (1 + maxAbs(ref.hidden[h]))) << "hidden state " << h;
    }
    EXPECT_LT(maxDiff(out.final_normed[row].narrow(0, from, T), ref.final_normed), rel_tol * (1 + maxAbs(ref.final_normed)));
    EXPECT_LT(maxDiff(out.logits[row].narrow(0, from, T), ref.logits), rel_tol * (1 + maxAbs(ref.logits)));
}

wl::ModelConfig tinyQwen3() {
    auto c = wl::syntheticPreset("qwen3-0.6b");
    c.num_layers = 2;
    c.vocab_size = 97;
    c.hidden_size = 64;
    c.intermediate_size = 96;
    c.num_heads = 4;
    c.num_kv_heads = 2;
    c.head_dim = 32;   // heads * head_dim = 128 != hidden 64, as Qwen3 allows
    return c;
}

wl::ModelConfig tinyMistral() {
    auto c = wl::syntheticPreset("mistral-7b");
    c.num_layers = 3;
    c.vocab_size = 61;
    c.hidden_size = 48;
    c.intermediate_size = 80;
    c.num_heads = 4;
    c.num_kv_heads = 1;
    c.head_dim = 12;
    c.sliding_window = 5;
    return c;
}

std::vector<int64_t> someIds(int64_t n, int64_t vocab, int64_t salt) {
    std::vector<int64_t> ids;
    for (int64_t i = 0; i < n; ++i) ids.push_back((i * 37 + salt * 11 + 3) % vocab);
    return ids;
}

torch::Tensor row(const std::vector<int64_t>& ids) { return torch::tensor(ids).view({1, -1}); }

wl::ForwardOutput runAll(wl::CausalLM& m, const torch::Tensor& ids, const torch::Tensor& mask = {}) {
    wl::ForwardOptions fo;
    fo.capture_hidden = true;
    return m.forward(ids, mask, nullptr, fo);
}

}  // namespace

TEST(ModelHf, Qwen3Bf16ShardedMatchesReference) {
    auto dir = workDir("qwen3");
    wl::SyntheticOptions so;
    so.dtype = "bf16";
    so.shards = 2;
    so.seed = 7;
    wl::writeSyntheticCheckpoint(tinyQwen3(), dir.string(), so);
    EXPECT_TRUE(fs::exists(dir / "model.safetensors.index.json"));
    EXPECT_TRUE(fs::exists(dir / "model-00002-of-00002.safetensors"));
    auto cfg = nlohmann::json::parse(wl::readFile((dir / "config.json").string()));
    EXPECT_EQ(cfg["wavelab_synthetic"], true);

    auto rc = wl::CausalLM::readConfig(dir.string());
    EXPECT_EQ(rc.architecture, "Qwen3ForCausalLM");
    EXPECT_EQ(rc.head_dim, 32);
    EXPECT_TRUE(rc.qk_norm);
    EXPECT_TRUE(rc.tie_word_embeddings);
    EXPECT_EQ(rc.torch_dtype, "bfloat16");
    EXPECT_EQ(rc.rope_theta, 1e6);

    auto m = wl::CausalLM::load(dir.string(), {"cpu", "float32"});
    auto ids = someIds(9, 97, 1);
    auto out = runAll(*m, row(ids));
    ASSERT_EQ(out.hidden_states.size(), 3u);
    EXPECT_EQ(out.logits.scalar_type(), torch::kFloat32);
    expectMatchesReference(out, referenceForward(dir, ids), 0, 0, 1e-5);
    // bfloat16 compute: same model, looser agreement.
    auto mb = wl::CausalLM::load(dir.string(), {"cpu", "bfloat16"});
    EXPECT_EQ(mb->dtype(), torch::kBFloat16);
    auto outb = runAll(*mb, row(ids));
    EXPECT_EQ(outb.hidden_states[1].scalar_type(), torch::kBFloat16);
    EXPECT_LT(maxDiff(outb.logits, out.logits), 0.1 * (1 + maxAbs(out.logits)));
    EXPECT_THROW(wl::CausalLM::load(dir.string(), {"cpu", "float16"}), wl::Error);
}

TEST(ModelHf, MistralF16UntiedGqaSlidingWindowMatchesReference) {
    auto dir = workDir("mistral");
    wl::SyntheticOptions so;
    so.dtype = "f16";
    wl::writeSyntheticCheckpoint(tinyMistral(), dir.string(), so);
    auto m = wl::CausalLM::load(dir.string(), {"cpu", "float32"});
    EXPECT_FALSE(m->config().tie_word_embeddings);
    EXPECT_EQ(m->config().sliding_window, 5);
    auto ids = someIds(11, 61, 2);   // longer than the window
    expectMatchesReference(runAll(*m, row(ids)), referenceForward(dir, ids), 0, 0, 1e-5);
}

TEST(ModelHf, Qwen2BiasAndLlama3RopeScalingMatchReference) {
    {
        auto dir = workDir("qwen2");
        auto c = tinyMistral();
        c.architecture = "Qwen2ForCausalLM";
        c.sliding_window = 0;
        c.num_kv_heads = 2;
        wl::writeSyntheticCheckpoint(c, dir.string(), {});
        auto m = wl::CausalLM::load(dir.string(), {"cpu", "float32"});
        EXPECT_TRUE(m->config().attention_bias);
        auto ids = someIds(7, 61, 3);
        expectMatchesReference(runAll(*m, row(ids)), referenceForward(dir, ids), 0, 0, 1e-5);
    }
    {
        auto dir = workDir("llama3");
        auto c = wl::syntheticPreset("llama-3.1-8b");
        c.num_layers = 2;
        c.vocab_size = 50;
        c.hidden_size = 64;
        c.intermediate_size = 64;
        c.num_heads = 2;
        c.num_kv_heads = 1;
        c.head_dim = 32;
        c.rope_theta = 10000;
        c.rope_scaling.original_max_position_embeddings = 64;   // puts frequencies in all three bands
        wl::writeSyntheticCheckpoint(c, dir.string(), {});
        auto m = wl::CausalLM::load(dir.string(), {"cpu", "float32"});
        EXPECT_EQ(m->config().rope_scaling.type, "llama3");
        auto ids = someIds(40, 50, 4);
        auto out = runAll(*m, row(ids));
        expectMatchesReference(out, referenceForward(dir, ids), 0, 0, 1e-5);
        // Sensitivity guard: without the scaling the same weights give visibly different logits.
        auto j = nlohmann::json::parse(wl::readFile((dir / "config.json").string()));
        j["rope_scaling"] = nullptr;
        wl::writeFileAtomic((dir / "config.json").string(), j.dump());
        auto unscaled = wl::CausalLM::load(dir.string(), {"cpu", "float32"});
        EXPECT_GT(maxDiff(runAll(*unscaled, row(ids)).logits, out.logits), 1e-3);
    }
}

TEST(ModelHf, PaddingInvarianceLeftAndRight) {
    auto dir = workDir("pad");
    wl::writeSyntheticCheckpoint(tinyQwen3(), dir.string(), {});
    auto m = wl::CausalLM::load(dir.string(), {"cpu", "float32"});
    auto a = someIds(5, 97, 5), b = someIds(8, 97, 6);
    auto alone = runAll(*m, row(a));
    for (bool left : {true, false}) {
        auto ids = torch::zeros({2, 8}, torch::kLong);
        auto mask = torch::zeros({2, 8}, torch::kLong);
        ids[1] = torch::tensor(b);
        mask[1].fill_(1);
        const int64_t off = left ? 3 : 0;
        ids[0].narrow(0, off, 5).copy_(torch::tensor(a));
        mask[0].narrow(0, off, 5).fill_(1);
        auto out = runAll(*m, ids, mask);
        for (size_t h = 0; h < out.hidden_states.size(); ++h) {
            EXPECT_LT(maxDiff(out.hidden_states[h][0].narrow(0, off, 5), alone.hidden_states[h][0]), 1e-5)
                << (left ? "left" : "right") << " h=" << h;
            auto b_alone = runAll(*m, row(b));
            EXPECT_LT(maxDiff(out.hidden_states[h][1], b_alone.hidden_states[h][0]), 1e-5);
        }
        EXPECT_LT(maxDiff(out.logits[0].narrow(0, off, 5), alone.logits[0]), 1e-4);
        EXPECT_FALSE(torch::isnan(out.logits).any().item<bool>());
    }
}

TEST(ModelHf, KvCacheDecodeEqualsFullForward) {
    auto dir = workDir("kv");
    wl::writeSyntheticCheckpoint(tinyMistral(), dir.string(), {});
    auto m = wl::CausalLM::load(dir.string(), {"cpu", "float32"});
    // Batch of two, first left-padded by 2, decoded incrementally past the sliding window.
    const int64_t T = 10, P = 4;
    auto ids = torch::randint(0, 61, {2, T}, torch::kLong);
    auto mask = torch::ones({2, T}, torch::kLong);
    mask[0].narrow(0, 0, 2).fill_(0);
    auto full = runAll(*m, ids, mask);
    wl::KVCache cache;
    wl::ForwardOptions fo;
    fo.capture_hidden = true;
    auto pre = m->forward(ids.narrow(1, 0, P), mask.narrow(1, 0, P), &cache, fo);
    EXPECT_EQ(cache.length(), P);
    EXPECT_LT(maxDiff(pre.logits[1], full.logits[1].narrow(0, 0, P)), 1e-4);
    for (int64_t t = P; t < T; ++t) {
        auto step = m->forward(ids.narrow(1, t, 1), mask.narrow(1, 0, t + 1), &cache, fo);
        for (int64_t b = 0; b < 2; ++b) {
            EXPECT_LT(maxDiff(step.logits[b][0], full.logits[b][t]), 1e-4) << "t=" << t << " b=" << b;
            EXPECT_LT(maxDiff(step.hidden_states.back()[b][0], full.hidden_states.back()[b][t]), 1e-4);
        }
    }
    // Truncate (rejected speculative tokens) and re-decode: same result.
    cache.truncate(6);
    EXPECT_EQ(cache.length(), 6);
    auto again = m->forward(ids.narrow(1, 6, 1), mask.narrow(1, 0, 7), &cache, fo);
    EXPECT_LT(maxDiff(again.logits[1][0], full.logits[1][6]), 1e-4);
}

// Tree verification (speculative decoding): every node of a token tree, verified in one pass
// with a tree mask, gets the logits of its own root-to-node path run causally on its own;
// keeping one path in the KV cache then decodes like that path alone. Mistral's sliding
// window (5) is shorter than prefix + depth, so the window must follow position ids.
TEST(ModelHf, TreeVerificationEqualsEachPathAlone) {
    auto dir = workDir("tree");
    wl::writeSyntheticCheckpoint(tinyMistral(), dir.string(), {});
    auto m = wl::CausalLM::load(dir.string(), {"cpu", "float32"});
    const auto prefix = someIds(7, 61, 21);
    const auto tokens = someIds(7, 61, 22);                  // rows: r a b c d f e
    const std::vector<int> parent = {-1, 0, 0, 1, 1, 2, 3};  // a,b under r; c,d under a; f under b; e under c
    const int64_t T = static_cast<int64_t>(tokens.size());
    auto mask = torch::zeros({T, T}, torch::kBool);
    auto depth = torch::zeros({T}, torch::kLong);
    std::vector<std::vector<int64_t>> paths(tokens.size());
    for (int64_t i = 0; i < T; ++i) {
        for (int a = static_cast<int>(i); a >= 0; a = parent[static_cast<size_t>(a)]) {
            mask[i][a] = true;
            paths[static_cast<size_t>(i)].insert(paths[static_cast<size_t>(i)].begin(), tokens[static_cast<size_t>(a)]);
        }
        depth[i] = static_cast<int64_t>(paths[static_cast<size_t>(i)].size()) - 1;
    }
    wl::KVCache cache;
    wl::ForwardOptions fo;
    fo.capture_hidden = true;
    m->forward(row(prefix), {}, &cache, fo);
    wl::ForwardOptions tree = fo;
    tree.tree_mask = mask;
    tree.tree_depth = depth;
    auto out = m->forward(row(tokens), {}, &cache, tree);
    EXPECT_EQ(cache.length(), static_cast<int64_t>(prefix.size()) + T);
    for (int64_t i = 0; i < T; ++i) {
        std::vector<int64_t> alone = prefix;
        alone.insert(alone.end(), paths[static_cast<size_t>(i)].begin(), paths[static_cast<size_t>(i)].end());
        auto ref = runAll(*m, row(alone));
        const int64_t last = static_cast<int64_t>(alone.size()) - 1;
        EXPECT_LT(maxDiff(out.logits[0][i], ref.logits[0][last]), 1e-4) << "row " << i;
        for (size_t h = 0; h < ref.hidden_states.size(); ++h)
            EXPECT_LT(maxDiff(out.hidden_states[h][0][i], ref.hidden_states[h][0][last]), 1e-4) << "row " << i << " h " << h;
    }
    // A causal chain is the special case of a path-shaped tree: it must differ from the tree
    // answer for a node off the chain (sensitivity guard for the mask).
    auto chain = runAll(*m, row([&] {
        auto v = prefix;
        v.insert(v.end(), tokens.begin(), tokens.begin() + 3);   // r a b as a sequence
        return v;
    }()));
    EXPECT_GT(maxDiff(out.logits[0][2], chain.logits[0][static_cast<int64_t>(prefix.size()) + 2]), 1e-3);

    // Keep the path r-a-c-e (rows 0, 1, 3, 6), then decode one more token.
    const int64_t P = static_cast<int64_t>(prefix.size());
    cache.keepRows(P, {P + 0, P + 1, P + 3, P + 6});
    EXPECT_EQ(cache.length(), P + 4);
    const int64_t next = 5;
    auto step = m->forward(row({next}), {}, &cache, fo);
    std::vector<int64_t> alone = prefix;
    for (int r : {0, 1, 3, 6}) alone.push_back(tokens[static_cast<size_t>(r)]);
    alone.push_back(next);
    auto ref = runAll(*m, row(alone));
    EXPECT_LT(maxDiff(step.logits[0][0], ref.logits[0][static_cast<int64_t>(alone.size()) - 1]), 1e-4);

    EXPECT_THROW(cache.keepRows(P, {P + 2, P + 1}), wl::Error);   // not ascending
    EXPECT_THROW(cache.keepRows(P, {P - 1}), wl::Error);          // inside the prefix
    tree.tree_depth = torch::zeros({T - 1}, torch::kLong);
    EXPECT_THROW(m->forward(row(tokens), {}, &cache, tree), wl::Error);
}

TEST(ModelHf, GreedyGenerationMatchesArgmaxOfFullForward) {
    auto dir = workDir("greedy");
    wl::writeSyntheticCheckpoint(tinyQwen3(), dir.string(), {});
    auto m = wl::CausalLM::load(dir.string(), {"cpu", "float32"});
    std::vector<int64_t> prompt = someIds(3, 97, 9);
    auto gen = m->generateGreedy(prompt, 10, /*stop_at_eos=*/false);
    ASSERT_EQ(gen.size(), 7u);   // max_total_tokens counts the prompt
    std::vector<int64_t> seq = prompt;
    for (size_t i = 0; i < gen.size(); ++i) {
        auto out = m->forward(row(seq));
        EXPECT_EQ(gen[i], out.logits[0][seq.size() - 1].argmax().item<int64_t>()) << i;
        seq.push_back(gen[i]);
    }
    int calls = 0;
    auto stopped = m->generateGreedy(prompt, 10, false, [&](int64_t) { return ++calls < 2; });
    EXPECT_EQ(stopped.size(), 2u);
    EXPECT_TRUE(m->generateGreedy(prompt, 3, false).empty());
}

TEST(ModelHf, NamedParametersUseHfNamesAndShapes) {
    auto dir = workDir("names");
    wl::writeSyntheticCheckpoint(tinyQwen3(), dir.string(), {});
    auto m = wl::CausalLM::load(dir.string(), {"cpu", "float32"});
    wl::SafetensorsSet set(dir.string());
    auto params = m->namedParameters();
    EXPECT_EQ(params.size(), set.names().size());
    for (const auto& [name, t] : params) {
        ASSERT_TRUE(set.has(name)) << name;
        EXPECT_LT(maxDiff(t, readF64(set, name)), 1e-7) << name;
    }
    EXPECT_EQ(m->config().numParameters(), [&] {
        int64_t n = 0;
        for (const auto& [name, t] : params) n += t.numel();
        return n;
    }());
}

TEST(ModelHf, LoaderErrorsNameTheFile) {
    auto dir = workDir("errors");
    wl::writeSyntheticCheckpoint(tinyQwen3(), dir.string(), {});
    const std::string cfg_path = (dir / "config.json").string();
    const std::string good = wl::readFile(cfg_path);
    auto expectLoadError = [&](const std::string& fragment, const std::string& expect_source) {
        try {
            wl::CausalLM::load(dir.string(), {"cpu", "float32"});
            FAIL() << "no error, expected " << fragment;
        } catch (const wl::Error& e) {
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
            EXPECT_EQ(e.source(), expect_source) << e.what();
        }
    };
    auto edit = [&](const std::function<void(nlohmann::json&)>& f) {
        auto j = nlohmann::json::parse(good);
        f(j);
        wl::writeFileAtomic(cfg_path, j.dump());
    };
    edit([](auto& j) { j["architectures"] = {"GPT2LMHeadModel"}; });
    expectLoadError("unsupported architecture 'GPT2LMHeadModel'", cfg_path);
    edit([](auto& j) { j["num_key_value_heads"] = 3; });
    expectLoadError("not a multiple of num_key_value_heads", cfg_path);
    edit([](auto& j) { j.erase("head_dim"); j["hidden_size"] = 66; });
    expectLoadError("not divisible by num_attention_heads", cfg_path);
    edit([](auto& j) { j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4}}; });
    expectLoadError("unsupported rope_scaling type 'yarn'", cfg_path);
    edit([](auto& j) { j["intermediate_size"] = 100; });
    expectLoadError("has shape [96, 64] but the config implies [100, 64]", (dir / "model.safetensors").string());
    edit([](auto& j) { j["num_hidden_layers"] = 3; });
    expectLoadError("missing tensor 'model.layers.2.input_layernorm.weight'", (dir / "model.safetensors").string());
    edit([](auto& j) { j["tie_word_embeddings"] = false; });
    expectLoadError("missing tensor 'lm_head.weight'", (dir / "model.safetensors").string());
    wl::writeFileAtomic(cfg_path, "{ not json");
    expectLoadError("malformed JSON", cfg_path);
    wl::writeFileAtomic(cfg_path, good);
    EXPECT_NO_THROW(wl::CausalLM::load(dir.string(), {"cpu", "float32"}));
    EXPECT_THROW(wl::CausalLM::load((dir / "nope").string()), wl::Error);
    EXPECT_THROW(wl::syntheticPreset("gpt-5"), wl::Error);
}
