// Calibration-set loaders: plain text, JSONL, ShareGPT, the bundled default set, and the
// errors users see for malformed files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "data/calibration_set.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace {

std::string writeCase(const std::string& name, const std::string& content) {
    const std::string dir = std::string(WAVELAB_TEST_WORK_DIR) + "/data_calibration";
    wl::makeDirectories(dir);
    const std::string path = dir + "/" + name;
    wl::writeFileAtomic(path, content);
    return path;
}

// Expects loadCalibrationSet(path) to throw a wl::Error naming the file whose message holds `needle`.
void expectError(const std::string& path, const std::string& needle) {
    try {
        wl::loadCalibrationSet(path);
        ADD_FAILURE() << path << " was accepted";
    } catch (const wl::Error& e) {
        EXPECT_EQ(e.source(), path);
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
    }
}

}  // namespace

TEST(CalibrationSet, PlainTextSkipsBlankLines) {
    const auto path = writeCase("plain.txt", "First prompt\n\n   \nSecond prompt\r\nThird\n");
    const auto set = wl::loadCalibrationSet(path);
    EXPECT_EQ(set.format, "text");
    EXPECT_EQ(set.source, path);
    ASSERT_EQ(set.prompts.size(), 3u);
    EXPECT_EQ(set.prompts[0].text, "First prompt");
    EXPECT_EQ(set.prompts[1].text, "Second prompt");
    EXPECT_EQ(set.prompts[2].text, "Third");
    EXPECT_TRUE(set.prompts[0].messages.empty());
}

TEST(CalibrationSet, JsonlTextAndPromptKeys) {
    const auto path = writeCase("set.jsonl",
                                "{\"text\": \"line one\\nline two\"}\n\n{\"prompt\": \"caf\\u00e9\", \"id\": 3}\n");
    const auto set = wl::loadCalibrationSet(path);
    EXPECT_EQ(set.format, "jsonl");
    ASSERT_EQ(set.prompts.size(), 2u);
    EXPECT_EQ(set.prompts[0].text, "line one\nline two");
    EXPECT_EQ(set.prompts[1].text, "caf\xC3\xA9");
}

TEST(CalibrationSet, JsonlDetectedByContentWithoutExtension) {
    const auto path = writeCase("set_no_ext", "{\"text\": \"a\"}\n{\"text\": \"b\"}\n");
    EXPECT_EQ(wl::loadCalibrationSet(path).format, "jsonl");
}

TEST(CalibrationSet, JsonlMalformedLineNamesFileAndLine) {
    expectError(writeCase("bad.jsonl", "{\"text\": \"ok\"}\n\n{\"text\": \"broken\n"), "line 3");
    expectError(writeCase("nokey.jsonl", "{\"text\": \"ok\"}\n{\"title\": \"x\"}\n"), "line 2");
    expectError(writeCase("notstring.jsonl", "{\"text\": 5}\n"), "line 1");
}

TEST(CalibrationSet, ShareGptMapsRolesAndTakesFirstHumanTurn) {
    const auto path = writeCase("chat.json", R"([
      {"conversations": [
        {"from": "system", "value": "Be brief."},
        {"from": "human", "value": "What is 2+2?"},
        {"from": "gpt", "value": "4."},
        {"from": "human", "value": "And 3+3?"}]},
      {"conversations": [{"from": "gpt", "value": "no human turn here"}]},
      {"conversations": [{"from": "human", "value": "Hi"}]}
    ])");
    const auto set = wl::loadCalibrationSet(path);
    EXPECT_EQ(set.format, "sharegpt");
    ASSERT_EQ(set.prompts.size(), 2u);  // the conversation without a human turn is skipped
    EXPECT_EQ(set.prompts[0].text, "What is 2+2?");
    ASSERT_EQ(set.prompts[0].messages.size(), 4u);
    EXPECT_EQ(set.prompts[0].messages[0].role, "system");
    EXPECT_EQ(set.prompts[0].messages[1].role, "user");
    EXPECT_EQ(set.prompts[0].messages[2].role, "assistant");
    EXPECT_EQ(set.prompts[0].messages[2].content, "4.");
    EXPECT_EQ(set.prompts[1].text, "Hi");
}

TEST(CalibrationSet, ShareGptErrors) {
    expectError(writeCase("bad_share.json", "[{\"conversations\": [{\"from\": \"human\"}]}]"), "conversation 0");
    expectError(writeCase("bad_speaker.json", "[{\"conversations\": [{\"from\": \"alien\", \"value\": \"x\"}]}]"), "alien");
    expectError(writeCase("broken_share.json", "[\n{\"conversations\": [\n]\n"), "line");
}

TEST(CalibrationSet, EmptySetIsAnError) {
    expectError(writeCase("empty.txt", ""), "no prompts");
    expectError(writeCase("blank.txt", "\n  \n\t\n"), "no prompts");
    expectError(writeCase("empty_share.json", "[]"), "no prompts");
}

TEST(CalibrationSet, InvalidUtf8NamesFileAndLine) {
    expectError(writeCase("latin1.txt", "good line\nsecond good\nbad \xE9t\xE9\n"), "line 3");
    expectError(writeCase("overlong.txt", "\xC0\xAF\n"), "line 1");
    expectError(writeCase("surrogate.jsonl", "{\"text\": \"a\"}\n{\"text\": \"\xED\xA0\x80\"}\n"), "line 2");
}

TEST(CalibrationSet, MissingFileNamesIt) {
    const std::string path = std::string(WAVELAB_TEST_WORK_DIR) + "/data_calibration/does_not_exist.txt";
    EXPECT_THROW(wl::loadCalibrationSet(path), wl::Error);
}

TEST(CalibrationSet, BundledDefaultSetIsLargeAndVaried) {
    const std::string path = wl::defaultCalibrationPath();
    ASSERT_TRUE(fs::exists(path)) << path;
    const auto set = wl::loadCalibrationSet(path);
    EXPECT_EQ(set.format, "jsonl");
    EXPECT_GE(set.prompts.size(), 80u);
    size_t stories = 0, multiline = 0, longest = 0, shortest = SIZE_MAX;
    std::set<std::string> unique;
    for (const auto& p : set.prompts) {
        unique.insert(p.text);
        stories += p.text.find("Once upon a time") != std::string::npos;
        multiline += p.text.find('\n') != std::string::npos;
        longest = std::max(longest, p.text.size());
        shortest = std::min(shortest, p.text.size());
    }
    EXPECT_EQ(unique.size(), set.prompts.size()) << "duplicate prompts";
    EXPECT_GE(stories, 15u);
    EXPECT_GE(multiline, 3u);
    EXPECT_LT(shortest, 40u);
    EXPECT_GT(longest, 150u);
}

TEST(CalibrationSet, ResourcesDirHonoursEnvironment) {
    const std::string dir = std::string(WAVELAB_TEST_WORK_DIR) + "/data_calibration/res";
    wl::makeDirectories(dir + "/calibration");
    ::setenv("WAVELAB_RESOURCES", dir.c_str(), 1);
    EXPECT_EQ(wl::resourcesDir(), dir);
    EXPECT_EQ(wl::defaultCalibrationPath(), dir + "/calibration/default.jsonl");
    ::unsetenv("WAVELAB_RESOURCES");
    EXPECT_EQ(wl::resourcesDir(), std::string(WAVELAB_RESOURCES_DIR));
}
