// EAGLE3 draft model: vocabulary mapping, config convention, attention paths, loss, and the
// HF-style directory round trip. Uses a small fake target (tests/test_draft_fake_target.h).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "draft/draft_config.h"
#include "draft/draft_io.h"
#include "draft/draft_trainer.h"
#include "draft/draft_vocab.h"
#include "draft/eagle3_draft.h"
#include "io/safetensors.h"
#include "test_draft_fake_target.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;
using wl::testing::FakeTarget;

namespace {
std::string workDir(const std::string& name) {
    auto dir = fs::path(WAVELAB_TEST_WORK_DIR) / "draft" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir.string();
}

wl::Eagle3Draft randomDraft(FakeTarget& target, std::vector<int64_t> layers, int64_t draft_vocab, uint64_t seed = 3) {
    torch::manual_seed(seed);
    std::vector<int64_t> counts(static_cast<size_t>(target.config().vocab_size));
    for (size_t t = 0; t < counts.size(); ++t) counts[t] = static_cast<int64_t>((t * 7919) % 13);
    auto vocab = wl::buildDraftVocab(counts, draft_vocab);
    auto config = wl::draftConfigForTarget(target.config(), layers, draft_vocab);
    auto draft = wl::makeDraft(target, config, vocab, false);
    // Non-trivial norms so the test sees them.
    torch::NoGradGuard g;
    for (auto& p : draft->named_parameters())
        if (p.key().find("norm") != std::string::npos) p.value().uniform_(0.5, 1.5);
    return draft;
}
}  // namespace

TEST(DraftVocab, TopKByFrequencyInSpecForgeOffsetForm) {
    // Independent reference: pick the most frequent remaining token (smallest id on ties)
    // k times, then pad with the smallest unseen ids.
    std::vector<int64_t> counts = {0, 5, 3, 0, 9, 3, 0, 1, 0, 7};
    for (int64_t k : {1, 3, 6, 8, 10}) {
        std::set<int64_t> chosen;
        std::vector<int64_t> left = counts;
        while (static_cast<int64_t>(chosen.size()) < k) {
            int64_t best = -1;
            for (int64_t t = 0; t < 10; ++t)
                if (!chosen.count(t) && left[t] > 0 && (best < 0 || left[t] > left[best])) best = t;
            if (best < 0)
                for (int64_t t = 0; t < 10 && best < 0; ++t)
                    if (!chosen.count(t)) best = t;
            chosen.insert(best);
        }
        auto v = wl::buildDraftVocab(counts, k);
        ASSERT_EQ(v.draftSize(), k);
        std::vector<int64_t> expect(chosen.begin(), chosen.end());
        EXPECT_EQ(v.targetIds(), expect) << "k=" << k;
        for (int64_t i = 0; i < k; ++i) EXPECT_EQ(v.d2t[i], expect[i] - i);
        for (int64_t t = 0; t < 10; ++t) EXPECT_EQ(v.t2d[t] != 0, chosen.count(t) == 1);
        auto inverse = v.draftIdsOfTargets();
        for (int64_t i = 0; i < k; ++i) EXPECT_EQ(inverse[expect[i]], i);
    }
    EXPECT_THROW(wl::buildDraftVocab(counts, 0), wl::Error);
    EXPECT_THROW(wl::buildDraftVocab(counts, 11), wl::Error);
}

TEST(DraftConfig, LayerIdsUseSGLangOutputConvention) {
    FakeTarget target;
    auto c = wl::draftConfigForTarget(target.config(), {3, 1, 2}, 16);
    EXPECT_EQ(c.aux_layers, (std::vector<int64_t>{1, 2, 3}));
    // id k = output of decoder layer k = hidden_states[k+1].
    EXPECT_EQ(wl::toEagleAuxLayerIds(c.aux_layers, "t"), (std::vector<int64_t>{0, 1, 2}));
    EXPECT_THROW(wl::toEagleAuxLayerIds({0, 2}, "t"), wl::Error);
    auto j = nlohmann::json::parse(wl::draftConfigToJson(c));
    EXPECT_EQ(j["architectures"][0], "LlamaForCausalLMEagle3");
    EXPECT_EQ(j["eagle_config"]["eagle_aux_hidden_state_layer_ids"], nlohmann::json::array({0, 1, 2}));
    EXPECT_EQ(j["draft_vocab_size"], 16);
    EXPECT_EQ(j["vocab_size"], 40);
    EXPECT_EQ(j["head_dim"], 8);
    auto back = wl::draftConfigFromJson(j.dump(), "config.json");
    EXPECT_EQ(back.aux_layers, c.aux_layers);
    EXPECT_EQ(back.num_kv_heads, 2);
    // A SpecForge-written config (no wavelab block) maps ids back to HF indices.
    j.erase("wavelab");
    j["eagle_config"]["eagle_aux_hidden_state_layer_ids"] = {1, 15, 28};
    j["vocab_size"] = 151936;
    j["draft_vocab_size"] = 32000;
    EXPECT_EQ(wl::draftConfigFromJson(j.dump(), "c").aux_layers, (std::vector<int64_t>{2, 16, 29}));
    // Layer 0 (embeddings) is allowed for WaveLab's own drafts but has no eagle_config.
    auto c0 = wl::draftConfigForTarget(target.config(), {0, 3}, 16);
    auto j0 = nlohmann::json::parse(wl::draftConfigToJson(c0));
    EXPECT_FALSE(j0.contains("eagle_config"));
    EXPECT_EQ(wl::draftConfigFromJson(j0.dump(), "c").aux_layers, (std::vector<int64_t>{0, 3}));
    EXPECT_THROW(wl::draftConfigForTarget(target.config(), {1, 4}, 16), wl::Error);   // N = 3
    EXPECT_THROW(wl::draftConfigFromJson("{not json", "bad.json"), wl::Error);
    EXPECT_THROW(wl::draftConfigFromJson(R"({"hidden_size": 8})", "bad.json"), wl::Error);
    EXPECT_THROW(wl::draftConfigFromJson(R"({"hidden_size": "x", "intermediate_size": 8})", "bad.json"), wl::Error);
    EXPECT_EQ(wl::parseLayerList(" 4,1,3 ", "--layers"), (std::vector<int64_t>{1, 3, 4}));
    EXPECT_THROW(wl::parseLayerList("1,,3", "--layers"), wl::Error);
    EXPECT_THROW(wl::parseLayerList("1,x", "--layers"), wl::Error);
    EXPECT_THROW(wl::parseLayerList("-1", "--layers"), wl::Error);
}

TEST(DraftModel, RopeIsARotationThatDependsOnRelativePosition) {
    torch::manual_seed(0);
    const int64_t hd = 8;
    auto inv = 1.0 / torch::pow(10000.0, torch::arange(0, hd, 2, torch::kFloat64) / double(hd));
    auto table = [&](int64_t p) {
        auto f = torch::outer(torch::tensor({double(p)}, torch::kFloat64), inv);
        auto e = torch::cat({f, f}, -1);
        return std::make_pair(e.cos().to(torch::kFloat32), e.sin().to(torch::kFloat32));
    };
    auto q = torch::randn({1, 1, 1, hd}), k = torch::randn({1, 1, 1, hd});
    auto [c0, s0] = table(0);
    EXPECT_TRUE(torch::allclose(wl::applyRope(q, c0, s0), q));
    for (int64_t p : {1, 5, 17}) {
        auto [c, s] = table(p);
        EXPECT_NEAR(wl::applyRope(q, c, s).norm().item<double>(), q.norm().item<double>(), 1e-5);
    }
    auto dot = [&](int64_t m, int64_t n) {
        auto [cm, sm] = table(m);
        auto [cn, sn] = table(n);
        return (wl::applyRope(q, cm, sm) * wl::applyRope(k, cn, sn)).sum().item<double>();
    };
    EXPECT_NEAR(dot(7, 3), dot(14, 10), 1e-5);
    EXPECT_NEAR(dot(2, 2), dot(30, 30), 1e-5);
}

TEST(DraftModel, TrainingTimeTestMatchesCachedChainDecoding) {
    // The unrolled TTT attention (step-0 keys causal + own-position keys of later steps) must
    // equal what incremental decoding with a KV cache computes, position by position.
    FakeTarget target;
    auto draft = randomDraft(target, {1, 3}, 24);
    draft->eval();
    torch::NoGradGuard g;
    const int64_t B = 2, T = 9, steps = 4;
    auto aux = torch::randn({B, T, 2 * 32});
    auto ids = torch::randint(0, 40, {B, T}, torch::kInt64);
    auto ttt = draft->forwardTTT(aux, ids, steps);
    ASSERT_EQ(ttt.size(), static_cast<size_t>(steps));
    for (int64_t b = 0; b < B; ++b) {
        for (int64_t t = 0; t + steps < T; ++t) {
            wl::DraftKVCache cache;
            // Step-0 entries for positions 0..t, fed one by one (as decoding grows the cache).
            torch::Tensor h;
            for (int64_t s = 0; s <= t; ++s) {
                h = draft->forwardCached(draft->project(aux[b].narrow(0, s, 1).unsqueeze(0)), ids[b].narrow(0, s + 1, 1).unsqueeze(0),
                                         torch::full({1}, s, torch::kInt64), cache);
            }
            for (int64_t i = 0; i < steps; ++i) {
                if (i > 0)
                    h = draft->forwardCached(h, ids[b].narrow(0, t + 1 + i, 1).unsqueeze(0), torch::full({1}, t + i, torch::kInt64), cache);
                auto expect = draft->logits(h)[0][0];
                auto got = ttt[static_cast<size_t>(i)][b][t];
                EXPECT_TRUE(torch::allclose(got, expect, 1e-4, 1e-5))
                    << "b=" << b << " t=" << t << " step=" << i << " max diff " << (got - expect).abs().max().item<double>();
            }
        }
    }
    // Feeding all step-0 entries at once equals feeding them one by one.
    wl::DraftKVCache all;
    auto h_all = draft->forwardCached(draft->project(aux[0].narrow(0, 0, 5).unsqueeze(0)), ids[0].narrow(0, 1, 5).unsqueeze(0),
                                      torch::arange(5, torch::kInt64), all);
    EXPECT_TRUE(torch::allclose(draft->logits(h_all)[0], ttt[0][0].narrow(0, 0, 5), 1e-4, 1e-5));
    EXPECT_EQ(all.length(), 5);
    all.truncate(3);
    EXPECT_EQ(all.length(), 3);
}

TEST(DraftModel, TTTLossIsSoftCrossEntropyWithDecayedStepWeights) {
    FakeTarget target;
    auto draft = randomDraft(target, {2}, 20);
    torch::NoGradGuard g;
    const int64_t B = 2, T = 6, steps = 3;
    auto aux = torch::randn({B, T, 32});
    auto ids = torch::randint(0, 40, {B, T}, torch::kInt64);
    auto lengths = torch::tensor({6, 4}, torch::kInt64);
    auto target_logits = torch::randn({B, T, 40}) * 2;
    auto [p, in_vocab] = wl::targetDistribution(draft, target_logits);
    auto loss = wl::computeTTTLoss(draft, aux, ids, lengths, p, in_vocab, steps, 0.8);
    auto step_logits = draft->forwardTTT(aux, ids, steps);
    auto targets = draft->vocab().targetIds();
    // Reference in float64 with explicit loops.
    double total = 0;
    for (int64_t i = 0; i < steps; ++i) {
        double sum = 0, hits = 0;
        int64_t count = 0;
        for (int64_t b = 0; b < B; ++b) {
            for (int64_t t = 0; t + 1 + i < lengths[b].item<int64_t>(); ++t) {
                auto tl = target_logits[b][t + 1 + i].to(torch::kFloat64);
                const int64_t top = tl.argmax().item<int64_t>();
                if (!draft->vocab().t2d[top]) continue;
                std::vector<double> restricted;
                for (auto id : targets) restricted.push_back(tl[id].item<double>());
                double mx = *std::max_element(restricted.begin(), restricted.end()), z = 0;
                for (double v : restricted) z += std::exp(v - mx);
                auto dl = step_logits[i][b][t].to(torch::kFloat64);
                double dmx = dl.max().item<double>(), dz = 0;
                for (int64_t j = 0; j < dl.size(0); ++j) dz += std::exp(dl[j].item<double>() - dmx);
                double ce = 0;
                int64_t best_t = 0, best_d = 0;
                for (size_t j = 0; j < restricted.size(); ++j) {
                    const double pj = std::exp(restricted[j] - mx) / z;
                    ce -= pj * (dl[j].item<double>() - dmx - std::log(dz));
                    if (restricted[j] > restricted[best_t]) best_t = static_cast<int64_t>(j);
                    if (dl[j].item<double>() > dl[best_d].item<double>()) best_d = static_cast<int64_t>(j);
                }
                sum += ce;
                hits += best_t == best_d ? 1 : 0;
                ++count;
            }
        }
        const double li = count ? sum / count : 0;
        EXPECT_NEAR(loss.step_loss[i], li, 1e-4) << "step " << i;
        EXPECT_NEAR(loss.step_accuracy[i], count ? hits / count : 0, 1e-9) << "step " << i;
        total += std::pow(0.8, i) * li;
    }
    EXPECT_NEAR(loss.loss.item<double>(), total, 1e-4);
}

TEST(DraftIO, SavesSpecForgeTensorNamesAndRoundTrips) {
    FakeTarget target;
    auto draft = randomDraft(target, {1, 2, 3}, 24);
    const auto dir = workDir("roundtrip");
    wl::saveDraft(draft, dir);
    wl::SafetensorsFile file((fs::path(dir) / "model.safetensors").string());
    std::vector<std::string> expect = {"d2t",
                                       "fc.weight",
                                       "lm_head.weight",
                                       "midlayer.hidden_norm.weight",
                                       "midlayer.input_layernorm.weight",
                                       "midlayer.mlp.down_proj.weight",
                                       "midlayer.mlp.gate_proj.weight",
                                       "midlayer.mlp.up_proj.weight",
                                       "midlayer.post_attention_layernorm.weight",
                                       "midlayer.self_attn.k_proj.weight",
                                       "midlayer.self_attn.o_proj.weight",
                                       "midlayer.self_attn.q_proj.weight",
                                       "midlayer.self_attn.v_proj.weight",
                                       "norm.weight",
                                       "t2d"};
    EXPECT_EQ(file.names(), expect);
    EXPECT_EQ(file.get("fc.weight").shape, (std::vector<int64_t>{32, 96}));
    EXPECT_EQ(file.get("midlayer.self_attn.q_proj.weight").shape, (std::vector<int64_t>{32, 64}));
    EXPECT_EQ(file.get("midlayer.self_attn.k_proj.weight").shape, (std::vector<int64_t>{16, 64}));
    EXPECT_EQ(file.get("lm_head.weight").shape, (std::vector<int64_t>{24, 32}));
    EXPECT_EQ(file.get("d2t").dtype, wl::DType::I64);
    EXPECT_EQ(file.get("t2d").dtype, wl::DType::BOOL);
    EXPECT_EQ(file.get("t2d").shape, (std::vector<int64_t>{40}));

    auto loaded = wl::loadDraft(dir, wl::targetEmbeddings(target));
    EXPECT_EQ(loaded->config().aux_layers, draft->config().aux_layers);
    EXPECT_EQ(loaded->vocab().d2t, draft->vocab().d2t);
    auto a = draft->named_parameters(), b = loaded->named_parameters();
    ASSERT_EQ(a.size(), b.size());
    for (const auto& item : a) EXPECT_TRUE(torch::equal(item.value(), b[item.key()])) << item.key();
    torch::NoGradGuard g;
    auto aux = torch::randn({1, 5, 96});
    auto ids = torch::randint(0, 40, {1, 5}, torch::kInt64);
    EXPECT_TRUE(torch::equal(draft->forwardTTT(aux, ids, 2)[1], loaded->forwardTTT(aux, ids, 2)[1]));
}

TEST(DraftIO, RejectsCorruptDirectories) {
    FakeTarget target;
    auto draft = randomDraft(target, {1, 2}, 24);
    const auto dir = workDir("corrupt");
    wl::saveDraft(draft, dir);
    auto emb = wl::targetEmbeddings(target);
    const std::string config = wl::readFile((fs::path(dir) / "config.json").string());
    // Malformed config.
    wl::writeFileAtomic((fs::path(dir) / "config.json").string(), "{\"hidden_size\": ");
    EXPECT_THROW(wl::loadDraft(dir, emb), wl::Error);
    // Config that disagrees with the tensors.
    auto j = nlohmann::json::parse(config);
    j["intermediate_size"] = 65;
    wl::writeFileAtomic((fs::path(dir) / "config.json").string(), j.dump());
    try {
        wl::loadDraft(dir, emb);
        FAIL() << "expected wl::Error";
    } catch (const wl::Error& e) {
        EXPECT_NE(std::string(e.what()).find("shape"), std::string::npos) << e.what();
    }
    // Truncated safetensors.
    wl::writeFileAtomic((fs::path(dir) / "config.json").string(), config);
    const std::string st = wl::readFile((fs::path(dir) / "model.safetensors").string());
    wl::writeFileAtomic((fs::path(dir) / "model.safetensors").string(), st.substr(0, st.size() / 2));
    EXPECT_THROW(wl::loadDraft(dir, emb), wl::Error);
    // Wrong embeddings.
    EXPECT_THROW(wl::loadDraft(workDir("empty"), emb), wl::Error);
    EXPECT_THROW(draft->setEmbeddings(torch::zeros({3, 32})), wl::Error);
}
