#include "draft/specforge_log.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace wl {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Drops ANSI escape sequences (tqdm moves the cursor for nested bars) and trailing blanks.
std::string cleanLine(const std::string& raw) {
    std::string out;
    out.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '\x1b') {
            if (i + 1 < raw.size() && raw[i + 1] == '[') {
                i += 2;
                while (i < raw.size() && !(raw[i] >= 0x40 && raw[i] <= 0x7e)) ++i;
            }
            continue;
        }
        out += raw[i];
    }
    while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
    return out;
}

// Reads an integer at `pos` (after optional blanks); advances `pos`. False when none.
bool readInt(const std::string& s, size_t& pos, int64_t& value) {
    while (pos < s.size() && s[pos] == ' ') ++pos;
    const size_t start = pos;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
    if (pos == start || pos - start > 18) return false;
    value = std::strtoll(s.c_str() + start, nullptr, 10);
    return true;
}

// Reads a number at `pos` the way Python prints floats ("1.23", "nan", "inf", "1e-05").
bool readDouble(const std::string& s, size_t pos, double& value) {
    while (pos < s.size() && s[pos] == ' ') ++pos;
    if (pos >= s.size()) return false;
    const char* begin = s.c_str() + pos;
    char* end = nullptr;
    value = std::strtod(begin, &end);
    return end != begin;
}

// The value after `key` (e.g. "loss=") where key starts a postfix field, not inside another
// name such as "ploss=".
bool fieldValue(const std::string& s, const std::string& key, double& value) {
    for (size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + 1)) {
        if (at > 0 && (std::isalnum(static_cast<unsigned char>(s[at - 1])) || s[at - 1] == '_')) continue;
        return readDouble(s, at + key.size(), value);
    }
    return false;
}

}  // namespace

void SpecForgeLogParser::feed(std::string_view bytes) {
    for (char c : bytes) {
        if (c == '\n' || c == '\r') {
            if (!pending_.empty()) parseLine(pending_);
            pending_.clear();
            continue;
        }
        pending_ += c;
        if (pending_.size() >= kMaxLine) {
            parseLine(pending_);
            pending_.clear();
        }
    }
}

void SpecForgeLogParser::finish() {
    if (!pending_.empty()) parseLine(pending_);
    pending_.clear();
    flushSummary();
}

std::vector<std::string> SpecForgeLogParser::takeLines() {
    std::vector<std::string> out;
    out.swap(lines_);
    return out;
}

std::vector<SpecForgeCurvePoint> SpecForgeLogParser::takePoints() {
    std::vector<SpecForgeCurvePoint> out;
    out.swap(points_);
    return out;
}

void SpecForgeLogParser::parseLine(const std::string& raw) {
    std::string line = cleanLine(raw);
    if (line.empty()) return;
    if (parseBar(line)) return;
    parseSummary(line);
    lines_.push_back(std::move(line));
}

bool SpecForgeLogParser::parseBar(const std::string& line) {
    // "<desc>: 35%|<bar>| 35/100 [<elapsed><<left>, <rate>, key=value, ...]"; desc is optional.
    const size_t pct_bar = line.find("%|");
    if (pct_bar == std::string::npos) return false;
    const size_t bar_end = line.find('|', pct_bar + 2);
    if (bar_end == std::string::npos) return false;
    size_t pos = bar_end + 1;
    int64_t done = 0, total = 0;
    if (!readInt(line, pos, done) || pos >= line.size() || line[pos] != '/') return false;
    ++pos;
    if (!readInt(line, pos, total)) return false;
    size_t desc_end = pct_bar;
    while (desc_end > 0 && (std::isdigit(static_cast<unsigned char>(line[desc_end - 1])) || line[desc_end - 1] == ' ')) --desc_end;
    std::string desc = line.substr(0, desc_end);
    if (!desc.empty() && desc.back() == ':') desc.pop_back();
    progress_ = {line, desc, done, total};
    flushSummary();   // a new bar (evaluation, next epoch) means the summary block before it is complete

    // Evaluation bars only move the progress display; training bars with a loss become points.
    const bool eval = desc.find("Eval") != std::string::npos;
    double epoch = epochs_done_;
    const size_t epoch_at = desc.find("Epoch ");
    if (epoch_at != std::string::npos) {
        size_t p = epoch_at + 6;
        int64_t e = 0;
        if (readInt(desc, p, e)) epoch = static_cast<double>(e);   // tqdm descriptions count from 0
    }
    const size_t postfix = line.find('[', pos);
    double loss = kNaN, accuracy = kNaN;
    if (postfix != std::string::npos) {
        const std::string fields = line.substr(postfix);
        fieldValue(fields, "loss=", loss);
        fieldValue(fields, "acc=", accuracy);
    }
    if (eval || total <= 0 || (std::isnan(loss) && std::isnan(accuracy))) return true;
    const double x = epoch + static_cast<double>(done) / static_cast<double>(total);
    if (x == last_bar_x_) return true;   // a redraw of the same step (tqdm refreshes on a timer)
    last_bar_x_ = x;
    SpecForgeCurvePoint p;
    p.kind = SpecForgeCurvePoint::Kind::TrainBar;
    p.epochs = x;
    p.loss = loss;
    p.accuracy = accuracy;
    points_.push_back(p);
    return true;
}

bool SpecForgeLogParser::parseSummary(const std::string& line) {
    SpecForgeCurvePoint::Kind kind;
    size_t at;
    bool by_step = false;
    if ((at = line.find("Train Epoch [")) != std::string::npos) {
        kind = SpecForgeCurvePoint::Kind::TrainSummary;
        at += 13;
    } else if ((at = line.find("Eval Epoch [")) != std::string::npos) {
        kind = SpecForgeCurvePoint::Kind::EvalSummary;
        at += 12;
    } else if ((at = line.find("Train Step [")) != std::string::npos) {
        kind = SpecForgeCurvePoint::Kind::TrainSummary;
        at += 12;
        by_step = true;
    } else {
        return false;
    }
    int64_t counter = 0, of = 0;
    if (!readInt(line, at, counter)) return false;
    if (!by_step && at < line.size() && line[at] == '/') {
        ++at;
        if (!readInt(line, at, of)) return false;
    }
    const size_t position_at = line.find("position ", at);
    if (position_at == std::string::npos) return false;
    size_t p = position_at + 9;
    int64_t position = 0;
    if (!readInt(line, p, position) || position > 1024) return false;
    double value = 0;
    bool is_acc = false;
    size_t key = line.find("Acc:", p);
    if (key != std::string::npos) {
        is_acc = true;
        key += 4;
    } else if ((key = line.find("pLoss:", p)) != std::string::npos) {
        key += 6;
    } else {
        return false;
    }
    if (!readDouble(line, key, value)) return false;

    const double epochs = by_step ? 0.0 : static_cast<double>(counter);   // "[e/E]" counts from 1
    const int64_t step = by_step ? counter : -1;
    if (collecting_ && (kind != summary_kind_ || epochs != summary_epochs_ || step != summary_step_)) flushSummary();
    if (!collecting_) {
        collecting_ = true;
        summary_kind_ = kind;
        summary_epochs_ = epochs;
        summary_step_ = step;
    }
    (is_acc ? acc_ : ploss_)[static_cast<int>(position)] = value;
    // SpecForge prints every Acc line, then every pLoss line: the block is complete when the
    // pLoss positions have caught up with the Acc positions.
    if (!is_acc && !acc_.empty() && ploss_.size() >= acc_.size()) flushSummary();
    return true;
}

void SpecForgeLogParser::flushSummary() {
    if (!collecting_) return;
    SpecForgeCurvePoint p;
    p.kind = summary_kind_;
    p.epochs = summary_epochs_;
    p.step = summary_step_;
    p.loss = kNaN;
    if (!ploss_.empty()) {
        double sum = 0;
        for (const auto& [position, loss] : ploss_) sum += std::pow(0.8, position) * loss;
        p.loss = sum;
    }
    const auto first = acc_.find(0);
    p.accuracy = first != acc_.end() ? first->second : kNaN;
    points_.push_back(p);
    if (summary_kind_ == SpecForgeCurvePoint::Kind::TrainSummary && summary_step_ < 0) epochs_done_ = summary_epochs_;
    collecting_ = false;
    acc_.clear();
    ploss_.clear();
}

}  // namespace wl
