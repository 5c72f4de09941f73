#pragma once
// The views' plain data as CSV (one table per figure) and JSON (the whole FigureSet, used by
// the figure pack and session files). Parsing throws wl::Error(source, problem).
#include <string>

#include "wave_data.h"

namespace wl {

std::string waveCsv(const WaveData& wave);          // h,filtered,unfiltered,chosen,eagle3,eagle2,segment
std::string ckaCsv(const CkaData& cka);              // square matrix with a header row
std::string surfaceCsv(const SurfaceData& surface);  // h, bin_0..bin_{cols-1}
std::string layerSetsCsv(const std::vector<LayerSetRow>& rows);

std::string figureSetToJson(const FigureSet& figures, int indent = 2);
FigureSet figureSetFromJson(const std::string& json_text, const std::string& source);

}  // namespace wl
