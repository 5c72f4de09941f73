#pragma once
// nlohmann JSON forms of the analysis options and snapshot (field names = member names,
// enums as the strings of toString()). from_json throws wl::Error("json", ...) on a wrong
// type or unknown enum name; missing option fields keep their defaults.
#include <nlohmann/json.hpp>

#include "analysis/analysis_options.h"
#include "analysis/layer_analyzer.h"

namespace wl {

void to_json(nlohmann::json& j, const TokenFilterOptions& o);
void from_json(const nlohmann::json& j, TokenFilterOptions& o);
void to_json(nlohmann::json& j, const BoundaryOptions& o);
void from_json(const nlohmann::json& j, BoundaryOptions& o);
void to_json(nlohmann::json& j, const AnalysisOptions& o);
void from_json(const nlohmann::json& j, AnalysisOptions& o);
void to_json(nlohmann::json& j, const LayerSegment& s);
void from_json(const nlohmann::json& j, LayerSegment& s);
// cka is written as a nested [L][L] array; NaN values as null.
void to_json(nlohmann::json& j, const AnalysisSnapshot& s);
void from_json(const nlohmann::json& j, AnalysisSnapshot& s);

}  // namespace wl
