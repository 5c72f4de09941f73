// wavelab-cli train: trains an EAGLE3 draft head on chosen target layers (HF indices).
#include <chrono>
#include <iostream>

#include "command.h"
#include "draft/draft_config.h"
#include "draft/training_task.h"
#include "draft_args.h"
#include "model/memory_guard.h"
#include "util/error.h"

namespace wl::cli {
namespace {

int runTrain(const Args& args) {
    auto flags = draftTrainFlags();
    flags.insert(flags.end(), {"layers", "out", "resume", "log-every"});
    args.allowOnly(flags);
    DraftTrainOptions o = draftTrainOptionsFromArgs(args);
    o.layers = parseLayerList(args.get("layers"), "--layers");
    o.out_dir = args.get("out");
    o.resume = args.flag("resume");
    const int64_t log_every = std::max<long long>(1, args.getInt("log-every", std::max<int64_t>(1, o.steps / 20)));
    if (!o.cache_dir.empty())
        std::cerr << "on-disk cache " << o.cache_dir << ": up to " << formatByteCount(estimateDraftCacheBytes(o))
                  << " (aux states + target distributions)\n";
    CancelToken cancel;
    installInterruptHandler();
    auto last_gen_print = std::chrono::steady_clock::now();
    auto result = runDraftTraining(o, &cancel, [&](const DraftTrainProgress& p) {
        if (interruptRequested().load()) cancel.cancel();
        if (p.phase == "generating") {
            auto now = std::chrono::steady_clock::now();
            if (p.items_done == p.items_total || now - last_gen_print > std::chrono::seconds(2)) {
                std::cerr << "generating continuations " << p.items_done << "/" << p.items_total << "\n";
                last_gen_print = now;
            }
        } else if (p.phase == "training" && (p.step % log_every == 0 || p.step == p.total_steps || p.step == 1)) {
            std::cerr << formatTrainProgress(p) << "\n";
        }
    });
    std::cout << "trained " << result.steps << " steps";
    if (result.start_step > 0) std::cout << " (resumed at step " << result.start_step << ")";
    std::cout << " on " << result.num_sequences << " sequences in " << result.seconds << " s\n"
              << "final loss " << result.final_loss << ", accuracy per TTT step";
    for (double a : result.final_step_accuracy) std::cout << " " << a;
    std::cout << "\ndraft vocabulary " << result.draft_vocab_size << " tokens covering " << 100.0 * result.draft_vocab_coverage
              << "% of training tokens\nwrote " << result.out_dir << " (config.json, model.safetensors)\n";
    return 0;
}

Registrar reg{"train",
              "--model M --layers 1,3,4 --out DIR [--data F] [--steps S] [--resume] [--batch B] [--ttt K] [--lr X] "
              "[--max-new N] [--checkpoint-every N] [--cache-dir D]: train an EAGLE3 draft on those hidden states",
              runTrain};

}  // namespace
}  // namespace wl::cli
