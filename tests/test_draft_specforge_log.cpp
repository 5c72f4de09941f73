// SpecForge console output -> training-curve points: per-epoch summaries weighted like
// SpecForge's objective, tqdm bars (with '\r' redraws), the streaming "Train Step" variant,
// and robustness against chunking and junk.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "draft/specforge_log.h"

using wl::SpecForgeCurvePoint;
using wl::SpecForgeLogParser;

namespace {

// What one epoch of a SpecForge run prints (rank 0): a tqdm bar on stderr redrawn with '\r',
// then Acc lines, then pLoss lines, then an evaluation bar and its summary.
std::string epochLog(int epoch, int epochs, const std::vector<double>& acc, const std::vector<double>& ploss) {
    std::string out;
    for (int n = 1; n <= 4; ++n) {
        out += "\rTraining Epoch " + std::to_string(epoch - 1) + ":  " + std::to_string(25 * n) + "%|\xe2\x96\x88\xe2\x96\x88  | " +
               std::to_string(n) + "/4 [00:0" + std::to_string(n) + "<00:02,  1.90it/s, loss=" + std::to_string(2.0 - 0.1 * n) +
               ", acc=0." + std::to_string(n) + "0]";
        out += "\rTraining Epoch " + std::to_string(epoch - 1) + ":  " + std::to_string(25 * n) + "%|\xe2\x96\x88\xe2\x96\x88  | " +
               std::to_string(n) + "/4 [00:0" + std::to_string(n) + "<00:02,  1.91it/s, loss=" + std::to_string(2.0 - 0.1 * n) +
               ", acc=0." + std::to_string(n) + "0]";   // tqdm's timer redraw: same step
    }
    out += "\n";
    const std::string tag = "Train Epoch [" + std::to_string(epoch) + "/" + std::to_string(epochs) + "], position ";
    for (size_t i = 0; i < acc.size(); ++i) out += tag + std::to_string(i) + ",  Acc: " + std::to_string(acc[i]) + "\n";
    for (size_t i = 0; i < ploss.size(); ++i) out += tag + std::to_string(i) + ", pLoss: " + std::to_string(ploss[i]) + "\n";
    out += "\x1b[A\rEvaluating Epoch " + std::to_string(epoch - 1) + ": 100%|\xe2\x96\x88\xe2\x96\x88| 2/2 [00:00<00:00, 9.1it/s]\n";
    out += "Eval Epoch [" + std::to_string(epoch) + "/" + std::to_string(epochs) + "], position 0,  Acc: 0.25\n";
    out += "Eval Epoch [" + std::to_string(epoch) + "/" + std::to_string(epochs) + "], position 0, pLoss: 3.5\n";
    return out;
}

double weighted(const std::vector<double>& ploss) {
    double sum = 0, w = 1;
    for (double p : ploss) {
        sum += w * p;
        w *= 0.8;
    }
    return sum;
}

struct Parsed {
    std::vector<SpecForgeCurvePoint> points;
    std::vector<std::string> lines;
};

Parsed parseInChunks(const std::string& log, const std::vector<size_t>& cuts) {
    SpecForgeLogParser parser;
    size_t at = 0;
    Parsed out;
    for (size_t cut : cuts) {
        parser.feed(std::string_view(log).substr(at, cut - at));
        at = cut;
        for (auto& p : parser.takePoints()) out.points.push_back(p);
        for (auto& l : parser.takeLines()) out.lines.push_back(l);
    }
    parser.feed(std::string_view(log).substr(at));
    parser.finish();
    for (auto& p : parser.takePoints()) out.points.push_back(p);
    for (auto& l : parser.takeLines()) out.lines.push_back(l);
    return out;
}

bool samePoint(const SpecForgeCurvePoint& a, const SpecForgeCurvePoint& b) {
    auto same = [](double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
    return a.kind == b.kind && same(a.epochs, b.epochs) && a.step == b.step && same(a.loss, b.loss) &&
           same(a.accuracy, b.accuracy);
}

}  // namespace

TEST(SpecForgeLog, EpochSummaryIsTheWeightedObjective) {
    const std::vector<double> acc = {0.61, 0.42, 0.30}, ploss = {1.25, 1.75, 2.5};
    const Parsed parsed = parseInChunks(epochLog(1, 2, acc, ploss), {});
    std::vector<SpecForgeCurvePoint> summaries, bars;
    for (const auto& p : parsed.points)
        (p.kind == SpecForgeCurvePoint::Kind::TrainBar ? bars : summaries).push_back(p);
    ASSERT_EQ(summaries.size(), 2u);
    EXPECT_EQ(summaries[0].kind, SpecForgeCurvePoint::Kind::TrainSummary);
    EXPECT_DOUBLE_EQ(summaries[0].epochs, 1.0);
    EXPECT_EQ(summaries[0].step, -1);
    EXPECT_NEAR(summaries[0].loss, weighted(ploss), 1e-12);
    EXPECT_NEAR(summaries[0].accuracy, 0.61, 1e-12);
    EXPECT_EQ(summaries[1].kind, SpecForgeCurvePoint::Kind::EvalSummary);
    EXPECT_NEAR(summaries[1].loss, 3.5, 1e-12);
    EXPECT_NEAR(summaries[1].accuracy, 0.25, 1e-12);

    // One bar point per step: redraws of the same step add none; x counts epochs.
    ASSERT_EQ(bars.size(), 4u);
    for (int n = 1; n <= 4; ++n) {
        EXPECT_DOUBLE_EQ(bars[n - 1].epochs, n / 4.0);
        EXPECT_NEAR(bars[n - 1].loss, 2.0 - 0.1 * n, 1e-6);
        EXPECT_NEAR(bars[n - 1].accuracy, n / 10.0, 1e-12);
    }
    // Summary lines reach the log; bar redraws and cursor escapes do not.
    EXPECT_EQ(parsed.lines.size(), 8u);
    for (const auto& l : parsed.lines) {
        EXPECT_EQ(l.find("%|"), std::string::npos) << l;
        EXPECT_EQ(l.find('\x1b'), std::string::npos) << l;
    }
}

TEST(SpecForgeLog, ChunkBoundariesDoNotChangeTheResult) {
    const std::string log = "W1203 torchrun: setting OMP_NUM_THREADS=1\r\n" + epochLog(1, 2, {0.5, 0.4}, {1.0, 2.0}) +
                            epochLog(2, 2, {0.6, 0.5}, {0.5, 1.0}) + "Training finished";
    const Parsed whole = parseInChunks(log, {});
    std::vector<size_t> every_byte;
    for (size_t i = 1; i < log.size(); ++i) every_byte.push_back(i);
    std::mt19937 rng(7);
    std::vector<size_t> random_cuts;
    for (size_t at = 0; at < log.size();) {
        at += 1 + rng() % 40;
        if (at < log.size()) random_cuts.push_back(at);
    }
    for (const auto& cuts : {every_byte, random_cuts}) {
        const Parsed chunked = parseInChunks(log, cuts);
        ASSERT_EQ(chunked.points.size(), whole.points.size());
        for (size_t i = 0; i < whole.points.size(); ++i) EXPECT_TRUE(samePoint(chunked.points[i], whole.points[i])) << i;
        EXPECT_EQ(chunked.lines, whole.lines);
    }
    ASSERT_FALSE(whole.lines.empty());
    EXPECT_EQ(whole.lines.front(), "W1203 torchrun: setting OMP_NUM_THREADS=1");
    EXPECT_EQ(whole.lines.back(), "Training finished");   // the unterminated last line, at finish()
    // Two epochs: two training summaries at x = 1 and 2.
    std::vector<double> train_x;
    for (const auto& p : whole.points)
        if (p.kind == SpecForgeCurvePoint::Kind::TrainSummary) train_x.push_back(p.epochs);
    EXPECT_EQ(train_x, (std::vector<double>{1.0, 2.0}));
}

TEST(SpecForgeLog, ProgressFollowsTheLatestBar) {
    SpecForgeLogParser parser;
    parser.feed("\rTraining Epoch 3:  10%|#         | 10/100 [00:01<00:09, 9.9it/s]");
    EXPECT_EQ(parser.progress().done, 0);   // still a partial line: nothing parsed yet
    parser.feed("\rTraining Epoch 3:  11%|#         | 11/100 [00:01<00:09, 9.9it/s]\r");
    EXPECT_EQ(parser.progress().phase, "Training Epoch 3");
    EXPECT_EQ(parser.progress().done, 11);
    EXPECT_EQ(parser.progress().total, 100);
    EXPECT_TRUE(parser.takePoints().empty());   // a bar without loss/acc fields is progress only
    EXPECT_TRUE(parser.takeLines().empty());
    // A bar without a description counts from the epochs completed so far.
    parser.feed("Train Epoch [1/3], position 0, pLoss: 1.5\n");
    parser.feed(" 50%|#####     | 5/10 [00:01<00:01, 5.0it/s, loss=1.40]\r");
    const auto points = parser.takePoints();
    ASSERT_EQ(points.size(), 2u);
    EXPECT_EQ(points[0].kind, SpecForgeCurvePoint::Kind::TrainSummary);
    EXPECT_TRUE(std::isnan(points[0].accuracy));
    EXPECT_DOUBLE_EQ(points[1].epochs, 1.5);
    EXPECT_DOUBLE_EQ(points[1].loss, 1.40);
    EXPECT_TRUE(std::isnan(points[1].accuracy));
}

TEST(SpecForgeLog, StreamingStepSummariesSurviveInterleavedLines) {
    // The streaming script prints a status line between pLoss lines.
    SpecForgeLogParser parser;
    parser.feed("Train Step [40], position 0,  Acc: 0.70\nTrain Step [40], position 1,  Acc: 0.50\n"
                "Train Step [40], position 0, pLoss: 1.00\n[Streaming] One epoch finished. Checking for new data...\n"
                "Train Step [40], position 1, pLoss: 2.00\n[Streaming] One epoch finished. Checking for new data...\n");
    auto points = parser.takePoints();
    ASSERT_EQ(points.size(), 1u);
    EXPECT_EQ(points[0].step, 40);
    EXPECT_NEAR(points[0].loss, 1.0 + 0.8 * 2.0, 1e-12);
    EXPECT_NEAR(points[0].accuracy, 0.70, 1e-12);
    // A block cut short (the run died) is still reported at finish().
    parser.feed("Train Step [80], position 0,  Acc: 0.75\nTrain Step [80], position 1,  Acc: 0.55\n"
                "Train Step [80], position 0, pLoss: 0.90\n");
    EXPECT_TRUE(parser.takePoints().empty());
    parser.finish();
    points = parser.takePoints();
    ASSERT_EQ(points.size(), 1u);
    EXPECT_EQ(points[0].step, 80);
    EXPECT_NEAR(points[0].loss, 0.90, 1e-12);
}

TEST(SpecForgeLog, JunkAndHugeLinesAreHarmless) {
    SpecForgeLogParser parser;
    parser.feed("Train Epoch [x/y], position 0,  Acc: 0.5\n");                    // no epoch number
    parser.feed("Train Epoch [1/2], position 99999999999999999999,  Acc: 0.5\n");  // absurd position
    parser.feed("Train Epoch [1/2], position 0,  Acc: \n");                       // no value
    parser.feed("12%|#| /10 [\n 5%|\n%||||\n");                                   // broken bars
    const char binary[] = "\0\xff\xfe garbage \x1b[";                              // NUL, invalid UTF-8, cut escape
    parser.feed(std::string(binary, sizeof binary - 1) + "\n");
    parser.finish();
    EXPECT_TRUE(parser.takePoints().empty());
    EXPECT_EQ(parser.takeLines().size(), 7u);   // all kept for the log view

    // "pLoss: nan" is reported as NaN, not dropped or turned into 0.
    parser.feed("Train Epoch [1/1], position 0,  Acc: 0.5\nTrain Epoch [1/1], position 0, pLoss: nan\n");
    auto points = parser.takePoints();
    ASSERT_EQ(points.size(), 1u);
    EXPECT_TRUE(std::isnan(points[0].loss));
    EXPECT_EQ(parser.takeLines().size(), 2u);

    // A line with no end is cut at kMaxLine, so memory stays bounded.
    parser.feed(std::string(3 * SpecForgeLogParser::kMaxLine + 5, 'a'));
    const auto lines = parser.takeLines();
    ASSERT_EQ(lines.size(), 3u);
    for (const auto& l : lines) EXPECT_EQ(l.size(), SpecForgeLogParser::kMaxLine);
    parser.finish();
    EXPECT_EQ(parser.takeLines().size(), 1u);
}
