#pragma once
// Safetensors files as plain bytes + dtype + shape (no torch, so fuzzers and GUI code can use
// it). Format: u64 little-endian header length N, N bytes of JSON
// {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}},
// then the data region; offsets are relative to the data region.
// The reader memory-maps the file and bounds-checks everything before handing out views.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace wl {

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

size_t dtypeSize(DType dtype);
std::string dtypeName(DType dtype);   // safetensors spelling: "F32", "BF16", ...
// Parses a safetensors dtype name; throws wl::Error(source, ...) for unknown names.
DType parseDType(const std::string& name, const std::string& source);

// A read-only view of one tensor inside a mapped file (valid while the file object lives).
struct TensorView {
    std::string name;
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
    const uint8_t* data = nullptr;
    size_t nbytes = 0;
    std::string file;   // the file it lives in (for error messages)

    int64_t numel() const;
};

// One .safetensors file, memory-mapped.
class SafetensorsFile {
public:
    // Throws wl::Error naming the file for: unreadable file, header length larger than the
    // file, bad JSON, unknown dtype, offsets outside the data region, size != numel*dtype size,
    // overlapping or misaligned entries.
    explicit SafetensorsFile(const std::string& path);
    ~SafetensorsFile();
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;

    const std::string& path() const { return path_; }
    bool has(const std::string& name) const { return tensors_.count(name) > 0; }
    const TensorView& get(const std::string& name) const;   // throws wl::Error when missing
    std::vector<std::string> names() const;                  // sorted
    const std::map<std::string, std::string>& metadata() const { return metadata_; }

private:
    std::string path_;
    void* map_ = nullptr;
    size_t map_size_ = 0;
    std::map<std::string, TensorView> tensors_;
    std::map<std::string, std::string> metadata_;
};

// A model's tensors: one model.safetensors, or shards listed by model.safetensors.index.json
// ("weight_map": {tensor name: shard file}).
class SafetensorsSet {
public:
    // `path`: a .safetensors file, a *.index.json, or a directory holding either
    // (model.safetensors.index.json preferred, else model.safetensors, else the only
    // *.safetensors file). Throws wl::Error naming the file.
    explicit SafetensorsSet(const std::string& path);

    bool has(const std::string& name) const { return where_.count(name) > 0; }
    const TensorView& get(const std::string& name) const;   // throws wl::Error naming the source
    std::vector<std::string> names() const;
    const std::string& source() const { return source_; }   // index json or single file
    const std::vector<std::unique_ptr<SafetensorsFile>>& files() const { return files_; }
    // Returns the file a directory resolves to (index json or .safetensors); throws if none.
    static std::string resolve(const std::string& path);

private:
    std::string source_;
    std::vector<std::unique_ptr<SafetensorsFile>> files_;
    std::map<std::string, const SafetensorsFile*> where_;
};

// Writes a safetensors file atomically (wl::AtomicFile). Tensors are either given as bytes
// that stay alive until finish(), or produced on demand one at a time (so huge files stream
// with one tensor in memory). Entries are laid out largest-dtype first so every tensor is
// aligned to its element size.
class SafetensorsWriter {
public:
    using Producer = std::function<void(uint8_t* dst, size_t nbytes)>;

    explicit SafetensorsWriter(std::string path) : path_(std::move(path)) {}
    void add(const std::string& name, DType dtype, std::vector<int64_t> shape, const void* data);
    void addProduced(const std::string& name, DType dtype, std::vector<int64_t> shape, Producer producer);
    void setMetadata(const std::string& key, const std::string& value) { metadata_[key] = value; }
    void finish();   // writes header + data, commits; throws wl::Error naming the file

private:
    struct Entry {
        std::string name;
        DType dtype;
        std::vector<int64_t> shape;
        const void* data = nullptr;
        Producer producer;
        size_t nbytes = 0;
    };
    std::string path_;
    std::vector<Entry> entries_;
    std::map<std::string, std::string> metadata_;
};

// Writes model.safetensors.index.json for shards: {"metadata": {"total_size": N},
// "weight_map": {name: file}} atomically.
void writeSafetensorsIndex(const std::string& path, const std::map<std::string, std::string>& weight_map,
                           uint64_t total_size);

}  // namespace wl
