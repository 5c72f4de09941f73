#include "data/calibration_set.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <unistd.h>

#include "tokenizer/utf8.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace wl {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Line {
    std::string_view text;
    size_t number;  // 1-based
};

std::vector<Line> splitLines(std::string_view content) {
    std::vector<Line> lines;
    size_t start = 0, number = 1;
    while (start < content.size()) {
        size_t end = content.find('\n', start);
        if (end == std::string_view::npos) end = content.size();
        std::string_view line = content.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        lines.push_back({line, number++});
        start = end + 1;
    }
    return lines;
}

bool isBlank(std::string_view s) { return s.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos; }

void checkUtf8(const std::string& path, std::string_view content) {
    const size_t bad = utf8::firstInvalid(content);
    if (bad == std::string_view::npos) return;
    size_t line = 1;
    for (size_t i = 0; i < bad; ++i) line += content[i] == '\n';
    throw Error(path, "line " + std::to_string(line) + ": not valid UTF-8 (byte offset " + std::to_string(bad) + ")");
}

CalibrationSet loadText(const std::string& path, std::string_view content) {
    CalibrationSet set{path, "text", {}};
    for (const Line& line : splitLines(content)) {
        if (isBlank(line.text)) continue;
        set.prompts.push_back({std::string(line.text), {}});
    }
    return set;
}

CalibrationSet loadJsonl(const std::string& path, std::string_view content) {
    CalibrationSet set{path, "jsonl", {}};
    for (const Line& line : splitLines(content)) {
        if (isBlank(line.text)) continue;
        const std::string where = "line " + std::to_string(line.number) + ": ";
        json j;
        try {
            j = json::parse(line.text);
        } catch (const json::exception& e) {
            throw Error(path, where + "malformed JSON (" + e.what() + ")");
        }
        if (!j.is_object()) throw Error(path, where + "expected a JSON object with \"text\" or \"prompt\"");
        const char* key = j.contains("text") ? "text" : j.contains("prompt") ? "prompt" : nullptr;
        if (!key) throw Error(path, where + "object has neither \"text\" nor \"prompt\"");
        if (!j[key].is_string()) throw Error(path, where + "\"" + key + "\" is not a string");
        std::string text = j[key].get<std::string>();
        if (isBlank(text)) throw Error(path, where + "empty \"" + key + "\"");
        set.prompts.push_back({std::move(text), {}});
    }
    return set;
}

std::string shareGptRole(const std::string& from) {
    if (from == "human" || from == "user") return "user";
    if (from == "gpt" || from == "assistant" || from == "chatgpt" || from == "bard") return "assistant";
    if (from == "system") return "system";
    return "";
}

CalibrationSet loadShareGpt(const std::string& path, std::string_view content) {
    CalibrationSet set{path, "sharegpt", {}};
    json j;
    try {
        j = json::parse(content);
    } catch (const json::parse_error& e) {
        // byte position -> line number for the message
        size_t line = 1;
        for (size_t i = 0; i < std::min<size_t>(e.byte, content.size()); ++i) line += content[i] == '\n';
        throw Error(path, "line " + std::to_string(line) + ": malformed JSON (" + e.what() + ")");
    }
    if (!j.is_array()) throw Error(path, "ShareGPT file must hold a JSON array of conversations");
    for (size_t c = 0; c < j.size(); ++c) {
        const std::string where = "conversation " + std::to_string(c) + ": ";
        const json& conv = j[c];
        if (!conv.is_object() || !conv.contains("conversations") || !conv["conversations"].is_array())
            throw Error(path, where + "expected an object with a \"conversations\" array");
        CalibrationPrompt prompt;
        for (const json& turn : conv["conversations"]) {
            if (!turn.is_object() || !turn.contains("from") || !turn.contains("value") || !turn["from"].is_string() ||
                !turn["value"].is_string())
                throw Error(path, where + "each turn needs string \"from\" and \"value\"");
            const std::string role = shareGptRole(turn["from"].get<std::string>());
            if (role.empty()) throw Error(path, where + "unknown speaker \"" + turn["from"].get<std::string>() + "\"");
            const std::string value = turn["value"].get<std::string>();
            if (role == "user" && prompt.text.empty()) prompt.text = value;
            prompt.messages.push_back({role, value});
        }
        if (isBlank(prompt.text)) continue;  // no human turn to use as a prompt
        set.prompts.push_back(std::move(prompt));
    }
    return set;
}

}  // namespace

CalibrationSet loadCalibrationSet(const std::string& path) {
    const std::string content = readFile(path);
    checkUtf8(path, content);
    std::string_view body(content);
    if (body.size() >= 3 && body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);  // UTF-8 BOM
    const size_t first = body.find_first_not_of(" \t\r\n");
    const std::string ext = fs::path(path).extension().string();
    CalibrationSet set;
    if (ext == ".txt") {
        set = loadText(path, body);  // the extension says plain text, even if a line starts with '{'
    } else if (first != std::string_view::npos && body[first] == '[') {
        set = loadShareGpt(path, body);
    } else if (ext == ".jsonl" || (first != std::string_view::npos && body[first] == '{')) {
        set = loadJsonl(path, body);
    } else {
        set = loadText(path, body);
    }
    if (set.prompts.empty()) throw Error(path, "calibration set has no prompts");
    return set;
}

std::string resourcesDir() {
    std::error_code ec;
    if (const char* env = std::getenv("WAVELAB_RESOURCES"); env && *env) {
        if (!fs::is_directory(env, ec)) throw Error(env, "WAVELAB_RESOURCES is not a directory");
        return env;
    }
    // An installed or relocated binary: resources/ next to it, one level up, or ../share/wavelab.
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) {
        const fs::path exe_dir = fs::path(std::string(buf, static_cast<size_t>(n))).parent_path();
        for (const fs::path& candidate : {exe_dir / "resources", exe_dir.parent_path() / "resources",
                                          exe_dir.parent_path() / "share" / "wavelab" / "resources"}) {
            if (fs::is_directory(candidate / "calibration", ec)) return candidate.string();
        }
    }
    return WAVELAB_RESOURCES_DIR;
}

std::string defaultCalibrationPath() { return (fs::path(resourcesDir()) / "calibration" / "default.jsonl").string(); }

}  // namespace wl
