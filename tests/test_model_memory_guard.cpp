// Memory guard: estimates checked against independent counts (the tensors a synthetic
// checkpoint actually writes, the published Qwen3-0.6B parameter count, hand sums).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "io/safetensors.h"
#include "model/memory_guard.h"
#include "model/synthetic_checkpoint.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace {
fs::path workDir(const std::string& name) {
    fs::path d = fs::path(WAVELAB_TEST_WORK_DIR) / "memory_guard" / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}
}  // namespace

TEST(MemoryGuard, BytesPerElement) {
    EXPECT_EQ(wl::bytesPerElement("float32"), 4);
    EXPECT_EQ(wl::bytesPerElement("bfloat16"), 2);
    EXPECT_EQ(wl::bytesPerElement("float16"), 2);
    EXPECT_EQ(wl::bytesPerElement("BF16"), 2);
    EXPECT_THROW(wl::bytesPerElement("int4"), wl::Error);
}

TEST(MemoryGuard, ModelEstimateCountsTheTensorsAsWritten) {
    wl::ModelConfig c = wl::syntheticPreset("qwen3-0.6b");
    // Published parameter count of Qwen3-0.6B (tied embeddings): 596,049,920.
    EXPECT_EQ(c.numParameters(), 596049920);
    const int64_t largest = c.vocab_size * c.hidden_size;
    EXPECT_EQ(wl::estimateModelBytes(c, "float32"), 596049920LL * 4 + largest * 4);
    EXPECT_EQ(wl::estimateModelBytes(c, "bfloat16"), 596049920LL * 2 + largest * 4);

    // A shrunken, untied copy written to disk: the estimate's parameter count equals the
    // elements stored in the file.
    c.num_layers = 2;
    c.vocab_size = 96;
    c.hidden_size = 64;
    c.intermediate_size = 96;
    c.num_heads = 4;
    c.num_kv_heads = 2;
    c.head_dim = 16;
    c.tie_word_embeddings = false;
    const fs::path dir = workDir("tiny");
    wl::writeSyntheticCheckpoint(c, dir.string(), {});
    wl::SafetensorsSet set(dir.string());
    int64_t stored = 0, biggest = 0;
    for (const auto& name : set.names()) {
        stored += set.get(name).numel();
        biggest = std::max(biggest, set.get(name).numel());
    }
    EXPECT_EQ(stored, c.numParameters());
    const int64_t largest_tensor = std::max(c.vocab_size * c.hidden_size, 3 * c.intermediate_size * c.hidden_size);
    EXPECT_GE(largest_tensor, biggest);   // fused gate/up/down bound, never below a stored tensor
    EXPECT_EQ(wl::estimateModelBytes(c, "float32"), stored * 4 + largest_tensor * 4);
}

TEST(MemoryGuard, CaptureEstimateIsTheSumOfItsBuffers) {
    wl::ModelConfig c;
    c.hidden_size = 8;
    c.num_layers = 2;
    c.num_heads = 2;
    c.num_kv_heads = 1;
    c.head_dim = 4;
    c.intermediate_size = 16;
    c.vocab_size = 10;
    const int64_t B = 3, T = 5;
    const int64_t states = B * T * 8 * (3 + 1) * (4 + 4);
    const int64_t qkv = B * T * (2 + 2) * 4 * 4;
    const int64_t mlp = B * T * 2 * 16 * 4;
    const int64_t scores = B * 2 * T * T * 4;
    const int64_t logits = B * T * 10 * 4;
    EXPECT_EQ(wl::estimateCaptureBytes(c, T, B, "float32"), states + qkv + mlp + scores + logits);
    // Logits are chunked at 256 positions; attention scores grow quadratically.
    const int64_t a = wl::estimateCaptureBytes(c, 1024, 1), b = wl::estimateCaptureBytes(c, 2048, 1);
    EXPECT_GT(b, 2 * a);
    EXPECT_LT(wl::estimateCaptureBytes(c, T, B, "bfloat16"), wl::estimateCaptureBytes(c, T, B, "float32"));
}

TEST(MemoryGuard, ReadsMemAvailableAndRefusesWithBothNumbers) {
    const fs::path dir = workDir("meminfo");
    std::ofstream(dir / "meminfo") << "MemTotal:       24000000 kB\nMemFree:         1000 kB\n"
                                      "MemAvailable:    2097152 kB\nBuffers: 1 kB\n";
    EXPECT_EQ(wl::availableMemoryBytes((dir / "meminfo").string()), 2097152LL * 1024);
    std::ofstream(dir / "nomem") << "MemTotal: 1 kB\n";
    EXPECT_EQ(wl::availableMemoryBytes((dir / "nomem").string()), -1);
    EXPECT_EQ(wl::availableMemoryBytes((dir / "missing").string()), -1);
    if (fs::exists("/proc/meminfo")) EXPECT_GT(wl::availableMemoryBytes(), 0);

    EXPECT_NO_THROW(wl::checkFits(100, 200, "m", "loading"));
    EXPECT_NO_THROW(wl::checkFits(int64_t{1} << 50, -1, "m", "loading"));   // unknown: no refusal
    try {
        wl::checkFits(int64_t{3} << 30, int64_t{2} << 30, "/models/qwen3", "loading the model");
        FAIL() << "expected a refusal";
    } catch (const wl::Error& e) {
        EXPECT_EQ(e.source(), "/models/qwen3");
        EXPECT_NE(e.problem().find("needs about 3.00 GiB"), std::string::npos) << e.what();
        EXPECT_NE(e.problem().find("only 2.00 GiB"), std::string::npos) << e.what();
    }
    EXPECT_EQ(wl::formatByteCount(17), "17 B");
    EXPECT_EQ(wl::formatByteCount(320 << 20), "320 MiB");
}
