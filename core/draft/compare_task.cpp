#include "draft/compare_task.h"

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "draft/draft_config.h"
#include "selection/baselines.h"
#include "selection/selection_report.h"
#include "util/error.h"

namespace wl {

namespace {
std::string trim(const std::string& s) {
    auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}
std::vector<int64_t> widen(const std::vector<int>& v) { return {v.begin(), v.end()}; }
}  // namespace

std::vector<NamedLayerSet> resolveLayerSets(const std::string& spec, int64_t num_decoder_layers,
                                            const std::vector<std::string>& result_paths) {
    std::vector<NamedLayerSet> sets;
    // Selection results by method name.
    std::vector<std::pair<std::string, SelectionReport>> reports;
    for (const auto& path : result_paths) {
        auto r = loadSelectionReport(path);
        if (r.model.num_layers > 0 && r.model.num_layers != num_decoder_layers)
            throw Error(path, "selection was made for a " + std::to_string(r.model.num_layers) + "-layer model, the target has " +
                                  std::to_string(num_decoder_layers));
        reports.emplace_back(path, std::move(r));
    }
    // Entries are separated by ';' when any explicit "name=..." is present, else by ','.
    const bool explicit_sets = spec.find('=') != std::string::npos;
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, explicit_sets ? ';' : ',')) {
        item = trim(item);
        if (item.empty()) continue;
        NamedLayerSet set;
        const auto eq = item.find('=');
        if (eq != std::string::npos) {
            set.name = trim(item.substr(0, eq));
            set.layers = parseLayerList(item.substr(eq + 1), "--sets " + set.name);
            set.origin = "command line";
        } else {
            set.name = item;
            if (item == "eagle3") {
                set.layers = widen(eagle3DefaultStates(static_cast<int>(num_decoder_layers)));
                set.origin = "EAGLE3 default [2, N//2, N-3]";
            } else if (item == "eagle2") {
                set.layers = widen(eagle2DefaultStates(static_cast<int>(num_decoder_layers)));
                set.origin = "EAGLE2 [N-1] (top layer output)";
            } else if (item == "elsi" || item == "elsi-c") {
                for (const auto& [path, r] : reports)
                    if (toString(r.selection.options.method) == item) {
                        set.layers = widen(r.selection.chosen.states);
                        set.origin = path;
                    }
                if (set.layers.empty())
                    throw Error("--sets", "'" + item + "' needs a selection result: pass --result FILE from `wavelab-cli select --method " +
                                              item + "`, or give the set explicitly (" + item + "=1,3,4)");
            } else {
                throw Error("--sets", "unknown set '" + item + "' (elsi, elsi-c, eagle3, eagle2, or name=1,3,4)");
            }
        }
        for (const auto& s : sets)
            if (s.name == set.name) throw Error("--sets", "set '" + set.name + "' is given twice");
        if (set.name.empty() || set.name.find_first_of("/\\ ") != std::string::npos)
            throw Error("--sets", "set name '" + set.name + "' must be a plain word (it names the output directory)");
        for (int64_t h : set.layers)
            if (h < 0 || h > num_decoder_layers)
                throw Error("--sets", "set '" + set.name + "' has layer " + std::to_string(h) + " outside 0.." +
                                          std::to_string(num_decoder_layers));
        sets.push_back(std::move(set));
    }
    if (sets.empty()) throw Error("--sets", "no layer sets given");
    return sets;
}

std::vector<DraftCompareRow> runDraftComparison(const DraftTrainOptions& train, const DraftEvalOptions& eval,
                                                const std::vector<NamedLayerSet>& sets, const std::string& out_root,
                                                CancelToken* cancel,
                                                const std::function<void(const DraftCompareProgress&)>& progress) {
    std::vector<DraftCompareRow> rows;
    for (size_t i = 0; i < sets.size(); ++i) {
        DraftCompareProgress p;
        p.set_index = static_cast<int64_t>(i);
        p.num_sets = static_cast<int64_t>(sets.size());
        p.set_name = sets[i].name;
        DraftTrainOptions t = train;
        t.layers = sets[i].layers;
        t.out_dir = (std::filesystem::path(out_root) / sets[i].name).string();
        DraftCompareRow row;
        row.set = sets[i];
        row.train = runDraftTraining(t, cancel, [&](const DraftTrainProgress& tp) {
            p.phase = "training";
            p.train = tp;
            if (progress) progress(p);
        });
        DraftEvalOptions e = eval;
        e.model_path = train.model_path;
        e.draft_dir = t.out_dir;
        row.eval = runDraftEval(e, cancel, [&](int64_t done, int64_t total) {
            p.phase = "evaluating";
            p.eval_done = done;
            p.eval_total = total;
            if (progress) progress(p);
        });
        rows.push_back(std::move(row));
    }
    return rows;
}

std::string formatComparisonTable(const std::vector<DraftCompareRow>& rows) {
    std::ostringstream out;
    char line[512];
    std::snprintf(line, sizeof line, "%-10s %-12s %9s %7s %7s  %-28s %8s %9s\n", "set", "layers(HF)", "loss", "acc@1", "tau",
                  "acceptance per position", "speedup", "lossless");
    out << line;
    for (const auto& r : rows) {
        std::string acc;
        for (double a : r.eval.acceptance) {
            char b[16];
            std::snprintf(b, sizeof b, "%s%.2f", acc.empty() ? "" : " ", a);
            acc += b;
        }
        const double acc1 = r.train.final_step_accuracy.empty() ? 0.0 : r.train.final_step_accuracy[0];
        std::snprintf(line, sizeof line, "%-10s %-12s %9.4f %7.3f %7.3f  %-28s %7.2fx %9s\n", r.set.name.c_str(),
                      formatLayerList(r.set.layers).c_str(), r.train.final_loss, acc1, r.eval.tau, acc.c_str(), r.eval.speedup,
                      !r.eval.lossless_checked ? "-" : (r.eval.lossless_mismatches == 0 ? "yes" : "NO"));
        out << line;
    }
    return out.str();
}

}  // namespace wl
