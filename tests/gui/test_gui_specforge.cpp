// The draft dialog's SpecForge tab, end to end with a stand-in `torchrun` on PATH (SpecForge
// itself needs GPUs): the set-up is written for the chosen layers, the launch script runs in
// its own process group from the SpecForge checkout, its console output streams into the log
// and the training chart, and Stop (or closing the dialog) ends every process it started.
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScatterSeries>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>
#include <csignal>
#include <memory>
#include <nlohmann/json.hpp>

#include "draft_dialog.h"
#include "gui_test_util.h"
#include "specforge_panel.h"

using namespace wl;

namespace {

const QString kModel = QStringLiteral(WAVELAB_MODELS_DIR "/stories260K/stories260K.bin");

// Records how it was called, then behaves as FAKE_SPECFORGE_MODE says: "train" prints what
// SpecForge prints for two epochs (tqdm bar on stderr with '\r' redraws, then the per-position
// summaries), "fail" dies like a CUDA OOM, "hang" waits on a child process.
const char* kFakeTorchrun = R"(#!/usr/bin/env bash
printf '%s\n' "$PWD" "$PYTHONUNBUFFERED" "$@" > "$FAKE_SPECFORGE_RECORD"
case "$FAKE_SPECFORGE_MODE" in
  hang)
    sleep 300 &
    echo $! > "$FAKE_SPECFORGE_RECORD.child"
    echo "waiting for GPUs"
    wait ;;
  fail)
    echo "torch.OutOfMemoryError: CUDA out of memory" >&2
    exit 3 ;;
  *)
    for e in 1 2; do
      for n in 1 2 3 4; do
        printf '\rTraining Epoch %d:  %d%%|##  | %d/4 [00:01<00:01,  2.00it/s, loss=1.%d, acc=0.%d0]' $((e-1)) $((n*25)) $n $((9-n)) $n >&2
        sleep 0.02
      done
      printf '\n' >&2
      echo "Train Epoch [$e/2], position 0,  Acc: 0.6$e"
      echo "Train Epoch [$e/2], position 1,  Acc: 0.4$e"
      echo "Train Epoch [$e/2], position 0, pLoss: 1.$e"
      echo "Train Epoch [$e/2], position 1, pLoss: 2.$e"
    done ;;
esac
)";

// PATH with the fake torchrun first, a SpecForge checkout, and the record file; restores the
// environment when it goes out of scope.
class FakeSpecForge {
public:
    explicit FakeSpecForge(const QString& name) : dir_(test::workDir(name)), old_path_(qgetenv("PATH")) {
        QDir(dir_).mkpath(QStringLiteral("bin"));
        QDir(dir_).mkpath(QStringLiteral("SpecForge/scripts"));
        QFile script(dir_ + QStringLiteral("/bin/torchrun"));
        EXPECT_TRUE(script.open(QIODevice::WriteOnly));
        script.write(kFakeTorchrun);
        script.close();
        script.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        QFile train(checkout() + QStringLiteral("/scripts/train_eagle3_online.py"));
        EXPECT_TRUE(train.open(QIODevice::WriteOnly));
        qputenv("PATH", (dir_ + QStringLiteral("/bin:")).toUtf8() + old_path_);
        qputenv("FAKE_SPECFORGE_RECORD", record().toUtf8());
        setMode("train");
    }
    ~FakeSpecForge() {
        qputenv("PATH", old_path_);
        qunsetenv("FAKE_SPECFORGE_RECORD");
        qunsetenv("FAKE_SPECFORGE_MODE");
    }
    void setMode(const char* mode) { qputenv("FAKE_SPECFORGE_MODE", mode); }
    QString checkout() const { return dir_ + QStringLiteral("/SpecForge"); }
    QString record() const { return dir_ + QStringLiteral("/torchrun.args"); }
    QString outDir() const { return dir_ + QStringLiteral("/out"); }

private:
    QString dir_;
    QByteArray old_path_;
};

struct Dialog {
    explicit Dialog(const FakeSpecForge& fake) {
        DraftTrainingRequest request;
        request.model_path = kModel;
        request.layers = {1, 3, 4};
        request.out_dir = fake.outDir();
        dialog = std::make_unique<DraftDialog>(request, nullptr);
        dialog->findChild<QTabWidget*>(QStringLiteral("draftTabs"))->setCurrentIndex(1);
        dialog->findChild<QLineEdit*>(QStringLiteral("specforgeCheckout"))->setText(fake.checkout());
        dialog->findChild<QSpinBox*>(QStringLiteral("specforgeGpus"))->setValue(2);
        dialog->findChild<QSpinBox*>(QStringLiteral("specforgeEpochs"))->setValue(2);
        status = dialog->findChild<QLabel*>(QStringLiteral("draftStatus"));
        log = dialog->findChild<QPlainTextEdit*>(QStringLiteral("specforgeLog"));
        start = dialog->findChild<QPushButton*>(QStringLiteral("specforgeStart"));
        stop = dialog->findChild<QPushButton*>(QStringLiteral("specforgeStop"));
    }
    bool waitForStatus(const QString& text, int ms = 20000) {
        return QTest::qWaitFor([&] { return status->text().contains(text); }, ms);
    }
    std::unique_ptr<DraftDialog> dialog;
    QLabel* status = nullptr;
    QPlainTextEdit* log = nullptr;
    QPushButton* start = nullptr;
    QPushButton* stop = nullptr;
};

QStringList recordedLines(const FakeSpecForge& fake) {
    return QString::fromUtf8(test::readAll(fake.record())).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

QString valueAfter(const QStringList& args, const QString& flag) {
    const int at = static_cast<int>(args.indexOf(flag));
    return at >= 0 && at + 1 < args.size() ? args[at + 1] : QString();
}

// True once `pid` is gone (or a zombie nobody has reaped yet: it no longer runs).
bool processEnded(qint64 pid) {
    if (::kill(static_cast<pid_t>(pid), 0) != 0) return true;
    const QByteArray stat = test::readAll(QStringLiteral("/proc/%1/stat").arg(pid));
    const int close = stat.lastIndexOf(')');
    return close > 0 && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

}  // namespace

TEST(SpecForgeTab, RunsTheLaunchScriptAndChartsItsLog) {
    ASSERT_TRUE(QFileInfo::exists(kModel)) << kModel.toStdString();
    FakeSpecForge fake(QStringLiteral("specforge_run"));
    Dialog d(fake);
    d.start->click();
    ASSERT_TRUE(d.waitForStatus(QStringLiteral("SpecForge finished"))) << d.status->text().toStdString();

    // torchrun ran in the checkout, with unbuffered Python, on the set-up just written.
    const QStringList recorded = recordedLines(fake);
    ASSERT_GE(recorded.size(), 3);
    EXPECT_EQ(QFileInfo(recorded[0]).canonicalFilePath(), QFileInfo(fake.checkout()).canonicalFilePath());
    EXPECT_EQ(recorded[1], QStringLiteral("1"));
    const QStringList args = recorded.mid(2);
    EXPECT_EQ(valueAfter(args, QStringLiteral("--nproc_per_node")), QStringLiteral("2"));
    EXPECT_TRUE(args.contains(QStringLiteral("scripts/train_eagle3_online.py")));
    EXPECT_EQ(valueAfter(args, QStringLiteral("--num-epochs")), QStringLiteral("2"));
    EXPECT_EQ(valueAfter(args, QStringLiteral("--target-model-path")), kModel);
    const QString config_path = valueAfter(args, QStringLiteral("--draft-model-config"));
    ASSERT_TRUE(QFileInfo(config_path).isFile()) << config_path.toStdString();
    const auto config = nlohmann::json::parse(test::readAll(config_path).toStdString());
    // HF hidden_states 1, 3, 4 are the outputs of decoder layers 0, 2, 3 (SpecForge's ids).
    EXPECT_EQ(config["eagle_config"]["eagle_aux_hidden_state_layer_ids"], nlohmann::json::parse("[0, 2, 3]"));
    EXPECT_TRUE(QFileInfo(valueAfter(args, QStringLiteral("--train-data-path"))).isFile());

    // Log: the command, then SpecForge's summary lines; bar redraws stay out of it.
    const QString log = d.log->toPlainText();
    EXPECT_TRUE(log.startsWith(QStringLiteral("$ torchrun"))) << log.toStdString();
    EXPECT_TRUE(log.contains(QStringLiteral("Train Epoch [2/2], position 1, pLoss: 2.2")));
    EXPECT_FALSE(log.contains(QStringLiteral("%|")));

    // Chart: one point per bar step (x in epochs), one objective point per epoch.
    QLineSeries* loss = d.dialog->lossSeries();
    QLineSeries* accuracy = d.dialog->accuracySeries();
    ASSERT_EQ(loss->count(), 8);
    ASSERT_EQ(accuracy->count(), 8);
    for (int i = 0; i < 8; ++i) {
        const int n = i % 4 + 1;
        EXPECT_DOUBLE_EQ(loss->at(i).x(), i / 4 + n / 4.0);
        EXPECT_NEAR(loss->at(i).y(), 1.0 + (9 - n) / 10.0, 1e-9);
        EXPECT_NEAR(accuracy->at(i).y(), n / 10.0, 1e-9);
    }
    QScatterSeries* objective = d.dialog->objectiveSeries();
    ASSERT_EQ(objective->count(), 2);
    for (int e = 1; e <= 2; ++e) {
        EXPECT_DOUBLE_EQ(objective->at(e - 1).x(), e);
        EXPECT_NEAR(objective->at(e - 1).y(), (1.0 + e / 10.0) + 0.8 * (2.0 + e / 10.0), 1e-9);
    }
    EXPECT_TRUE(objective->isVisible());
    EXPECT_TRUE(d.start->isEnabled());
    d.dialog->resize(720, 760);
    EXPECT_TRUE(d.dialog->grab().save(test::artifactDir() + QStringLiteral("/draft_specforge.png")));
    EXPECT_FALSE(d.stop->isEnabled());
}

TEST(SpecForgeTab, ReportsFailureWithTheLastOutput) {
    FakeSpecForge fake(QStringLiteral("specforge_fail"));
    fake.setMode("fail");
    Dialog d(fake);
    d.start->click();
    ASSERT_TRUE(d.waitForStatus(QStringLiteral("exit code 3"))) << d.status->text().toStdString();
    EXPECT_TRUE(d.status->text().contains(QStringLiteral("CUDA out of memory"))) << d.status->text().toStdString();
    EXPECT_TRUE(d.start->isEnabled());
}

TEST(SpecForgeTab, StopAndCloseEndEveryProcessItStarted) {
    FakeSpecForge fake(QStringLiteral("specforge_stop"));
    fake.setMode("hang");
    const QString child_file = fake.record() + QStringLiteral(".child");
    auto childPid = [&] { return QString::fromUtf8(test::readAll(child_file)).trimmed().toLongLong(); };
    {
        Dialog d(fake);
        d.start->click();
        ASSERT_TRUE(QTest::qWaitFor([&] { return d.log->toPlainText().contains(QStringLiteral("waiting for GPUs")); }, 20000))
            << d.status->text().toStdString();
        const qint64 child = childPid();
        ASSERT_GT(child, 0);
        EXPECT_FALSE(processEnded(child));
        EXPECT_TRUE(d.stop->isEnabled());
        d.stop->click();
        ASSERT_TRUE(d.waitForStatus(QStringLiteral("SpecForge stopped"))) << d.status->text().toStdString();
        // The worker torchrun spawned got the signal too, not only bash.
        EXPECT_TRUE(QTest::qWaitFor([&] { return processEnded(child); }, 10000)) << child;
    }
    QFile::remove(child_file);
    qint64 child = 0;
    {
        Dialog d(fake);
        d.start->click();
        ASSERT_TRUE(QTest::qWaitFor([&] { return QFileInfo::exists(child_file) && childPid() > 0; }, 20000));
        child = childPid();
    }   // closing the dialog while SpecForge runs
    EXPECT_TRUE(QTest::qWaitFor([&] { return processEnded(child); }, 10000)) << child;
}

TEST(SpecForgeTab, RefusesToStartWithoutACheckout) {
    FakeSpecForge fake(QStringLiteral("specforge_refuse"));
    Dialog d(fake);
    d.dialog->findChild<QLineEdit*>(QStringLiteral("specforgeCheckout"))->setText(fake.outDir());
    d.start->click();
    EXPECT_TRUE(d.status->text().contains(QStringLiteral("not a SpecForge checkout"))) << d.status->text().toStdString();
    EXPECT_FALSE(QFileInfo::exists(fake.record()));   // nothing ran
    // The set-up itself was written, so it can be copied to a cluster by hand.
    EXPECT_TRUE(QFileInfo::exists(fake.outDir() + QStringLiteral("/specforge/launch_specforge.sh")));
    // Without torchrun on PATH it says so instead of failing inside bash.
    d.dialog->findChild<QLineEdit*>(QStringLiteral("specforgeCheckout"))->setText(fake.checkout());
    qputenv("PATH", "/nonexistent");
    d.start->click();
    EXPECT_TRUE(d.status->text().contains(QStringLiteral("torchrun is not on PATH"))) << d.status->text().toStdString();
    EXPECT_TRUE(d.start->isEnabled());
}
