#include "tokenizer/bpe_tokenizer.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

#include "tokenizer/bpe_merge.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace wl {

using nlohmann::json;

namespace {

const std::string kMetaspace = "\xE2\x96\x81";  // "▁"

std::string jsonType(const json& j) { return j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : "?"; }

std::string replaceAll(std::string_view s, const std::string& from, const std::string& to) {
    std::string out;
    if (from.empty()) return std::string(s);
    size_t pos = 0;
    while (true) {
        const size_t hit = s.find(from, pos);
        if (hit == std::string_view::npos) break;
        out.append(s.substr(pos, hit - pos));
        out += to;
        pos = hit + from.size();
    }
    out.append(s.substr(pos));
    return out;
}

std::string byteToken(int b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    return buf;
}

// tokenizer_config.json names tokens either as a string or as {"content": ...}.
std::string configToken(const json& config, const char* key) {
    if (!config.contains(key)) return "";
    const json& v = config[key];
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
    return "";
}

}  // namespace

HfBpeTokenizer::HfBpeTokenizer(const std::string& json_path, const std::string& config_path) : path_(json_path) {
    json j;
    try {
        j = json::parse(readFile(json_path));
    } catch (const json::exception& e) {
        throw Error(json_path, std::string("malformed tokenizer.json: ") + e.what());
    }
    try {
        if (!j.is_object() || !j.contains("model")) throw Error(json_path, "not a tokenizer.json: no \"model\" section");
        parseModel(j["model"]);
        if (j.contains("added_tokens")) parseAddedTokens(j["added_tokens"]);
        if (j.contains("normalizer")) parseNormalizer(j["normalizer"]);
        if (j.contains("pre_tokenizer")) parsePreTokenizer(j["pre_tokenizer"]);
        if (j.contains("decoder")) parseDecoder(j["decoder"]);
        for (int b = 0; b < 256; ++b) {
            byte_ids_[b] = -1;
            if (byte_level_) byte_ids_[b] = idOf(byte_level::byteToUnicode()[b], "the byte-level symbol of a byte");
            else if (byte_fallback_) byte_ids_[b] = idOf(byteToken(b), "a byte-fallback token");
        }
        parseConfig(config_path);
    } catch (const json::exception& e) {
        throw Error(json_path, std::string("unexpected tokenizer.json content: ") + e.what());
    }
    if (token_to_id_.count("<|im_start|>")) chat_family_ = token_to_id_.count("<think>") ? "qwen3" : "chatml";
    else if (token_to_id_.count("<|start_header_id|>")) chat_family_ = "llama3";
    else if (!byte_level_ && token_to_id_.count("<s>") && token_to_id_.count("</s>")) chat_family_ = "llama2";
}

int32_t HfBpeTokenizer::idOf(const std::string& token, const char* what) const {
    auto it = token_to_id_.find(token);
    if (it == token_to_id_.end()) throw Error(path_, std::string("vocabulary lacks ") + what + " '" + token + "'");
    return it->second;
}

void HfBpeTokenizer::parseModel(const json& m) {
    const std::string type = m.value("type", std::string("BPE"));
    if (type != "BPE") throw Error(path_, "unsupported tokenizer model type '" + type + "' (only BPE is supported)");
    if (!m.contains("vocab") || !m["vocab"].is_object()) throw Error(path_, "BPE model has no vocab object");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
        if (m.contains(key) && m[key].is_string() && !m[key].get<std::string>().empty())
            throw Error(path_, std::string("unsupported BPE option ") + key);
    }
    if (m.contains("dropout") && m["dropout"].is_number() && m["dropout"].get<double>() > 0)
        throw Error(path_, "BPE dropout is not supported");
    const json& vocab = m["vocab"];
    std::vector<std::pair<const std::string*, int64_t>> entries;
    entries.reserve(vocab.size());
    int64_t max_id = -1;
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
        if (!it.value().is_number_integer()) throw Error(path_, "vocab entry '" + it.key() + "' has a non-integer id");
        const int64_t id = it.value().get<int64_t>();
        if (id < 0 || id > 10'000'000) throw Error(path_, "vocab id " + std::to_string(id) + " out of range");
        max_id = std::max(max_id, id);
        entries.emplace_back(&it.key(), id);
    }
    id_to_token_.assign(static_cast<size_t>(max_id + 1), std::string());
    special_.assign(id_to_token_.size(), 0);
    token_to_id_.reserve(entries.size() * 2);
    for (const auto& [token, id] : entries) {
        id_to_token_[id] = *token;
        token_to_id_.emplace(*token, static_cast<int32_t>(id));
    }
    byte_fallback_ = m.value("byte_fallback", false);
    fuse_unk_ = m.value("fuse_unk", false);
    ignore_merges_ = m.value("ignore_merges", false);
    if (m.contains("unk_token") && m["unk_token"].is_string()) unk_id_ = idOf(m["unk_token"].get<std::string>(), "the unk token");
    if (!m.contains("merges") || !m["merges"].is_array()) throw Error(path_, "BPE model has no merges list");
    const json& merges = m["merges"];
    merges_.reserve(merges.size() * 2);
    int32_t rank = 0;
    std::string left, right, joined;  // reused buffers: 150k merges, no allocation per lookup
    for (const json& entry : merges) {
        if (entry.is_string()) {  // "a b"
            const std::string& s = entry.get_ref<const std::string&>();
            const size_t space = s.find(' ', 1);
            if (space == std::string::npos) throw Error(path_, "malformed merge '" + s + "' (expected \"a b\")");
            left.assign(s, 0, space);
            right.assign(s, space + 1, std::string::npos);
        } else if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_string()) {  // ["a", "b"]
            left = entry[0].get_ref<const std::string&>();
            right = entry[1].get_ref<const std::string&>();
        } else {
            throw Error(path_, "malformed merge #" + std::to_string(rank));
        }
        joined.assign(left);
        joined += right;
        const int32_t a = idOf(left, "a merge's left part");
        const int32_t b = idOf(right, "a merge's right part");
        const int32_t merged = idOf(joined, "a merge's result");
        const uint64_t key = (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b);
        merges_.emplace(key, Merge{rank, merged});  // first (best) rank wins
        ++rank;
    }
}

void HfBpeTokenizer::parseAddedTokens(const json& tokens) {
    for (const json& t : tokens) {
        const int64_t id = t.at("id").get<int64_t>();
        const std::string content = t.at("content").get<std::string>();
        if (id < 0 || id > 10'000'000) throw Error(path_, "added token id " + std::to_string(id) + " out of range");
        if (static_cast<size_t>(id) >= id_to_token_.size()) {
            id_to_token_.resize(static_cast<size_t>(id) + 1);
            special_.resize(id_to_token_.size(), 0);
        }
        id_to_token_[id] = content;
        special_[id] = 1;
        token_to_id_[content] = static_cast<int32_t>(id);
        added_.add(content, id);
    }
}

void HfBpeTokenizer::parseNormalizer(const json& n) {
    if (n.is_null()) return;
    const std::string type = jsonType(n);
    if (type == "Sequence") {
        for (const json& step : n.at("normalizers")) parseNormalizer(step);
    } else if (type == "NFC") {
        normalizer_.push_back({NormalizerStep::Nfc, "", ""});
    } else if (type == "Prepend") {
        normalizer_.push_back({NormalizerStep::Prepend, n.at("prepend").get<std::string>(), ""});
    } else if (type == "Replace" && n.at("pattern").contains("String")) {
        normalizer_.push_back({NormalizerStep::Replace, n["pattern"]["String"].get<std::string>(),
                               n.at("content").get<std::string>()});
    } else {
        throw Error(path_, "unsupported normalizer '" + type + "' (supported: NFC, Prepend, Replace with a string, Sequence)");
    }
}

void HfBpeTokenizer::parsePreTokenizer(const json& p) {
    if (p.is_null()) return;
    const std::string type = jsonType(p);
    if (type == "Sequence") {
        for (const json& step : p.at("pretokenizers")) parsePreTokenizer(step);
    } else if (type == "ByteLevel") {
        byte_level_ = true;
        byte_level_prefix_space_ = p.value("add_prefix_space", false);
        if (p.value("use_regex", true)) {
            if (has_split_) throw Error(path_, "unsupported pre-tokenizer: two regex splits");
            has_split_ = true;
            split_ = SplitPattern::Gpt2;
        }
    } else if (type == "Split") {
        const json& pattern = p.at("pattern");
        const std::string regex = pattern.contains("Regex") ? pattern["Regex"].get<std::string>() : "";
        const std::string behavior = p.value("behavior", std::string("Isolated"));
        SplitPattern known;
        if (regex.empty() || !splitPatternFromRegex(regex, known) || behavior != "Isolated" || p.value("invert", false))
            throw Error(path_, "unsupported Split pre-tokenizer (known: the GPT-2, Qwen2/3 and Llama-3 regexes with "
                               "Isolated behaviour); pattern: " + (regex.empty() ? pattern.dump() : regex));
        if (has_split_) throw Error(path_, "unsupported pre-tokenizer: two regex splits");
        has_split_ = true;
        split_ = known;
    } else if (type == "Metaspace") {
        if (p.value("replacement", kMetaspace) != kMetaspace) throw Error(path_, "unsupported Metaspace replacement");
        metaspace_ = true;
        const std::string scheme = p.contains("prepend_scheme") ? p["prepend_scheme"].get<std::string>()
                                   : (p.value("add_prefix_space", true) ? "always" : "never");
        metaspace_prepend_ = scheme != "never";
        metaspace_prepend_first_only_ = scheme == "first";
        metaspace_split_ = p.value("split", true);
    } else {
        throw Error(path_, "unsupported pre-tokenizer '" + type + "' (supported: ByteLevel, Split with a known regex, "
                           "Metaspace, Sequence)");
    }
}

void HfBpeTokenizer::parseDecoder(const json& d) {
    if (d.is_null()) return;
    const std::string type = jsonType(d);
    if (type == "Sequence") {
        for (const json& step : d.at("decoders")) parseDecoder(step);
    } else if (type == "Strip") {
        decode_strip_leading_space_ = d.value("content", std::string(" ")) == " " && d.value("start", 0) >= 1;
    } else if (type == "Metaspace") {
        decode_strip_leading_space_ = d.value("prepend_scheme", std::string("always")) != "never" &&
                                      d.value("add_prefix_space", true);
    }
    // ByteLevel, Replace "▁" -> " ", ByteFallback and Fuse are what decode() does anyway.
}

void HfBpeTokenizer::parseConfig(const std::string& config_path) {
    json config = json::object();
    if (!config_path.empty()) {
        try {
            config = json::parse(readFile(config_path));
        } catch (const json::exception& e) {
            throw Error(config_path, std::string("malformed tokenizer_config.json: ") + e.what());
        }
        if (!config.is_object()) throw Error(config_path, "tokenizer_config.json is not a JSON object");
    }
    const auto find = [&](const std::string& name) -> int64_t {
        auto it = token_to_id_.find(name);
        return it == token_to_id_.end() ? -1 : it->second;
    };
    const auto pick = [&](const char* key, std::initializer_list<const char*> fallbacks) -> int64_t {
        if (config.contains(key)) return find(configToken(config, key));  // null in the config = none
        for (const char* f : fallbacks) {
            if (find(f) >= 0) return find(f);
        }
        return -1;
    };
    bos_id_ = pick("bos_token", {"<|begin_of_text|>", "<s>"});
    eos_id_ = pick("eos_token", {"<|end_of_text|>", "<|endoftext|>", "</s>"});
    pad_id_ = pick("pad_token", {});
}

std::string HfBpeTokenizer::normalize(std::string_view segment) const {
    std::string s(segment);
    for (const NormalizerStep& step : normalizer_) {
        switch (step.kind) {
            case NormalizerStep::Nfc: s = unicode::nfc(s); break;
            case NormalizerStep::Prepend: if (!s.empty()) s = step.a + s; break;
            case NormalizerStep::Replace: s = replaceAll(s, step.a, step.b); break;
        }
    }
    return s;
}

std::vector<int64_t> HfBpeTokenizer::encode(const std::string& text, bool add_bos) const {
    std::vector<int64_t> out;
    out.reserve(text.size() / 3 + 4);
    if (add_bos && bos_id_ >= 0) out.push_back(bos_id_);
    bool first = true;
    for (const auto& segment : added_.split(text)) {
        if (segment.id >= 0) out.push_back(segment.id);
        else encodeSegment(segment.text, first, out);
        first = false;
    }
    return out;
}

void HfBpeTokenizer::encodeSegment(std::string_view segment, bool first_segment, std::vector<int64_t>& out) const {
    std::string s = normalize(segment);
    if (s.empty()) return;
    if (metaspace_) {
        s = replaceAll(s, " ", kMetaspace);
        if (metaspace_prepend_ && (first_segment || !metaspace_prepend_first_only_) && s.compare(0, kMetaspace.size(), kMetaspace) != 0)
            s = kMetaspace + s;
        if (!metaspace_split_) {
            encodeWord(s, out);
            return;
        }
        // Split before each "▁" (MergedWithNext): "▁Hey▁you" -> "▁Hey", "▁you".
        size_t start = 0;
        while (start < s.size()) {
            size_t next = s.find(kMetaspace, start + 1);
            if (next == std::string::npos) next = s.size();
            encodeWord(std::string_view(s).substr(start, next - start), out);
            start = next;
        }
        return;
    }
    if (byte_level_ && byte_level_prefix_space_ && s[0] != ' ') s = " " + s;
    if (has_split_) {
        for (const auto& [b, e] : preTokenize(s, split_)) encodeWord(std::string_view(s).substr(b, e - b), out);
    } else {
        encodeWord(s, out);
    }
}

void HfBpeTokenizer::encodeWord(std::string_view word, std::vector<int64_t>& out) const {
    constexpr size_t kMaxCachedWord = 64, kMaxCacheEntries = 200'000;
    const bool cacheable = word.size() <= kMaxCachedWord;
    if (cacheable) {
        std::lock_guard<std::mutex> lock(cache_mutex_);
        auto it = cache_.find(std::string(word));
        if (it != cache_.end()) {
            out.insert(out.end(), it->second.begin(), it->second.end());
            return;
        }
    }
    std::vector<int32_t> ids = bpe(word);
    out.insert(out.end(), ids.begin(), ids.end());
    if (cacheable) {
        std::lock_guard<std::mutex> lock(cache_mutex_);
        if (cache_.size() >= kMaxCacheEntries) cache_.clear();
        cache_.emplace(std::string(word), std::move(ids));
    }
}

std::vector<int32_t> HfBpeTokenizer::bpe(std::string_view word) const {
    std::vector<int32_t> ids;
    if (byte_level_) {
        const std::string mapped = byte_level::encode(word);
        if (ignore_merges_) {
            auto it = token_to_id_.find(mapped);
            if (it != token_to_id_.end()) return {it->second};
        }
        ids.reserve(word.size());
        for (unsigned char b : word) ids.push_back(byte_ids_[b]);
    } else {
        if (ignore_merges_) {
            auto it = token_to_id_.find(std::string(word));
            if (it != token_to_id_.end()) return {it->second};
        }
        size_t pos = 0;
        while (pos < word.size()) {
            const size_t start = pos;
            const char32_t cp = utf8::next(word, pos);
            auto it = token_to_id_.find(std::string(word.substr(start, pos - start)));
            if (it != token_to_id_.end() && !special_[it->second]) {
                ids.push_back(it->second);
            } else if (byte_fallback_) {
                for (size_t k = start; k < pos; ++k) ids.push_back(byte_ids_[static_cast<unsigned char>(word[k])]);
            } else if (unk_id_ >= 0) {
                if (!(fuse_unk_ && !ids.empty() && ids.back() == unk_id_)) ids.push_back(unk_id_);
            } else {
                char buf[16];
                std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
                throw Error(path_, std::string("character ") + buf + " is not in the vocabulary and there is no unk token");
            }
        }
    }
    mergePairs(ids, [this](int32_t a, int32_t b, PairMerge& m) {
        auto it = merges_.find((static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b));
        if (it == merges_.end()) return false;
        m.priority = it->second.rank;
        m.merged = it->second.merged;
        return true;
    });
    return ids;
}

std::string HfBpeTokenizer::decode(const std::vector<int64_t>& ids) const {
    std::string out;
    for (int64_t id : ids) {
        if (id < 0 || id >= vocabSize()) throw Error(path_, "token id " + std::to_string(id) + " out of range");
        if (id == bos_id_) continue;
        const std::string& token = id_to_token_[static_cast<size_t>(id)];
        if (special_[id]) {
            out += token;
        } else if (byte_level_) {
            std::string bytes;
            if (byte_level::decode(token, bytes)) out += bytes;
            else out += token;
        } else if (byte_fallback_ && byte_level::byteFallbackValue(token) >= 0) {
            out += static_cast<char>(byte_level::byteFallbackValue(token));
        } else {
            out += replaceAll(token, kMetaspace, " ");
        }
    }
    if (decode_strip_leading_space_ && !out.empty() && out[0] == ' ') out.erase(0, 1);
    return out;
}

std::string HfBpeTokenizer::piece(int64_t id) const {
    if (id < 0 || id >= vocabSize()) return "";
    const std::string& token = id_to_token_[static_cast<size_t>(id)];
    if (!byte_level_ || special_[id]) return token;
    std::string bytes;
    if (byte_level::decode(token, bytes) && utf8::isValid(bytes)) return bytes;
    return token;
}

int64_t HfBpeTokenizer::tokenId(const std::string& token) const {
    auto it = token_to_id_.find(token);
    return it == token_to_id_.end() ? -1 : it->second;
}

}  // namespace wl
