#pragma once
// What each fuzz target does with one input, shared by the libFuzzer targets (fuzz_*.cpp) and
// the regression test that replays fuzz/regressions/<target>/* in the normal test suite
// (tests/test_io_fuzz_regressions.cpp). Each reader gets the bytes as a file of the name it
// expects, parses it, and then uses what it returned (so a reader that accepts garbage and
// hands out dangling views or bad indices is caught too). A clean wl::Error is the correct
// answer to bad input; any other exception, crash or sanitizer report is a finding.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "data/calibration_set.h"
#include "draft/specforge_log.h"
#include "io/safetensors.h"
#include "model/hf_config.h"
#include "model/llama2c_header.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/llama2c_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace wl::fuzz {

struct FuzzReader {
    const char* name;       // fuzz target = fuzz_<name>, regression folder fuzz/regressions/<name>
    const char* file_name;  // the file name the reader sees (some readers dispatch on it)
    void (*read)(const std::string& path);
};

inline volatile uint64_t g_sink = 0;   // keeps reads of returned data from being optimised out

inline void useTokenizer(const Tokenizer& tok) {
    static const std::vector<std::string> texts = {
        "", " ", "Once upon a time, there was a little girl named Lily.",
        "Hello  world!\n\tTabs, 123456 and \xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac",
        "<s></s><unk><|im_start|>user\nhi<|im_end|><|endoftext|>", "\xf0\x9f\x98\x80 emoji and \xe2\x96\x81 meta", "bad \xff\xfe utf-8 \xc3"};
    const int64_t vocab = tok.vocabSize();
    g_sink += static_cast<uint64_t>(vocab + tok.bosId() + tok.eosId() + tok.padId());
    for (const auto& text : texts) {
        for (bool bos : {false, true}) {
            std::vector<int64_t> ids;
            try {
                ids = tok.encode(text, bos);
            } catch (const Error&) {
                continue;   // refusing a text (e.g. invalid UTF-8) with a clear error is fine
            }
            for (int64_t id : ids)
                if (id < 0 || id >= vocab) throw std::logic_error("encode produced id " + std::to_string(id) + " outside the vocab");
            g_sink += tok.decode(ids).size();
        }
    }
    for (int64_t id = 0; id < vocab && id < 2048; ++id) g_sink += tok.piece(id).size();
}

inline void readSafetensors(const std::string& path) {
    SafetensorsFile file(path);
    for (const std::string& name : file.names()) {
        const TensorView& v = file.get(name);
        if (v.nbytes != static_cast<size_t>(v.numel()) * dtypeSize(v.dtype))
            throw std::logic_error("safetensors view size disagrees with shape x dtype");
        if (v.nbytes > 0) g_sink += v.data[0] + v.data[v.nbytes - 1];   // ASan checks both ends
    }
    g_sink += file.metadata().size();
}
inline void readHfConfig(const std::string& path) {
    const ModelConfig c = parseHfConfig(path);
    g_sink += hfConfigJson(c).size();
    g_sink += static_cast<uint64_t>(c.numParameters());
}
inline void readLlama2cHeaderFile(const std::string& path) {
    const Llama2cHeader h = readLlama2cHeader(path);
    g_sink += static_cast<uint64_t>(h.expected_file_size + h.config.numParameters());
}
inline void readLlama2cTokenizer(const std::string& path) { useTokenizer(Llama2cTokenizer(path)); }
inline void readTokenizerJson(const std::string& path) { useTokenizer(HfBpeTokenizer(path)); }
inline void readAnyTokenizer(const std::string& path) { useTokenizer(*loadTokenizer(path)); }
inline void readCalibration(const std::string& path) {
    const CalibrationSet set = loadCalibrationSet(path);
    for (const auto& p : set.prompts) g_sink += p.text.size() + p.messages.size();
}

// The console output of a SpecForge run, as the GUI's SpecForge tab reads it from the child
// process: fed in odd-sized chunks (the first byte picks the size), every line and point
// checked. The parser never rejects input, so anything thrown here is a finding.
inline void readSpecForgeLog(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SpecForgeLogParser parser;
    auto check = [&parser] {
        for (const std::string& line : parser.takeLines()) {
            if (line.empty() || line.size() > SpecForgeLogParser::kMaxLine ||
                line.find_first_of("\r\n") != std::string::npos)
                throw std::logic_error("log line of " + std::to_string(line.size()) + " bytes or with a line break");
            g_sink += line.size();
        }
        for (const SpecForgeCurvePoint& p : parser.takePoints())
            g_sink += static_cast<uint64_t>(p.step + 1) + (p.loss == p.loss) + (p.accuracy == p.accuracy);
        if (parser.progress().done < 0 || parser.progress().total < 0) throw std::logic_error("negative progress");
    };
    const size_t chunk = bytes.empty() ? 1 : 1 + static_cast<unsigned char>(bytes[0]) % 97;
    for (size_t at = 0; at < bytes.size(); at += chunk) {
        parser.feed(std::string_view(bytes).substr(at, chunk));
        check();
    }
    parser.finish();
    check();
}

inline const std::vector<FuzzReader>& fuzzReaders() {
    static const std::vector<FuzzReader> readers = {
        {"safetensors", "model.safetensors", readSafetensors},
        {"hf_config", "config.json", readHfConfig},
        {"llama2c_header", "model.bin", readLlama2cHeaderFile},
        {"llama2c_tokenizer", "tok.bin", readLlama2cTokenizer},
        {"tokenizer_json", "tokenizer.json", readTokenizerJson},
        {"sentencepiece", "tokenizer.model", readAnyTokenizer},
        {"calibration", "prompts.txt", readCalibration},
        {"specforge_log", "specforge.log", readSpecForgeLog},
    };
    return readers;
}

inline const FuzzReader& fuzzReader(const std::string& name) {
    for (const auto& r : fuzzReaders())
        if (name == r.name) return r;
    throw std::invalid_argument("no fuzz reader named " + name);
}

// Writes `bytes` to <dir>/<reader.file_name> and runs the reader. Returns false when the
// reader rejected the input with wl::Error (the expected outcome for bad input), true when
// it accepted it. Anything else propagates.
inline bool runReader(const FuzzReader& reader, const uint8_t* data, size_t size, const std::string& dir) {
    std::filesystem::create_directories(dir);
    const std::string path = dir + "/" + reader.file_name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot write " + path);
    if (size > 0 && std::fwrite(data, 1, size, f) != size) {
        std::fclose(f);
        throw std::runtime_error("cannot write " + path);
    }
    std::fclose(f);
    try {
        reader.read(path);
        return true;
    } catch (const Error&) {
        return false;
    }
}

}  // namespace wl::fuzz
