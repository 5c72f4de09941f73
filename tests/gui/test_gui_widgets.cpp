// Widget tests with synthetic data: colour mapping, series contents, hover/click signals,
// figure export validity (PNG/SVG/PDF), CSV/JSON round trips.
#include <gtest/gtest.h>

#include <QApplication>
#include <QImage>
#include <QMouseEvent>
#include <QLineSeries>
#include <QRegularExpression>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QTest>

#include "activation_wave_chart.h"
#include "cka_heatmap.h"
#include "colour_map.h"
#include "entropy_surface_view.h"
#include "figure_data_io.h"
#include "figure_export.h"
#include "figure_pack.h"
#include "gui_test_util.h"
#include "util/error.h"

using namespace wl;

namespace {

// Relative luminance (sRGB, Rec. 709 weights on linearised channels).
double luminance(const QColor& c) {
    auto lin = [](double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF());
}

}  // namespace

TEST(ColourMap, MatchesViridisReferenceStops) {
    // viridisLite::viridis(9), an independent published reference.
    const char* stops[] = {"#440154", "#472d7b", "#3b528b", "#2c728e", "#21908c", "#27ad81", "#5dc863", "#aadc32", "#fde725"};
    for (int i = 0; i < 9; ++i) EXPECT_EQ(viridis(i / 8.0).name(), QString::fromLatin1(stops[i])) << i;
    // Clamping and NaN.
    EXPECT_EQ(viridis(-3).name(), QStringLiteral("#440154"));
    EXPECT_EQ(viridis(7).name(), QStringLiteral("#fde725"));
    EXPECT_EQ(viridis(std::nan("")), QColor(128, 128, 128));
    // Half-way between two stops is their mean.
    const QColor mid = viridis(1.0 / 16.0);
    EXPECT_NEAR(mid.red(), (0x44 + 0x47) / 2.0, 0.51);
    EXPECT_NEAR(mid.green(), (0x01 + 0x2d) / 2.0, 0.51);
    EXPECT_NEAR(mid.blue(), (0x54 + 0x7b) / 2.0, 0.51);
}

TEST(ColourMap, LuminanceIncreasesMonotonically) {
    double previous = -1;
    for (int i = 0; i <= 100; ++i) {
        const double l = luminance(viridis(i / 100.0));
        EXPECT_GT(l, previous) << i;
        previous = l;
    }
}

TEST(CkaHeatmap, PaintsEachCellWithItsMappedColour) {
    const int n = 6;
    CkaData cka;
    cka.size = n;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) cka.values.push_back((i * n + j) / double(n * n - 1));
    CkaHeatmap heatmap;
    heatmap.resize(600, 520);
    heatmap.setData(cka);
    QImage image(heatmap.size(), QImage::Format_ARGB32);
    heatmap.render(&image);
    // Hit-test every cell centre through cellAt and compare the pixel with viridis(value).
    int checked = 0;
    for (int y = 0; y < image.height(); y += 3) {
        for (int x = 0; x < image.width(); x += 3) {
            const QPoint cell = heatmap.cellAt(QPointF(x + 0.5, y + 0.5));
            if (cell.x() < 0) continue;
            // Only interior pixels: their 5x5 neighbourhood is the same cell.
            if (heatmap.cellAt(QPointF(x - 4, y - 4)) != cell || heatmap.cellAt(QPointF(x + 5, y + 5)) != cell) continue;
            const QColor expected = viridis(cka.at(cell.x(), cell.y()));
            const QColor got = image.pixelColor(x, y);
            EXPECT_LE(std::abs(got.red() - expected.red()) + std::abs(got.green() - expected.green()) +
                          std::abs(got.blue() - expected.blue()), 3)
                << "cell " << cell.x() << "," << cell.y();
            ++checked;
        }
    }
    EXPECT_GT(checked, n * n * 5);
}

TEST(CkaHeatmap, HoverAndClickReportTheCell) {
    FigureSet f = test::syntheticFigures(6);
    CkaHeatmap heatmap;
    heatmap.resize(600, 520);
    heatmap.setData(f.cka);
    heatmap.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&heatmap));
    QSignalSpy clicked(&heatmap, &CkaHeatmap::cellClicked);
    QSignalSpy hovered(&heatmap, &CkaHeatmap::cellHovered);
    // Find the centre of cell (4, 1) by scanning.
    QPoint target(-1, -1);
    for (int y = 0; y < heatmap.height() && target.x() < 0; ++y)
        for (int x = 0; x < heatmap.width(); ++x)
            if (heatmap.cellAt(QPointF(x, y)) == QPoint(4, 1) && heatmap.cellAt(QPointF(x - 20, y - 20)) == QPoint(4, 1)) {
                target = QPoint(x, y);
                break;
            }
    ASSERT_GE(target.x(), 0);
    // A synthetic move event: QTest::mouseMove goes through the window system (asynchronous on X).
    QMouseEvent move(QEvent::MouseMove, QPointF(target), heatmap.mapToGlobal(QPointF(target)), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(&heatmap, &move);
    QTest::mouseClick(&heatmap, Qt::LeftButton, {}, target);
    ASSERT_EQ(clicked.count(), 1);
    EXPECT_EQ(clicked[0][0].toInt(), 4);
    EXPECT_EQ(clicked[0][1].toInt(), 1);
    EXPECT_DOUBLE_EQ(clicked[0][2].toDouble(), std::exp(-3 / 3.0));
    EXPECT_GE(hovered.count(), 1);
}

TEST(ActivationWaveChart, SeriesHoldOnePointPerHiddenState) {
    FigureSet f = test::syntheticFigures(6);
    ActivationWaveChart chart;
    chart.setWave(f.wave);
    ASSERT_EQ(chart.filteredSeries()->count(), 6);
    ASSERT_EQ(chart.unfilteredSeries()->count(), 6);
    for (int h = 0; h < 6; ++h) {
        EXPECT_DOUBLE_EQ(chart.filteredSeries()->at(h).x(), h);
        EXPECT_DOUBLE_EQ(chart.filteredSeries()->at(h).y(), f.wave.filtered[h]);
    }
    // Markers sit on the filtered curve at the chosen / baseline layers.
    ASSERT_EQ(chart.chosenSeries()->count(), 3);
    EXPECT_DOUBLE_EQ(chart.chosenSeries()->at(1).y(), f.wave.filtered[3]);
    EXPECT_EQ(chart.eagle3Series()->count(), 3);
    EXPECT_EQ(chart.eagle2Series()->count(), 1);
    EXPECT_EQ(chart.segmentCount(), 2);   // boundary at 3 -> [0..2], [3..5]
    // Out-of-range marker indices are dropped, not drawn off the curve.
    WaveData w = f.wave;
    w.chosen = {0, 9, -1};
    chart.setWave(w);
    EXPECT_EQ(chart.chosenSeries()->count(), 1);
    // Live updates with growing and shrinking data replace the points.
    FigureSet g = test::syntheticFigures(33);
    chart.setWave(g.wave);
    EXPECT_EQ(chart.filteredSeries()->count(), 33);
    EXPECT_EQ(chart.segmentCount(), 11);
}

TEST(FigureExport, PngHasRequestedDpiAndSize) {
    const QString dir = test::workDir(QStringLiteral("export_png"));
    FigureSet f = test::syntheticFigures(6);
    const QString path = dir + QStringLiteral("/wave.png");
    exportWaveFigure(f.wave, path, 192, QSizeF(500, 300));
    QImage image(path);
    ASSERT_FALSE(image.isNull());
    EXPECT_EQ(image.width(), 1000);
    EXPECT_EQ(image.height(), 600);
    EXPECT_NEAR(image.dotsPerMeterX() * 0.0254, 192, 0.5);
    // Not blank: the curve colour (tab:blue) appears.
    int blue = 0;
    for (int y = 0; y < image.height(); y += 2)
        for (int x = 0; x < image.width(); x += 2) {
            const QColor c = image.pixelColor(x, y);
            if (std::abs(c.red() - 31) < 20 && std::abs(c.green() - 119) < 20 && std::abs(c.blue() - 180) < 20) ++blue;
        }
    EXPECT_GT(blue, 100);
}

TEST(FigureExport, SvgParsesAndIsVector) {
    const QString dir = test::workDir(QStringLiteral("export_svg"));
    FigureSet f = test::syntheticFigures(6);
    exportHeatmapFigure(f.cka, dir + QStringLiteral("/cka.svg"), 300, QSizeF(640, 560));
    exportWaveFigure(f.wave, dir + QStringLiteral("/wave.svg"), 300);
    for (const QString name : {QStringLiteral("/cka.svg"), QStringLiteral("/wave.svg")}) {
        const QByteArray bytes = test::readAll(dir + name);
        QSvgRenderer renderer(bytes);
        EXPECT_TRUE(renderer.isValid()) << name.toStdString();
        EXPECT_TRUE(bytes.contains("<svg"));
        EXPECT_FALSE(bytes.contains("<image")) << "raster image inside " << name.toStdString();
    }
    // The heatmap's cells are vector rectangles/paths in the heatmap colours.
    const QByteArray cka = test::readAll(dir + QStringLiteral("/cka.svg"));
    EXPECT_TRUE(cka.contains(viridis(1.0).name().toLatin1())) << "diagonal colour missing";
}

TEST(FigureExport, PdfHasFigureSizedPage) {
    const QString dir = test::workDir(QStringLiteral("export_pdf"));
    FigureSet f = test::syntheticFigures(6);
    const QString path = dir + QStringLiteral("/cka.pdf");
    exportHeatmapFigure(f.cka, path, 300, QSizeF(640, 560));
    const QByteArray bytes = test::readAll(path);
    ASSERT_TRUE(bytes.startsWith("%PDF-"));
    EXPECT_TRUE(bytes.trimmed().endsWith("%%EOF"));
    // 640 x 560 px at 96 DPI = 480 x 420 pt.
    QRegularExpression media(QStringLiteral("/MediaBox \\[\\s*0 0 ([0-9.]+) ([0-9.]+)\\s*\\]"));
    auto m = media.match(QString::fromLatin1(bytes));
    ASSERT_TRUE(m.hasMatch());
    EXPECT_NEAR(m.captured(1).toDouble(), 480, 1.0);
    EXPECT_NEAR(m.captured(2).toDouble(), 420, 1.0);
}

TEST(FigureExport, RejectsUnknownFormatAndBadDpi) {
    EXPECT_THROW(figureFormatForPath(QStringLiteral("x.jpg")), Error);
    FigureSet f = test::syntheticFigures(6);
    const QString dir = test::workDir(QStringLiteral("export_bad"));
    EXPECT_THROW(exportWaveFigure(f.wave, dir + QStringLiteral("/w.png"), 5), Error);
    EXPECT_FALSE(QFile::exists(dir + QStringLiteral("/w.png")));
}

TEST(FigureData, JsonRoundTripAndCsv) {
    FigureSet f = test::syntheticFigures(6);
    f.wave.unfiltered[2] = std::nan("");
    const FigureSet g = figureSetFromJson(figureSetToJson(f), "mem");
    EXPECT_EQ(g.wave.filtered, f.wave.filtered);
    EXPECT_TRUE(std::isnan(g.wave.unfiltered[2]));
    EXPECT_EQ(g.wave.chosen, f.wave.chosen);
    EXPECT_EQ(g.cka.values, f.cka.values);
    EXPECT_EQ(g.surface.values, f.surface.values);
    ASSERT_EQ(g.table.size(), 2u);
    EXPECT_EQ(g.table[0].layers, f.table[0].layers);
    // CSV: header + one row per hidden state, 7 columns.
    const QStringList lines = QString::fromStdString(waveCsv(f.wave)).trimmed().split('\n');
    ASSERT_EQ(lines.size(), 7);
    for (const QString& line : lines) EXPECT_EQ(line.count(','), 6);
    EXPECT_TRUE(lines[2].startsWith(QStringLiteral("1,")));
    EXPECT_TRUE(lines[2].endsWith(QStringLiteral(",1,0,0,0"))) << lines[2].toStdString();   // h=1 chosen, segment 0
    EXPECT_THROW(figureSetFromJson("{\"cka\": {\"size\": 3, \"values\": [1]}}", "bad.json"), Error);
    EXPECT_THROW(figureSetFromJson("not json", "bad.json"), Error);
}

TEST(FigurePack, WritesEveryFormatAndCaptions) {
    const QString dir = test::workDir(QStringLiteral("pack"));
    FigureSet f = test::syntheticFigures(6);
    FigurePackOptions options;
    options.dpi = 150;
    const QStringList written = writeFigurePack(f, dir, options);
    for (const char* name : {"activation_wave.png", "activation_wave.svg", "activation_wave.pdf", "cka_heatmap.png",
                             "cka_heatmap.svg", "cka_heatmap.pdf", "activation_wave.csv", "cka.csv",
                             "entropy_surface.csv", "layer_sets.csv", "figures.json", "README.txt"}) {
        EXPECT_TRUE(written.contains(QString::fromLatin1(name))) << name;
        EXPECT_GT(QFileInfo(dir + '/' + name).size(), 0) << name;
    }
    EXPECT_FALSE(QImage(dir + QStringLiteral("/cka_heatmap.png")).isNull());
    const FigureSet back = figureSetFromJson(test::readAll(dir + QStringLiteral("/figures.json")).toStdString(), "pack");
    EXPECT_EQ(back.wave.filtered, f.wave.filtered);
    EXPECT_TRUE(test::readAll(dir + QStringLiteral("/README.txt")).contains("Activation wave"));
    QImage(dir + QStringLiteral("/activation_wave.png")).save(test::artifactDir() + QStringLiteral("/synthetic_wave.png"));
}

TEST(EntropySurfaceView, RendersUnderOpenGLOrShowsPlaceholder) {
    FigureSet f = test::syntheticFigures(6);
    EntropySurfaceView view;
    view.resize(520, 420);
    view.setSurface(f.surface);
    view.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
    QApplication::processEvents();
    if (!EntropySurfaceView::openGLAvailable()) {
        EXPECT_FALSE(view.isRendering3D());
        EXPECT_TRUE(view.grabFrame().isNull());
        GTEST_SKIP() << "no OpenGL on platform " << QGuiApplication::platformName().toStdString() << ": placeholder shown";
    }
    ASSERT_TRUE(view.isRendering3D());
    const QImage frame = view.grabFrame();
    ASSERT_FALSE(frame.isNull());
    frame.save(test::artifactDir() + QStringLiteral("/surface_synthetic.png"));
    // The surface is coloured with viridis: count strongly green/teal/purple pixels, which the
    // white/blue-grey gradient background never has.
    int coloured = 0;
    for (int y = 0; y < frame.height(); y += 2)
        for (int x = 0; x < frame.width(); x += 2) {
            const QColor c = frame.pixelColor(x, y);
            if (c.saturationF() > 0.45 && c.valueF() > 0.2) ++coloured;
        }
    EXPECT_GT(coloured, 300) << "no surface drawn";
}
