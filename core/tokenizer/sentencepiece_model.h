#pragma once
// Reads a SentencePiece .model file (a ModelProto protobuf) without libsentencepiece or
// libprotobuf: Debian's libsentencepiece carries its own protobuf copy, which clashes with
// libtorch's libprotobuf in one process (whichever is linked first breaks the other).
#include <cstdint>
#include <string>
#include <vector>

namespace wl {

struct SentencePieceModel {
    enum class PieceType { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };
    enum class ModelType { Unigram = 1, Bpe = 2, Word = 3, Char = 4 };
    struct Piece {
        std::string text;
        float score = 0;
        PieceType type = PieceType::Normal;
    };
    std::vector<Piece> pieces;
    // TrainerSpec
    ModelType model_type = ModelType::Unigram;
    bool byte_fallback = false;
    bool treat_whitespace_as_suffix = false;
    int32_t unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;
    std::string unk_surface = " \xE2\x81\x87 ";  // " ⁇ "
    // NormalizerSpec
    std::string normalizer_name;
    bool has_precompiled_charsmap = false;
    bool add_dummy_prefix = true;
    bool remove_extra_whitespaces = true;
    bool escape_whitespaces = true;
};

// Throws wl::Error naming `path` for anything that is not a well-formed ModelProto.
SentencePieceModel readSentencePieceModel(const std::string& path);

}  // namespace wl
