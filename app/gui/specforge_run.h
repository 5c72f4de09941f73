#pragma once
// Runs a SpecForge launch script (written by core/draft's writeSpecForgeSetup) as an external
// process and turns its console output into signals: log lines, the tqdm progress bar, and
// training-curve points (core/draft's SpecForgeLogParser). Everything happens on the UI
// thread's event loop without blocking: QProcess reads only what has arrived.
//
// The script runs in its own session (setsid), so Stop can signal the whole process group:
// bash, torchrun and every training worker it spawned get SIGTERM, then SIGKILL after a grace
// period. Destroying a running SpecForgeRun stops it the same way; nothing is left behind.
#include <QObject>
#include <QProcess>
#include <QString>
#include <memory>

class QTimer;

namespace wl {

class SpecForgeLogParser;

class SpecForgeRun : public QObject {
    Q_OBJECT
public:
    explicit SpecForgeRun(QObject* parent = nullptr);
    ~SpecForgeRun() override;

    // Starts `bash <launch_script>` in the script's folder with SPECFORGE_DIR=specforge_dir and
    // unbuffered Python output. False (and `error`) when the script, the checkout or torchrun
    // is missing, or the process cannot start.
    bool start(const QString& launch_script, const QString& specforge_dir, QString* error);
    // SIGTERM to the process group; SIGKILL after `grace_ms` if it is still running.
    void stop(int grace_ms = 10000);
    bool isRunning() const;
    qint64 processId() const;

Q_SIGNALS:
    void logLine(const QString& line);
    void progressChanged(const QString& phase, qint64 done, qint64 total);
    // x in epochs (fractional inside an epoch) or, for "Train Step" logs, in steps. NaN = absent.
    // summary: an epoch/step summary (loss = sum_i 0.8^i pLoss_i), else a progress-bar reading.
    void curvePoint(double x, double loss, double accuracy, bool summary, bool evaluation, bool by_step);
    void finished(int exit_code, bool stopped, bool crashed);

private:
    void readOutput();
    void onFinished(int exit_code, QProcess::ExitStatus status);
    void signalGroup(int signal_number);

    QProcess* process_ = nullptr;
    QTimer* kill_timer_ = nullptr;
    std::unique_ptr<SpecForgeLogParser> parser_;
    qint64 group_ = 0;
    bool stop_requested_ = false;
};

}  // namespace wl
