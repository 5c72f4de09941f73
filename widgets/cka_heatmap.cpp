#include "cka_heatmap.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "colour_map.h"

namespace wl {

namespace {

// Geometry of the figure inside a target rect; shared by painting and hit testing.
struct HeatmapLayout {
    QRectF matrix;
    QRectF colour_bar;
    QRectF title;
    double cell = 0;
};

HeatmapLayout layoutFor(const QRectF& target, int n, bool title_visible = true) {
    HeatmapLayout l;
    const double title_h = title_visible ? 28 : 0, left = 52, bottom = 44, bar_w = 16, bar_gap = 18, bar_labels = 44;
    l.title = QRectF(target.left(), target.top() + 4, target.width(), title_h);
    const double avail_w = target.width() - left - bar_gap - bar_w - bar_labels - 8;
    const double avail_h = target.height() - title_h - bottom - 8;
    const double side = std::max(10.0, std::min(avail_w, avail_h));
    l.cell = n > 0 ? side / n : side;
    const double x0 = target.left() + left + std::max(0.0, (avail_w - side) / 2);
    l.matrix = QRectF(x0, target.top() + title_h + 8, side, side);
    l.colour_bar = QRectF(l.matrix.right() + bar_gap, l.matrix.top(), bar_w, side);
    return l;
}

// Tick step giving at most ~10 labels along an axis of n cells.
int tickStep(int n) {
    for (int step : {1, 2, 4, 5, 8, 10, 16, 20, 25, 50})
        if (n / step <= 10) return step;
    return 100;
}

}  // namespace

CkaHeatmap::CkaHeatmap(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setObjectName(QStringLiteral("ckaHeatmap"));
}

void CkaHeatmap::setData(const CkaData& data) {
    data_ = data;
    if (selected_i_ >= data_.size || selected_j_ >= data_.size) selected_i_ = selected_j_ = -1;
    update();
}

void CkaHeatmap::setSelectedPair(int i, int j) {
    selected_i_ = i;
    selected_j_ = j;
    update();
}

void CkaHeatmap::paintFigure(QPainter& p, const QRectF& target, const CkaData& data,
                             const QString& title, int sel_i, int sel_j) {
    p.save();
    p.fillRect(target, Qt::white);
    QFont base = p.font();
    base.setPixelSize(13);   // pixel sizes: independent of the device DPI (PNG at 300 DPI, PDF)
    p.setFont(base);
    const int n = data.size;
    const HeatmapLayout l = layoutFor(target, n, !title.isEmpty());

    QFont title_font = base;
    title_font.setPixelSize(16);
    title_font.setBold(true);
    p.setFont(title_font);
    p.setPen(QColor(30, 30, 30));
    p.drawText(l.title, Qt::AlignHCenter | Qt::AlignVCenter, title);
    p.setFont(base);

    if (n <= 0 || data.values.size() != static_cast<size_t>(n) * n) {
        p.setPen(QColor(120, 120, 120));
        p.drawText(l.matrix, Qt::AlignCenter, QStringLiteral("no CKA yet"));
        p.restore();
        return;
    }

    // Cells: one filled rectangle each (vector output in SVG/PDF). Slight overlap hides seams.
    p.setRenderHint(QPainter::Antialiasing, false);
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            QRectF cell(l.matrix.left() + j * l.cell, l.matrix.top() + i * l.cell, l.cell + 0.35, l.cell + 0.35);
            p.fillRect(cell, viridis(data.at(i, j)));
        }
    }
    p.setRenderHint(QPainter::Antialiasing, true);

    // Segment blocks on the diagonal (CKA segmentation).
    std::vector<int> starts{0};
    for (int s : data.segment_starts)
        if (s > 0 && s < n) starts.push_back(s);
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    starts.push_back(n);
    if (starts.size() > 2) {
        p.setPen(QPen(Qt::white, 2.0));
        p.setBrush(Qt::NoBrush);
        for (size_t k = 0; k + 1 < starts.size(); ++k) {
            const double a = starts[k] * l.cell, b = starts[k + 1] * l.cell;
            p.drawRect(QRectF(l.matrix.left() + a, l.matrix.top() + a, b - a, b - a));
        }
    }
    if (sel_i >= 0 && sel_j >= 0 && sel_i < n && sel_j < n) {
        p.setPen(QPen(QColor(230, 40, 40), 2.5));
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRectF(l.matrix.left() + sel_j * l.cell, l.matrix.top() + sel_i * l.cell, l.cell, l.cell));
    }
    p.setPen(QPen(QColor(60, 60, 60), 1.0));
    p.setBrush(Qt::NoBrush);
    p.drawRect(l.matrix);

    // Axes: ticks at cell centres.
    const int step = tickStep(n);
    p.setPen(QColor(40, 40, 40));
    const QFontMetricsF fm(base);
    for (int k = 0; k < n; k += step) {
        const double c = (k + 0.5) * l.cell;
        const QString label = QString::number(k);
        p.drawLine(QPointF(l.matrix.left() + c, l.matrix.bottom()), QPointF(l.matrix.left() + c, l.matrix.bottom() + 4));
        p.drawText(QRectF(l.matrix.left() + c - 20, l.matrix.bottom() + 5, 40, fm.height()), Qt::AlignHCenter | Qt::AlignTop, label);
        p.drawLine(QPointF(l.matrix.left() - 4, l.matrix.top() + c), QPointF(l.matrix.left(), l.matrix.top() + c));
        p.drawText(QRectF(l.matrix.left() - 44, l.matrix.top() + c - fm.height() / 2, 38, fm.height()), Qt::AlignRight | Qt::AlignVCenter, label);
    }
    p.drawText(QRectF(l.matrix.left(), l.matrix.bottom() + 6 + fm.height(), l.matrix.width(), fm.height() + 4),
               Qt::AlignHCenter | Qt::AlignTop, QStringLiteral("hidden state h"));
    p.save();
    p.translate(l.matrix.left() - 40, l.matrix.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-l.matrix.height() / 2, -fm.height() - 2, l.matrix.height(), fm.height() + 2),
               Qt::AlignHCenter | Qt::AlignBottom, QStringLiteral("hidden state h"));
    p.restore();

    // Colour bar: 64 bands, ticks at 0, 0.25, ..., 1.
    const int bands = 64;
    p.setRenderHint(QPainter::Antialiasing, false);
    for (int b = 0; b < bands; ++b) {
        const double v0 = static_cast<double>(b) / bands;
        const double y = l.colour_bar.bottom() - (b + 1) * l.colour_bar.height() / bands;
        p.fillRect(QRectF(l.colour_bar.left(), y, l.colour_bar.width(), l.colour_bar.height() / bands + 0.35),
                   viridis(v0 + 0.5 / bands));
    }
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setPen(QColor(60, 60, 60));
    p.drawRect(l.colour_bar);
    for (int t = 0; t <= 4; ++t) {
        const double v = t / 4.0;
        const double y = l.colour_bar.bottom() - v * l.colour_bar.height();
        p.drawLine(QPointF(l.colour_bar.right(), y), QPointF(l.colour_bar.right() + 4, y));
        p.drawText(QRectF(l.colour_bar.right() + 6, y - fm.height() / 2, 40, fm.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, QString::number(v, 'f', 2));
    }
    p.restore();
}

QPoint CkaHeatmap::cellAt(const QPointF& pos) const {
    const int n = data_.size;
    if (n <= 0) return {-1, -1};
    const HeatmapLayout l = layoutFor(QRectF(rect()), n, !title_.isEmpty());
    if (!l.matrix.contains(pos)) return {-1, -1};
    const int j = std::clamp(static_cast<int>((pos.x() - l.matrix.left()) / l.cell), 0, n - 1);
    const int i = std::clamp(static_cast<int>((pos.y() - l.matrix.top()) / l.cell), 0, n - 1);
    return {i, j};   // x() = row i, y() = column j
}

void CkaHeatmap::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::TextAntialiasing);
    paintFigure(p, QRectF(rect()), data_, title_, selected_i_, selected_j_);
}

void CkaHeatmap::mouseMoveEvent(QMouseEvent* event) {
    const QPoint cell = cellAt(event->position());
    if (cell.x() < 0) {
        QToolTip::hideText();
        return;
    }
    const double v = data_.at(cell.x(), cell.y());
    QToolTip::showText(event->globalPosition().toPoint(),
                       QStringLiteral("CKA(h%1, h%2) = %3").arg(cell.x()).arg(cell.y()).arg(v, 0, 'f', 4), this);
    Q_EMIT cellHovered(cell.x(), cell.y(), v);
}

void CkaHeatmap::mousePressEvent(QMouseEvent* event) {
    const QPoint cell = cellAt(event->position());
    if (cell.x() < 0) return;
    setSelectedPair(cell.x(), cell.y());
    Q_EMIT cellClicked(cell.x(), cell.y(), data_.at(cell.x(), cell.y()));
}

}  // namespace wl
