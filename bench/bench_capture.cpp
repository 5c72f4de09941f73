// Capture throughput vs this machine's float32 GEMM rate, measured in the same run.
//
// Model: a synthetic checkpoint with Qwen3-0.6B's exact shape (28 layers, d = 1024, 16 heads,
// 8 KV heads, head_dim 128, MLP 3072, QK-norm), written by core/model/synthetic_checkpoint.h.
// The vocabulary is SHRUNK to --vocab (default 16384, printed) so the LM head (needed for the
// token entropies) does not dominate; its FLOPs are counted separately.
// FLOPs per token = 2 x non-embedding params + 4 T d per layer (attention scores + weighted
// sum over a T-token context, the formula); "+head" adds 2 V d for the LM head.
// Reported per batch size: tokens/s and achieved GFLOP/s as a fraction of torch::mm's
// GFLOP/s on [B*T, d] x [d, 3072] (the model's most common GEMM shape) at the same thread
// count, for three stages: the bare forward, forward + hidden-state capture + logits, and
// the full runCapture (tokenise, forward, stack/copy states to float vectors, NaN check,
// token entropy). Usage: bench_capture [--quick] [--threads N] [--tokens T] [--batches 1,4]
//                        [--vocab V] [--layers L] [--work DIR] [--device cuda --dtype bfloat16]
#include <torch/torch.h>

#include <filesystem>
#include <sstream>

#include "bench_common.h"
#include "capture/capture_runner.h"
#include "model/causal_lm.h"
#include "model/synthetic_checkpoint.h"
#include "tokenizer/tokenizer.h"

namespace fs = std::filesystem;
using namespace wl::bench;

namespace {

double gemmGflops(int64_t m, int64_t k, int64_t n, torch::Device device, torch::ScalarType dtype, double min_seconds) {
    auto opts = torch::TensorOptions().dtype(dtype).device(device);
    auto a = torch::randn({m, k}, opts), b = torch::randn({k, n}, opts);
    auto sync = [&] {
        if (device.is_cuda()) torch::cuda::synchronize();
    };
    for (int i = 0; i < 2; ++i) torch::mm(a, b);
    sync();
    int reps = 0;
    const auto t0 = Clock::now();
    do {
        torch::mm(a, b);
        ++reps;
        sync();
    } while (secondsSince(t0) < min_seconds);
    return 2.0 * m * k * n * reps / secondsSince(t0) / 1e9;
}

std::vector<int64_t> parseList(const std::string& s) {
    std::vector<int64_t> v;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) v.push_back(std::stoll(item));
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    Args args(argc, argv);
    const bool quick = args.flag("--quick");
    const std::string device_name = args.get("--device", "cpu");
    const std::string dtype_name = args.get("--dtype", device_name == "cpu" ? "float32" : "bfloat16");
    if (device_name != "cpu" && !torch::cuda::is_available()) {
        std::printf("# bench_capture --device %s: no CUDA device on this machine; the %s GPU capture "
                    "benchmark is skipped.\n", device_name.c_str(), dtype_name.c_str());
        return 0;
    }
    const int64_t T = args.getInt("--tokens", quick ? 128 : 256);
    const std::vector<int64_t> batches = parseList(args.get("--batches", quick ? "1,4" : "1,4,8"));
    const int64_t vocab = args.getInt("--vocab", 16384);
    const int64_t layers = args.getInt("--layers", quick ? 8 : 28);
    const int reps = static_cast<int>(args.getInt("--reps", quick ? 2 : 3));
    const fs::path work = args.get("--work", (fs::temp_directory_path() / "wavelab-bench").string());
    printMachine("bench_capture");

    wl::ModelConfig cfg = wl::syntheticPreset("qwen3-0.6b");
    cfg.vocab_size = vocab;
    cfg.num_layers = layers;
    const fs::path model_dir = work / ("qwen3-0.6b-shape-L" + std::to_string(layers) + "-V" + std::to_string(vocab));
    if (!fs::exists(model_dir / "config.json")) {
        std::printf("# writing synthetic checkpoint %s ...\n", model_dir.c_str());
        std::fflush(stdout);
        const auto t0 = Clock::now();
        wl::writeSyntheticCheckpoint(cfg, model_dir.string(), {});
        std::printf("# written in %.1f s\n", secondsSince(t0));
    }
    auto t_load = Clock::now();
    auto model = wl::CausalLM::load(model_dir.string(), {device_name, dtype_name});
    const double load_s = secondsSince(t_load);
    if (args.getInt("--threads", 0) > 0) at::set_num_threads(static_cast<int>(args.getInt("--threads", 0)));
    const int threads = at::get_num_threads();
    const torch::Device device = model->device();
    const torch::ScalarType dtype = model->dtype();

    const double d = static_cast<double>(cfg.hidden_size);
    const double non_embedding = static_cast<double>(cfg.numParameters()) - static_cast<double>(cfg.vocab_size) * d -
                                 (cfg.tie_word_embeddings ? 0.0 : static_cast<double>(cfg.vocab_size) * d);
    const double flops_token = 2.0 * non_embedding + 4.0 * T * d * cfg.num_layers;
    const double flops_head = 2.0 * static_cast<double>(cfg.vocab_size) * d;
    std::printf("# model: synthetic Qwen3-0.6B shape, %lld layers, d=%lld, vocab SHRUNK to %lld (real: 151936); "
                "%.1f M non-embedding params; %s %s; loaded in %.1f s; torch threads %d\n",
                (long long)cfg.num_layers, (long long)cfg.hidden_size, (long long)cfg.vocab_size, non_embedding / 1e6,
                device.str().c_str(), dtype_name.c_str(), load_s, threads);
    std::printf("# FLOPs/token at T=%lld: %.3f GFLOP (2 x params + 4 T d L), LM head +%.3f GFLOP\n", (long long)T,
                flops_token / 1e9, flops_head / 1e9);

    auto tokenizer = wl::loadTokenizer(std::string(WAVELAB_MODELS_DIR) + "/stories260K/tok512.bin");
    std::string long_text;
    while (static_cast<int64_t>(tokenizer->encode(long_text, true).size()) < T + 8)
        long_text += "Once upon a time, a little girl named Lily found a shiny red ball in the park. ";

    std::printf("%-6s %-8s %-28s %12s %10s %10s %9s %9s\n", "batch", "tokens", "stage", "tokens/s", "GFLOP/s",
                "mm GFLOP/s", "vs mm", "+head");
    for (int64_t B : batches) {
        const double mm = gemmGflops(B * T, cfg.hidden_size, cfg.intermediate_size, device, dtype, quick ? 0.5 : 1.0);
        // Inputs: B copies of the same T-token prompt (no padding: pure prefill).
        std::vector<int64_t> ids = tokenizer->encode(long_text, true);
        ids.resize(T);
        auto input = torch::tensor(ids).view({1, T}).repeat({B, 1}).to(device);
        auto timeForward = [&](bool capture) {
            wl::ForwardOptions fo;
            fo.capture_hidden = capture;
            fo.compute_logits = capture;
            torch::NoGradGuard ng;
            model->forward(input, {}, nullptr, fo);   // warm-up
            if (device.is_cuda()) torch::cuda::synchronize();
            const auto t0 = Clock::now();
            for (int r = 0; r < reps; ++r) {
                auto out = model->forward(input, {}, nullptr, fo);
                if (capture) {   // include bringing states to host memory, as capture must
                    auto st = torch::stack(out.hidden_states, 0).to(torch::kCPU, torch::kFloat32);
                }
                if (device.is_cuda()) torch::cuda::synchronize();
            }
            return secondsSince(t0) / reps;
        };
        wl::CalibrationSet set;
        set.source = "bench";
        for (int64_t i = 0; i < B * reps; ++i) set.prompts.push_back({long_text, {}});
        wl::CaptureOptions co;
        co.max_tokens_per_prompt = T;
        co.batch_size = B;
        co.keep_final_normed = true;
        auto timeRunCapture = [&] {
            int64_t sunk = 0;
            wl::CalibrationSet warm = set;
            warm.prompts.resize(B);
            wl::runCapture(*model, *tokenizer, warm, co, [&](wl::CapturedPrompt&& p) { sunk += p.num_tokens; });
            const auto t0 = Clock::now();
            wl::runCapture(*model, *tokenizer, set, co, [&](wl::CapturedPrompt&& p) { sunk += p.num_tokens; });
            return secondsSince(t0) / reps;
        };
        const double s_fwd = timeForward(false);
        const double s_cap = timeForward(true);
        const double s_run = timeRunCapture();
        const double tokens = static_cast<double>(B * T);
        auto row = [&](const char* stage, double s, bool head) {
            const double gf = tokens * flops_token / s / 1e9;
            const double gf_head = tokens * (flops_token + (head ? flops_head : 0)) / s / 1e9;
            std::printf("%-6lld %-8lld %-28s %12.1f %10.1f %10.1f %8.1f%% %8.1f%%\n", (long long)B, (long long)(B * T),
                        stage, tokens / s, gf, mm, 100.0 * gf / mm, 100.0 * gf_head / mm);
        };
        row("forward", s_fwd, false);
        row("forward+states+logits", s_cap, true);
        row("runCapture (end to end)", s_run, true);
        std::fflush(stdout);
    }
    std::printf("# vs mm = (tokens/s x FLOPs/token) / torch::mm GFLOP/s at [B*T, %lld] x [%lld, %lld]; +head also "
                "counts the LM head's FLOPs (done for the token entropies). Target >= 50%% for batched prefill.\n",
                (long long)cfg.hidden_size, (long long)cfg.hidden_size, (long long)cfg.intermediate_size);
    return 0;
}
