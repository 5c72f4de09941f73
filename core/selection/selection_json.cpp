#include "selection/selection_json.h"

#include "util/error.h"
#include "util/json_fields.h"

namespace wl {

namespace {
using nlohmann::json;

using json_fields::readIf;
using json_fields::requireObject;
}  // namespace

void to_json(json& j, const SelectionOptions& o) {
    j = json{{"method", toString(o.method)},
             {"m", o.m},
             {"beam_width", o.beam_width},
             {"objective", toString(o.objective)},
             {"include_embedding", o.include_embedding},
             {"candidates", o.candidates},
             {"diversity", toString(o.diversity)},
             {"penalty_lambda", o.penalty_lambda},
             {"boundaries", o.boundaries}};
}

void from_json(const json& j, SelectionOptions& o) {
    requireObject(j, "selection options");
    std::string method = toString(o.method), objective = toString(o.objective), diversity = toString(o.diversity);
    readIf(j, "method", method);
    readIf(j, "objective", objective);
    readIf(j, "diversity", diversity);
    o.method = parseSelectionMethod(method, "json");
    o.objective = parseSetObjective(objective, "json");
    o.diversity = parseDiversityRule(diversity, "json");
    readIf(j, "m", o.m);
    readIf(j, "beam_width", o.beam_width);
    readIf(j, "include_embedding", o.include_embedding);
    readIf(j, "candidates", o.candidates);
    readIf(j, "penalty_lambda", o.penalty_lambda);
    if (j.contains("boundaries")) from_json(j.at("boundaries"), o.boundaries);
}

void to_json(json& j, const ScoredSet& s) {
    j = json{{"states", s.states}, {"entropy", s.entropy}, {"score", s.score}};
}

void from_json(const json& j, ScoredSet& s) {
    requireObject(j, "scored set");
    readIf(j, "states", s.states);
    readIf(j, "entropy", s.entropy);
    readIf(j, "score", s.score);
}

void to_json(json& j, const BeamStep& s) {
    j = json{{"step", s.step}, {"candidates", s.candidates}, {"kept", s.kept}};
}

void from_json(const json& j, BeamStep& s) {
    requireObject(j, "beam step");
    readIf(j, "step", s.step);
    readIf(j, "candidates", s.candidates);
    readIf(j, "kept", s.kept);
}

void to_json(json& j, const BaselineSet& b) {
    j = json{{"name", b.name}, {"rule", b.rule}, {"states", b.set.states}, {"entropy", b.set.entropy},
             {"score", b.set.score}};
}

void from_json(const json& j, BaselineSet& b) {
    requireObject(j, "baseline");
    readIf(j, "name", b.name);
    readIf(j, "rule", b.rule);
    readIf(j, "states", b.set.states);
    readIf(j, "entropy", b.set.entropy);
    readIf(j, "score", b.set.score);
}

void to_json(json& j, const SelectionResult& r) {
    j = json{{"options", r.options},   {"num_states", r.num_states}, {"candidates", r.candidates},
             {"chosen", r.chosen},     {"trace", r.trace},           {"baselines", r.baselines},
             {"boundaries", r.boundaries}, {"segments", r.segments}, {"warnings", r.warnings},
             {"seconds", r.seconds}};
}

void from_json(const json& j, SelectionResult& r) {
    requireObject(j, "selection");
    if (j.contains("options")) from_json(j.at("options"), r.options);
    readIf(j, "num_states", r.num_states);
    readIf(j, "candidates", r.candidates);
    if (!j.contains("chosen")) throw Error("json", "selection has no 'chosen' set");
    from_json(j.at("chosen"), r.chosen);
    readIf(j, "trace", r.trace);
    readIf(j, "baselines", r.baselines);
    readIf(j, "boundaries", r.boundaries);
    readIf(j, "segments", r.segments);
    readIf(j, "warnings", r.warnings);
    readIf(j, "seconds", r.seconds);
}

}  // namespace wl
