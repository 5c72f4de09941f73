#include "util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "util/error.h"

namespace wl {

namespace {
std::string randomSuffix() {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::string s(8, 'x');
    for (auto& c : s) c = alphabet[rng() % (sizeof(alphabet) - 1)];
    return s;
}

void fsyncDirectoryOf(const std::string& path) {
    auto dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}
}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
    tmp_path_ = path_ + ".tmp-" + randomSuffix();
    file_ = std::fopen(tmp_path_.c_str(), "wb");
    if (!file_) throw Error(path_, std::string("cannot open for writing: ") + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
    if (file_) std::fclose(file_);
    if (!committed_) std::remove(tmp_path_.c_str());
}

void AtomicFile::write(const void* data, size_t bytes) {
    if (committed_) throw Error(path_, "write after commit");
    if (bytes && std::fwrite(data, 1, bytes, file_) != bytes)
        throw Error(path_, std::string("write failed: ") + std::strerror(errno));
}

void AtomicFile::commit() {
    if (committed_) return;
    if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0)
        throw Error(path_, std::string("flush failed: ") + std::strerror(errno));
    std::fclose(file_);
    file_ = nullptr;
    if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0)
        throw Error(path_, std::string("rename failed: ") + std::strerror(errno));
    committed_ = true;
    fsyncDirectoryOf(path_);
}

void writeFileAtomic(const std::string& path, std::string_view bytes) {
    AtomicFile f(path);
    f.write(bytes);
    f.commit();
}

std::string readFile(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw Error(path, "is a directory, expected a file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path, std::string("cannot open: ") + std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw Error(path, "read failed");
    return ss.str();
}

void makeDirectories(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Error(dir, "cannot create directory: " + ec.message());
}

}  // namespace wl
