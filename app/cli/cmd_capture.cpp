// wavelab-cli capture: per-layer hidden states of calibration prompts -> safetensors + manifest.
#include <chrono>
#include <iostream>

#include "capture/capture_runner.h"
#include "capture/capture_writer.h"
#include "command.h"
#include "data/calibration_set.h"
#include "model/causal_lm.h"
#include "model/synthetic_checkpoint.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace wl::cli {
namespace {

int runCaptureCommand(const Args& args) {
    args.allowOnly({"model", "data", "out", "max-prompts", "max-tokens", "batch-size", "tokenizer", "chat-template",
                    "device", "dtype", "no-bos", "no-final-normed"});
    const std::string path = args.get("model"), out = args.get("out");
    const std::string data_path = args.get("data", defaultCalibrationPath());
    CaptureOptions o;
    o.max_prompts = args.getInt("max-prompts", 0);
    o.max_tokens_per_prompt = args.getInt("max-tokens", 512);
    o.batch_size = args.getInt("batch-size", 4);
    o.chat_template = args.get("chat-template", "none");
    o.add_bos = !args.flag("no-bos");
    o.keep_final_normed = !args.flag("no-final-normed");
    if (o.max_prompts < 0) throw Error("--max-prompts", "must be >= 0");
    if (o.max_tokens_per_prompt <= 0) throw Error("--max-tokens", "must be positive");
    if (o.batch_size <= 0) throw Error("--batch-size", "must be positive");
    const CalibrationSet data = loadCalibrationSet(data_path);
    LoadOptions lo;
    lo.device = args.get("device", "auto");
    lo.dtype = args.get("dtype", "float32");
    const auto t0 = std::chrono::steady_clock::now();
    auto model = CausalLM::load(path, lo);
    const std::string tok_path = args.get("tokenizer", "");
    auto tok = findTokenizerForModel(path, model->config().vocab_size, tok_path);
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    CaptureWriter writer(out);
    auto prog = runCapture(*model, *tok, data, o, [&](CapturedPrompt&& p) { writer.add(std::move(p)); }, nullptr,
                           [](const CaptureProgress& p) {
                               std::cerr << "\rcaptured " << p.prompts_done << "/" << p.prompts_total << " prompts, "
                                         << p.tokens_done << " tokens" << std::flush;
                           });
    std::cerr << "\n";
    CaptureManifestInfo info;
    info.model = model->config();
    info.compute_dtype = lo.dtype;
    info.device = model->device().str();
    info.synthetic_model = isSyntheticCheckpoint(path);
    info.tokenizer_path = tok_path.empty() ? "(found beside the model)" : tok_path;
    info.tokenizer_kind = tok->kind();
    info.data_source = data.source;
    info.data_format = data.format;
    info.max_tokens_per_prompt = o.max_tokens_per_prompt;
    info.add_bos = o.add_bos;
    info.chat_template = o.chat_template;
    info.seconds = prog.seconds;
    const std::string file = writer.finish(info);
    std::cout << "captured " << prog.prompts_done << " prompts, " << prog.tokens_done << " tokens, "
              << model->config().numHiddenStates() << " hidden states x " << model->config().hidden_size << " in "
              << prog.seconds << " s (" << prog.tokensPerSecond() << " tok/s; model load " << load_s << " s)\n"
              << "wrote " << file << " and " << out << "/manifest.json\n";
    return 0;
}

Registrar reg{"capture",
              "--model PATH --data FILE --out DIR [--max-prompts N] [--max-tokens T] [--batch-size B] "
              "[--tokenizer FILE] [--chat-template none|auto|qwen3|llama3|llama2]: save per-layer hidden states",
              runCaptureCommand};

}  // namespace
}  // namespace wl::cli
