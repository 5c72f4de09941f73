// `wavelab-cli figure`: a result JSON (written here through core's own writer, from a synthetic
// analysis) becomes the figure pack without a display.
#include <gtest/gtest.h>

#include <QImage>
#include <QProcess>
#include <QSvgRenderer>
#include <cmath>

#include "gui_test_util.h"
#include "selection/selection_report.h"

using namespace wl;

TEST(CliFigure, WritesFigurePackFromResultJson) {
    const QString dir = test::workDir(QStringLiteral("cli_figure"));
    const int L = 6;
    SelectionReport r;
    r.wavelab_version = "test";
    r.created_utc = "2026-01-01T00:00:00Z";
    r.model.name = "synthetic";
    r.model.num_layers = L - 1;
    r.model.hidden_size = 64;
    r.analysis.num_states = L;
    r.analysis.hidden_size = 64;
    r.analysis.tokens_kept = 500;
    r.analysis.tokens_candidates = 1000;
    r.analysis.finished = true;
    for (int h = 0; h < L; ++h) {
        r.analysis.entropy_filtered.push_back(2.0 + std::sin(h));
        r.analysis.entropy_unfiltered.push_back(1.8 + std::sin(h));
    }
    for (int i = 0; i < L; ++i)
        for (int j = 0; j < L; ++j) r.analysis.cka.push_back(std::exp(-std::abs(i - j) / 2.0));
    r.analysis.boundaries = {3};
    r.analysis.segments = {{0, 2}, {3, 5}};
    r.selection.num_states = L;
    r.selection.chosen.states = {1, 3, 5};
    r.selection.chosen.entropy = 3.0;
    const QString result = dir + QStringLiteral("/result.json");
    saveSelectionReport(r, result.toStdString());

    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(WAVELAB_CLI_PATH), {QStringLiteral("figure"), QStringLiteral("--result"), result,
                                               QStringLiteral("--out"), dir + QStringLiteral("/out"), QStringLiteral("--dpi"), QStringLiteral("120")});
    ASSERT_TRUE(p.waitForFinished(120000));
    const std::string log = p.readAll().toStdString();
    ASSERT_EQ(p.exitCode(), 0) << log;
    const QString out = dir + QStringLiteral("/out/");
    EXPECT_FALSE(QImage(out + QStringLiteral("activation_wave.png")).isNull()) << log;
    EXPECT_FALSE(QImage(out + QStringLiteral("cka_heatmap.png")).isNull());
    EXPECT_TRUE(QSvgRenderer(out + QStringLiteral("activation_wave.svg")).isValid());
    EXPECT_TRUE(QSvgRenderer(out + QStringLiteral("cka_heatmap.svg")).isValid());
    EXPECT_TRUE(test::readAll(out + QStringLiteral("activation_wave.pdf")).startsWith("%PDF-"));
    EXPECT_TRUE(test::readAll(out + QStringLiteral("cka_heatmap.pdf")).startsWith("%PDF-"));
    const QStringList csv = QString::fromLatin1(test::readAll(out + QStringLiteral("activation_wave.csv"))).trimmed().split('\n');
    ASSERT_EQ(csv.size(), L + 1);
    EXPECT_TRUE(csv[2].startsWith(QStringLiteral("1,"))) << csv[2].toStdString();
    EXPECT_TRUE(csv[2].contains(QStringLiteral(",1,"))) << "h=1 should be marked chosen: " << csv[2].toStdString();

    // Bad input: one clear line naming the file, exit code 1.
    QProcess bad;
    bad.setProcessChannelMode(QProcess::MergedChannels);
    bad.setProcessEnvironment(env);
    bad.start(QStringLiteral(WAVELAB_CLI_PATH), {QStringLiteral("figure"), QStringLiteral("--result"), dir + QStringLiteral("/missing.json"),
                                                 QStringLiteral("--out"), dir + QStringLiteral("/out2")});
    ASSERT_TRUE(bad.waitForFinished(60000));
    EXPECT_EQ(bad.exitCode(), 1);
    EXPECT_TRUE(bad.readAll().contains("missing.json"));
}
