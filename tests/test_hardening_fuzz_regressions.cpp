// Replays every fuzz input kept in the repository through the same readers the libFuzzer
// targets drive (fuzz/fuzz_readers.h): the crash regressions in fuzz/regressions/<reader>/
// (inputs scripts/fuzz found) and the seed corpora in fuzz/corpus/<reader>/. Each must end
// in success or a clean wl::Error; a crash, sanitizer report or other exception fails.
// Built with the normal compiler, so this guards the fixes without clang or libFuzzer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../fuzz/fuzz_readers.h"

namespace fs = std::filesystem;

namespace {

const fs::path kFuzzDir = fs::path(WAVELAB_TEST_DATA_DIR) / ".." / ".." / "fuzz";

std::string readBytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Replay {
    int accepted = 0, rejected = 0;
};

Replay replayFolder(const wl::fuzz::FuzzReader& reader, const fs::path& folder) {
    Replay r;
    if (!fs::is_directory(folder)) return r;
    const std::string scratch = (fs::path(WAVELAB_TEST_WORK_DIR) / "fuzz_replay" / reader.name).string();
    for (const auto& entry : fs::directory_iterator(folder)) {
        if (!entry.is_regular_file()) continue;
        const std::string bytes = readBytes(entry.path());
        SCOPED_TRACE(entry.path().string());
        try {
            const bool ok = wl::fuzz::runReader(reader, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), scratch);
            ++(ok ? r.accepted : r.rejected);
        } catch (const std::exception& e) {
            ADD_FAILURE() << reader.name << " threw a non-wl::Error exception on " << entry.path() << ": " << e.what();
        }
    }
    return r;
}

}  // namespace

TEST(FuzzRegressions, EveryKeptCrashInputEndsInSuccessOrACleanError) {
    int files = 0;
    for (const auto& reader : wl::fuzz::fuzzReaders()) {
        const Replay r = replayFolder(reader, kFuzzDir / "regressions" / reader.name);
        files += r.accepted + r.rejected;
    }
    RecordProperty("regression_inputs", files);
}

TEST(FuzzRegressions, SeedCorporaReplayAndValidSeedsAreAccepted) {
    if (!fs::is_directory(kFuzzDir / "corpus")) GTEST_SKIP() << "no fuzz/corpus";
    for (const auto& reader : wl::fuzz::fuzzReaders()) {
        const Replay r = replayFolder(reader, kFuzzDir / "corpus" / reader.name);
        // Every reader has at least one well-formed seed (fuzz/make_seeds.py); a reader that
        // rejects all of them would make its fuzz target explore only error paths.
        EXPECT_GT(r.accepted, 0) << reader.name << ": no seed accepted (" << r.rejected << " rejected)";
    }
}
