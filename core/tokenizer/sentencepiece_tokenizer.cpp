#include "tokenizer/sentencepiece_tokenizer.h"

#include <cstdio>

#include "tokenizer/bpe_merge.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"
#include "util/error.h"

namespace wl {
namespace {

const std::string kSpace = "\xE2\x96\x81";  // "▁"
using Type = SentencePieceModel::PieceType;

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer(const std::string& path)
    : path_(path), model_(readSentencePieceModel(path)) {
    if (model_.model_type != SentencePieceModel::ModelType::Bpe)
        throw Error(path, "unsupported SentencePiece model type " + std::to_string(static_cast<int>(model_.model_type)) +
                              " (only BPE models, e.g. Llama-2 and Mistral, are supported)");
    if (model_.has_precompiled_charsmap)
        throw Error(path, "unsupported SentencePiece normalizer '" + model_.normalizer_name +
                              "' (only the identity normalizer is supported)");
    if (model_.treat_whitespace_as_suffix) throw Error(path, "unsupported SentencePiece option treat_whitespace_as_suffix");
    all_pieces_.reserve(model_.pieces.size() * 2);
    mergeable_.reserve(model_.pieces.size() * 2);
    for (int32_t id = 0; id < static_cast<int32_t>(model_.pieces.size()); ++id) {
        const auto& p = model_.pieces[id];
        all_pieces_.emplace(p.text, id);
        if (p.type == Type::Normal || p.type == Type::UserDefined) mergeable_.emplace(p.text, id);
        if (p.type == Type::Control) controls_.add(p.text, id);
        if (p.type == Type::UserDefined) user_defined_.add(p.text, id);
        if (p.type == Type::Byte && byte_level::byteFallbackValue(p.text) < 0)
            throw Error(path, "SentencePiece byte piece " + std::to_string(id) + " is not of the form <0xNN>");
    }
    for (int b = 0; b < 256; ++b) {
        byte_ids_[b] = -1;
        if (!model_.byte_fallback) continue;
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        auto it = all_pieces_.find(name);
        if (it == all_pieces_.end() || model_.pieces[it->second].type != Type::Byte)
            throw Error(path, std::string("SentencePiece model uses byte fallback but lacks the byte piece ") + name);
        byte_ids_[b] = it->second;
    }
}

std::string SentencePieceTokenizer::normalize(std::string_view text) const {
    std::string s(text);
    if (model_.remove_extra_whitespaces) {
        std::string collapsed;
        for (char c : s) {
            if (c == ' ' && (collapsed.empty() || collapsed.back() == ' ')) continue;
            collapsed += c;
        }
        while (!collapsed.empty() && collapsed.back() == ' ') collapsed.pop_back();
        s.swap(collapsed);
    }
    if (s.empty()) return s;
    if (model_.add_dummy_prefix) s.insert(0, " ");
    if (model_.escape_whitespaces) {
        std::string escaped;
        escaped.reserve(s.size() + s.size() / 2);
        for (char c : s) {
            if (c == ' ') escaped += kSpace;
            else escaped += c;
        }
        s.swap(escaped);
    }
    return s;
}

void SentencePieceTokenizer::encodeSegment(std::string_view text, std::vector<int64_t>& out) const {
    const std::string normalized = normalize(text);
    if (normalized.empty()) return;
    // Initial symbols: user-defined pieces whole, otherwise one code point each. Symbols that
    // are not pieces get temporary ids past the vocabulary, with their text kept aside.
    const auto n_pieces = static_cast<int32_t>(model_.pieces.size());
    std::vector<std::string> extra;  // text of temporary ids
    const auto text_of = [&](int32_t id) -> const std::string& {
        return id < n_pieces ? model_.pieces[id].text : extra[id - n_pieces];
    };
    std::vector<int32_t> ids;
    for (const auto& segment : user_defined_.split(normalized)) {
        if (segment.id >= 0) {
            ids.push_back(static_cast<int32_t>(segment.id));
            continue;
        }
        size_t pos = 0;
        while (pos < segment.text.size()) {
            const size_t start = pos;
            utf8::next(segment.text, pos);
            std::string ch(segment.text.substr(start, pos - start));
            auto it = mergeable_.find(ch);
            if (it != mergeable_.end()) {
                ids.push_back(it->second);
            } else {
                ids.push_back(n_pieces + static_cast<int32_t>(extra.size()));
                extra.push_back(std::move(ch));
            }
        }
    }
    std::string pair;
    mergePairs(ids, [&](int32_t a, int32_t b, PairMerge& m) {
        pair.assign(text_of(a));
        pair += text_of(b);
        auto it = mergeable_.find(pair);
        if (it == mergeable_.end()) return false;
        m.priority = -static_cast<double>(model_.pieces[it->second].score);
        m.merged = it->second;
        return true;
    });
    bool prev_unk = false;
    for (int32_t id : ids) {
        if (id < n_pieces) {
            out.push_back(id);
            prev_unk = false;
            continue;
        }
        const std::string& s = text_of(id);
        if (model_.byte_fallback) {
            for (unsigned char c : s) out.push_back(byte_ids_[c]);
        } else if (!prev_unk) {  // like libsentencepiece, consecutive unknowns become one <unk>
            out.push_back(model_.unk_id);
        }
        prev_unk = !model_.byte_fallback;
    }
}

std::vector<int64_t> SentencePieceTokenizer::encode(const std::string& text, bool add_bos) const {
    std::vector<int64_t> out;
    out.reserve(text.size() / 3 + 2);
    if (add_bos && bosId() >= 0) out.push_back(bosId());
    for (const auto& segment : controls_.split(text)) {
        if (segment.id >= 0) out.push_back(segment.id);
        else encodeSegment(segment.text, out);
    }
    return out;
}

std::string SentencePieceTokenizer::decode(const std::vector<int64_t>& ids) const {
    std::string out;
    bool first_text = true;  // the dummy-prefix space of the first piece is dropped
    for (int64_t id : ids) {
        if (id < 0 || id >= vocabSize()) throw Error(path_, "token id " + std::to_string(id) + " out of range");
        const auto& p = model_.pieces[static_cast<size_t>(id)];
        std::string text;
        switch (p.type) {
            case Type::Control: continue;
            case Type::Unknown: text = model_.unk_surface; break;
            case Type::Byte: text = std::string(1, static_cast<char>(byte_level::byteFallbackValue(p.text))); break;
            default:
                text.reserve(p.text.size());
                for (size_t i = 0; i < p.text.size();) {
                    if (p.text.compare(i, kSpace.size(), kSpace) == 0) { text += ' '; i += kSpace.size(); }
                    else text += p.text[i++];
                }
        }
        if (first_text && model_.add_dummy_prefix && !text.empty() && text[0] == ' ' && p.type != Type::Byte)
            text.erase(0, 1);
        first_text = false;
        out += text;
    }
    return out;
}

std::string SentencePieceTokenizer::piece(int64_t id) const {
    if (id < 0 || id >= vocabSize()) return "";
    return model_.pieces[static_cast<size_t>(id)].text;
}

int64_t SentencePieceTokenizer::tokenId(const std::string& token) const {
    auto it = all_pieces_.find(token);
    return it == all_pieces_.end() ? -1 : it->second;
}

}  // namespace wl
