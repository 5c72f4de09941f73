#pragma once
// Hugging Face tokenizer.json with a BPE model: byte-level BPE (GPT-2, Llama-3, Qwen2/3) and
// SentencePiece-style BPE with "▁" spaces and <0xNN> byte fallback (Llama-2's tokenizer.json).
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/tokenizer.h"

namespace wl {

class HfBpeTokenizer : public Tokenizer {
public:
    // `config_path` (tokenizer_config.json, optional) names the BOS/EOS/PAD tokens.
    // Throws wl::Error naming the file for malformed JSON or an unsupported component.
    explicit HfBpeTokenizer(const std::string& json_path, const std::string& config_path = "");

    std::string kind() const override { return "hf-bpe"; }
    int64_t vocabSize() const override { return static_cast<int64_t>(id_to_token_.size()); }
    int64_t bosId() const override { return bos_id_; }
    int64_t eosId() const override { return eos_id_; }
    int64_t padId() const override { return pad_id_ >= 0 ? pad_id_ : eos_id_; }
    // Added tokens are split out first, then each segment is normalized, pre-tokenized and
    // BPE-merged by merge rank.
    std::vector<int64_t> encode(const std::string& text, bool add_bos) const override;
    // Tokens back to text; BOS is dropped, other special tokens appear as their text.
    std::string decode(const std::vector<int64_t>& ids) const override;
    std::string piece(int64_t id) const override;
    int64_t tokenId(const std::string& token) const override;
    std::string defaultChatFamily() const override { return chat_family_; }

    bool byteLevel() const { return byte_level_; }

private:
    struct Merge { int32_t rank, merged; };

    void parseNormalizer(const nlohmann::json& j);
    void parsePreTokenizer(const nlohmann::json& j);
    void parseModel(const nlohmann::json& j);
    void parseAddedTokens(const nlohmann::json& j);
    void parseDecoder(const nlohmann::json& j);
    void parseConfig(const std::string& config_path);
    std::string normalize(std::string_view segment) const;
    void encodeSegment(std::string_view segment, bool first_segment, std::vector<int64_t>& out) const;
    void encodeWord(std::string_view word, std::vector<int64_t>& out) const;
    int32_t idOf(const std::string& token, const char* what) const;
    std::vector<int32_t> bpe(std::string_view word) const;

    std::string path_;
    std::vector<std::string> id_to_token_;
    std::vector<char> special_;   // 1 for added tokens, which decode as raw text
    std::unordered_map<std::string, int32_t> token_to_id_;
    std::unordered_map<uint64_t, Merge> merges_;
    SpecialTokenSplitter added_;

    // Normalizer steps, in order.
    struct NormalizerStep { enum Kind { Nfc, Prepend, Replace } kind; std::string a, b; };
    std::vector<NormalizerStep> normalizer_;
    // Pre-tokenizer.
    bool byte_level_ = false;            // bytes go through GPT-2's byte-to-unicode map
    bool byte_level_prefix_space_ = false;
    bool has_split_ = false;
    SplitPattern split_ = SplitPattern::Gpt2;
    bool metaspace_ = false;             // Metaspace pre-tokenizer: split before each "▁"
    bool metaspace_prepend_ = false;
    bool metaspace_prepend_first_only_ = false;
    bool metaspace_split_ = true;
    // Model.
    bool byte_fallback_ = false;
    bool ignore_merges_ = false;
    bool fuse_unk_ = false;
    int32_t unk_id_ = -1;
    int32_t byte_ids_[256];              // byte-level: id of each byte's symbol; fallback: <0xNN>
    // Decoder: SentencePiece style drops the one leading space the normalizer added.
    bool decode_strip_leading_space_ = false;

    int64_t bos_id_ = -1, eos_id_ = -1, pad_id_ = -1;
    std::string chat_family_ = "none";

    mutable std::mutex cache_mutex_;
    mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

}  // namespace wl
