// The memory guard where it acts: CausalLM::load, runCapture, runSelection and the CLI refuse
// with the estimate when $WAVELAB_MEMORY_LIMIT_MB (a cap on MemAvailable) is too small, and
// run when it is large enough. The analyzer estimate is checked against the heap it really
// allocates (glibc mallinfo2, or ASan's allocator under AddressSanitizer), an independent count.
#include <gtest/gtest.h>
#include <malloc.h>
#if defined(__SANITIZE_ADDRESS__)
extern "C" size_t __sanitizer_get_current_allocated_bytes();   // ASan runtime (no header in Debian's GCC)
#endif

#include <array>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "analysis/layer_analyzer.h"
#include "cli_runner.h"
#include "capture/capture_runner.h"
#include "model/causal_lm.h"
#include "model/memory_guard.h"
#include "pipeline/select_pipeline.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

using wl::test::runCli;

namespace {

// Bytes the heap has handed out and not yet taken back.
size_t heapInUse() {
#if defined(__SANITIZE_ADDRESS__)
    return __sanitizer_get_current_allocated_bytes();   // ASan replaces malloc: mallinfo2 sees nothing
#else
    const auto info = mallinfo2();
    return info.uordblks + info.hblkhd;
#endif
}


const std::string kModel = std::string(WAVELAB_MODELS_DIR) + "/stories260K/stories260K.bin";
const std::string kTokenizer = std::string(WAVELAB_MODELS_DIR) + "/stories260K/tok512.bin";

// Sets $WAVELAB_MEMORY_LIMIT_MB for one scope.
class MemoryLimit {
public:
    explicit MemoryLimit(const std::string& mb) { setenv("WAVELAB_MEMORY_LIMIT_MB", mb.c_str(), 1); }
    ~MemoryLimit() { unsetenv("WAVELAB_MEMORY_LIMIT_MB"); }
};

wl::LoadOptions cpu() {
    wl::LoadOptions o;
    o.device = "cpu";
    o.threads = 1;
    return o;
}

wl::CalibrationSet prompts(int n) {
    wl::CalibrationSet set;
    set.source = "memory-guard-prompts";
    set.format = "text";
    for (int i = 0; i < n; ++i) set.prompts.push_back({"Once upon a time there was a little cat named Tom.", {}});
    return set;
}

std::string refusal(const std::function<void()>& f) {
    try {
        f();
    } catch (const wl::Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(MemoryGuardInUse, LimitFromEnvironmentCapsMemAvailable) {
    const int64_t free_bytes = wl::availableMemoryBytes();
    {
        MemoryLimit limit("3");
        EXPECT_EQ(wl::availableMemoryBytes(), free_bytes < 0 ? (int64_t{3} << 20) : std::min<int64_t>(free_bytes, int64_t{3} << 20));
    }
    {
        MemoryLimit limit("lots");
        const std::string why = refusal([] { wl::availableMemoryBytes(); });
        EXPECT_NE(why.find("WAVELAB_MEMORY_LIMIT_MB"), std::string::npos) << why;
        EXPECT_NE(why.find("lots"), std::string::npos) << why;
    }
}

TEST(MemoryGuardInUse, LoadRefusesWithTheEstimateAndLoadsWhenItFits) {
    const wl::ModelConfig config = wl::CausalLM::readConfig(kModel);
    {
        MemoryLimit limit("0");
        const std::string why = refusal([] { wl::CausalLM::load(kModel, cpu()); });
        EXPECT_NE(why.find(kModel), std::string::npos) << why;
        EXPECT_NE(why.find("needs about " + wl::formatByteCount(wl::estimateModelBytes(config, "float32"))),
                  std::string::npos) << why;
        // The caller may opt out (e.g. it checked a larger budget already).
        wl::LoadOptions unchecked = cpu();
        unchecked.check_memory = false;
        EXPECT_NE(wl::CausalLM::load(kModel, unchecked), nullptr);
    }
    MemoryLimit limit("4096");
    EXPECT_NE(wl::CausalLM::load(kModel, cpu()), nullptr);
}

TEST(MemoryGuardInUse, CaptureRefusesBeforeTheFirstForward) {
    auto model = wl::CausalLM::load(kModel, cpu());
    auto tokenizer = wl::loadTokenizer(kTokenizer);
    const wl::CalibrationSet set = prompts(3);
    wl::CaptureOptions options;
    options.batch_size = 2;
    options.max_tokens_per_prompt = 64;
    int handed = 0;
    const auto sink = [&](wl::CapturedPrompt&&) { ++handed; };
    {
        MemoryLimit limit("0");
        const std::string why = refusal([&] { wl::runCapture(*model, *tokenizer, set, options, sink); });
        EXPECT_NE(why.find("memory-guard-prompts"), std::string::npos) << why;
        EXPECT_NE(why.find("2 prompts x 64 tokens"), std::string::npos) << why;
        EXPECT_NE(why.find(wl::formatByteCount(wl::estimateCaptureBytes(model->config(), 64, 2))), std::string::npos)
            << why;
        EXPECT_EQ(handed, 0);
    }
    MemoryLimit limit("4096");
    wl::runCapture(*model, *tokenizer, set, options, sink);
    EXPECT_EQ(handed, 3);
}

TEST(MemoryGuardInUse, SelectionRunRefusesWithItsBreakdown) {
    wl::SelectionRunOptions options;
    options.device = "cpu";
    options.capture.max_prompts = 4;
    options.capture.max_tokens_per_prompt = 32;
    options.tokenizer_path = kTokenizer;
    options.selection.m = 2;
    const wl::SelectionMemoryEstimate need = wl::estimateSelectionMemory(wl::CausalLM::readConfig(kModel), options);
    EXPECT_GT(need.weights, 0);
    EXPECT_GT(need.capture, 0);
    EXPECT_GT(need.analysis, 0);
    // A budget that holds the weights but not the whole run still refuses, before loading.
    const int64_t budget_mb = (need.weights >> 20) + 1;
    ASSERT_LT(budget_mb << 20, need.total()) << "stories260K's run is too small to split the budget";
    {
        MemoryLimit limit(std::to_string(budget_mb));
        bool loaded = false;
        const std::string why = refusal([&] {
            wl::runSelection(kModel, "", options, [&](const wl::SelectionRunProgress& p) { loaded |= p.stage != "load"; });
        });
        EXPECT_NE(why.find("weights " + wl::formatByteCount(need.weights)), std::string::npos) << why;
        EXPECT_NE(why.find("analysis " + wl::formatByteCount(need.analysis)), std::string::npos) << why;
        EXPECT_FALSE(loaded);
    }
    MemoryLimit limit("4096");
    const wl::SelectionReport report = wl::runSelection(kModel, "", options);
    EXPECT_EQ(report.selection.chosen.states.size(), 2u);
}

TEST(MemoryGuardInUse, AnalyzerEstimateBoundsWhatItAllocates) {
    wl::AnalysisOptions options;
    options.filter.mode = wl::TokenFilterMode::Threshold;   // + the unfiltered moments
    options.filter.threshold_nats = 0.0;
    options.reservoir_tokens = 64;
    options.cka_batch_tokens = 32;
    const int64_t L = 6, D = 96, T = 40;
    wl::CapturedPrompt p;
    p.num_states = L;
    p.hidden_size = D;
    p.num_tokens = T;
    p.token_ids.assign(T, 1);
    p.token_entropy.assign(T, 1.0f);
    p.states.resize(static_cast<size_t>(L * T * D));
    std::mt19937 rng(7);
    std::normal_distribution<float> normal;
    for (auto& v : p.states) v = normal(rng);

    const int64_t estimate = wl::estimateAnalyzerBytes(L, D, options, T);
    // What a streaming analyzer keeps (moments, buffers) excludes the transient snapshot and
    // set-model scratch, so it must lie between the moments alone and the full estimate.
    const int64_t moments = 2 * L * D * (D + 1) / 2 * 8;
    const size_t before = heapInUse();
    auto analyzer = std::make_unique<wl::LayerAnalyzer>(options);
    analyzer->add(p);
    const size_t after = heapInUse();
    const int64_t held = static_cast<int64_t>(after) - static_cast<int64_t>(before);
    EXPECT_GE(held, moments) << "estimate " << estimate;
    EXPECT_LE(held, estimate) << "moments " << moments;
    // At real widths the D^2 terms dominate: twice the width, about four times the bytes.
    EXPECT_GT(wl::estimateAnalyzerBytes(37, 5120, options, T), 3 * wl::estimateAnalyzerBytes(37, 2560, options, T));
    // Longer prompts: each of the 2 workers' row buffers holds a whole prompt's rows.
    EXPECT_GE(wl::estimateAnalyzerBytes(L, D, options, 4096) - estimate, 2 * (4096 - T) * D * 4);
    // Without a filter there is one set of moments.
    options.filter.mode = wl::TokenFilterMode::None;
    EXPECT_LT(wl::estimateAnalyzerBytes(L, D, options, T), estimate - moments / 2 + 1);
}

TEST(MemoryGuardInUse, CliSaysWhyAndWritesNothing) {
    const std::string out = std::string(WAVELAB_TEST_WORK_DIR) + "/memory_guard_cli.json";
    std::remove(out.c_str());
    wl::test::CliResult r = runCli("select --model " + kModel + " --m 2 --max-prompts 4 --quiet --out " + out,
                                   wl::test::Stderr::Merged, "WAVELAB_MEMORY_LIMIT_MB=0");
    EXPECT_NE(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("needs about"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("stories260K.bin"), std::string::npos) << r.out;
    EXPECT_EQ(std::fopen(out.c_str(), "r"), nullptr);
    r = runCli("generate --model " + kModel + " --prompt Hi --max-tokens 8", wl::test::Stderr::Merged, "WAVELAB_MEMORY_LIMIT_MB=0");
    EXPECT_NE(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("needs about"), std::string::npos) << r.out;
}
