// loadTokenizer / findTokenizerForModel: pick the tokenizer class from the file's content.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/llama2c_tokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace wl {
namespace fs = std::filesystem;

namespace {

std::string firstBytes(const std::string& path, size_t n) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path, "cannot open tokenizer file");
    std::string head(n, '\0');
    in.read(head.data(), static_cast<std::streamsize>(n));
    head.resize(static_cast<size_t>(in.gcount()));
    return head;
}

std::unique_ptr<Tokenizer> loadHfJson(const fs::path& json_path) {
    const fs::path config = json_path.parent_path() / "tokenizer_config.json";
    std::error_code ec;
    return std::make_unique<HfBpeTokenizer>(json_path.string(), fs::is_regular_file(config, ec) ? config.string() : "");
}

}  // namespace

std::unique_ptr<Tokenizer> loadTokenizer(const std::string& path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) throw Error(path, "tokenizer file not found");
    if (fs::is_directory(path, ec)) {
        const fs::path dir(path);
        if (fs::is_regular_file(dir / "tokenizer.json", ec)) return loadHfJson(dir / "tokenizer.json");
        if (fs::is_regular_file(dir / "tokenizer.model", ec)) return std::make_unique<SentencePieceTokenizer>((dir / "tokenizer.model").string());
        throw Error(path, "directory holds neither tokenizer.json nor tokenizer.model");
    }
    const std::string head = firstBytes(path, 64);
    if (head.empty()) throw Error(path, "tokenizer file is empty");
    // JSON starts with '{' (after optional whitespace); SentencePiece models are protobufs
    // whose first field (pieces, field 1, length-delimited) starts with byte 0x0A.
    const size_t first = head.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && head[first] == '{') return loadHfJson(fs::path(path));
    const std::string ext = fs::path(path).extension().string();
    if (ext == ".bin") return std::make_unique<Llama2cTokenizer>(path);
    if (ext == ".model" || static_cast<unsigned char>(head[0]) == 0x0A) return std::make_unique<SentencePieceTokenizer>(path);
    try {
        return std::make_unique<Llama2cTokenizer>(path);
    } catch (const Error&) {
        throw Error(path, "unrecognised tokenizer format (expected tokenizer.json, a SentencePiece .model or a "
                          "llama2.c tokenizer .bin)");
    }
}

std::unique_ptr<Tokenizer> findTokenizerForModel(const std::string& model_path, int64_t model_vocab_size,
                                                 const std::string& explicit_path) {
    std::error_code ec;
    // An HF model is a directory, or a file inside one (model.safetensors, config.json).
    const std::string ext = fs::path(model_path).extension().string();
    const bool hf_file = ext == ".safetensors" || ext == ".json";
    const bool hf_dir = fs::is_directory(model_path, ec) || hf_file;
    const fs::path hf_root = hf_file ? fs::path(model_path).parent_path() : fs::path(model_path);
    std::unique_ptr<Tokenizer> tokenizer;
    std::string chosen;
    if (!explicit_path.empty()) {
        chosen = explicit_path;
    } else {
        std::vector<fs::path> looked;
        if (hf_dir) {
            looked = {hf_root / "tokenizer.json", hf_root / "tokenizer.model"};
        } else {
            const fs::path dir = fs::path(model_path).parent_path().empty() ? fs::path(".") : fs::path(model_path).parent_path();
            // tok*.bin beside the checkpoint (e.g. tok512.bin), sorted for a stable choice.
            std::vector<fs::path> toks;
            for (const auto& entry : fs::directory_iterator(dir, ec)) {
                const std::string name = entry.path().filename().string();
                if (entry.is_regular_file(ec) && name.rfind("tok", 0) == 0 && entry.path().extension() == ".bin" &&
                    entry.path() != fs::path(model_path))
                    toks.push_back(entry.path());
            }
            std::sort(toks.begin(), toks.end());
            looked.push_back(dir / "tokenizer.bin");
            for (const auto& t : toks) if (t.filename() != "tokenizer.bin") looked.push_back(t);
            if (toks.empty()) looked.push_back(dir / "tok*.bin");
        }
        for (const auto& p : looked) {
            if (fs::is_regular_file(p, ec)) { chosen = p.string(); break; }
        }
        if (chosen.empty()) {
            std::string where;
            for (const auto& p : looked) where += (where.empty() ? "" : ", ") + p.string();
            throw Error(model_path, "no tokenizer found (looked for " + where + "); pass one with --tokenizer");
        }
    }
    tokenizer = loadTokenizer(chosen);
    const int64_t v = tokenizer->vocabSize();
    // HF checkpoints often pad the embedding to a multiple of 64/128: allow a larger model vocab.
    const bool ok = model_vocab_size <= 0 || (hf_dir ? v <= model_vocab_size : v == model_vocab_size);
    if (!ok)
        throw Error(chosen, "tokenizer has " + std::to_string(v) + " tokens but the model expects " +
                                std::to_string(model_vocab_size) + " (model " + model_path + ")");
    return tokenizer;
}

}  // namespace wl
