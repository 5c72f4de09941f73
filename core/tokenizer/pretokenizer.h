#pragma once
// The regex pre-tokenizers of byte-level BPE tokenizers, matched by hand (std::regex has no
// \p{L}): GPT-2's pattern, Qwen2/Qwen3's, and Llama-3's (the same with \p{N}{1,3}). Each
// pattern is recognised from its exact text in tokenizer.json; anything else is rejected.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wl {

enum class SplitPattern { Gpt2, Qwen2, Llama3 };

// The pattern whose regex text is `regex`; false when it is not one of the known ones.
bool splitPatternFromRegex(const std::string& regex, SplitPattern& out);
const std::string& splitPatternRegex(SplitPattern pattern);

// Splits UTF-8 text into the pieces the regex matches (find-all, "Isolated" behaviour), as
// byte ranges [first, second). Invalid UTF-8 bytes count as one non-letter, non-number,
// non-space character each.
std::vector<std::pair<size_t, size_t>> preTokenize(std::string_view text, SplitPattern pattern);

}  // namespace wl
