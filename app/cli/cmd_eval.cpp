// wavelab-cli eval: speculative decoding with a trained draft; prints tau (block efficiency).
#include <cstdio>
#include <iostream>

#include "command.h"
#include "draft/eval_task.h"
#include "draft_args.h"
#include "util/error.h"

namespace wl::cli {
namespace {

int runEval(const Args& args) {
    args.allowOnly({"model", "draft", "data", "tokenizer", "k", "max-new", "max-prompts", "offset", "max-prompt-tokens",
                    "device", "threads", "no-baseline", "chat-template", "no-bos", "tree-topk"});
    DraftEvalOptions o;
    o.model_path = args.get("model");
    o.draft_dir = args.get("draft");
    o.data_path = args.get("data", "");
    o.tokenizer_path = args.get("tokenizer", "");
    o.k = args.getInt("k", o.k);
    o.tree_top_k = args.getInt("tree-topk", o.tree_top_k);
    o.max_new_tokens = args.getInt("max-new", o.max_new_tokens);
    o.max_prompts = args.getInt("max-prompts", o.max_prompts);
    o.prompt_offset = args.getInt("offset", o.prompt_offset);
    o.max_prompt_tokens = args.getInt("max-prompt-tokens", o.max_prompt_tokens);
    o.device = args.get("device", o.device);
    o.threads = args.getInt("threads", o.threads);
    o.run_baseline = !args.flag("no-baseline");
    o.chat_template = args.get("chat-template", o.chat_template);
    o.add_bos = !args.flag("no-bos");
    if (o.k < 1) throw Error("--k", "must be >= 1");
    if (o.tree_top_k < 1) throw Error("--tree-topk", "must be >= 1");
    if (o.max_new_tokens < 1) throw Error("--max-new", "must be >= 1");
    CancelToken cancel;
    installInterruptHandler();
    auto r = runDraftEval(o, &cancel, [&](int64_t, int64_t) {
        if (interruptRequested().load()) cancel.cancel();
    });
    if (r.tree_top_k > 1)
        std::printf("prompts %lld, tree depth %lld x top-%lld, verify rounds %lld, tokens from rounds %lld\n",
                    (long long)r.prompts, (long long)r.k, (long long)r.tree_top_k, (long long)r.rounds,
                    (long long)r.round_tokens);
    else
        std::printf("prompts %lld, k %lld, verify rounds %lld, tokens from rounds %lld\n", (long long)r.prompts,
                    (long long)r.k, (long long)r.rounds, (long long)r.round_tokens);
    std::printf("tokens verified per round %.2f\n", r.verify_tokens_per_round);
    std::printf("tau %.3f\n", r.tau);
    std::printf("acceptance per position:");
    for (double a : r.acceptance) std::printf(" %.3f", a);
    std::printf("\n");
    if (r.lossless_checked) {
        std::printf("speculative %.3f s, plain greedy %.3f s, speedup %.2fx\n", r.spec_seconds, r.baseline_seconds, r.speedup);
        std::printf("lossless: %s\n", r.lossless_mismatches == 0
                                          ? "yes (identical to greedy decoding)"
                                          : ("NO: " + std::to_string(r.lossless_mismatches) + " prompts differ").c_str());
    } else {
        std::printf("speculative %.3f s\n", r.spec_seconds);
    }
    return r.lossless_mismatches == 0 ? 0 : 3;
}

Registrar reg{"eval",
              "--model M --draft DIR [--data F] [--k 4] [--tree-topk 1] [--max-new 64] [--max-prompts 16] [--offset N]: "
              "speculative decoding with a draft (a chain of k tokens, or a tree of depth k keeping top-k nodes "
              "per level); prints tau and speedup",
              runEval};

}  // namespace
}  // namespace wl::cli
