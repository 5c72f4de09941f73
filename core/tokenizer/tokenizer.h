#pragma once
// Tokenizers WaveLab understands: llama2.c tokenizer.bin, SentencePiece .model, and
// Hugging Face tokenizer.json (byte-level BPE: Llama-3, Qwen2/3, GPT-2 style).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace wl {

struct ChatMessage {
    std::string role;     // "system", "user", "assistant"
    std::string content;
};

class Tokenizer {
public:
    virtual ~Tokenizer() = default;
    virtual std::string kind() const = 0;          // "llama2c", "sentencepiece", "hf-bpe"
    virtual int64_t vocabSize() const = 0;
    virtual int64_t bosId() const = 0;             // -1 if none
    virtual int64_t eosId() const = 0;             // -1 if none
    virtual int64_t padId() const { return eosId(); }
    // Plain text encoding; `add_bos` prepends BOS when the tokenizer has one.
    // Special-token strings present in `text` (e.g. "<|im_start|>") map to their ids.
    virtual std::vector<int64_t> encode(const std::string& text, bool add_bos) const = 0;
    virtual std::string decode(const std::vector<int64_t>& ids) const = 0;
    // Human-readable piece for one id (for tooltips and tables).
    virtual std::string piece(int64_t id) const = 0;
    // Wraps messages in the model family's chat template ("qwen3"/"chatml", "llama3", "llama2",
    // "none"); `family` empty = the tokenizer's own default. Adds the generation prompt.
    virtual std::string applyChatTemplate(const std::vector<ChatMessage>& messages,
                                          const std::string& family = "") const;
    // The chat family picked from this tokenizer's special tokens ("qwen3", "llama3",
    // "llama2" or "none"); used when applyChatTemplate gets an empty family.
    virtual std::string defaultChatFamily() const { return "none"; }
    // Id of an exact token string (special tokens included), or -1.
    virtual int64_t tokenId(const std::string& token) const { (void)token; return -1; }
    // Whether the chat template text already carries the BOS token (then encode the
    // templated text with add_bos = false).
    bool templateAddsBos(const std::string& family = "") const;
};

// Loads by content/extension: *.bin (llama2.c), *.model (SentencePiece), tokenizer.json
// (a directory holding tokenizer.json [+ tokenizer_config.json] also works).
// Throws wl::Error naming the file and the problem.
std::unique_ptr<Tokenizer> loadTokenizer(const std::string& path);

// Finds the tokenizer for a model: for an HF directory its tokenizer.json / tokenizer.model;
// for a llama2.c checkpoint file a tok*.bin or tokenizer.bin beside it. `explicit_path`
// (from --tokenizer) wins. Checks the vocab size matches the model's and throws wl::Error
// ("tokenizer has V tokens but the model expects W") when it does not.
std::unique_ptr<Tokenizer> findTokenizerForModel(const std::string& model_path,
                                                 int64_t model_vocab_size,
                                                 const std::string& explicit_path = "");

}  // namespace wl
