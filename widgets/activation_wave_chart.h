#pragma once
// The activation wave: matrix entropy per hidden state (filtered and unfiltered tokens), the
// chosen layers and the EAGLE2/EAGLE3 baselines marked on the curve, CKA segments shaded, the
// beam-search candidate highlighted. Hover shows values; clicking a point emits its layer.
#include <QChartView>

#include "wave_data.h"

class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace wl {

class ActivationWaveChart : public QChartView {
    Q_OBJECT
public:
    explicit ActivationWaveChart(QWidget* parent = nullptr);

    // Cheap enough to call a few times per second while prompts stream in.
    void setWave(const WaveData& wave);
    const WaveData& wave() const { return wave_; }
    void setHighlighted(const std::vector<int>& layers);
    void setTitle(const QString& title);

    // For tests and figure export.
    QLineSeries* filteredSeries() const { return filtered_; }
    QLineSeries* unfilteredSeries() const { return unfiltered_; }
    QScatterSeries* chosenSeries() const { return chosen_; }
    QScatterSeries* eagle3Series() const { return eagle3_; }
    QScatterSeries* eagle2Series() const { return eagle2_; }
    int segmentCount() const;

    // Renders `wave` as a standalone figure of `size` logical pixels into any painter.
    static void paintFigure(QPainter& painter, const QRectF& target, const WaveData& wave, const QString& title);

    QSize sizeHint() const override { return {760, 420}; }

Q_SIGNALS:
    void layerHovered(int layer, double value);
    void layerClicked(int layer);

private:
    void rebuildSegments(double y_min, double y_max);
    void onHovered(const QPointF& point, bool state, const QString& series_name);

    WaveData wave_;
    QLineSeries* filtered_ = nullptr;
    QLineSeries* unfiltered_ = nullptr;
    QScatterSeries* chosen_ = nullptr;
    QScatterSeries* eagle3_ = nullptr;
    QScatterSeries* eagle2_ = nullptr;
    QScatterSeries* highlighted_ = nullptr;
    QValueAxis* axis_x_ = nullptr;
    QValueAxis* axis_y_ = nullptr;
    std::vector<QAbstractSeries*> segment_series_;
};

}  // namespace wl
