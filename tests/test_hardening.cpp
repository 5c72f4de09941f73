// Bad input that no component test covers yet (see tests/test_io_safetensors.cpp,
// test_model_*.cpp, test_tokenizer_factory.cpp, test_data_calibration.cpp, test_capture.cpp
// and test_analysis.cpp for the rest): every case must end in one clear wl::Error (or a
// documented truncation), never a crash or hang. Also cancel in the middle of capture +
// analysis and of the whole select pipeline: no crash, no leaked threads, results so far valid.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "analysis/layer_analyzer.h"
#include "capture/capture_runner.h"
#include "io/safetensors.h"
#include "model/causal_lm.h"
#include "model/synthetic_checkpoint.h"
#include "pipeline/select_pipeline.h"
#include "tokenizer/tokenizer.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace {

const std::string kModels = WAVELAB_MODELS_DIR;
const std::string kStories = kModels + "/stories260K/stories260K.bin";
const std::string kTok512 = kModels + "/stories260K/tok512.bin";
const std::string kSpModel = kModels + "/llama2-tokenizer/tokenizer.model";

fs::path workDir(const std::string& name) {
    fs::path d = fs::path(WAVELAB_TEST_WORK_DIR) / "hardening" / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

wl::ModelConfig tinyQwen3() {
    wl::ModelConfig c = wl::syntheticPreset("qwen3-0.6b");
    c.num_layers = 2;
    c.vocab_size = 512;
    c.hidden_size = 32;
    c.intermediate_size = 48;
    c.num_heads = 2;
    c.num_kv_heads = 1;
    c.head_dim = 16;
    c.max_position_embeddings = 64;
    return c;
}

void expectLoadError(const std::string& path, const std::string& fragment, const std::string& source) {
    try {
        wl::CausalLM::load(path, {"cpu", "float32"});
        ADD_FAILURE() << "no error loading " << path << ", expected '" << fragment << "'";
    } catch (const wl::Error& e) {
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
        EXPECT_EQ(e.source(), source) << e.what();
    }
}

int threadCount() {
    int n = 0;
    for (const auto& e : fs::directory_iterator("/proc/self/task")) (void)e, ++n;
    return n;
}

}  // namespace

TEST(Hardening, TruncatedHfCheckpointIsAClearErrorAtEveryCut) {
    const fs::path dir = workDir("truncated");
    wl::writeSyntheticCheckpoint(tinyQwen3(), dir.string(), {});
    const std::string file = (dir / "model.safetensors").string();
    const std::string good = wl::readFile(file);
    uint64_t header_len = 0;
    std::memcpy(&header_len, good.data(), 8);
    // Inside the length, inside the JSON, at the start of the data, halfway, one byte short.
    for (size_t cut : {size_t{5}, size_t{8 + header_len / 2}, size_t{8 + header_len}, good.size() / 2, good.size() - 1}) {
        SCOPED_TRACE(cut);
        wl::writeFileAtomic(file, good.substr(0, cut));
        expectLoadError(dir.string(), "", file);
    }
    wl::writeFileAtomic(file, good);
    EXPECT_NO_THROW(wl::CausalLM::load(dir.string(), {"cpu", "float32"}));
}

TEST(Hardening, IntegerWeightDtypeIsAClearError) {
    const fs::path dir = workDir("int_weight");
    wl::writeSyntheticCheckpoint(tinyQwen3(), dir.string(), {});
    const std::string file = (dir / "model.safetensors").string();
    const std::string name = "model.layers.0.mlp.up_proj.weight";
    {
        // Same bytes, but one weight declared I32 (e.g. a quantised export): not loadable.
        const std::string bytes = wl::readFile(file);
        wl::SafetensorsFile in(file);
        const std::string out = (dir / "model.int.safetensors").string();
        wl::SafetensorsWriter w(out);
        for (const auto& n : in.names()) {
            const wl::TensorView& v = in.get(n);
            w.add(n, n == name ? wl::DType::I32 : v.dtype, v.shape, v.data);
        }
        w.finish();
        fs::rename(out, file);
    }
    try {
        wl::CausalLM::load(dir.string(), {"cpu", "float32"});
        FAIL() << "loaded an I32 weight";
    } catch (const wl::Error& e) {
        EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("I32"), std::string::npos) << e.what();
    }
}

TEST(Hardening, PromptLongerThanTheContextIsTruncatedToIt) {
    // Documented in capture/capture_runner.h: max_tokens_per_prompt is clamped to the model's
    // context (max_position_embeddings); the rest of the prompt is dropped, not an error.
    if (!fs::exists(kStories)) GTEST_SKIP() << "missing " << kStories;
    auto model = wl::CausalLM::load(kStories, {"cpu", "float32"});
    auto tok = wl::loadTokenizer(kTok512);
    const int64_t context = model->config().max_position_embeddings;
    wl::CalibrationSet set;
    set.source = "long-prompt";
    std::string text;
    while (static_cast<int64_t>(tok->encode(text, true).size()) <= context + 50) text += "Once upon a time there was a big dog. ";
    set.prompts.push_back({text, {}});
    set.prompts.push_back({"A short one.", {}});
    wl::CaptureOptions o;
    o.max_tokens_per_prompt = 4 * context;
    o.batch_size = 2;
    std::vector<wl::CapturedPrompt> out;
    wl::runCapture(*model, *tok, set, o, [&](wl::CapturedPrompt&& p) { out.push_back(std::move(p)); });
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].num_tokens, context);
    const auto full = tok->encode(text, true);
    EXPECT_EQ(out[0].token_ids, std::vector<int64_t>(full.begin(), full.begin() + context));
    for (float v : out[0].states) ASSERT_TRUE(std::isfinite(v));
    EXPECT_EQ(out[1].token_ids, tok->encode("A short one.", true));
}

TEST(Hardening, InfAndNanActivationsAreReportedByTheAnalysis) {
    for (float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                      std::numeric_limits<float>::quiet_NaN()}) {
        wl::CapturedPrompt p;
        p.prompt_index = 7;
        p.num_tokens = 4;
        p.num_states = 3;
        p.hidden_size = 5;
        p.token_ids = {1, 2, 3, 4};
        p.token_entropy = {1, 2, 3, 4};
        p.states.assign(3 * 4 * 5, 0.5f);
        for (size_t i = 0; i < p.states.size(); ++i) p.states[i] += 0.01f * static_cast<float>(i % 7);
        p.states[2 * 20 + 3] = bad;   // state 2, token 0
        wl::LayerAnalyzer analyzer;
        try {
            analyzer.add(p);
            ADD_FAILURE() << "accepted a non-finite activation " << bad;
        } catch (const wl::Error& e) {
            EXPECT_NE(std::string(e.what()).find("prompt 7"), std::string::npos) << e.what();
        }
    }
}

TEST(Hardening, InvalidUtf8TextNeverCrashesATokenizer) {
    const std::vector<std::string> texts = {"\xff\xfe", "ab\xc3", "\xed\xa0\x80 surrogate", "\xc0\xaf overlong",
                                            "\xf4\x90\x80\x80 beyond U+10FFFF", std::string("nul\0inside", 10)};
    std::vector<std::string> paths = {kTok512, kSpModel};
    const std::string qwen = std::string(WAVELAB_TEST_DATA_DIR) + "/generated/tokenizer-qwen3/models/tokenizer.json";
    if (fs::exists(qwen)) paths.push_back(qwen);
    for (const auto& path : paths) {
        if (!fs::exists(path)) continue;
        auto tok = wl::loadTokenizer(path);
        for (const auto& text : texts) {
            SCOPED_TRACE(path + " / " + text);
            try {
                const auto ids = tok->encode(text, true);
                for (int64_t id : ids) EXPECT_TRUE(id >= 0 && id < tok->vocabSize()) << id;
                (void)tok->decode(ids);
            } catch (const wl::Error&) {
                // A clear refusal is fine too.
            }
        }
    }
}

TEST(Hardening, CancelMidCaptureKeepsTheAnalysisOfWhatArrivedValid) {
    if (!fs::exists(kStories)) GTEST_SKIP() << "missing " << kStories;
    auto model = wl::CausalLM::load(kStories, {"cpu", "float32"});
    auto tok = wl::loadTokenizer(kTok512);
    wl::CalibrationSet set;
    set.source = "prompts";
    for (int i = 0; i < 12; ++i)
        set.prompts.push_back({"Once upon a time, a little bird number " + std::to_string(i) + " flew over the hill.", {}});
    wl::AnalysisOptions ao;
    ao.filter.mode = wl::TokenFilterMode::None;
    ao.cka_batch_tokens = 16;
    wl::LayerAnalyzer analyzer(ao);
    wl::CancelToken cancel;
    wl::CaptureOptions o;
    o.batch_size = 2;
    int64_t received = 0;
    EXPECT_THROW(wl::runCapture(*model, *tok, set, o,
                                [&](wl::CapturedPrompt&& p) {
                                    analyzer.add(p);
                                    if (++received == 5) cancel.cancel();
                                },
                                &cancel),
                 wl::Cancelled);
    EXPECT_EQ(received, 6);   // the batch in flight is delivered whole, no further batch starts
    analyzer.finish();
    const wl::AnalysisSnapshot s = analyzer.snapshot(true);
    EXPECT_EQ(s.prompts_seen, received);
    ASSERT_EQ(s.entropy_filtered.size(), 6u);
    for (double e : s.entropy_filtered) EXPECT_TRUE(std::isfinite(e) && e > 0) << e;
    for (int h = 0; h < 6; ++h) EXPECT_NEAR(s.cka[h * 6 + h], 1.0, 1e-9);
}

TEST(Hardening, CancelledSelectRunsLeakNoThreadsAndLeaveNoFiles) {
    if (!fs::exists(kStories)) GTEST_SKIP() << "missing " << kStories;
    const fs::path dir = workDir("cancel_select");
    std::ofstream(dir / "prompts.txt") << "Once upon a time there was a cat.\nThe dog ran home.\nA bird sang a song.\n"
                                          "Tom had a red ball.\nSue liked to swim.\nThe sun was hot.\n";
    wl::SelectionRunOptions o;
    o.device = "cpu";
    o.capture.batch_size = 1;
    o.capture.max_tokens_per_prompt = 32;
    o.analysis.filter.mode = wl::TokenFilterMode::None;
    o.snapshot_every_prompts = 1;
    auto runCancelled = [&](const std::string& at_stage) {
        wl::CancelToken cancel;
        bool cancelled = false;
        EXPECT_THROW(wl::runSelection(kStories, (dir / "prompts.txt").string(), o,
                                      [&](const wl::SelectionRunProgress& p) {
                                          if (p.stage == at_stage && (at_stage != "capture" || p.capture.prompts_done >= 2)) {
                                              cancel.cancel();
                                              cancelled = true;
                                          }
                                      },
                                      &cancel),
                     wl::Cancelled)
            << at_stage;
        EXPECT_TRUE(cancelled) << "stage " << at_stage << " never reported";
    };
    runCancelled("capture");   // warms up libtorch's and OpenBLAS's thread pools
    const int threads = threadCount();
    runCancelled("capture");
    runCancelled("selection");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_LE(threadCount(), threads) << "threads grew across cancelled runs";
    for (const auto& e : fs::directory_iterator(dir))
        EXPECT_EQ(e.path().filename().string(), "prompts.txt") << "left behind: " << e.path();
}
