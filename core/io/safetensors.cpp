#include "io/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace wl {

size_t dtypeSize(DType d) {
    switch (d) {
        case DType::F64: case DType::I64: return 8;
        case DType::F32: case DType::I32: return 4;
        case DType::F16: case DType::BF16: case DType::I16: return 2;
        case DType::I8: case DType::U8: case DType::BOOL: return 1;
    }
    return 1;
}

std::string dtypeName(DType d) {
    switch (d) {
        case DType::F64: return "F64";
        case DType::F32: return "F32";
        case DType::F16: return "F16";
        case DType::BF16: return "BF16";
        case DType::I64: return "I64";
        case DType::I32: return "I32";
        case DType::I16: return "I16";
        case DType::I8: return "I8";
        case DType::U8: return "U8";
        case DType::BOOL: return "BOOL";
    }
    return "?";
}

DType parseDType(const std::string& n, const std::string& source) {
    static const std::map<std::string, DType> names = {
        {"F64", DType::F64}, {"F32", DType::F32}, {"F16", DType::F16}, {"BF16", DType::BF16},
        {"I64", DType::I64}, {"I32", DType::I32}, {"I16", DType::I16}, {"I8", DType::I8},
        {"U8", DType::U8},   {"BOOL", DType::BOOL}};
    auto it = names.find(n);
    if (it == names.end()) throw Error(source, "unsupported dtype '" + n + "'");
    return it->second;
}

int64_t TensorView::numel() const {
    int64_t n = 1;
    for (auto s : shape) n *= s;
    return n;
}

// ---------------------------------------------------------------- reader

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw Error(path, "is a directory, expected a .safetensors file");
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) throw Error(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        ::close(fd);
        throw Error(path, "cannot stat file");
    }
    const uint64_t file_size = static_cast<uint64_t>(st.st_size);
    if (file_size < 8) {
        ::close(fd);
        throw Error(path, "file too small for a safetensors header (" + std::to_string(file_size) + " bytes)");
    }
    map_size_ = file_size;
    map_ = ::mmap(nullptr, map_size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map_ == MAP_FAILED) {
        map_ = nullptr;
        throw Error(path, std::string("mmap failed: ") + std::strerror(errno));
    }
    try {
        const auto* bytes = static_cast<const uint8_t*>(map_);
        uint64_t header_len = 0;
        for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];
        if (header_len > file_size - 8)
            throw Error(path, "header length " + std::to_string(header_len) + " exceeds file size " +
                                  std::to_string(file_size));
        json header;
        try {
            header = json::parse(reinterpret_cast<const char*>(bytes + 8),
                                 reinterpret_cast<const char*>(bytes + 8 + header_len));
        } catch (const json::exception& e) {
            throw Error(path, std::string("malformed header JSON: ") + e.what());
        }
        if (!header.is_object()) throw Error(path, "header JSON is not an object");
        const uint8_t* data = bytes + 8 + header_len;
        const uint64_t data_size = file_size - 8 - header_len;
        struct Range { uint64_t begin, end; std::string name; };
        std::vector<Range> ranges;
        for (auto it = header.begin(); it != header.end(); ++it) {
            const std::string& name = it.key();
            const json& e = it.value();
            if (name == "__metadata__") {
                if (!e.is_object()) throw Error(path, "__metadata__ is not an object");
                for (auto m = e.begin(); m != e.end(); ++m)
                    metadata_[m.key()] = m.value().is_string() ? m.value().get<std::string>() : m.value().dump();
                continue;
            }
            const std::string where = "tensor '" + name + "'";
            if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
                throw Error(path, where + ": entry needs dtype, shape and data_offsets");
            if (!e["dtype"].is_string()) throw Error(path, where + ": dtype is not a string");
            TensorView v;
            v.name = name;
            v.file = path;
            try {
                v.dtype = parseDType(e["dtype"].get<std::string>(), path);
            } catch (const Error& err) {
                throw Error(path, where + ": " + err.problem());
            }
            const json& shape = e["shape"];
            const json& offs = e["data_offsets"];
            if (!shape.is_array()) throw Error(path, where + ": shape is not an array");
            if (!offs.is_array() || offs.size() != 2 || !offs[0].is_number_unsigned() || !offs[1].is_number_unsigned())
                throw Error(path, where + ": data_offsets must be two non-negative integers");
            // numel with overflow guard: anything beyond the data region is an error anyway.
            uint64_t numel = 1;
            for (const auto& s : shape) {
                if (!s.is_number_unsigned()) throw Error(path, where + ": shape entries must be non-negative integers");
                uint64_t d = s.get<uint64_t>();
                v.shape.push_back(static_cast<int64_t>(d));
                if (d != 0 && numel > (uint64_t(1) << 62) / d)
                    throw Error(path, where + ": shape is too large");
                numel *= d;
            }
            const uint64_t begin = offs[0].get<uint64_t>(), end = offs[1].get<uint64_t>();
            if (begin > end) throw Error(path, where + ": data_offsets begin > end");
            if (end > data_size)
                throw Error(path, where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                                      "] past the end of the data region (" + std::to_string(data_size) + " bytes)");
            const uint64_t expect = numel * dtypeSize(v.dtype);
            if (end - begin != expect)
                throw Error(path, where + ": has " + std::to_string(end - begin) + " bytes but shape x dtype needs " +
                                      std::to_string(expect));
            if (begin % dtypeSize(v.dtype) != 0)
                throw Error(path, where + ": data offset " + std::to_string(begin) + " is misaligned for " +
                                      dtypeName(v.dtype));
            v.data = data + begin;
            v.nbytes = static_cast<size_t>(expect);
            ranges.push_back({begin, end, name});
            tensors_.emplace(name, std::move(v));
        }
        std::sort(ranges.begin(), ranges.end(),
                  [](const Range& a, const Range& b) { return a.begin < b.begin || (a.begin == b.begin && a.end < b.end); });
        for (size_t i = 1; i < ranges.size(); ++i)
            if (ranges[i].begin < ranges[i - 1].end)
                throw Error(path, "tensors '" + ranges[i - 1].name + "' and '" + ranges[i].name + "' overlap");
    } catch (...) {
        ::munmap(map_, map_size_);
        map_ = nullptr;
        throw;
    }
}

SafetensorsFile::~SafetensorsFile() {
    if (map_) ::munmap(map_, map_size_);
}

const TensorView& SafetensorsFile::get(const std::string& name) const {
    auto it = tensors_.find(name);
    if (it == tensors_.end()) throw Error(path_, "missing tensor '" + name + "'");
    return it->second;
}

std::vector<std::string> SafetensorsFile::names() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : tensors_) out.push_back(k);
    return out;
}

// ---------------------------------------------------------------- sharded sets

std::string SafetensorsSet::resolve(const std::string& path) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) return path;
    fs::path dir(path);
    if (fs::exists(dir / "model.safetensors.index.json")) return (dir / "model.safetensors.index.json").string();
    if (fs::exists(dir / "model.safetensors")) return (dir / "model.safetensors").string();
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".safetensors") found.push_back(e.path().string());
    if (found.size() == 1) return found[0];
    if (found.empty()) throw Error(path, "no model.safetensors or model.safetensors.index.json in directory");
    throw Error(path, "several .safetensors files but no model.safetensors.index.json");
}

SafetensorsSet::SafetensorsSet(const std::string& path) {
    source_ = resolve(path);
    const bool is_index = source_.size() > 5 && source_.compare(source_.size() - 5, 5, ".json") == 0;
    if (!is_index) {
        files_.push_back(std::make_unique<SafetensorsFile>(source_));
        for (const auto& n : files_[0]->names()) where_[n] = files_[0].get();
        return;
    }
    json index;
    try {
        index = json::parse(readFile(source_));
    } catch (const json::exception& e) {
        throw Error(source_, std::string("malformed index JSON: ") + e.what());
    }
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
        throw Error(source_, "index has no \"weight_map\" object");
    const fs::path dir = fs::path(source_).parent_path();
    std::map<std::string, SafetensorsFile*> opened;
    for (auto it = index["weight_map"].begin(); it != index["weight_map"].end(); ++it) {
        if (!it.value().is_string()) throw Error(source_, "weight_map entry '" + it.key() + "' is not a file name");
        const std::string shard = it.value().get<std::string>();
        if (shard.find('/') != std::string::npos || shard == "..")
            throw Error(source_, "weight_map entry '" + it.key() + "' points outside the directory: " + shard);
        auto o = opened.find(shard);
        if (o == opened.end()) {
            files_.push_back(std::make_unique<SafetensorsFile>((dir / shard).string()));
            o = opened.emplace(shard, files_.back().get()).first;
        }
        if (!o->second->has(it.key()))
            throw Error(o->second->path(), "missing tensor '" + it.key() + "' listed in " + source_);
        where_[it.key()] = o->second;
    }
}

const TensorView& SafetensorsSet::get(const std::string& name) const {
    auto it = where_.find(name);
    if (it == where_.end()) throw Error(source_, "missing tensor '" + name + "'");
    return it->second->get(name);
}

std::vector<std::string> SafetensorsSet::names() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : where_) out.push_back(k);
    return out;
}

// ---------------------------------------------------------------- writer

namespace {
size_t nbytesOf(DType dtype, const std::vector<int64_t>& shape, const std::string& path, const std::string& name) {
    size_t n = dtypeSize(dtype);
    for (auto s : shape) {
        if (s < 0) throw Error(path, "tensor '" + name + "' has a negative dimension");
        n *= static_cast<size_t>(s);
    }
    return n;
}
}  // namespace

void SafetensorsWriter::add(const std::string& name, DType dtype, std::vector<int64_t> shape, const void* data) {
    Entry e{name, dtype, std::move(shape), data, {}, 0};
    e.nbytes = nbytesOf(dtype, e.shape, path_, name);
    entries_.push_back(std::move(e));
}

void SafetensorsWriter::addProduced(const std::string& name, DType dtype, std::vector<int64_t> shape, Producer producer) {
    Entry e{name, dtype, std::move(shape), nullptr, std::move(producer), 0};
    e.nbytes = nbytesOf(dtype, e.shape, path_, name);
    entries_.push_back(std::move(e));
}

void SafetensorsWriter::finish() {
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return dtypeSize(a.dtype) > dtypeSize(b.dtype); });
    json header = json::object();
    if (!metadata_.empty()) header["__metadata__"] = metadata_;
    uint64_t offset = 0;
    for (const auto& e : entries_) {
        if (header.contains(e.name)) throw Error(path_, "duplicate tensor name '" + e.name + "'");
        header[e.name] = {{"dtype", dtypeName(e.dtype)}, {"shape", e.shape}, {"data_offsets", {offset, offset + e.nbytes}}};
        offset += e.nbytes;
    }
    std::string text = header.dump();
    while ((8 + text.size()) % 8 != 0) text.push_back(' ');   // keeps the data region 8-aligned
    uint8_t len[8];
    uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(n >> (8 * i));
    AtomicFile file(path_);
    file.write(len, 8);
    file.write(text);
    std::vector<uint8_t> buffer;
    for (const auto& e : entries_) {
        if (e.producer) {
            buffer.resize(e.nbytes);
            e.producer(buffer.data(), e.nbytes);
            file.write(buffer.data(), e.nbytes);
        } else {
            file.write(e.data, e.nbytes);
        }
    }
    file.commit();
}

void writeSafetensorsIndex(const std::string& path, const std::map<std::string, std::string>& weight_map,
                           uint64_t total_size) {
    json j = {{"metadata", {{"total_size", total_size}}}, {"weight_map", weight_map}};
    writeFileAtomic(path, j.dump(2) + "\n");
}

}  // namespace wl
