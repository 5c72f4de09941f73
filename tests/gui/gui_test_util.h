#pragma once
// Small helpers shared by the GUI tests: synthetic data and file checks.
#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QString>
#include <cmath>
#include <string>

#include "wave_data.h"

namespace wl::test {

inline QString artifactDir() {
    QDir().mkpath(QStringLiteral(WAVELAB_TEST_ARTIFACT_DIR));
    return QStringLiteral(WAVELAB_TEST_ARTIFACT_DIR);
}

inline QString workDir(const QString& name) {
    const QString dir = QStringLiteral(WAVELAB_TEST_WORK_DIR "/gui/") + name;
    QDir(dir).removeRecursively();
    QDir().mkpath(dir);
    return dir;
}

inline QByteArray readAll(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

// A wave with a dip and rise over n states, segments every third state.
inline FigureSet syntheticFigures(int n) {
    FigureSet f;
    f.model_name = "synthetic";
    for (int h = 0; h < n; ++h) {
        f.wave.filtered.push_back(0.5 + 0.3 * std::sin(h * 0.7));
        f.wave.unfiltered.push_back(0.45 + 0.25 * std::sin(h * 0.7 + 0.3));
    }
    f.wave.chosen = {1, n / 2, n - 2};
    f.wave.eagle3 = {2, (n - 1) / 2, n - 4};
    f.wave.eagle2 = {n - 1};
    for (int s = 3; s < n; s += 3) f.wave.segment_starts.push_back(s);
    f.cka.size = n;
    f.cka.segment_starts = f.wave.segment_starts;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) f.cka.values.push_back(std::exp(-std::abs(i - j) / 3.0));
    f.surface.rows = n;
    f.surface.cols = 8;
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < 8; ++c) f.surface.values.push_back(f.wave.filtered[r] * (0.8 + 0.05 * c));
    f.table = {{"ELSI-C", f.wave.chosen, 3.1}, {"EAGLE3 baseline", f.wave.eagle3, 2.8}};
    return f;
}

}  // namespace wl::test
