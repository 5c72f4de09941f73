#include "tokenizer/special_tokens.h"

#include <algorithm>

namespace wl {

void SpecialTokenSplitter::add(const std::string& token, int64_t id) {
    if (token.empty()) return;
    auto [it, inserted] = tokens_.emplace(token, id);
    if (!inserted) return;
    auto& bucket = by_first_byte_[static_cast<unsigned char>(token[0])];
    bucket.push_back(&it->first);  // unordered_map nodes are stable
    std::stable_sort(bucket.begin(), bucket.end(),
                     [](const std::string* a, const std::string* b) { return a->size() > b->size(); });
}

std::vector<SpecialTokenSplitter::Segment> SpecialTokenSplitter::split(std::string_view text) const {
    std::vector<Segment> out;
    size_t plain_start = 0, pos = 0;
    while (pos < text.size()) {
        const auto& bucket = by_first_byte_[static_cast<unsigned char>(text[pos])];
        const std::string* hit = nullptr;
        for (const std::string* token : bucket) {
            if (text.compare(pos, token->size(), *token) == 0) { hit = token; break; }
        }
        if (!hit) { ++pos; continue; }
        if (pos > plain_start) out.push_back({text.substr(plain_start, pos - plain_start), -1});
        out.push_back({text.substr(pos, hit->size()), tokens_.at(*hit)});
        pos += hit->size();
        plain_start = pos;
    }
    if (plain_start < text.size()) out.push_back({text.substr(plain_start), -1});
    return out;
}

}  // namespace wl
