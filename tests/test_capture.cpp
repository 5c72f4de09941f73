// capture: runCapture on stories260K (real model + tok512 tokenizer) and a synthetic model.
// Padded batches must equal one-prompt-at-a-time capture and a plain forward; entropies are
// checked against a float64 log-softmax of the logits; cancel leaves emitted prompts valid;
// NaN activations name the prompt and layer.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "capture/capture_runner.h"
#include "capture/capture_writer.h"
#include "io/safetensors.h"
#include "model/causal_lm.h"
#include "model/synthetic_checkpoint.h"
#include "tokenizer/tokenizer.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace {

const std::string kModels = WAVELAB_MODELS_DIR;
const std::string kCheckpoint = kModels + "/stories260K/stories260K.bin";
const std::string kTokenizer = kModels + "/stories260K/tok512.bin";

wl::CalibrationSet prompts() {
    wl::CalibrationSet set;
    set.source = "test-prompts";
    set.format = "text";
    for (const char* t : {"Once upon a time there was a cat.", "Hi", "The little dog ran to the park and played with a red ball all day long.",
                          "Tom and Sue went to the shop.", "A bird sang."})
        set.prompts.push_back({t, {}});
    return set;
}

std::vector<wl::CapturedPrompt> capture(wl::CausalLM& m, const wl::Tokenizer& tok, const wl::CalibrationSet& set,
                                        wl::CaptureOptions o, wl::CancelToken* cancel = nullptr) {
    std::vector<wl::CapturedPrompt> out;
    wl::runCapture(m, tok, set, o, [&](wl::CapturedPrompt&& p) { out.push_back(std::move(p)); }, cancel);
    return out;
}

double maxDiff(const std::vector<float>& a, const std::vector<float>& b) {
    EXPECT_EQ(a.size(), b.size());
    double m = 0;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, (double)std::abs(a[i] - b[i]));
    return m;
}

// One prompt alone through forward(); returns states [S][T][D] and float64 entropies.
void referenceFor(wl::CausalLM& m, const std::vector<int64_t>& ids, std::vector<float>& states, std::vector<double>& ent) {
    wl::ForwardOptions fo;
    fo.capture_hidden = true;
    auto out = m.forward(torch::tensor(ids).view({1, -1}), {}, nullptr, fo);
    auto st = torch::stack(out.hidden_states, 0).select(1, 0).to(torch::kFloat32).contiguous();
    states.assign(st.data_ptr<float>(), st.data_ptr<float>() + st.numel());
    auto lp = torch::log_softmax(out.logits[0].to(torch::kFloat64), -1);
    auto e = -(lp.exp() * lp).sum(-1);
    ent.assign(e.data_ptr<double>(), e.data_ptr<double>() + e.numel());
}

}  // namespace

TEST(Capture, PaddedBatchEqualsOneAtATimeAndPlainForward) {
    auto m = wl::CausalLM::load(kCheckpoint, {"cpu", "float32"});
    auto tok = wl::loadTokenizer(kTokenizer);
    auto set = prompts();
    wl::CaptureOptions o;
    o.batch_size = 3;
    auto batched = capture(*m, *tok, set, o);
    o.batch_size = 1;
    auto single = capture(*m, *tok, set, o);
    ASSERT_EQ(batched.size(), 5u);
    ASSERT_EQ(single.size(), 5u);
    for (size_t i = 0; i < 5; ++i) {
        const auto& b = batched[i];
        EXPECT_EQ(b.prompt_index, (int64_t)i);
        EXPECT_EQ(b.num_states, 6);
        EXPECT_EQ(b.hidden_size, 64);
        EXPECT_TRUE(b.has_bos);
        EXPECT_EQ(b.token_ids, tok->encode(set.prompts[i].text, true));
        EXPECT_EQ(b.token_ids, single[i].token_ids);
        EXPECT_EQ((int64_t)b.states.size(), 6 * b.num_tokens * 64);
        EXPECT_EQ((int64_t)b.final_normed.size(), b.num_tokens * 64);
        EXPECT_LT(maxDiff(b.states, single[i].states), 1e-5) << i;
        EXPECT_LT(maxDiff(b.token_entropy, single[i].token_entropy), 1e-5) << i;
        std::vector<float> ref_states;
        std::vector<double> ref_ent;
        referenceFor(*m, b.token_ids, ref_states, ref_ent);
        EXPECT_LT(maxDiff(b.states, ref_states), 1e-5) << i;
        for (int64_t t = 0; t < b.num_tokens; ++t) {
            EXPECT_NEAR(b.token_entropy[t], ref_ent[t], 1e-4) << i << " t=" << t;
            EXPECT_GE(b.token_entropy[t], 0.0);
            EXPECT_LE(b.token_entropy[t], std::log(512.0) + 1e-4);
        }
        // Row accessor follows [num_states][T][D].
        EXPECT_EQ(b.row(2, 1)[3], b.states[(2 * b.num_tokens + 1) * 64 + 3]);
    }
}

TEST(Capture, TruncatesMaxPromptsAndProgress) {
    auto m = wl::CausalLM::load(kCheckpoint, {"cpu", "float32"});
    auto tok = wl::loadTokenizer(kTokenizer);
    auto set = prompts();
    wl::CaptureOptions o;
    o.max_tokens_per_prompt = 4;
    o.max_prompts = 3;
    o.batch_size = 2;
    o.add_bos = false;
    std::vector<wl::CapturedPrompt> out;
    std::vector<int64_t> done;
    auto prog = wl::runCapture(*m, *tok, set, o, [&](wl::CapturedPrompt&& p) { out.push_back(std::move(p)); }, nullptr,
                               [&](const wl::CaptureProgress& p) { done.push_back(p.prompts_done); });
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(done, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(prog.prompts_done, 3);
    int64_t tokens = 0;
    for (const auto& p : out) {
        EXPECT_LE(p.num_tokens, 4);
        EXPECT_FALSE(p.has_bos);
        EXPECT_NE(p.token_ids[0], tok->bosId());
        tokens += p.num_tokens;
    }
    EXPECT_EQ(out[1].token_ids, tok->encode("Hi", false));
    EXPECT_EQ(prog.tokens_done, tokens);
}

TEST(Capture, CancelKeepsEmittedPromptsValid) {
    auto m = wl::CausalLM::load(kCheckpoint, {"cpu", "float32"});
    auto tok = wl::loadTokenizer(kTokenizer);
    auto set = prompts();
    wl::CaptureOptions o;
    o.batch_size = 1;
    wl::CancelToken cancel;
    std::vector<wl::CapturedPrompt> out;
    EXPECT_THROW(wl::runCapture(*m, *tok, set, o,
                                [&](wl::CapturedPrompt&& p) {
                                    out.push_back(std::move(p));
                                    if (out.size() == 2) cancel.cancel();
                                },
                                &cancel),
                 wl::Cancelled);
    ASSERT_EQ(out.size(), 2u);
    for (const auto& p : out) {
        std::vector<float> ref_states;
        std::vector<double> ref_ent;
        referenceFor(*m, p.token_ids, ref_states, ref_ent);
        EXPECT_LT(maxDiff(p.states, ref_states), 1e-5);
    }
}

TEST(Capture, NanActivationNamesPromptAndLayer) {
    const fs::path dir = fs::path(WAVELAB_TEST_WORK_DIR) / "capture" / "nan";
    fs::remove_all(dir);
    auto c = wl::syntheticPreset("qwen3-0.6b");
    c.num_layers = 3;
    c.vocab_size = 512;
    c.hidden_size = 32;
    c.intermediate_size = 48;
    c.num_heads = 2;
    c.num_kv_heads = 1;
    c.head_dim = 16;
    wl::writeSyntheticCheckpoint(c, dir.string(), {});
    // Poison one weight of layer 1's MLP: hidden state 2 (its output) becomes NaN.
    const std::string file = (dir / "model.safetensors").string();
    std::string bytes = wl::readFile(file);
    uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    auto header = nlohmann::json::parse(bytes.substr(8, n));
    const uint64_t off = 8 + n + header["model.layers.1.mlp.down_proj.weight"]["data_offsets"][0].get<uint64_t>();
    const float nan = std::nanf("");
    std::memcpy(&bytes[off], &nan, 4);
    wl::writeFileAtomic(file, bytes);
    auto m = wl::CausalLM::load(dir.string(), {"cpu", "float32"});
    auto tok = wl::loadTokenizer(kTokenizer);
    auto set = prompts();
    try {
        capture(*m, *tok, set, {});
        FAIL() << "no error for NaN activations";
    } catch (const wl::Error& e) {
        EXPECT_EQ(e.source(), "test-prompts");
        EXPECT_NE(std::string(e.what()).find("prompt 0"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("hidden state 2"), std::string::npos) << e.what();
    }
}

TEST(Capture, ChatTemplateWrapsMessages) {
    auto m = wl::CausalLM::load(kCheckpoint, {"cpu", "float32"});
    auto tok = wl::loadTokenizer(kTokenizer);
    wl::CalibrationSet set;
    set.source = "chat";
    set.prompts.push_back({"hello", {{"user", "hello"}, {"assistant", "hi there"}, {"user", "tell a story"}}});
    set.prompts.push_back({"plain text", {}});
    wl::CaptureOptions o;
    o.chat_template = "llama2";
    auto out = capture(*m, *tok, set, o);
    ASSERT_EQ(out.size(), 2u);
    auto expect0 = tok->encode(tok->applyChatTemplate(set.prompts[0].messages, "llama2"), false);
    if (expect0.empty() || expect0[0] != tok->bosId()) expect0.insert(expect0.begin(), tok->bosId());
    EXPECT_EQ(out[0].token_ids, expect0);
    auto expect1 = tok->encode(tok->applyChatTemplate({{"user", "plain text"}}, "llama2"), false);
    if (expect1.empty() || expect1[0] != tok->bosId()) expect1.insert(expect1.begin(), tok->bosId());
    EXPECT_EQ(out[1].token_ids, expect1);
}

TEST(Capture, WriterLayoutRoundTrips) {
    const fs::path dir = fs::path(WAVELAB_TEST_WORK_DIR) / "capture" / "writer";
    fs::remove_all(dir);
    auto m = wl::CausalLM::load(kCheckpoint, {"cpu", "float32"});
    auto tok = wl::loadTokenizer(kTokenizer);
    auto set = prompts();
    wl::CaptureOptions o;
    o.max_prompts = 3;
    auto captured = capture(*m, *tok, set, o);
    wl::CaptureWriter writer(dir.string());
    for (auto p : captured) writer.add(std::move(p));   // copies: `captured` stays the reference
    wl::CaptureManifestInfo info;
    info.model = m->config();
    const std::string file = writer.finish(info);
    wl::SafetensorsFile f(file);
    const int64_t N = writer.numTokens();
    ASSERT_EQ(f.get("prompt_offsets").shape, (std::vector<int64_t>{4}));
    const auto* off = reinterpret_cast<const int64_t*>(f.get("prompt_offsets").data);
    const auto* ids = reinterpret_cast<const int64_t*>(f.get("token_ids").data);
    const auto* ent = reinterpret_cast<const float*>(f.get("token_entropy").data);
    EXPECT_EQ(off[3], N);
    for (int64_t h = 0; h < 6; ++h) {
        const auto& v = f.get("hidden_states." + std::to_string(h));
        ASSERT_EQ(v.shape, (std::vector<int64_t>{N, 64}));
        const auto* data = reinterpret_cast<const float*>(v.data);
        for (size_t p = 0; p < captured.size(); ++p)
            for (int64_t t = 0; t < captured[p].num_tokens; ++t)
                for (int64_t d = 0; d < 64; d += 7)
                    ASSERT_EQ(data[(off[p] + t) * 64 + d], captured[p].row(h, t)[d]);
    }
    for (size_t p = 0; p < captured.size(); ++p)
        for (int64_t t = 0; t < captured[p].num_tokens; ++t) {
            EXPECT_EQ(ids[off[p] + t], captured[p].token_ids[t]);
            EXPECT_EQ(ent[off[p] + t], captured[p].token_entropy[t]);
        }
    auto manifest = nlohmann::json::parse(wl::readFile((dir / "manifest.json").string()));
    EXPECT_EQ(manifest["num_tokens"], N);
    EXPECT_EQ(manifest["num_layers"], 5);
    EXPECT_EQ(manifest["convention"], wl::hiddenStateConventionText());
}
