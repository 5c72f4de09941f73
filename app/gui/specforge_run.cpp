#include "specforge_run.h"

#include <QDir>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTimer>
#include <csignal>
#include <unistd.h>

#include "draft/specforge_log.h"

namespace wl {

SpecForgeRun::SpecForgeRun(QObject* parent) : QObject(parent), parser_(std::make_unique<SpecForgeLogParser>()) {
    kill_timer_ = new QTimer(this);
    kill_timer_->setSingleShot(true);
    connect(kill_timer_, &QTimer::timeout, this, [this] { signalGroup(SIGKILL); });
}

SpecForgeRun::~SpecForgeRun() {
    if (!process_) return;
    process_->disconnect(this);
    if (process_->state() != QProcess::NotRunning) {
        signalGroup(SIGTERM);
        if (!process_->waitForFinished(3000)) {
            signalGroup(SIGKILL);
            process_->waitForFinished(3000);
        }
    }
}

bool SpecForgeRun::isRunning() const { return process_ && process_->state() != QProcess::NotRunning; }

qint64 SpecForgeRun::processId() const { return process_ ? process_->processId() : 0; }

bool SpecForgeRun::start(const QString& launch_script, const QString& specforge_dir, QString* error) {
    auto fail = [error](const QString& message) {
        if (error) *error = message;
        return false;
    };
    if (isRunning()) return fail(tr("SpecForge is already running."));
    const QFileInfo script(launch_script);
    if (!script.isFile()) return fail(tr("%1: no launch script there (write the set-up first).").arg(launch_script));
    if (specforge_dir.isEmpty()) return fail(tr("Choose the folder of a SpecForge checkout."));
    const QString train_script = QDir(specforge_dir).filePath(QStringLiteral("scripts/train_eagle3_online.py"));
    if (!QFileInfo(train_script).isFile())
        return fail(tr("%1: not a SpecForge checkout (scripts/train_eagle3_online.py is missing).").arg(specforge_dir));
    if (QStandardPaths::findExecutable(QStringLiteral("torchrun")).isEmpty())
        return fail(tr("torchrun is not on PATH: install PyTorch (and SpecForge) in the environment WaveLab starts from."));

    if (process_) process_->deleteLater();
    process_ = new QProcess(this);
    parser_ = std::make_unique<SpecForgeLogParser>();
    stop_requested_ = false;
    group_ = 0;
    process_->setProcessChannelMode(QProcess::MergedChannels);
    process_->setWorkingDirectory(script.absolutePath());
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SPECFORGE_DIR"), QFileInfo(specforge_dir).absoluteFilePath());
    env.insert(QStringLiteral("PYTHONUNBUFFERED"), QStringLiteral("1"));   // piped stdout is block-buffered otherwise
    process_->setProcessEnvironment(env);
    // Its own session and process group, so Stop reaches torchrun's workers too.
    process_->setChildProcessModifier([] { ::setsid(); });
    connect(process_, &QProcess::readyReadStandardOutput, this, &SpecForgeRun::readOutput);
    connect(process_, &QProcess::finished, this, &SpecForgeRun::onFinished);
    process_->start(QStringLiteral("bash"), {script.absoluteFilePath()});
    if (!process_->waitForStarted(10000)) return fail(tr("Could not start bash: %1").arg(process_->errorString()));
    group_ = process_->processId();
    return true;
}

void SpecForgeRun::stop(int grace_ms) {
    if (!isRunning()) return;
    stop_requested_ = true;
    signalGroup(SIGTERM);
    kill_timer_->start(grace_ms);
}

void SpecForgeRun::signalGroup(int signal_number) {
    // Only while the group exists: after it is gone its id may belong to someone else.
    if (group_ > 0 && ::kill(static_cast<pid_t>(-group_), 0) == 0) ::kill(static_cast<pid_t>(-group_), signal_number);
}

void SpecForgeRun::readOutput() {
    if (!process_) return;
    const QByteArray bytes = process_->readAllStandardOutput();
    parser_->feed(std::string_view(bytes.constData(), static_cast<size_t>(bytes.size())));
    for (const std::string& line : parser_->takeLines()) Q_EMIT logLine(QString::fromUtf8(line.data(), static_cast<qsizetype>(line.size())));
    const SpecForgeProgress& progress = parser_->progress();
    if (progress.total > 0) Q_EMIT progressChanged(QString::fromStdString(progress.phase), progress.done, progress.total);
    for (const SpecForgeCurvePoint& p : parser_->takePoints()) {
        const bool by_step = p.step >= 0;
        Q_EMIT curvePoint(by_step ? static_cast<double>(p.step) : p.epochs, p.loss, p.accuracy,
                          p.kind != SpecForgeCurvePoint::Kind::TrainBar, p.kind == SpecForgeCurvePoint::Kind::EvalSummary,
                          by_step);
    }
}

void SpecForgeRun::onFinished(int exit_code, QProcess::ExitStatus status) {
    readOutput();
    parser_->finish();
    readOutput();
    // Workers that ignored SIGTERM still get the SIGKILL when the timer fires; a normal exit
    // needs no timer.
    if (!stop_requested_) kill_timer_->stop();
    Q_EMIT finished(exit_code, stop_requested_, status == QProcess::CrashExit);
}

}  // namespace wl
