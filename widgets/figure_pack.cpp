#include "figure_pack.h"

#include <QBuffer>
#include <QDir>
#include <QPainter>
#include <sstream>

#include "activation_wave_chart.h"
#include "cka_heatmap.h"
#include "figure_data_io.h"
#include "figure_export.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace wl {

namespace {

std::string layerList(const std::vector<int>& v) {
    std::ostringstream out;
    out << '[';
    for (size_t k = 0; k < v.size(); ++k) out << (k ? ", " : "") << v[k];
    out << ']';
    return out.str();
}

std::string captions(const FigureSet& f) {
    const int points = f.wave.numPoints();
    std::ostringstream out;
    out << "WaveLab figure pack" << (f.model_name.empty() ? "" : " for " + f.model_name) << "\n\n";
    out << "activation_wave.{png,svg,pdf}\n"
        << "  Activation wave: matrix entropy of the hidden states at each depth h = 0.." << (points > 0 ? points - 1 : 0)
        << " (h = 0 is the token embeddings, h = k the output of decoder layer k-1).\n"
        << "  Solid: tokens kept by the token-entropy filter; dashed: all tokens.\n"
        << "  Stars: layers chosen by ELSI " << layerList(f.wave.chosen) << "; triangles: EAGLE3 baseline "
        << layerList(f.wave.eagle3) << "; squares: EAGLE2 baseline " << layerList(f.wave.eagle2) << ".\n"
        << "  Shaded bands: segments of similar representations from the CKA segmentation.\n"
        << (f.wave.subtitle.empty() ? "" : "  Run: " + f.wave.subtitle + "\n") << "\n";
    out << "cka_heatmap.{png,svg,pdf}\n"
        << "  Linear CKA between every pair of hidden states (" << f.cka.size << " x " << f.cka.size
        << "), viridis colour scale from 0 to 1; white squares outline the CKA segments.\n\n";
    if (f.surface.rows > 0)
        out << "entropy_surface.png (when drawn) / entropy_surface.csv\n"
            << "  Matrix entropy over hidden state x " << f.surface.col_title << " (" << f.surface.rows << " x "
            << f.surface.cols << ").\n\n";
    out << "Data: activation_wave.csv, cka.csv, entropy_surface.csv, layer_sets.csv (candidate layer sets and "
           "scores), figures.json (everything above).\n";
    if (!f.table.empty()) {
        out << "\nLayer sets:\n";
        for (const LayerSetRow& r : f.table) out << "  " << r.label << ": " << layerList(r.layers) << "  score " << r.score << "\n";
    }
    return out.str();
}

}  // namespace

void exportWaveFigure(const WaveData& wave, const QString& path, int dpi, const QSizeF& size) {
    exportFigure([&](QPainter& p, const QRectF& target) { ActivationWaveChart::paintFigure(p, target, wave, {}); }, size,
                 path, figureFormatForPath(path), dpi, QStringLiteral("Activation wave"));
}

void exportHeatmapFigure(const CkaData& cka, const QString& path, int dpi, const QSizeF& size) {
    exportFigure([&](QPainter& p, const QRectF& target) {
        CkaHeatmap::paintFigure(p, target, cka, QStringLiteral("Layer-by-layer linear CKA"));
    }, size, path, figureFormatForPath(path), dpi, QStringLiteral("CKA heatmap"));
}

QStringList writeFigurePack(const FigureSet& f, const QString& dir, const FigurePackOptions& options) {
    makeDirectories(dir.toStdString());
    const QDir out(dir);
    QStringList written;
    for (const char* ext : {"png", "svg", "pdf"}) {
        const QString wave_name = QStringLiteral("activation_wave.%1").arg(QLatin1String(ext));
        exportWaveFigure(f.wave, out.filePath(wave_name), options.dpi, options.wave_size);
        written << wave_name;
    }
    for (const char* ext : {"png", "svg", "pdf"}) {
        const QString name = QStringLiteral("cka_heatmap.%1").arg(QLatin1String(ext));
        exportHeatmapFigure(f.cka, out.filePath(name), options.dpi, options.heatmap_size);
        written << name;
    }
    if (!options.surface_image.isNull()) {
        QBuffer buffer;
        buffer.open(QIODevice::WriteOnly);
        options.surface_image.save(&buffer, "PNG");
        writeFileAtomic(out.filePath(QStringLiteral("entropy_surface.png")).toStdString(),
                        std::string_view(buffer.data().constData(), static_cast<size_t>(buffer.data().size())));
        written << QStringLiteral("entropy_surface.png");
    }
    auto write_text = [&](const QString& name, const std::string& text) {
        writeFileAtomic(out.filePath(name).toStdString(), text);
        written << name;
    };
    write_text(QStringLiteral("activation_wave.csv"), waveCsv(f.wave));
    write_text(QStringLiteral("cka.csv"), ckaCsv(f.cka));
    write_text(QStringLiteral("entropy_surface.csv"), surfaceCsv(f.surface));
    write_text(QStringLiteral("layer_sets.csv"), layerSetsCsv(f.table));
    write_text(QStringLiteral("figures.json"), figureSetToJson(f));
    write_text(QStringLiteral("README.txt"), captions(f));
    return written;
}

}  // namespace wl
