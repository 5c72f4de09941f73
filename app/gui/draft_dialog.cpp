#include "draft_dialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QThreadPool>
#include <QVBoxLayout>

#include "report_adapter.h"
#include "util/cancel.h"
#include "util/error.h"

namespace wl {

DraftDialog::DraftDialog(DraftTrainingRequest request, DraftTrainingService* service, QWidget* parent)
    : QDialog(parent), request_(std::move(request)), service_(service) {
    setWindowTitle(tr("Train EAGLE3 draft"));
    setObjectName(QStringLiteral("draftDialog"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("Trains an EAGLE3 draft head fed by hidden states <b>%1</b> of the target model "
                                "(training-time test, soft cross-entropy against the target).")
                                 .arg(QString::fromStdString(layersText(request_.layers))), this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* form = new QFormLayout;
    auto* out_row = new QHBoxLayout;
    out_ = new QLineEdit(request_.out_dir, this);
    auto* browse = new QPushButton(tr("…"), this);
    out_row->addWidget(out_, 1);
    out_row->addWidget(browse);
    form->addRow(tr("Output folder"), out_row);
    steps_ = new QSpinBox(this);
    steps_->setRange(1, 1000000);
    steps_->setValue(request_.steps);
    form->addRow(tr("Steps"), steps_);
    layout->addLayout(form);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1);
    progress_->setValue(0);
    layout->addWidget(progress_);
    status_ = new QLabel(tr("Ready."), this);
    status_->setObjectName(QStringLiteral("draftStatus"));
    status_->setWordWrap(true);
    layout->addWidget(status_);
    auto* buttons = new QDialogButtonBox(this);
    start_ = buttons->addButton(tr("Start training"), QDialogButtonBox::ActionRole);
    start_->setObjectName(QStringLiteral("startTraining"));
    close_ = buttons->addButton(QDialogButtonBox::Close);
    layout->addWidget(buttons);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString d = QFileDialog::getExistingDirectory(this, tr("Draft output folder"), out_->text());
        if (!d.isEmpty()) out_->setText(d);
    });
    connect(start_, &QPushButton::clicked, this, &DraftDialog::start);
    connect(close_, &QPushButton::clicked, this, [this] {
        if (running_) {
            cancel_->cancel();
            status_->setText(tr("Cancelling (saving a checkpoint)…"));
        } else {
            reject();
        }
    });
    resize(520, 260);
}

DraftDialog::~DraftDialog() {
    if (cancel_) cancel_->cancel();
    QThreadPool::globalInstance()->waitForDone();   // the training job holds `this` only via QPointer
}

void DraftDialog::start() {
    if (running_ || !service_) return;
    request_.out_dir = out_->text();
    request_.steps = steps_->value();
    cancel_ = std::make_shared<CancelToken>();
    running_ = true;
    start_->setEnabled(false);
    close_->setText(tr("Cancel"));
    status_->setText(tr("Starting…"));
    QPointer<DraftDialog> self(this);
    auto cancel = cancel_;
    DraftTrainingService* service = service_;
    DraftTrainingRequest request = request_;
    QThreadPool::globalInstance()->start([self, cancel, service, request] {
        QString message;
        bool ok = false;
        try {
            message = service->train(request, cancel.get(), [self](const DraftTrainingUpdate& u) {
                QMetaObject::invokeMethod(self.data(), [self, u] {
                    if (self) self->onUpdate(u.phase, u.step, u.total_steps, u.loss, u.accuracy0);
                }, Qt::QueuedConnection);
            });
            ok = true;
        } catch (const Cancelled&) {
            message = QObject::tr("Cancelled; a checkpoint was saved and training can resume.");
        } catch (const std::exception& e) {
            message = QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(self.data(), [self, message, ok] {
            if (self) self->onFinished(message, ok);
        }, Qt::QueuedConnection);
    });
}

void DraftDialog::onUpdate(const QString& phase, int step, int total, double loss, double accuracy) {
    progress_->setRange(0, std::max(1, total));
    progress_->setValue(step);
    status_->setText(tr("%1: step %2 / %3 · loss %4 · step-0 accuracy %5").arg(phase).arg(step).arg(total)
                         .arg(loss, 0, 'f', 4).arg(accuracy, 0, 'f', 3));
}

void DraftDialog::onFinished(const QString& message, bool ok) {
    running_ = false;
    start_->setEnabled(true);
    close_->setText(tr("Close"));
    status_->setText(ok ? message : tr("Stopped: %1").arg(message));
}

}  // namespace wl
