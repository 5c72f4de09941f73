#include "tokenizer/llama2c_tokenizer.h"

#include <cmath>
#include <cstring>

#include "tokenizer/bpe_merge.h"
#include "tokenizer/byte_level.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace wl {


Llama2cTokenizer::Llama2cTokenizer(const std::string& path) {
    const std::string bytes = readFile(path);
    size_t pos = 0;
    const auto readRaw = [&](void* dst, size_t n, const char* what) {
        if (pos + n > bytes.size())
            throw Error(path, std::string("truncated llama2.c tokenizer: file ends inside ") + what +
                                  " of token " + std::to_string(vocab_.size()));
        std::memcpy(dst, bytes.data() + pos, n);
        pos += n;
    };
    if (bytes.size() < 4) throw Error(path, "too short to be a llama2.c tokenizer (" + std::to_string(bytes.size()) + " bytes)");
    int32_t max_len = 0;
    readRaw(&max_len, 4, "the header");
    if (max_len <= 0 || max_len > 4096)
        throw Error(path, "not a llama2.c tokenizer: implausible max_token_length " + std::to_string(max_len));
    max_token_length_ = max_len;
    while (pos < bytes.size()) {
        float s = 0;
        int32_t len = 0;
        readRaw(&s, 4, "the score");
        readRaw(&len, 4, "the length");
        if (len < 0 || len > max_len)
            throw Error(path, "corrupt llama2.c tokenizer: token " + std::to_string(vocab_.size()) + " has length " +
                                  std::to_string(len) + " (max_token_length " + std::to_string(max_len) + ")");
        if (!std::isfinite(s))
            throw Error(path, "corrupt llama2.c tokenizer: token " + std::to_string(vocab_.size()) + " has a non-finite score");
        std::string piece(static_cast<size_t>(len), '\0');
        readRaw(piece.data(), static_cast<size_t>(len), "the bytes");
        index_.emplace(piece, static_cast<int32_t>(vocab_.size()));  // first id wins on duplicates
        vocab_.push_back(std::move(piece));
        scores_.push_back(s);
    }
    if (vocab_.size() < 3 + 256)
        throw Error(path, "llama2.c tokenizer has only " + std::to_string(vocab_.size()) +
                              " tokens; it needs <unk>, <s>, </s> and 256 byte tokens");
}

std::vector<int64_t> Llama2cTokenizer::encode(const std::string& text, bool add_bos) const {
    std::vector<int32_t> ids;
    ids.reserve(text.size() + 2);
    if (!text.empty()) {
        auto space = index_.find(" ");
        if (space != index_.end()) ids.push_back(space->second);
    }
    // Code point by code point as run.c does (up to 4 bytes per lookup), unknown -> bytes + 3.
    std::string buffer;
    for (size_t i = 0; i < text.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if ((c & 0xC0) != 0x80) buffer.clear();
        buffer += static_cast<char>(c);
        const bool next_is_continuation =
            i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80;
        if (next_is_continuation && buffer.size() < 4) continue;
        auto it = index_.find(buffer);
        if (it != index_.end()) {
            ids.push_back(it->second);
        } else {
            for (unsigned char b : buffer) ids.push_back(static_cast<int32_t>(b) + 3);
        }
        buffer.clear();
    }
    std::string pair;
    mergePairs(ids, [&](int32_t a, int32_t b, PairMerge& out) {
        pair.assign(vocab_[a]);
        pair += vocab_[b];
        auto it = index_.find(pair);
        // run.c keeps a pair only if its score beats the initial best of -1e10.
        if (it == index_.end() || !(scores_[it->second] > -1e10f)) return false;
        out.priority = -static_cast<double>(scores_[it->second]);
        out.merged = it->second;
        return true;
    });
    std::vector<int64_t> result;
    result.reserve(ids.size() + 1);
    if (add_bos) result.push_back(bosId());
    result.insert(result.end(), ids.begin(), ids.end());
    return result;
}

std::string Llama2cTokenizer::decode(const std::vector<int64_t>& ids) const {
    std::string out;
    int64_t prev = bosId();  // the start of a sequence behaves like "after BOS"
    for (int64_t id : ids) {
        if (id < 0 || id >= vocabSize()) throw Error("llama2c tokenizer", "token id " + std::to_string(id) + " out of range");
        if (id == bosId() || id == eosId()) { prev = id; continue; }
        const std::string& p = vocab_[static_cast<size_t>(id)];
        const int byte = byte_level::byteFallbackValue(p);  // run.c: sscanf "<0x%02hhX>"
        if (byte >= 0) {
            out += static_cast<char>(byte);
        } else if (prev == bosId() && !p.empty() && p[0] == ' ') {
            out.append(p, 1, std::string::npos);
        } else {
            out += p;
        }
        prev = id;
    }
    return out;
}

std::string Llama2cTokenizer::piece(int64_t id) const {
    if (id < 0 || id >= vocabSize()) return "";
    return vocab_[static_cast<size_t>(id)];
}

int64_t Llama2cTokenizer::tokenId(const std::string& token) const {
    auto it = index_.find(token);
    return it == index_.end() ? -1 : it->second;
}

}  // namespace wl
