#pragma once
// Plain data the WaveLab views draw. No Qt objects, no core/model: the app fills these from
// analysis results (or a result.json) and hands them to the widgets.
//
// Indexing: hidden-state index h = 0..L (the Hugging Face hidden_states[h] convention), so a
// model with L decoder layers has L+1 points on every per-layer curve.
#include <string>
#include <vector>

namespace wl {

struct WaveData {
    std::vector<double> filtered;        // entropy per hidden state, token-entropy filtered (L+1)
    std::vector<double> unfiltered;      // entropy per hidden state, all tokens (L+1, may be empty)
    std::vector<int> chosen;             // layers ELSI/ELSI-C picked
    std::vector<int> eagle2;             // EAGLE2 baseline (top layer)
    std::vector<int> eagle3;             // EAGLE3 baseline [2, L//2, L-3]
    std::vector<int> segment_starts;     // CKA segment boundaries: first index of each segment > 0
    std::vector<int> highlighted;        // beam-search candidate being shown (may be empty)
    std::string y_title = "matrix entropy (normalised)";
    std::string subtitle;                // e.g. "stories260K, alpha = 1, 64 prompts"

    int numPoints() const { return static_cast<int>(filtered.size()); }
};

// Symmetric L+1 x L+1 linear-CKA matrix (row-major), values in [0, 1].
struct CkaData {
    int size = 0;
    std::vector<double> values;
    std::vector<int> segment_starts;     // same meaning as WaveData::segment_starts
    double at(int i, int j) const { return values[static_cast<size_t>(i) * size + j]; }
};

// Entropy surface: rows = hidden states (L+1), cols = token-entropy quantile bins (or prompts).
struct SurfaceData {
    int rows = 0;
    int cols = 0;
    std::vector<double> values;          // row-major rows x cols
    std::string row_title = "hidden state";
    std::string col_title = "token-entropy quantile";
    std::string value_title = "matrix entropy";
    double at(int r, int c) const { return values[static_cast<size_t>(r) * cols + c]; }
};

// One row of the selection table: a candidate layer set and its score.
struct LayerSetRow {
    std::string label;                   // "ELSI-C", "EAGLE3 baseline", "beam step 2 #1"
    std::vector<int> layers;
    double score = 0.0;                  // the objective ELSI maximises (entropy of the set)
};

// Everything one analysis run shows: what the figure pack and the session store.
struct FigureSet {
    std::string model_name;
    WaveData wave;
    CkaData cka;
    SurfaceData surface;
    std::vector<LayerSetRow> table;
};

}  // namespace wl
