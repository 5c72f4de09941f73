#pragma once
// llama2.c's tokenizer.bin (e.g. stories260K's tok512.bin): int32 max_token_length, then per
// token float32 score, int32 length, raw bytes. Encoding follows run.c's `encode` exactly.
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace wl {

class Llama2cTokenizer : public Tokenizer {
public:
    // Throws wl::Error naming the file when it is truncated or implausible.
    explicit Llama2cTokenizer(const std::string& path);

    std::string kind() const override { return "llama2c"; }
    int64_t vocabSize() const override { return static_cast<int64_t>(vocab_.size()); }
    int64_t bosId() const override { return 1; }
    int64_t eosId() const override { return 2; }
    // run.c: optional BOS, a dummy-prefix " " token for non-empty text, per-code-point lookup
    // with <0xNN> byte fallback (id = byte + 3), then best-score pair merging. run.c knows no
    // special-token strings, and neither does this.
    std::vector<int64_t> encode(const std::string& text, bool add_bos) const override;
    // run.c's decode: BOS/EOS print nothing, the leading space after BOS (or at the start)
    // is dropped, <0xNN> pieces become raw bytes.
    std::string decode(const std::vector<int64_t>& ids) const override;
    std::string piece(int64_t id) const override;
    int64_t tokenId(const std::string& token) const override;

    float score(int64_t id) const { return scores_.at(static_cast<size_t>(id)); }
    int maxTokenLength() const { return max_token_length_; }

private:
    std::vector<std::string> vocab_;
    std::vector<float> scores_;
    std::unordered_map<std::string, int32_t> index_;
    int max_token_length_ = 0;
};

}  // namespace wl
