#pragma once
// SentencePiece .model files with a BPE model (Llama-2, Mistral, ...), implemented here:
// see sentencepiece_model.h for why libsentencepiece is not used at run time.
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/sentencepiece_model.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/tokenizer.h"

namespace wl {

class SentencePieceTokenizer : public Tokenizer {
public:
    // Throws wl::Error naming the file when it is malformed or uses an unsupported feature
    // (Unigram models, precompiled normalization rules).
    explicit SentencePieceTokenizer(const std::string& path);

    std::string kind() const override { return "sentencepiece"; }
    int64_t vocabSize() const override { return static_cast<int64_t>(model_.pieces.size()); }
    int64_t bosId() const override { return model_.bos_id; }
    int64_t eosId() const override { return model_.eos_id; }
    int64_t padId() const override { return model_.pad_id >= 0 ? model_.pad_id : eosId(); }
    // As libsentencepiece's BPE: normalize ("▁" for spaces, dummy prefix), split into code
    // points and user-defined pieces, merge the best-scoring pair first, <0xNN> byte fallback.
    // Control-token strings in the text ("<s>", "</s>") map to their ids; each plain segment
    // between them is encoded on its own (with the dummy prefix, as Hugging Face's legacy
    // Llama tokenizer does).
    std::vector<int64_t> encode(const std::string& text, bool add_bos) const override;
    std::string decode(const std::vector<int64_t>& ids) const override;
    std::string piece(int64_t id) const override;
    int64_t tokenId(const std::string& token) const override;
    std::string defaultChatFamily() const override { return "llama2"; }

private:
    std::string normalize(std::string_view text) const;
    void encodeSegment(std::string_view text, std::vector<int64_t>& out) const;

    std::string path_;
    SentencePieceModel model_;
    std::unordered_map<std::string, int32_t> all_pieces_;   // every piece -> id
    std::unordered_map<std::string, int32_t> mergeable_;    // pieces a merge may produce
    SpecialTokenSplitter controls_;
    SpecialTokenSplitter user_defined_;
    int32_t byte_ids_[256];
};

}  // namespace wl
