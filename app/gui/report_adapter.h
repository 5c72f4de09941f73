#pragma once
// Turns core results (analysis snapshots, selection results, result JSON reports) into the
// widgets' plain FigureSet. Plain C++ core headers only; shared by the window and
// `wavelab-cli figure`.
#include "analysis/layer_analyzer.h"
#include "selection/elsi.h"
#include "selection/selection_report.h"
#include "wave_data.h"

namespace wl {

// Wave from a snapshot. Curves are re-normalised for display with `display` when the
// snapshot is raw (EntropyNormalization::Raw); otherwise shown as computed.
WaveData waveFromSnapshot(const AnalysisSnapshot& snapshot, EntropyNormalization display);
CkaData ckaFromSnapshot(const AnalysisSnapshot& snapshot);
// Segment starts (first state of each segment after the first) from boundaries.
std::vector<int> segmentStarts(const std::vector<int>& boundaries, int num_states);
// Chosen set, baselines (computed from the number of layers when the result has none) into
// the wave, and the table rows.
void applySelection(const SelectionResult& selection, WaveData& wave);
std::vector<LayerSetRow> selectionTable(const SelectionResult& selection);
std::string layersText(const std::vector<int>& layers);

FigureSet figureSetFromReport(const SelectionReport& report, EntropyNormalization display = EntropyNormalization::LogMinND);
std::string displayName(EntropyNormalization n);

}  // namespace wl
