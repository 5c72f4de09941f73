#pragma once
// nlohmann JSON forms of the selection options/results. Enums as toString() strings.
// from_json throws wl::Error("json", ...) on wrong types / unknown names.
#include <nlohmann/json.hpp>

#include "analysis/analysis_json.h"
#include "selection/elsi.h"

namespace wl {

void to_json(nlohmann::json& j, const SelectionOptions& o);
void from_json(const nlohmann::json& j, SelectionOptions& o);
void to_json(nlohmann::json& j, const ScoredSet& s);
void from_json(const nlohmann::json& j, ScoredSet& s);
void to_json(nlohmann::json& j, const BeamStep& s);
void from_json(const nlohmann::json& j, BeamStep& s);
void to_json(nlohmann::json& j, const BaselineSet& b);
void from_json(const nlohmann::json& j, BaselineSet& b);
void to_json(nlohmann::json& j, const SelectionResult& r);
void from_json(const nlohmann::json& j, SelectionResult& r);

}  // namespace wl
