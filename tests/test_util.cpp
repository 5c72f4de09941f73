// util: atomic writes, error formatting, cancel tokens.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "util/atomic_file.h"
#include "util/cancel.h"
#include "util/error.h"

namespace fs = std::filesystem;

TEST(Error, NamesSourceAndProblem) {
    wl::Error e("model.safetensors", "header length 99999999999 exceeds file size 120");
    EXPECT_STREQ(e.what(), "model.safetensors: header length 99999999999 exceeds file size 120");
    EXPECT_EQ(e.source(), "model.safetensors");
}

TEST(AtomicFile, CommitReplacesAndAbortLeavesOldContent) {
    fs::path dir = fs::path(WAVELAB_TEST_WORK_DIR) / "atomic";
    fs::create_directories(dir);
    std::string path = (dir / "out.json").string();
    wl::writeFileAtomic(path, "old");
    {
        wl::AtomicFile f(path);
        f.write("new but abandoned");
        // no commit: destructor must drop the temp file and keep "old"
    }
    EXPECT_EQ(wl::readFile(path), "old");
    for (auto& e : fs::directory_iterator(dir))
        EXPECT_EQ(e.path().filename(), "out.json") << "stray temp file " << e.path();
    wl::writeFileAtomic(path, "new");
    EXPECT_EQ(wl::readFile(path), "new");
}

TEST(AtomicFile, UnwritableDirectoryIsAClearError) {
    try {
        wl::writeFileAtomic("/nonexistent-dir/x.json", "x");
        FAIL() << "expected wl::Error";
    } catch (const wl::Error& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.json"), std::string::npos);
    }
}

TEST(ReadFile, MissingFileNamesIt) {
    EXPECT_THROW(wl::readFile("/no/such/file.bin"), wl::Error);
}

TEST(CancelToken, PauseBlocksUntilResumeAndCancelThrows) {
    wl::CancelToken token;
    token.pause();
    std::atomic<bool> passed{false};
    std::thread worker([&] {
        token.checkpoint();
        passed = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(passed.load());
    token.resume();
    worker.join();
    EXPECT_TRUE(passed.load());
    token.cancel();
    EXPECT_THROW(token.checkpoint(), wl::Cancelled);
}
