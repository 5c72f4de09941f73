#include "report_adapter.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "analysis/matrix_entropy.h"
#include "selection/baselines.h"

namespace wl {

std::string displayName(EntropyNormalization n) {
    switch (n) {
        case EntropyNormalization::Raw: return "matrix entropy (nats)";
        case EntropyNormalization::LogN: return "matrix entropy / ln N";
        case EntropyNormalization::LogD: return "matrix entropy / ln D";
        case EntropyNormalization::LogMinND: return "matrix entropy / ln min(N, D)";
    }
    return "matrix entropy";
}

std::vector<int> segmentStarts(const std::vector<int>& boundaries, int num_states) {
    std::vector<int> starts;
    for (int b : boundaries)
        if (b > 0 && b < num_states) starts.push_back(b);
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    return starts;
}

WaveData waveFromSnapshot(const AnalysisSnapshot& s, EntropyNormalization display) {
    WaveData w;
    const bool renormalise = s.normalization == EntropyNormalization::Raw;
    const EntropyNormalization shown = renormalise ? display : s.normalization;
    auto convert = [&](const std::vector<double>& curve, int64_t tokens) {
        std::vector<double> out = curve;
        if (renormalise && display != EntropyNormalization::Raw)
            for (double& v : out) v = normalizeEntropy(v, display, std::max<int64_t>(tokens, 2), std::max<int64_t>(s.hidden_size, 2));
        return out;
    };
    w.filtered = convert(s.entropy_filtered, s.tokens_kept);
    w.unfiltered = convert(s.entropy_unfiltered, s.tokens_candidates);
    w.y_title = displayName(shown);
    w.segment_starts = segmentStarts(s.boundaries, static_cast<int>(s.num_states));
    const int n = static_cast<int>(s.num_states) - 1;
    if (n >= 1) {
        w.eagle2 = eagle2DefaultStates(n);
        w.eagle3 = eagle3DefaultStates(n);
    }
    std::ostringstream sub;
    sub << s.prompts_seen << " prompts, " << s.tokens_kept << " tokens kept";
    if (std::abs(s.curve_alpha - 1.0) > 1e-12) sub << ", alpha = " << s.curve_alpha;
    if (!s.finished) sub << " (live)";
    w.subtitle = sub.str();
    return w;
}

CkaData ckaFromSnapshot(const AnalysisSnapshot& s) {
    CkaData c;
    if (s.cka.size() != static_cast<size_t>(s.num_states * s.num_states)) return c;
    c.size = static_cast<int>(s.num_states);
    c.values = s.cka;
    c.segment_starts = segmentStarts(s.boundaries, c.size);
    return c;
}

void applySelection(const SelectionResult& r, WaveData& wave) {
    wave.chosen = r.chosen.states;
    for (const BaselineSet& b : r.baselines) {
        if (b.name == "EAGLE3") wave.eagle3 = b.set.states;
        if (b.name == "EAGLE2") wave.eagle2 = b.set.states;
    }
    if (!r.boundaries.empty() || r.options.method == SelectionMethod::ElsiC)
        wave.segment_starts = segmentStarts(r.boundaries, static_cast<int>(r.num_states));
    wave.highlighted.clear();
}

std::string layersText(const std::vector<int>& layers) {
    std::ostringstream out;
    out << '[';
    for (size_t k = 0; k < layers.size(); ++k) out << (k ? ", " : "") << layers[k];
    out << ']';
    return out.str();
}

std::vector<LayerSetRow> selectionTable(const SelectionResult& r) {
    std::vector<LayerSetRow> rows;
    const std::string method = r.options.method == SelectionMethod::ElsiC ? "ELSI-C" : "ELSI";
    rows.push_back({method + " (chosen)", r.chosen.states, r.chosen.entropy});
    for (const BaselineSet& b : r.baselines) rows.push_back({b.name + " " + b.rule, b.set.states, b.set.entropy});
    return rows;
}

FigureSet figureSetFromReport(const SelectionReport& report, EntropyNormalization display) {
    FigureSet f;
    f.model_name = report.model.name;
    f.wave = waveFromSnapshot(report.analysis, display);
    f.cka = ckaFromSnapshot(report.analysis);
    if (!report.selection.chosen.states.empty() || !report.selection.baselines.empty()) {
        applySelection(report.selection, f.wave);
        f.cka.segment_starts = f.wave.segment_starts;
        f.table = selectionTable(report.selection);
    }
    std::ostringstream sub;
    sub << report.model.name << ", " << f.wave.subtitle;
    f.wave.subtitle = sub.str();
    return f;
}

}  // namespace wl
