// wavelab-cli compare: one draft per layer set, same budget and seed; prints tau per set.
#include <filesystem>
#include <iostream>
#include <sstream>

#include "command.h"
#include "draft/compare_task.h"
#include "draft/draft_config.h"
#include "draft_args.h"
#include "util/error.h"

namespace wl::cli {
namespace {

int runCompare(const Args& args) {
    auto flags = draftTrainFlags();
    flags.insert(flags.end(), {"sets", "result", "out", "k", "eval-max-new", "eval-prompts", "train-prompts", "no-baseline"});
    args.allowOnly(flags);
    DraftTrainOptions t = draftTrainOptionsFromArgs(args);
    if (!args.has("max-prompts")) t.max_prompts = args.getInt("train-prompts", 64);
    const ModelConfig mc = readTargetConfig(t.model_path);
    std::vector<std::string> results;
    if (args.has("result")) {
        std::stringstream ss(args.get("result"));
        for (std::string p; std::getline(ss, p, ',');)
            if (!p.empty()) results.push_back(p);
    }
    const auto sets = resolveLayerSets(args.get("sets", "eagle3,eagle2"), mc.num_layers, results);
    const std::string out_root = args.get("out", "wavelab-compare");
    DraftEvalOptions e;
    e.data_path = t.data_path;
    e.tokenizer_path = t.tokenizer_path;
    e.k = args.getInt("k", e.k);
    e.max_new_tokens = args.getInt("eval-max-new", e.max_new_tokens);
    e.max_prompts = args.getInt("eval-prompts", 16);
    e.prompt_offset = t.max_prompts;   // held-out prompts after the training ones (when the file has them)
    e.max_prompt_tokens = t.max_prompt_tokens;
    e.device = t.device;
    e.threads = t.threads;
    e.chat_template = t.chat_template;
    e.add_bos = t.add_bos;
    e.run_baseline = !args.flag("no-baseline");
    std::cerr << "target " << mc.name << " (" << mc.num_layers << " layers); training " << sets.size()
              << " drafts with identical budgets (" << t.steps << " steps x batch " << t.batch_size << ", seed " << t.seed << ")\n";
    for (const auto& s : sets) std::cerr << "  " << s.name << " = " << formatLayerList(s.layers) << "  (" << s.origin << ")\n";
    CancelToken cancel;
    installInterruptHandler();
    const int64_t log_every = std::max<int64_t>(1, t.steps / 5);
    std::vector<DraftCompareRow> rows;
    try {
        rows = runDraftComparison(t, e, sets, out_root, &cancel, [&](const DraftCompareProgress& p) {
            if (interruptRequested().load()) cancel.cancel();
            if (p.phase == "training" && p.train.phase == "training" &&
                (p.train.step % log_every == 0 || p.train.step == p.train.total_steps))
                std::cerr << "[" << p.set_name << "] " << formatTrainProgress(p.train) << "\n";
        });
    } catch (const Error& err) {
        // Held-out prompts may not exist in a small file: evaluate on the training prompts.
        if (err.problem().find("no usable prompts (after offset") == std::string::npos) throw;
        std::cerr << "wavelab-cli: note: " << err.problem() << "; evaluating on the first prompts instead\n";
        e.prompt_offset = 0;
        rows = runDraftComparison(t, e, sets, out_root, &cancel, {});
    }
    std::cout << formatComparisonTable(rows);
    for (const auto& r : rows)
        std::cout << "# " << r.set.name << ": trained " << r.train.seconds << " s, eval " << r.eval.prompts << " prompts, "
                  << r.eval.rounds << " rounds; draft in " << (std::filesystem::path(out_root) / r.set.name).string() << "\n";
    return 0;
}

Registrar reg{"compare",
              "--model M --sets elsi,elsi-c,eagle3,eagle2 [--result R.json[,R2.json]] [--data F] [--steps S] [--out DIR]: "
              "train one draft per layer set (same budget/seed) and print tau per set",
              runCompare};

}  // namespace
}  // namespace wl::cli
