// wavelab-cli select: capture hidden states, measure the activation wave and CKA, choose the
// EAGLE3 draft layers with ELSI / ELSI-C, write one result JSON.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "command.h"
#include "pipeline/select_pipeline.h"
#include "selection/baselines.h"
#include "util/error.h"

namespace wl::cli {
namespace {

std::string fmt(double v, int precision = 4) {
    if (!std::isfinite(v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", precision, v);
    return buf;
}

std::string setText(const std::vector<int>& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

void printSummary(const SelectionReport& r) {
    const auto& a = r.analysis;
    const auto& sel = r.selection;
    std::cout << "model " << r.model.name << ": " << r.model.num_layers << " layers, hidden " << r.model.hidden_size
              << "; " << a.prompts_seen << " prompts, " << a.tokens_kept << " of " << a.tokens_candidates
              << " tokens kept by the entropy filter";
    if (std::isfinite(a.entropy_threshold_nats)) std::cout << " (>= " << fmt(a.entropy_threshold_nats, 3) << " nats)";
    std::cout << "\n\n  h  layer-output  entropy  unfiltered  CKA(h-1,h)  mark\n";
    std::vector<int> eagle3;
    for (const auto& b : sel.baselines)
        if (b.name == "EAGLE3") eagle3 = b.set.states;
    for (int64_t h = 0; h < a.num_states; ++h) {
        auto has = [&](const std::vector<int>& v) { return std::find(v.begin(), v.end(), h) != v.end(); };
        std::string mark;
        if (has(sel.chosen.states)) mark += " chosen";
        if (has(eagle3)) mark += " eagle3";
        if (has(a.boundaries)) mark += " |boundary";
        const double adj = h > 0 && !a.cka.empty() ? a.cka[(h - 1) * a.num_states + h] : NAN;
        char line[160];
        std::snprintf(line, sizeof line, "%3lld  %12s  %7s  %10s  %10s ", static_cast<long long>(h),
                      h == 0 ? "embeddings" : std::to_string(h - 1).c_str(),
                      fmt(h < (int64_t)a.entropy_filtered.size() ? a.entropy_filtered[h] : NAN).c_str(),
                      fmt(h < (int64_t)a.entropy_unfiltered.size() ? a.entropy_unfiltered[h] : NAN).c_str(),
                      fmt(adj).c_str());
        std::cout << line << mark << "\n";
    }
    std::cout << "\n  set       HF hidden_states     set entropy  score\n";
    auto row = [](const std::string& name, const ScoredSet& s) {
        char line[200];
        std::snprintf(line, sizeof line, "  %-8s  %-19s  %11s  %s\n", name.c_str(), setText(s.states).c_str(),
                      fmt(s.entropy).c_str(), fmt(s.score).c_str());
        std::cout << line;
    };
    row(toString(sel.options.method), sel.chosen);
    for (const auto& b : sel.baselines) row(b.name, b.set);
    for (const auto& w : sel.warnings) std::cerr << "wavelab-cli: warning: " << w << "\n";
}

int runSelect(const Args& args) {
    args.allowOnly({"model", "data", "method", "m", "beam", "out", "alpha", "filter", "threshold", "percentile",
                    "warmup-tokens", "keep-bos", "drop-first", "normalization", "objective", "diversity", "lambda",
                    "boundary-threshold", "max-boundaries", "cka", "cka-batch", "reservoir", "max-prompts",
                    "max-tokens", "batch-size", "device", "dtype", "tokenizer", "include-embedding", "prompt-level",
                    "dataset-level", "no-unfiltered", "chat-template", "seed", "quiet"});
    SelectionRunOptions o;
    const std::string model = args.get("model");
    const std::string out = args.get("out");
    const std::string data = args.get("data", "");
    o.capture.max_prompts = args.getInt("max-prompts", 0);
    o.capture.max_tokens_per_prompt = args.getInt("max-tokens", o.capture.max_tokens_per_prompt);
    o.capture.batch_size = args.getInt("batch-size", o.capture.batch_size);
    o.capture.chat_template = args.get("chat-template", o.capture.chat_template);
    o.capture.keep_final_normed = false;  // the analysis reads states[h] only
    o.device = args.get("device", o.device);
    o.dtype = args.get("dtype", o.dtype);
    o.tokenizer_path = args.get("tokenizer", "");

    auto& an = o.analysis;
    an.alpha = args.getDouble("alpha", an.alpha);
    an.filter.mode = parseTokenFilterMode(args.get("filter", toString(an.filter.mode)), "--filter");
    an.filter.threshold_nats = args.getDouble("threshold", an.filter.threshold_nats);
    an.filter.percentile = args.getDouble("percentile", an.filter.percentile);
    an.filter.warmup_tokens = args.getInt("warmup-tokens", an.filter.warmup_tokens);
    an.filter.drop_bos = !args.flag("keep-bos");
    an.filter.drop_first = args.getInt("drop-first", an.filter.drop_first);
    an.normalization = parseEntropyNormalization(args.get("normalization", toString(an.normalization)), "--normalization");
    an.cka = parseCkaEstimator(args.get("cka", toString(an.cka)), "--cka");
    an.cka_batch_tokens = args.getInt("cka-batch", an.cka_batch_tokens);
    an.reservoir_tokens = args.getInt("reservoir", an.reservoir_tokens);
    an.prompt_level = args.flag("prompt-level");
    an.dataset_level = args.flag("dataset-level");
    an.unfiltered_curve = !args.flag("no-unfiltered");
    an.seed = static_cast<uint64_t>(args.getInt("seed", static_cast<long long>(an.seed)));
    an.boundaries.threshold = args.getDouble("boundary-threshold", an.boundaries.threshold);
    an.boundaries.max_boundaries = static_cast<int>(args.getInt("max-boundaries", an.boundaries.max_boundaries));

    auto& sel = o.selection;
    sel.method = parseSelectionMethod(args.get("method", "elsi"), "--method");
    sel.m = static_cast<int>(args.getInt("m", sel.m));
    sel.beam_width = static_cast<int>(args.getInt("beam", sel.beam_width));
    sel.objective = parseSetObjective(args.get("objective", toString(sel.objective)), "--objective");
    sel.diversity = parseDiversityRule(args.get("diversity", toString(sel.diversity)), "--diversity");
    sel.penalty_lambda = args.getDouble("lambda", sel.penalty_lambda);
    sel.include_embedding = args.flag("include-embedding");
    sel.boundaries = an.boundaries;
    if (sel.m < 1 || sel.m > 8) throw Error("--m", "must be in 1..8");
    if (sel.beam_width < 1) throw Error("--beam", "must be >= 1");
    if (!(an.alpha > 0)) throw Error("--alpha", "must be > 0");

    const bool quiet = args.flag("quiet");
    int64_t last_printed = -1;
    auto progress = [&](const SelectionRunProgress& p) {
        if (quiet) return;
        if (p.stage == "capture") {
            if (p.capture.prompts_done == last_printed) return;
            last_printed = p.capture.prompts_done;
            std::cerr << "\rcapture " << p.capture.prompts_done << "/" << p.capture.prompts_total << " prompts, "
                      << p.capture.tokens_done << " tokens" << std::flush;
        } else if (p.stage == "analysis") {
            std::cerr << "\nanalysis: entropy curves and CKA\n";
        } else if (p.beam_step) {
            std::cerr << "beam step " << p.beam_step->step << ": " << p.beam_step->candidates.size()
                      << " sets scored, best " << setText(p.beam_step->kept.front().states) << "\n";
        }
    };
    SelectionReport report = runSelection(model, data, o, progress);
    saveSelectionReport(report, out);
    printSummary(report);
    std::cout << "\nwrote " << out << "\n";
    return 0;
}

Registrar reg{"select",
              "--model PATH [--data FILE] --method elsi|elsi-c --m 3 --beam 8 --out result.json [--alpha 1] "
              "[--filter none|threshold|percentile] [--max-prompts N] [--max-tokens T]: choose EAGLE3 layers",
              runSelect};

}  // namespace
}  // namespace wl::cli
