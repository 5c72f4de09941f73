#pragma once
// L+1 x L+1 CKA heatmap with a colour bar, hover values, click-to-select a layer pair and the
// CKA segment boundaries outlined. Painted with plain rectangles so SVG/PDF export stays crisp.
#include <QWidget>

#include "wave_data.h"

namespace wl {

class CkaHeatmap : public QWidget {
    Q_OBJECT
public:
    explicit CkaHeatmap(QWidget* parent = nullptr);

    void setData(const CkaData& data);
    const CkaData& data() const { return data_; }
    void setSelectedPair(int i, int j);   // -1, -1 clears
    void setTitle(const QString& title) { title_ = title; update(); }

    // The figure: title, matrix, axes, colour bar, boundaries, into `target` (any painter:
    // screen, image, SVG, PDF).
    static void paintFigure(QPainter& painter, const QRectF& target, const CkaData& data,
                            const QString& title, int selected_i = -1, int selected_j = -1);
    // Cell under a widget position, or (-1, -1).
    QPoint cellAt(const QPointF& pos) const;

    QSize sizeHint() const override { return {520, 440}; }
    QSize minimumSizeHint() const override { return {200, 180}; }

Q_SIGNALS:
    void cellHovered(int i, int j, double value);
    void cellClicked(int i, int j, double value);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    CkaData data_;
    QString title_ = QStringLiteral("Layer-by-layer linear CKA");
    int selected_i_ = -1;
    int selected_j_ = -1;
};

}  // namespace wl
