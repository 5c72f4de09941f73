#pragma once
// "Figure pack": every WaveLab figure in every format plus the data behind it and a
// README.txt with captions, in one folder, ready for a paper. Used by the window's
// File > Export figure pack and by `wavelab-cli figure`. Needs a QApplication (any platform,
// `offscreen` included) because the charts are Qt widgets.
#include <QImage>
#include <QSizeF>
#include <QString>
#include <QStringList>

#include "wave_data.h"

namespace wl {

struct FigurePackOptions {
    int dpi = 300;
    QSizeF wave_size{900, 500};      // logical px (96 DPI)
    QSizeF heatmap_size{640, 560};
    QImage surface_image;            // rendered 3D view, written as PNG when not null
};

// Writes into `dir` (created if missing) and returns the file names written, in order.
// Throws wl::Error naming the file on failure.
QStringList writeFigurePack(const FigureSet& figures, const QString& dir, const FigurePackOptions& options = {});

// The wave and heatmap alone (used by the per-chart export actions).
void exportWaveFigure(const WaveData& wave, const QString& path, int dpi, const QSizeF& size = {900, 500});
void exportHeatmapFigure(const CkaData& cka, const QString& path, int dpi, const QSizeF& size = {640, 560});

}  // namespace wl
