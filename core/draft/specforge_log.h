#pragma once
// Reads the console output of a SpecForge run (scripts/train_eagle3_online.py under torchrun,
// stdout and stderr merged) into training-curve points, so a front end that started SpecForge
// as an external process can chart it live. Lines SpecForge prints on rank 0:
//   Train Epoch [e/E], position i,  Acc: x        per-epoch means, one line per TTT position,
//   Train Epoch [e/E], position i, pLoss: x       all Acc lines first, then all pLoss lines
//   Train Step [n], position i, ...               the streaming variant of the script
//   Eval Epoch [e/E], position i, ...             evaluation after an epoch
//   Training Epoch k:  35%|###  | 35/100 [00:10<00:20, 3.2it/s, loss=1.23, acc=0.45]   (tqdm)
// tqdm redraws its bar with '\r'; each redraw is one line here. A summary's loss is SpecForge's
// training objective, sum_i 0.8^i pLoss_i; its accuracy is position 0's. Plain C++.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace wl {

struct SpecForgeCurvePoint {
    enum class Kind { TrainBar, TrainSummary, EvalSummary };
    Kind kind = Kind::TrainBar;
    double epochs = 0;       // x: epochs completed (fractional inside a bar); "Train Step" lines: 0
    int64_t step = -1;       // "Train Step [n]" lines: n; otherwise -1
    double loss = 0;         // NaN when the line carried no loss
    double accuracy = 0;     // NaN when the line carried no accuracy
};

struct SpecForgeProgress {
    std::string bar;         // the latest tqdm line, as printed
    std::string phase;       // its description, e.g. "Training Epoch 0"; may be empty
    int64_t done = 0, total = 0;
};

class SpecForgeLogParser {
public:
    // Appends raw console bytes; complete lines are parsed, a trailing partial line waits.
    void feed(std::string_view bytes);
    // At process end: parses a pending partial line and emits a half-collected summary.
    void finish();
    // Lines other than progress-bar redraws, completed since the last call (for a log view).
    std::vector<std::string> takeLines();
    std::vector<SpecForgeCurvePoint> takePoints();
    const SpecForgeProgress& progress() const { return progress_; }

    // A line longer than this is cut and parsed in pieces (nothing grows without bound).
    static constexpr size_t kMaxLine = 64 * 1024;

private:
    void parseLine(const std::string& raw);
    bool parseBar(const std::string& line);
    bool parseSummary(const std::string& line);
    void flushSummary();

    std::string pending_;
    std::vector<std::string> lines_;
    std::vector<SpecForgeCurvePoint> points_;
    SpecForgeProgress progress_;
    double last_bar_x_ = -1;
    double epochs_done_ = 0;   // from the last training summary, for bars without a description

    // The summary being collected: which block it belongs to, and its per-position values.
    bool collecting_ = false;
    SpecForgeCurvePoint::Kind summary_kind_ = SpecForgeCurvePoint::Kind::TrainSummary;
    double summary_epochs_ = 0;
    int64_t summary_step_ = -1;
    std::map<int, double> acc_, ploss_;
};

}  // namespace wl
