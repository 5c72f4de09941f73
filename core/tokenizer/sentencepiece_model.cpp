#include "tokenizer/sentencepiece_model.h"

#include <cstring>
#include <string_view>

#include "util/atomic_file.h"
#include "util/error.h"

namespace wl {
namespace {

// Minimal protobuf wire-format reader: varints, 32/64-bit fixed, length-delimited fields.
class Reader {
public:
    Reader(std::string_view data, const std::string& path) : data_(data), path_(path) {}
    bool done() const { return pos_ >= data_.size(); }

    uint64_t varint() {
        uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos_ >= data_.size()) fail("truncated varint");
            const unsigned char b = static_cast<unsigned char>(data_[pos_++]);
            v |= static_cast<uint64_t>(b & 0x7F) << shift;
            if (!(b & 0x80)) return v;
        }
        fail("varint too long");
    }
    // Returns (field number, wire type).
    std::pair<uint32_t, uint32_t> tag() {
        const uint64_t t = varint();
        if ((t >> 3) == 0) fail("field number 0");
        return {static_cast<uint32_t>(t >> 3), static_cast<uint32_t>(t & 7)};
    }
    std::string_view bytes() {
        const uint64_t n = varint();
        if (n > data_.size() - pos_) fail("length-delimited field runs past the end");
        std::string_view s = data_.substr(pos_, n);
        pos_ += n;
        return s;
    }
    float fixed32Float() {
        if (data_.size() - pos_ < 4) fail("truncated fixed32");
        float f;
        std::memcpy(&f, data_.data() + pos_, 4);
        pos_ += 4;
        return f;
    }
    void skip(uint32_t wire_type) {
        switch (wire_type) {
            case 0: varint(); break;
            case 1: if (data_.size() - pos_ < 8) fail("truncated fixed64"); pos_ += 8; break;
            case 2: bytes(); break;
            case 5: if (data_.size() - pos_ < 4) fail("truncated fixed32"); pos_ += 4; break;
            default: fail("unsupported wire type " + std::to_string(wire_type));
        }
    }
    void expect(uint32_t wire_type, uint32_t want, const char* field) {
        if (wire_type != want) fail(std::string("field ") + field + " has the wrong wire type");
    }
    [[noreturn]] void fail(const std::string& what) const {
        throw Error(path_, "not a valid SentencePiece model: " + what);
    }

private:
    std::string_view data_;
    const std::string& path_;
    size_t pos_ = 0;
};

int32_t asInt32(uint64_t v) { return static_cast<int32_t>(static_cast<int64_t>(v)); }

void readPiece(std::string_view data, const std::string& path, SentencePieceModel& model) {
    Reader r(data, path);
    SentencePieceModel::Piece piece;
    while (!r.done()) {
        const auto [field, wire] = r.tag();
        if (field == 1) { r.expect(wire, 2, "piece"); piece.text = std::string(r.bytes()); }
        else if (field == 2) { r.expect(wire, 5, "score"); piece.score = r.fixed32Float(); }
        else if (field == 3) {
            r.expect(wire, 0, "type");
            const uint64_t t = r.varint();
            if (t < 1 || t > 6) r.fail("unknown piece type " + std::to_string(t));
            piece.type = static_cast<SentencePieceModel::PieceType>(t);
        } else r.skip(wire);
    }
    model.pieces.push_back(std::move(piece));
}

void readTrainerSpec(std::string_view data, const std::string& path, SentencePieceModel& m) {
    Reader r(data, path);
    while (!r.done()) {
        const auto [field, wire] = r.tag();
        if (wire == 0 && (field == 3 || field == 24 || field == 35 || (field >= 40 && field <= 43))) {
            const uint64_t v = r.varint();
            switch (field) {
                case 3: m.model_type = static_cast<SentencePieceModel::ModelType>(v); break;
                case 24: m.treat_whitespace_as_suffix = v != 0; break;
                case 35: m.byte_fallback = v != 0; break;
                case 40: m.unk_id = asInt32(v); break;
                case 41: m.bos_id = asInt32(v); break;
                case 42: m.eos_id = asInt32(v); break;
                case 43: m.pad_id = asInt32(v); break;
            }
        } else if (field == 44 && wire == 2) {
            m.unk_surface = std::string(r.bytes());
        } else {
            r.skip(wire);
        }
    }
}

void readNormalizerSpec(std::string_view data, const std::string& path, SentencePieceModel& m) {
    Reader r(data, path);
    while (!r.done()) {
        const auto [field, wire] = r.tag();
        if (field == 1 && wire == 2) m.normalizer_name = std::string(r.bytes());
        else if (field == 2 && wire == 2) m.has_precompiled_charsmap = !r.bytes().empty();
        else if (field == 3 && wire == 0) m.add_dummy_prefix = r.varint() != 0;
        else if (field == 4 && wire == 0) m.remove_extra_whitespaces = r.varint() != 0;
        else if (field == 5 && wire == 0) m.escape_whitespaces = r.varint() != 0;
        else r.skip(wire);
    }
}

}  // namespace

SentencePieceModel readSentencePieceModel(const std::string& path) {
    const std::string data = readFile(path);
    SentencePieceModel model;
    Reader r(data, path);
    while (!r.done()) {
        const auto [field, wire] = r.tag();
        if (field == 1) { r.expect(wire, 2, "pieces"); readPiece(r.bytes(), path, model); }
        else if (field == 2) { r.expect(wire, 2, "trainer_spec"); readTrainerSpec(r.bytes(), path, model); }
        else if (field == 3) { r.expect(wire, 2, "normalizer_spec"); readNormalizerSpec(r.bytes(), path, model); }
        else r.skip(wire);
    }
    if (model.pieces.empty()) throw Error(path, "not a valid SentencePiece model: no pieces");
    const auto n = static_cast<int32_t>(model.pieces.size());
    for (int32_t* id : {&model.unk_id, &model.bos_id, &model.eos_id, &model.pad_id}) {
        if (*id >= n) throw Error(path, "SentencePiece model names special id " + std::to_string(*id) +
                                            " but has only " + std::to_string(n) + " pieces");
    }
    return model;
}

}  // namespace wl
