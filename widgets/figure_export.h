#pragma once
// Writes a figure (anything that can paint itself into a QPainter) as PNG at a chosen DPI,
// SVG (QSvgGenerator) or PDF (QPdfWriter). Files are written atomically (wl::writeFileAtomic).
#include <QSizeF>
#include <QString>
#include <functional>

class QPainter;
class QRectF;

namespace wl {

enum class FigureFormat { Png, Svg, Pdf };

// Paints the figure into `target` (logical pixels at 96 DPI).
using FigurePainter = std::function<void(QPainter&, const QRectF& target)>;

QString suffixOf(FigureFormat format);                 // "png", "svg", "pdf"
// From a path's extension; throws wl::Error(path, ...) for anything else.
FigureFormat figureFormatForPath(const QString& path);

// `size`: the figure in logical pixels (96 DPI). PNG is rendered at dpi/96 scale (vector
// content stays crisp); SVG and PDF stay vector. Throws wl::Error naming the file on failure.
void exportFigure(const FigurePainter& paint, const QSizeF& size, const QString& path,
                  FigureFormat format, int dpi = 300, const QString& title = {});
inline void exportFigure(const FigurePainter& paint, const QSizeF& size, const QString& path, int dpi = 300) {
    exportFigure(paint, size, path, figureFormatForPath(path), dpi);
}

}  // namespace wl
