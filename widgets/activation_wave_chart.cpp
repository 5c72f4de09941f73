#include "activation_wave_chart.h"

#include <QAreaSeries>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QChart>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QToolTip>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>

namespace wl {

namespace {

const QColor kFilteredColour(31, 119, 180);     // matplotlib tab:blue
const QColor kUnfilteredColour(127, 127, 127);  // tab:grey
const QColor kChosenColour(255, 127, 14);       // tab:orange
const QColor kEagle3Colour(44, 160, 44);        // tab:green
const QColor kEagle2Colour(214, 39, 40);        // tab:red
const QColor kHighlightColour(148, 103, 189);   // tab:purple

QList<QPointF> pointsFor(const std::vector<double>& values) {
    QList<QPointF> points;
    points.reserve(static_cast<qsizetype>(values.size()));
    // Non-finite values (a live snapshot before enough tokens) are left out, not drawn.
    for (size_t h = 0; h < values.size(); ++h)
        if (std::isfinite(values[h])) points.append(QPointF(static_cast<double>(h), values[h]));
    return points;
}

QList<QPointF> markersFor(const std::vector<int>& layers, const std::vector<double>& values) {
    QList<QPointF> points;
    for (int h : layers)
        if (h >= 0 && static_cast<size_t>(h) < values.size() && std::isfinite(values[static_cast<size_t>(h)])) points.append(QPointF(h, values[static_cast<size_t>(h)]));
    return points;
}

QScatterSeries* makeMarkers(const QString& name, const QColor& colour, QScatterSeries::MarkerShape shape, double size) {
    auto* s = new QScatterSeries;
    s->setName(name);
    s->setMarkerShape(shape);
    s->setMarkerSize(size);
    s->setColor(colour);
    s->setBorderColor(colour.darker(150));
    return s;
}

}  // namespace

ActivationWaveChart::ActivationWaveChart(QWidget* parent) : QChartView(parent) {
    setObjectName(QStringLiteral("activationWaveChart"));
    setRenderHint(QPainter::Antialiasing);
    auto* chart = new QChart;
    chart->setTitle(QStringLiteral("Activation wave"));
    QFont title_font = chart->titleFont();
    title_font.setPointSizeF(12);
    title_font.setBold(true);
    chart->setTitleFont(title_font);
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(6, 6, 6, 6));
    chart->legend()->setAlignment(Qt::AlignBottom);

    axis_x_ = new QValueAxis;
    axis_x_->setTitleText(QStringLiteral("hidden state h (0 = embeddings)"));
    axis_x_->setLabelFormat(QStringLiteral("%d"));
    axis_y_ = new QValueAxis;
    axis_y_->setTitleText(QString::fromStdString(wave_.y_title));
    axis_y_->setLabelFormat(QStringLiteral("%.2f"));
    for (QValueAxis* a : {axis_x_, axis_y_}) {
        a->setGridLineColor(QColor(225, 225, 225));
        a->setMinorGridLineVisible(false);
    }
    chart->addAxis(axis_x_, Qt::AlignBottom);
    chart->addAxis(axis_y_, Qt::AlignLeft);

    unfiltered_ = new QLineSeries;
    unfiltered_->setName(QStringLiteral("all tokens"));
    unfiltered_->setPen(QPen(kUnfilteredColour, 2.0, Qt::DashLine));
    filtered_ = new QLineSeries;
    filtered_->setName(QStringLiteral("filtered tokens"));
    filtered_->setPen(QPen(kFilteredColour, 2.6));
    filtered_->setPointsVisible(true);
    highlighted_ = makeMarkers(QStringLiteral("beam candidate"), QColor(0, 0, 0, 0), QScatterSeries::MarkerShapeCircle, 24);
    highlighted_->setPen(QPen(kHighlightColour, 3.0));
    highlighted_->setBrush(Qt::NoBrush);
    eagle2_ = makeMarkers(QStringLiteral("EAGLE2"), kEagle2Colour, QScatterSeries::MarkerShapeRectangle, 11);
    eagle3_ = makeMarkers(QStringLiteral("EAGLE3"), kEagle3Colour, QScatterSeries::MarkerShapeTriangle, 14);
    chosen_ = makeMarkers(QStringLiteral("ELSI choice"), kChosenColour, QScatterSeries::MarkerShapeStar, 20);

    for (QXYSeries* s : std::initializer_list<QXYSeries*>{unfiltered_, filtered_, highlighted_, eagle2_, eagle3_, chosen_}) {
        chart->addSeries(s);
        s->attachAxis(axis_x_);
        s->attachAxis(axis_y_);
        const QString name = s->name();
        connect(s, &QXYSeries::hovered, this, [this, name](const QPointF& p, bool state) { onHovered(p, state, name); });
        connect(s, &QXYSeries::clicked, this, [this](const QPointF& p) { Q_EMIT layerClicked(static_cast<int>(std::lround(p.x()))); });
    }
    setChart(chart);
    setWave(wave_);
}

void ActivationWaveChart::setTitle(const QString& title) { chart()->setTitle(title); }

int ActivationWaveChart::segmentCount() const {
    // Shaded areas alternate, so count segments from the data rather than the series.
    int n = 1;
    for (int s : wave_.segment_starts)
        if (s > 0 && s < wave_.numPoints()) ++n;
    return wave_.numPoints() > 0 ? n : 0;
}

void ActivationWaveChart::setWave(const WaveData& wave) {
    wave_ = wave;
    filtered_->replace(pointsFor(wave.filtered));
    unfiltered_->replace(pointsFor(wave.unfiltered));
    const std::vector<double>& base = wave.filtered.empty() ? wave.unfiltered : wave.filtered;
    chosen_->replace(markersFor(wave.chosen, base));
    eagle3_->replace(markersFor(wave.eagle3, base));
    eagle2_->replace(markersFor(wave.eagle2, base));
    highlighted_->replace(markersFor(wave.highlighted, base));
    axis_y_->setTitleText(QString::fromStdString(wave.y_title));
    const bool has_unfiltered = !wave.unfiltered.empty();
    unfiltered_->setVisible(has_unfiltered);

    // Axis ranges: integer ticks on x, padded range on y.
    const int n = std::max(wave.numPoints(), static_cast<int>(wave.unfiltered.size()));
    axis_x_->setRange(-0.5, std::max(1, n) - 0.5);
    const int step = n <= 12 ? 1 : n <= 24 ? 2 : n <= 60 ? 5 : 10;
    axis_x_->setTickType(QValueAxis::TicksDynamic);
    axis_x_->setTickAnchor(0);
    axis_x_->setTickInterval(step);
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto* v : {&wave.filtered, &wave.unfiltered})
        for (double x : *v)
            if (std::isfinite(x)) { lo = std::min(lo, x); hi = std::max(hi, x); }
    if (!std::isfinite(lo)) { lo = 0; hi = 1; }
    const double pad = std::max(1e-6, (hi - lo) * 0.12);
    axis_y_->setRange(lo - pad, hi + pad);
    axis_y_->applyNiceNumbers();
    rebuildSegments(axis_y_->min(), axis_y_->max());

    // Hide legend entries for empty marker series and the shading.
    for (QLegendMarker* m : chart()->legend()->markers()) {
        auto* xy = qobject_cast<QXYSeries*>(m->series());
        const bool shading = qobject_cast<QAreaSeries*>(m->series()) != nullptr;
        m->setVisible(!shading && xy && xy->count() > 0);
    }
    if (auto* shading = segment_series_.empty() ? nullptr : segment_series_.front()) {
        for (QLegendMarker* m : chart()->legend()->markers(shading)) { m->setVisible(true); m->setLabel(QStringLiteral("CKA segment")); }
    }
    QString subtitle = QString::fromStdString(wave.subtitle);
    chart()->setTitle(subtitle.isEmpty() ? QStringLiteral("Activation wave") : QStringLiteral("Activation wave — %1").arg(subtitle));
}

void ActivationWaveChart::setHighlighted(const std::vector<int>& layers) {
    wave_.highlighted = layers;
    const std::vector<double>& base = wave_.filtered.empty() ? wave_.unfiltered : wave_.filtered;
    highlighted_->replace(markersFor(layers, base));
    for (QLegendMarker* m : chart()->legend()->markers(highlighted_)) m->setVisible(!layers.empty());
}

void ActivationWaveChart::rebuildSegments(double y_min, double y_max) {
    for (QAbstractSeries* s : segment_series_) {
        chart()->removeSeries(s);
        delete s;
    }
    segment_series_.clear();
    const int n = wave_.numPoints();
    std::vector<int> starts{0};
    for (int s : wave_.segment_starts)
        if (s > 0 && s < n) starts.push_back(s);
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    if (starts.size() < 2) return;
    starts.push_back(n);
    // Shade every other segment; boundaries sit half-way between hidden states.
    for (size_t k = 0; k + 1 < starts.size(); k += 2) {
        auto* upper = new QLineSeries;
        auto* lower = new QLineSeries;
        const double x0 = starts[k] - 0.5, x1 = starts[k + 1] - 0.5;
        upper->append(x0, y_max);
        upper->append(x1, y_max);
        lower->append(x0, y_min);
        lower->append(x1, y_min);
        auto* area = new QAreaSeries(upper, lower);
        upper->setParent(area);
        lower->setParent(area);
        area->setName(QStringLiteral("CKA segment"));
        area->setColor(QColor(31, 119, 180, 28));
        area->setBorderColor(QColor(31, 119, 180, 70));
        chart()->addSeries(area);
        area->attachAxis(axis_x_);
        area->attachAxis(axis_y_);
        segment_series_.push_back(area);
    }
    // Keep the curves above the shading.
    for (QXYSeries* s : std::initializer_list<QXYSeries*>{unfiltered_, filtered_, highlighted_, eagle2_, eagle3_, chosen_}) {
        s->setVisible(false);
        s->setVisible(s != unfiltered_ || !wave_.unfiltered.empty());
    }
}

void ActivationWaveChart::onHovered(const QPointF& point, bool state, const QString& series_name) {
    if (!state) {
        QToolTip::hideText();
        return;
    }
    const int h = static_cast<int>(std::lround(point.x()));
    QString text = QStringLiteral("<b>h = %1</b> (%2)<br>%3: %4")
                       .arg(h)
                       .arg(h == 0 ? QStringLiteral("embeddings") : QStringLiteral("after layer %1").arg(h - 1))
                       .arg(series_name)
                       .arg(point.y(), 0, 'f', 4);
    if (static_cast<size_t>(h) < wave_.unfiltered.size() && series_name != unfiltered_->name())
        text += QStringLiteral("<br>all tokens: %1").arg(wave_.unfiltered[static_cast<size_t>(h)], 0, 'f', 4);
    auto has = [h](const std::vector<int>& v) { return std::find(v.begin(), v.end(), h) != v.end(); };
    if (has(wave_.chosen)) text += QStringLiteral("<br>chosen by ELSI");
    if (has(wave_.eagle3)) text += QStringLiteral("<br>EAGLE3 baseline");
    if (has(wave_.eagle2)) text += QStringLiteral("<br>EAGLE2 baseline");
    QToolTip::showText(QCursor::pos(), text, this);
    Q_EMIT layerHovered(h, point.y());
}

void ActivationWaveChart::paintFigure(QPainter& painter, const QRectF& target, const WaveData& wave, const QString& title) {
    // A private chart sized to the figure, so exports do not depend on the window layout.
    ActivationWaveChart figure;
    figure.setAttribute(Qt::WA_DontShowOnScreen);
    figure.setWave(wave);
    if (!title.isEmpty()) figure.setTitle(title);
    figure.setFrameShape(QFrame::NoFrame);
    figure.resize(target.size().toSize());
    figure.chart()->resize(target.size());
    figure.chart()->setPos(0, 0);
    figure.scene()->setSceneRect(QRectF(QPointF(0, 0), target.size()));
    figure.chart()->layout()->activate();
    figure.scene()->render(&painter, target, QRectF(QPointF(0, 0), target.size()));
}

}  // namespace wl
