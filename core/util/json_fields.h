#pragma once
// Small helpers for the nlohmann JSON forms of options and results: optional fields keep
// their defaults, a wrong type names the field.
#include <nlohmann/json.hpp>

#include <string>

#include "util/error.h"

namespace wl::json_fields {

// Reads j[key] into v when present and not null; a type error names the key.
template <typename T>
void readIf(const nlohmann::json& j, const char* key, T& v) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return;
    try {
        v = it->get<T>();
    } catch (const nlohmann::json::exception& e) {
        throw Error("json", std::string("field '") + key + "': " + e.what());
    }
}

inline void requireObject(const nlohmann::json& j, const char* what) {
    if (!j.is_object()) throw Error("json", std::string(what) + " must be an object");
}

}  // namespace wl::json_fields
