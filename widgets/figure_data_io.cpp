#include "figure_data_io.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "util/error.h"

namespace wl {

namespace {

using nlohmann::json;

std::string number(double v) {
    if (!std::isfinite(v)) return "nan";
    std::ostringstream out;
    out << std::setprecision(10) << v;
    return out.str();
}

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

int segmentOf(const std::vector<int>& starts, int h) {
    int seg = 0;
    for (int s : starts)
        if (s > 0 && h >= s) ++seg;
    return seg;
}

// JSON numbers cannot be NaN: store null and read it back as NaN.
json numbers(const std::vector<double>& v) {
    json a = json::array();
    for (double x : v) a.push_back(std::isfinite(x) ? json(x) : json(nullptr));
    return a;
}

std::vector<double> readNumbers(const json& j, const std::string& source, const char* what) {
    if (!j.is_array()) throw Error(source, std::string(what) + " must be an array of numbers");
    std::vector<double> out;
    out.reserve(j.size());
    for (const json& x : j) {
        if (x.is_null()) out.push_back(std::nan(""));
        else if (x.is_number()) out.push_back(x.get<double>());
        else throw Error(source, std::string(what) + " must contain only numbers");
    }
    return out;
}

std::vector<int> readInts(const json& parent, const char* key, const std::string& source) {
    if (!parent.contains(key)) return {};
    const json& j = parent.at(key);
    if (!j.is_array()) throw Error(source, std::string(key) + " must be an array of integers");
    std::vector<int> out;
    for (const json& x : j) {
        if (!x.is_number_integer()) throw Error(source, std::string(key) + " must contain only integers");
        out.push_back(x.get<int>());
    }
    return out;
}

std::string readString(const json& parent, const char* key, const std::string& fallback = {}) {
    if (!parent.contains(key) || !parent.at(key).is_string()) return fallback;
    return parent.at(key).get<std::string>();
}

}  // namespace

std::string waveCsv(const WaveData& wave) {
    std::ostringstream out;
    out << "hidden_state,entropy_filtered,entropy_all_tokens,chosen,eagle3,eagle2,cka_segment\n";
    const size_t n = std::max(wave.filtered.size(), wave.unfiltered.size());
    for (size_t h = 0; h < n; ++h) {
        const int hi = static_cast<int>(h);
        out << h << ',' << (h < wave.filtered.size() ? number(wave.filtered[h]) : "") << ','
            << (h < wave.unfiltered.size() ? number(wave.unfiltered[h]) : "") << ',' << contains(wave.chosen, hi) << ','
            << contains(wave.eagle3, hi) << ',' << contains(wave.eagle2, hi) << ',' << segmentOf(wave.segment_starts, hi)
            << '\n';
    }
    return out.str();
}

std::string ckaCsv(const CkaData& cka) {
    std::ostringstream out;
    out << "h";
    for (int j = 0; j < cka.size; ++j) out << ",h" << j;
    out << '\n';
    for (int i = 0; i < cka.size; ++i) {
        out << 'h' << i;
        for (int j = 0; j < cka.size; ++j) out << ',' << number(cka.at(i, j));
        out << '\n';
    }
    return out.str();
}

std::string surfaceCsv(const SurfaceData& s) {
    std::ostringstream out;
    out << "hidden_state";
    for (int c = 0; c < s.cols; ++c) out << ",bin_" << c;
    out << '\n';
    for (int r = 0; r < s.rows; ++r) {
        out << r;
        for (int c = 0; c < s.cols; ++c) out << ',' << number(s.at(r, c));
        out << '\n';
    }
    return out.str();
}

std::string layerSetsCsv(const std::vector<LayerSetRow>& rows) {
    std::ostringstream out;
    out << "label,layers,score\n";
    for (const LayerSetRow& r : rows) {
        std::string label = r.label;
        std::replace(label.begin(), label.end(), ',', ';');
        out << label << ",\"";
        for (size_t k = 0; k < r.layers.size(); ++k) out << (k ? " " : "") << r.layers[k];
        out << "\"," << number(r.score) << '\n';
    }
    return out.str();
}

std::string figureSetToJson(const FigureSet& f, int indent) {
    json j;
    j["model_name"] = f.model_name;
    j["wave"] = {{"filtered", numbers(f.wave.filtered)},
                 {"unfiltered", numbers(f.wave.unfiltered)},
                 {"chosen", f.wave.chosen},
                 {"eagle2", f.wave.eagle2},
                 {"eagle3", f.wave.eagle3},
                 {"segment_starts", f.wave.segment_starts},
                 {"y_title", f.wave.y_title},
                 {"subtitle", f.wave.subtitle}};
    j["cka"] = {{"size", f.cka.size}, {"values", numbers(f.cka.values)}, {"segment_starts", f.cka.segment_starts}};
    j["surface"] = {{"rows", f.surface.rows},
                    {"cols", f.surface.cols},
                    {"values", numbers(f.surface.values)},
                    {"row_title", f.surface.row_title},
                    {"col_title", f.surface.col_title},
                    {"value_title", f.surface.value_title}};
    json table = json::array();
    for (const LayerSetRow& r : f.table)
        table.push_back({{"label", r.label}, {"layers", r.layers}, {"score", std::isfinite(r.score) ? json(r.score) : json(nullptr)}});
    j["table"] = table;
    return j.dump(indent);
}

FigureSet figureSetFromJson(const std::string& text, const std::string& source) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        throw Error(source, std::string("malformed JSON: ") + e.what());
    }
    if (!j.is_object()) throw Error(source, "expected a JSON object with wave/cka/surface");
    FigureSet f;
    try {
        f.model_name = readString(j, "model_name");
        if (j.contains("wave")) {
            const json& w = j.at("wave");
            if (w.contains("filtered")) f.wave.filtered = readNumbers(w.at("filtered"), source, "wave.filtered");
            if (w.contains("unfiltered")) f.wave.unfiltered = readNumbers(w.at("unfiltered"), source, "wave.unfiltered");
            f.wave.chosen = readInts(w, "chosen", source);
            f.wave.eagle2 = readInts(w, "eagle2", source);
            f.wave.eagle3 = readInts(w, "eagle3", source);
            f.wave.segment_starts = readInts(w, "segment_starts", source);
            f.wave.y_title = readString(w, "y_title", f.wave.y_title);
            f.wave.subtitle = readString(w, "subtitle");
        }
        if (j.contains("cka")) {
            const json& c = j.at("cka");
            f.cka.size = c.value("size", 0);
            if (c.contains("values")) f.cka.values = readNumbers(c.at("values"), source, "cka.values");
            f.cka.segment_starts = readInts(c, "segment_starts", source);
            if (f.cka.size < 0 || f.cka.values.size() != static_cast<size_t>(f.cka.size) * f.cka.size)
                throw Error(source, "cka.values must hold size x size numbers");
        }
        if (j.contains("surface")) {
            const json& s = j.at("surface");
            f.surface.rows = s.value("rows", 0);
            f.surface.cols = s.value("cols", 0);
            if (s.contains("values")) f.surface.values = readNumbers(s.at("values"), source, "surface.values");
            if (f.surface.rows < 0 || f.surface.cols < 0 ||
                f.surface.values.size() != static_cast<size_t>(f.surface.rows) * f.surface.cols)
                throw Error(source, "surface.values must hold rows x cols numbers");
            f.surface.row_title = readString(s, "row_title", f.surface.row_title);
            f.surface.col_title = readString(s, "col_title", f.surface.col_title);
            f.surface.value_title = readString(s, "value_title", f.surface.value_title);
        }
        if (j.contains("table")) {
            if (!j.at("table").is_array()) throw Error(source, "table must be an array");
            for (const json& r : j.at("table")) {
                LayerSetRow row;
                row.label = readString(r, "label");
                row.layers = readInts(r, "layers", source);
                row.score = r.contains("score") && r.at("score").is_number() ? r.at("score").get<double>() : std::nan("");
                f.table.push_back(row);
            }
        }
    } catch (const json::exception& e) {
        throw Error(source, std::string("bad figure data: ") + e.what());
    }
    return f;
}

}  // namespace wl
