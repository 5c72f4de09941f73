#pragma once
// Splits text around special-token strings ("<|im_start|>", "<s>", ...) so they map to their
// ids instead of being tokenized as ordinary text. Longest match wins at each position.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace wl {

class SpecialTokenSplitter {
public:
    struct Segment {
        std::string_view text;  // plain text (when id < 0)
        int64_t id = -1;        // special token id, or -1 for plain text
    };

    void add(const std::string& token, int64_t id);
    bool empty() const { return tokens_.empty(); }
    std::vector<Segment> split(std::string_view text) const;

private:
    std::unordered_map<std::string, int64_t> tokens_;
    std::vector<std::vector<const std::string*>> by_first_byte_ = std::vector<std::vector<const std::string*>>(256);
};

}  // namespace wl
