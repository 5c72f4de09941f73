#pragma once
// Every file WaveLab writes (results, exports, sessions, checkpoints, captures) goes through
// here: write to "<path>.tmp-XXXX" in the same directory, fsync, rename over the target.
// A crash or cancel leaves either the old file or the new one, never half of one.
#include <cstdio>
#include <string>
#include <string_view>

namespace wl {

class AtomicFile {
public:
    explicit AtomicFile(std::string path);   // opens the temp file; throws wl::Error
    ~AtomicFile();                           // removes the temp file unless commit() ran
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void write(const void* data, size_t bytes);
    void write(std::string_view text) { write(text.data(), text.size()); }
    void commit();                           // flush, fsync, rename, fsync directory
    const std::string& path() const { return path_; }

private:
    std::string path_;
    std::string tmp_path_;
    std::FILE* file_ = nullptr;
    bool committed_ = false;
};

void writeFileAtomic(const std::string& path, std::string_view bytes);
std::string readFile(const std::string& path);  // throws wl::Error naming the file
void makeDirectories(const std::string& dir);     // mkdir -p; throws wl::Error

}  // namespace wl
