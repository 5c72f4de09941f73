#pragma once
// Flags shared by the draft commands (train, eval, compare): one parser each so the
// commands spell them the same way.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "command.h"
#include "draft/eval_task.h"
#include "draft/training_task.h"
#include "util/error.h"

namespace wl::cli {

inline const std::vector<std::string>& draftTrainFlags() {
    static const std::vector<std::string> flags = {
        "model", "tokenizer", "data", "steps", "batch", "ttt", "lr", "warmup", "weight-decay", "grad-clip",
        "max-new", "max-prompts", "max-prompt-tokens", "draft-vocab", "checkpoint-every", "seed", "device",
        "threads", "sample", "temperature", "cache-dir", "chat-template", "no-bos", "random-lm-head"};
    return flags;
}

inline DraftTrainOptions draftTrainOptionsFromArgs(const Args& args) {
    DraftTrainOptions o;
    o.model_path = args.get("model");
    o.tokenizer_path = args.get("tokenizer", "");
    o.data_path = args.get("data", "");
    o.steps = args.getInt("steps", o.steps);
    o.batch_size = args.getInt("batch", o.batch_size);
    o.ttt_steps = args.getInt("ttt", o.ttt_steps);
    o.learning_rate = args.getDouble("lr", o.learning_rate);
    o.warmup_ratio = args.getDouble("warmup", o.warmup_ratio);
    o.weight_decay = args.getDouble("weight-decay", o.weight_decay);
    o.grad_clip = args.getDouble("grad-clip", o.grad_clip);
    o.max_new_tokens = args.getInt("max-new", o.max_new_tokens);
    o.max_prompts = args.getInt("max-prompts", o.max_prompts);
    o.max_prompt_tokens = args.getInt("max-prompt-tokens", o.max_prompt_tokens);
    o.draft_vocab_size = args.getInt("draft-vocab", o.draft_vocab_size);
    o.checkpoint_every = args.getInt("checkpoint-every", o.checkpoint_every);
    o.seed = static_cast<uint64_t>(args.getInt("seed", 0));
    o.device = args.get("device", o.device);
    o.threads = args.getInt("threads", o.threads);
    o.sample = args.flag("sample");
    o.temperature = args.getDouble("temperature", o.temperature);
    o.cache_dir = args.get("cache-dir", "");
    o.chat_template = args.get("chat-template", o.chat_template);
    o.add_bos = !args.flag("no-bos");
    o.init_lm_head_from_target = !args.flag("random-lm-head");
    if (o.steps <= 0) throw Error("--steps", "must be positive");
    if (o.batch_size <= 0) throw Error("--batch", "must be positive");
    if (o.ttt_steps <= 0) throw Error("--ttt", "must be positive");
    if (!(o.learning_rate > 0)) throw Error("--lr", "must be positive");
    if (o.max_new_tokens <= 0) throw Error("--max-new", "must be positive");
    return o;
}

inline std::string formatTrainProgress(const DraftTrainProgress& p) {
    char line[256];
    std::snprintf(line, sizeof line, "step %lld/%lld  loss %.4f  lr %.2e  %.0f tok/s  acc", (long long)p.step,
                  (long long)p.total_steps, p.loss, p.learning_rate, p.tokens_per_second);
    std::string s = line;
    for (double a : p.step_accuracy) {
        std::snprintf(line, sizeof line, " %.2f", a);
        s += line;
    }
    return s;
}

// Ctrl-C requests a cancel (checked between training steps); the work then checkpoints.
inline std::atomic<bool>& interruptRequested() {
    static std::atomic<bool> flag{false};
    return flag;
}
inline void installInterruptHandler() {
    std::signal(SIGINT, [](int) { interruptRequested().store(true); });
}

}  // namespace wl::cli
