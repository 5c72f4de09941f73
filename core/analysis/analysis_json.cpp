#include "analysis/analysis_json.h"

#include <cmath>
#include <limits>

#include "util/error.h"
#include "util/json_fields.h"

namespace wl {

namespace {

using nlohmann::json;

using json_fields::readIf;

json numberOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double numberFrom(const json& j) {
    if (j.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!j.is_number()) throw Error("json", "expected a number or null");
    return j.get<double>();
}
json vectorWithNulls(const std::vector<double>& v) {
    json a = json::array();
    for (double x : v) a.push_back(numberOrNull(x));
    return a;
}
std::vector<double> vectorFrom(const json& j, const char* key) {
    std::vector<double> out;
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return out;
    if (!it->is_array()) throw Error("json", std::string("field '") + key + "' must be an array");
    for (const auto& x : *it) out.push_back(numberFrom(x));
    return out;
}

}  // namespace

void to_json(json& j, const TokenFilterOptions& o) {
    j = json{{"mode", toString(o.mode)},           {"threshold_nats", o.threshold_nats},
             {"percentile", o.percentile},         {"warmup_tokens", o.warmup_tokens},
             {"drop_bos", o.drop_bos},             {"drop_first", o.drop_first}};
}

void from_json(const json& j, TokenFilterOptions& o) {
    if (!j.is_object()) throw Error("json", "token filter options must be an object");
    std::string mode = toString(o.mode);
    readIf(j, "mode", mode);
    o.mode = parseTokenFilterMode(mode, "json");
    readIf(j, "threshold_nats", o.threshold_nats);
    readIf(j, "percentile", o.percentile);
    readIf(j, "warmup_tokens", o.warmup_tokens);
    readIf(j, "drop_bos", o.drop_bos);
    readIf(j, "drop_first", o.drop_first);
}

void to_json(json& j, const BoundaryOptions& o) {
    j = json{{"threshold", o.threshold}, {"max_boundaries", o.max_boundaries},
             {"min_segment_length", o.min_segment_length}};
}

void from_json(const json& j, BoundaryOptions& o) {
    if (!j.is_object()) throw Error("json", "boundary options must be an object");
    readIf(j, "threshold", o.threshold);
    readIf(j, "max_boundaries", o.max_boundaries);
    readIf(j, "min_segment_length", o.min_segment_length);
}

void to_json(json& j, const AnalysisOptions& o) {
    j = json{{"filter", o.filter},
             {"alpha", o.alpha},
             {"normalization", toString(o.normalization)},
             {"token_level", o.token_level},
             {"prompt_level", o.prompt_level},
             {"dataset_level", o.dataset_level},
             {"unfiltered_curve", o.unfiltered_curve},
             {"cka", toString(o.cka)},
             {"cka_batch_tokens", o.cka_batch_tokens},
             {"reservoir_tokens", o.reservoir_tokens},
             {"seed", o.seed},
             {"live_eig_max_dim", o.live_eig_max_dim},
             {"boundaries", o.boundaries}};
}

void from_json(const json& j, AnalysisOptions& o) {
    if (!j.is_object()) throw Error("json", "analysis options must be an object");
    if (j.contains("filter")) from_json(j.at("filter"), o.filter);
    readIf(j, "alpha", o.alpha);
    std::string norm = toString(o.normalization), cka = toString(o.cka);
    readIf(j, "normalization", norm);
    readIf(j, "cka", cka);
    o.normalization = parseEntropyNormalization(norm, "json");
    o.cka = parseCkaEstimator(cka, "json");
    readIf(j, "token_level", o.token_level);
    readIf(j, "prompt_level", o.prompt_level);
    readIf(j, "dataset_level", o.dataset_level);
    readIf(j, "unfiltered_curve", o.unfiltered_curve);
    readIf(j, "cka_batch_tokens", o.cka_batch_tokens);
    readIf(j, "reservoir_tokens", o.reservoir_tokens);
    readIf(j, "seed", o.seed);
    readIf(j, "live_eig_max_dim", o.live_eig_max_dim);
    if (j.contains("boundaries")) from_json(j.at("boundaries"), o.boundaries);
}

void to_json(json& j, const LayerSegment& s) { j = json{{"first", s.first}, {"last", s.last}}; }

void from_json(const json& j, LayerSegment& s) {
    if (!j.is_object()) throw Error("json", "segment must be an object");
    readIf(j, "first", s.first);
    readIf(j, "last", s.last);
}

void to_json(json& j, const AnalysisSnapshot& s) {
    json cka = json::array();
    for (int64_t a = 0; a < s.num_states && !s.cka.empty(); ++a) {
        json row = json::array();
        for (int64_t b = 0; b < s.num_states; ++b) row.push_back(numberOrNull(s.cka[a * s.num_states + b]));
        cka.push_back(row);
    }
    j = json{{"num_states", s.num_states},
             {"hidden_size", s.hidden_size},
             {"prompts_seen", s.prompts_seen},
             {"tokens_seen", s.tokens_seen},
             {"tokens_candidates", s.tokens_candidates},
             {"tokens_kept", s.tokens_kept},
             {"tokens_pending", s.tokens_pending},
             {"entropy_threshold_nats", numberOrNull(s.entropy_threshold_nats)},
             {"threshold_frozen", s.threshold_frozen},
             {"entropy_percentile_all", numberOrNull(s.entropy_percentile_all)},
             {"mean_token_entropy", numberOrNull(s.mean_token_entropy)},
             {"curve_alpha", s.curve_alpha},
             {"normalization", toString(s.normalization)},
             {"entropy_filtered", vectorWithNulls(s.entropy_filtered)},
             {"entropy_unfiltered", vectorWithNulls(s.entropy_unfiltered)},
             {"entropy_prompt_level", vectorWithNulls(s.entropy_prompt_level)},
             {"entropy_dataset_level", vectorWithNulls(s.entropy_dataset_level)},
             {"cka", cka},
             {"cka_batches", s.cka_batches},
             {"cka_estimator", toString(s.cka_estimator)},
             {"boundaries", s.boundaries},
             {"segments", s.segments},
             {"token_entropy_edges", s.token_entropy_edges},
             {"token_entropy_counts", s.token_entropy_counts},
             {"finished", s.finished},
             {"seconds_in_add", s.seconds_in_add}};
}

void from_json(const json& j, AnalysisSnapshot& s) {
    if (!j.is_object()) throw Error("json", "analysis must be an object");
    readIf(j, "num_states", s.num_states);
    readIf(j, "hidden_size", s.hidden_size);
    readIf(j, "prompts_seen", s.prompts_seen);
    readIf(j, "tokens_seen", s.tokens_seen);
    readIf(j, "tokens_candidates", s.tokens_candidates);
    readIf(j, "tokens_kept", s.tokens_kept);
    readIf(j, "tokens_pending", s.tokens_pending);
    if (j.contains("entropy_threshold_nats")) s.entropy_threshold_nats = numberFrom(j.at("entropy_threshold_nats"));
    readIf(j, "threshold_frozen", s.threshold_frozen);
    if (j.contains("entropy_percentile_all")) s.entropy_percentile_all = numberFrom(j.at("entropy_percentile_all"));
    if (j.contains("mean_token_entropy")) s.mean_token_entropy = numberFrom(j.at("mean_token_entropy"));
    readIf(j, "curve_alpha", s.curve_alpha);
    std::string norm = toString(s.normalization), est = toString(s.cka_estimator);
    readIf(j, "normalization", norm);
    readIf(j, "cka_estimator", est);
    s.normalization = parseEntropyNormalization(norm, "json");
    s.cka_estimator = parseCkaEstimator(est, "json");
    s.entropy_filtered = vectorFrom(j, "entropy_filtered");
    s.entropy_unfiltered = vectorFrom(j, "entropy_unfiltered");
    s.entropy_prompt_level = vectorFrom(j, "entropy_prompt_level");
    s.entropy_dataset_level = vectorFrom(j, "entropy_dataset_level");
    s.cka.clear();
    if (j.contains("cka") && !j.at("cka").is_null()) {
        const auto& rows = j.at("cka");
        if (!rows.is_array()) throw Error("json", "field 'cka' must be an array of rows");
        if (!rows.empty() && static_cast<int64_t>(rows.size()) != s.num_states)
            throw Error("json", "field 'cka' has " + std::to_string(rows.size()) + " rows for " +
                                    std::to_string(s.num_states) + " states");
        for (const auto& row : rows) {
            if (!row.is_array() || static_cast<int64_t>(row.size()) != s.num_states)
                throw Error("json", "field 'cka' must be a square matrix");
            for (const auto& x : row) s.cka.push_back(numberFrom(x));
        }
    }
    readIf(j, "cka_batches", s.cka_batches);
    readIf(j, "boundaries", s.boundaries);
    readIf(j, "segments", s.segments);
    readIf(j, "token_entropy_edges", s.token_entropy_edges);
    readIf(j, "token_entropy_counts", s.token_entropy_counts);
    readIf(j, "finished", s.finished);
    readIf(j, "seconds_in_add", s.seconds_in_add);
    for (const auto* v : {&s.entropy_filtered, &s.entropy_unfiltered, &s.entropy_prompt_level, &s.entropy_dataset_level})
        if (!v->empty() && static_cast<int64_t>(v->size()) != s.num_states)
            throw Error("json", "an entropy curve's length differs from num_states");
}

}  // namespace wl
