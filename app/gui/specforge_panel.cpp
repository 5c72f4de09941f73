#include "specforge_panel.h"

#include <QDir>
#include <QFont>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <exception>

#include "data/calibration_set.h"
#include "draft/specforge_export.h"
#include "draft/training_task.h"
#include "folder_field.h"
#include "report_adapter.h"
#include "specforge_run.h"
#include "util/error.h"

namespace wl {

SpecForgePanel::SpecForgePanel(const DraftTrainingRequest& request, QWidget* parent)
    : QWidget(parent), request_(request), run_(new SpecForgeRun(this)) {
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("For targets too large for this machine: writes a <a href=\"https://github.com/sgl-project/SpecForge\">"
                                "SpecForge</a> set-up for layers <b>%1</b> and runs it here (on GPUs) with torchrun, "
                                "charting its log. Closing the dialog stops the run.")
                                 .arg(QString::fromStdString(layersText(request_.layers))), this);
    intro->setWordWrap(true);
    intro->setOpenExternalLinks(true);
    layout->addWidget(intro);
    auto* form = new QFormLayout;
    target_ = new QLineEdit(request_.model_path, this);
    target_->setObjectName(QStringLiteral("specforgeTarget"));
    target_->setToolTip(tr("--target-model-path: a Hugging Face id or a local path. The draft's shapes come from "
                           "the model loaded in WaveLab."));
    form->addRow(tr("Target model"), target_);
    checkout_ = new QLineEdit(qEnvironmentVariable("SPECFORGE_DIR"), this);
    checkout_->setObjectName(QStringLiteral("specforgeCheckout"));
    checkout_->setPlaceholderText(tr("folder of a SpecForge checkout (pip install -e .)"));
    form->addRow(tr("SpecForge checkout"), folderField(checkout_, this, tr("SpecForge checkout")));
    const QString default_out = request_.out_dir.isEmpty() ? QDir::home().filePath(QStringLiteral("wavelab-specforge"))
                                                           : QDir(request_.out_dir).filePath(QStringLiteral("specforge"));
    out_dir_ = new QLineEdit(default_out, this);
    out_dir_->setObjectName(QStringLiteral("specforgeOutDir"));
    form->addRow(tr("Set-up folder"), folderField(out_dir_, this, tr("SpecForge set-up folder")));
    nproc_ = new QSpinBox(this);
    nproc_->setObjectName(QStringLiteral("specforgeGpus"));
    nproc_->setRange(1, 64);
    nproc_->setValue(8);
    form->addRow(tr("GPUs (--nproc_per_node)"), nproc_);
    epochs_ = new QSpinBox(this);
    epochs_->setObjectName(QStringLiteral("specforgeEpochs"));
    epochs_->setRange(1, 1000);
    epochs_->setValue(10);
    form->addRow(tr("Epochs"), epochs_);
    chat_template_ = new QLineEdit(QStringLiteral("llama3"), this);
    form->addRow(tr("Chat template"), chat_template_);
    layout->addLayout(form);

    auto* buttons = new QHBoxLayout;
    write_ = new QPushButton(tr("Write set-up"), this);
    write_->setObjectName(QStringLiteral("specforgeWrite"));
    start_ = new QPushButton(tr("Start SpecForge"), this);
    start_->setObjectName(QStringLiteral("specforgeStart"));
    stop_ = new QPushButton(tr("Stop"), this);
    stop_->setObjectName(QStringLiteral("specforgeStop"));
    stop_->setEnabled(false);
    stop_->setToolTip(tr("SIGTERM to SpecForge and all its workers; SIGKILL after 10 s."));
    buttons->addWidget(write_);
    buttons->addWidget(start_);
    buttons->addWidget(stop_);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    log_ = new QPlainTextEdit(this);
    log_->setObjectName(QStringLiteral("specforgeLog"));
    log_->setReadOnly(true);
    log_->setMaximumBlockCount(5000);   // a week-long run must not grow memory without bound
    log_->setLineWrapMode(QPlainTextEdit::NoWrap);
    log_->setFont(QFont(QStringLiteral("monospace")));
    layout->addWidget(log_, 1);

    connect(write_, &QPushButton::clicked, this, [this] {
        const QString script = writeSetup();
        if (!script.isEmpty()) Q_EMIT statusChanged(tr("Wrote the SpecForge set-up; launch script %1").arg(script));
    });
    connect(start_, &QPushButton::clicked, this, &SpecForgePanel::startRun);
    connect(stop_, &QPushButton::clicked, this, [this] {
        run_->stop();
        Q_EMIT statusChanged(tr("Stopping SpecForge…"));
    });
    connect(run_, &SpecForgeRun::logLine, this, [this](const QString& line) {
        log_->appendPlainText(line);
        last_line_ = line;
    });
    connect(run_, &SpecForgeRun::progressChanged, this, [this](const QString& phase, qint64 done, qint64 total) {
        Q_EMIT progressChanged(done, total);
        Q_EMIT statusChanged(tr("SpecForge: %1 %2 / %3").arg(phase.isEmpty() ? tr("step") : phase).arg(done).arg(total));
    });
    connect(run_, &SpecForgeRun::curvePoint, this, &SpecForgePanel::curvePoint);
    connect(run_, &SpecForgeRun::finished, this, &SpecForgePanel::onFinished);
}

bool SpecForgePanel::isRunning() const { return run_->isRunning(); }

int SpecForgePanel::epochs() const { return epochs_->value(); }

QString SpecForgePanel::writeSetup() {
    try {
        if (request_.model_path.isEmpty()) throw Error("model", "load a model first: the draft config mirrors its shapes");
        SpecForgeOptions o;
        o.target_model = target_->text().trimmed().toStdString();
        o.layers.assign(request_.layers.begin(), request_.layers.end());
        o.out_dir = out_dir_->text().trimmed().toStdString();
        o.num_epochs = epochs_->value();
        o.nproc_per_node = nproc_->value();
        o.chat_template = chat_template_->text().trimmed().toStdString();
        if (!checkout_->text().trimmed().isEmpty()) o.specforge_dir = checkout_->text().trimmed().toStdString();
        const ModelConfig target = readTargetConfig(request_.model_path.toStdString());
        const std::string data_path = request_.data_path.isEmpty() ? defaultCalibrationPath() : request_.data_path.toStdString();
        const SpecForgeFiles files = writeSpecForgeSetup(target, loadCalibrationSet(data_path), o);
        QStringList command;
        for (const std::string& arg : files.command) command << QString::fromStdString(shellQuote(arg));
        log_->appendPlainText(QStringLiteral("$ ") + command.join(QLatin1Char(' ')));
        return QString::fromStdString(files.launch_script);
    } catch (const std::exception& e) {
        Q_EMIT statusChanged(tr("SpecForge set-up failed: %1").arg(QString::fromUtf8(e.what())));
        return {};
    }
}

void SpecForgePanel::startRun() {
    if (run_->isRunning()) return;
    const QString script = writeSetup();   // what runs always matches the fields shown
    if (script.isEmpty()) return;
    QString error;
    if (!run_->start(script, checkout_->text().trimmed(), &error)) {
        Q_EMIT statusChanged(tr("SpecForge not started: %1").arg(error));
        return;
    }
    last_line_.clear();
    setRunning(true);
    Q_EMIT runStarted();
    Q_EMIT statusChanged(tr("SpecForge started (process %1).").arg(run_->processId()));
}

void SpecForgePanel::onFinished(int exit_code, bool stopped, bool crashed) {
    setRunning(false);
    if (stopped) {
        Q_EMIT statusChanged(tr("SpecForge stopped."));
    } else if (crashed || exit_code != 0) {
        Q_EMIT statusChanged(crashed ? tr("SpecForge was killed. Last output: %1").arg(last_line_)
                                     : tr("SpecForge failed with exit code %1. Last output: %2").arg(exit_code).arg(last_line_));
    } else {
        Q_EMIT statusChanged(tr("SpecForge finished; the draft is in %1.")
                                 .arg(QDir(out_dir_->text().trimmed()).filePath(QStringLiteral("outputs"))));
    }
}

void SpecForgePanel::setRunning(bool running) {
    write_->setEnabled(!running);
    start_->setEnabled(!running);
    stop_->setEnabled(running);
    Q_EMIT runningChanged(running);
}

}  // namespace wl
