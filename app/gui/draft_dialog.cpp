#include "draft_dialog.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QThreadPool>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "folder_field.h"
#include "report_adapter.h"
#include "specforge_panel.h"
#include "util/cancel.h"
#include "util/error.h"

namespace wl {

DraftDialog::DraftDialog(DraftTrainingRequest request, DraftTrainingService* service, QWidget* parent)
    : QDialog(parent), request_(std::move(request)), service_(service) {
    setWindowTitle(tr("Train EAGLE3 draft"));
    setObjectName(QStringLiteral("draftDialog"));
    auto* layout = new QVBoxLayout(this);
    tabs_ = new QTabWidget(this);
    tabs_->setObjectName(QStringLiteral("draftTabs"));
    auto* local = new QWidget(tabs_);
    auto* local_layout = new QVBoxLayout(local);
    auto* intro = new QLabel(tr("Trains an EAGLE3 draft head fed by hidden states <b>%1</b> of the target model "
                                "(training-time test, soft cross-entropy against the target).")
                                 .arg(QString::fromStdString(layersText(request_.layers))), local);
    intro->setWordWrap(true);
    local_layout->addWidget(intro);
    auto* form = new QFormLayout;
    out_ = new QLineEdit(request_.out_dir, this);
    out_->setObjectName(QStringLiteral("draftOutDir"));
    form->addRow(tr("Output folder"), folderField(out_, this, tr("Draft output folder")));
    steps_ = new QSpinBox(this);
    steps_->setRange(1, 1000000);
    steps_->setValue(request_.steps);
    form->addRow(tr("Steps"), steps_);
    tree_top_k_ = new QSpinBox(this);
    tree_top_k_->setObjectName(QStringLiteral("evalTreeTopK"));
    tree_top_k_->setRange(1, 16);
    tree_top_k_->setValue(request_.eval_tree_top_k);
    tree_top_k_->setSpecialValueText(tr("1 (chain)"));
    tree_top_k_->setToolTip(tr("Held-out check: 1 drafts a chain of tokens; more drafts a tree keeping this many "
                               "candidates per level, verified in one target pass."));
    form->addRow(tr("Evaluate with tree top-k"), tree_top_k_);
    resume_ = new QCheckBox(tr("Resume from the checkpoint in the output folder"), this);
    resume_->setObjectName(QStringLiteral("resumeTraining"));
    form->addRow(QString(), resume_);
    local_layout->addLayout(form);
    local_layout->addStretch(1);
    tabs_->addTab(local, tr("On this machine"));
    specforge_ = new SpecForgePanel(request_, tabs_);
    tabs_->addTab(specforge_, tr("SpecForge (GPUs)"));
    layout->addWidget(tabs_);

    // Live curves: loss (left axis, grows to the largest loss seen) and step-0 top-1
    // accuracy (right axis, 0..1) against the training step. Updates only append.
    auto* chart = new QChart;
    chart->setTitle(tr("Training curves"));
    chart->setMargins(QMargins(4, 4, 4, 4));
    loss_series_ = new QLineSeries;
    loss_series_->setName(tr("loss"));
    accuracy_series_ = new QLineSeries;
    accuracy_series_->setName(tr("step-0 accuracy"));
    objective_series_ = new QScatterSeries;
    objective_series_->setName(tr("epoch objective"));
    objective_series_->setMarkerSize(9);
    chart->addSeries(loss_series_);
    chart->addSeries(accuracy_series_);
    chart->addSeries(objective_series_);
    step_axis_ = new QValueAxis;
    step_axis_->setTitleText(tr("step"));
    step_axis_->setLabelFormat(QStringLiteral("%d"));
    step_axis_->setRange(0, std::max(1, request_.steps));
    loss_axis_ = new QValueAxis;
    loss_axis_->setTitleText(tr("loss"));
    loss_axis_->setRange(0, 1);
    auto* accuracy_axis = new QValueAxis;
    accuracy_axis->setTitleText(tr("accuracy"));
    accuracy_axis->setRange(0, 1);
    chart->addAxis(step_axis_, Qt::AlignBottom);
    chart->addAxis(loss_axis_, Qt::AlignLeft);
    chart->addAxis(accuracy_axis, Qt::AlignRight);
    loss_series_->attachAxis(step_axis_);
    loss_series_->attachAxis(loss_axis_);
    accuracy_series_->attachAxis(step_axis_);
    accuracy_series_->attachAxis(accuracy_axis);
    objective_series_->attachAxis(step_axis_);
    objective_series_->attachAxis(loss_axis_);
    objective_series_->setVisible(false);   // SpecForge runs only
    for (QLegendMarker* marker : chart->legend()->markers(objective_series_)) marker->setVisible(false);
    chart_view_ = new QChartView(chart, this);
    chart_view_->setObjectName(QStringLiteral("draftCurves"));
    chart_view_->setRenderHint(QPainter::Antialiasing);
    chart_view_->setMinimumHeight(220);
    layout->addWidget(chart_view_, 1);

    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1);
    progress_->setValue(0);
    layout->addWidget(progress_);
    status_ = new QLabel(tr("Ready."), this);
    status_->setObjectName(QStringLiteral("draftStatus"));
    status_->setWordWrap(true);
    layout->addWidget(status_);

    // tau on held-out prompts, one row per evaluated layer set.
    tau_table_ = new QTableWidget(0, 5, this);
    tau_table_->setObjectName(QStringLiteral("tauTable"));
    tau_table_->setHorizontalHeaderLabels(
        {tr("Set (layers)"), tr("tau"), tr("Acceptance per position"), tr("Lossless"), tr("Drafting")});
    tau_table_->horizontalHeader()->setStretchLastSection(true);
    tau_table_->verticalHeader()->setVisible(false);
    tau_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    tau_table_->setMaximumHeight(120);
    tau_table_->setVisible(false);
    layout->addWidget(tau_table_);
    auto* buttons = new QDialogButtonBox(this);
    start_ = buttons->addButton(tr("Start training"), QDialogButtonBox::ActionRole);
    start_->setObjectName(QStringLiteral("startTraining"));
    if (!request_.baselines.empty()) {   // only offered when there is something to compare with
        compare_ = buttons->addButton(tr("Compare with baselines"), QDialogButtonBox::ActionRole);
        compare_->setObjectName(QStringLiteral("compareBaselines"));
        compare_->setToolTip(tr("Train and evaluate one draft per layer set (the chosen one and each baseline) "
                                "with the same budget; fills one tau row per set."));
        connect(compare_, &QPushButton::clicked, this, &DraftDialog::startCompare);
    }
    close_ = buttons->addButton(QDialogButtonBox::Close);
    layout->addWidget(buttons);
    connect(out_, &QLineEdit::textChanged, this, [this] { refreshResume(); });
    connect(tabs_, &QTabWidget::currentChanged, this, [this](int tab) { showLocalButtons(tab == 0); });
    connect(specforge_, &SpecForgePanel::runStarted, this, &DraftDialog::onSpecForgeStarted);
    connect(specforge_, &SpecForgePanel::runningChanged, this, [this](bool running) {
        if (start_) start_->setEnabled(!running && !running_);
        if (compare_) compare_->setEnabled(!running && !running_);
    });
    connect(specforge_, &SpecForgePanel::statusChanged, status_, &QLabel::setText);
    connect(specforge_, &SpecForgePanel::progressChanged, this, [this](qint64 done, qint64 total) {
        progress_->setRange(0, static_cast<int>(std::clamp<qint64>(total, 1, 1 << 30)));
        progress_->setValue(static_cast<int>(std::clamp<qint64>(done, 0, 1 << 30)));
    });
    connect(specforge_, &SpecForgePanel::curvePoint, this, &DraftDialog::onSpecForgePoint);
    connect(start_, &QPushButton::clicked, this, &DraftDialog::start);
    connect(close_, &QPushButton::clicked, this, [this] {
        if (running_) {
            cancel_->cancel();
            status_->setText(tr("Cancelling (saving a checkpoint)…"));
        } else {
            reject();
        }
    });
    refreshResume();
    resize(640, 560);
}

void DraftDialog::refreshResume() {
    const bool available = hasDraftCheckpoint(out_->text());
    resume_->setEnabled(available && !running_);
    if (!available) resume_->setChecked(false);
    resume_->setToolTip(available ? tr("A checkpoint exists: continue it instead of starting over.")
                                  : tr("No checkpoint in this folder yet."));
}

DraftDialog::~DraftDialog() {
    if (cancel_) cancel_->cancel();
    QThreadPool::globalInstance()->waitForDone();   // the training job holds `this` only via QPointer
}

void DraftDialog::start() {
    if (running_ || !service_) return;
    request_.out_dir = out_->text();
    request_.steps = steps_->value();
    request_.resume = resume_->isChecked();
    request_.eval_tree_top_k = tree_top_k_->value();
    cancel_ = std::make_shared<CancelToken>();
    setRunning(true);
    loss_series_->clear();
    accuracy_series_->clear();
    max_loss_ = 0;
    loss_axis_->setRange(0, 1);
    step_axis_->setRange(0, std::max(1, request_.steps));
    status_->setText(tr("Starting…"));
    QPointer<DraftDialog> self(this);
    auto cancel = cancel_;
    DraftTrainingService* service = service_;
    DraftTrainingRequest request = request_;
    QThreadPool::globalInstance()->start([self, cancel, service, request] {
        QString message;
        bool ok = false;
        std::optional<DraftEvalSummary> eval;
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
        if (ok) {
            // The draft is written; tau on held-out prompts is a bonus whose failure or
            // cancellation must not hide the training result.
            QMetaObject::invokeMethod(self.data(), [self] {
                if (self) self->status_->setText(tr("Evaluating tau on held-out prompts…"));
            }, Qt::QueuedConnection);
            try {
                const DraftEvalRequest eval_request = defaultEvalRequest(request);
                eval = service->evaluate(eval_request, cancel.get());
                if (eval) {
                    eval->layers = request.layers;
                    eval->k = eval_request.k;
                    eval->tree_top_k = eval_request.tree_top_k;
                }
            } catch (const Cancelled&) {
                message += QLatin1Char(' ') + QObject::tr("Evaluation cancelled.");
            } catch (const std::exception& e) {
                message += QLatin1Char(' ') + QObject::tr("Evaluation failed: %1").arg(QString::fromStdString(e.what()));
            }
        }
        QMetaObject::invokeMethod(self.data(), [self, message, ok, eval] {
            if (self) self->onFinished(message, ok, eval);
        }, Qt::QueuedConnection);
    });
}

void DraftDialog::onUpdate(const QString& phase, int step, int total, double loss, double accuracy) {
    progress_->setRange(0, std::max(1, total));
    progress_->setValue(step);
    if (phase == QLatin1String("training") || phase == QLatin1String("checkpoint") || phase == QLatin1String("done")) {
        if (step_axis_->max() < total) step_axis_->setRange(0, total);
        // One point per reported step; repeated reports of the same step (checkpoint, done) add none.
        if (loss_series_->count() == 0 || loss_series_->at(loss_series_->count() - 1).x() < step) {
            loss_series_->append(step, loss);
            accuracy_series_->append(step, accuracy);
            if (loss > max_loss_) {
                max_loss_ = loss;
                loss_axis_->setRange(0, max_loss_ * 1.05);
            }
        }
    }
    status_->setText(tr("%1: step %2 / %3 · loss %4 · step-0 accuracy %5").arg(phase).arg(step).arg(total)
                         .arg(loss, 0, 'f', 4).arg(accuracy, 0, 'f', 3));
}

void DraftDialog::setRunning(bool running) {
    running_ = running;
    start_->setEnabled(!running);
    if (compare_) compare_->setEnabled(!running);
    specforge_->setEnabled(!running);   // one run feeds the chart at a time
    close_->setText(running ? tr("Cancel") : tr("Close"));
    refreshResume();
}

void DraftDialog::showLocalButtons(bool show) {
    start_->setVisible(show);
    if (compare_) compare_->setVisible(show);
}

void DraftDialog::onSpecForgeStarted() {
    loss_series_->clear();
    accuracy_series_->clear();
    objective_series_->clear();
    loss_series_->setName(tr("loss (SpecForge bar)"));
    accuracy_series_->setName(tr("accuracy (SpecForge bar)"));
    step_axis_->setTitleText(tr("epoch"));
    step_axis_->setLabelFormat(QStringLiteral("%.1f"));
    step_axis_->setRange(0, std::max(1, specforge_->epochs()));
    max_loss_ = 0;
    loss_axis_->setRange(0, 1);
    progress_->setRange(0, 0);   // busy until SpecForge draws its first bar
}

void DraftDialog::onSpecForgePoint(double x, double loss, double accuracy, bool summary, bool evaluation, bool by_step) {
    if (evaluation) return;   // evaluation summaries stay in the log; the chart shows training
    if (by_step && step_axis_->titleText() != tr("step")) {
        step_axis_->setTitleText(tr("step"));
        step_axis_->setLabelFormat(QStringLiteral("%d"));
    }
    if (step_axis_->max() < x) step_axis_->setRange(0, by_step ? x * 1.25 : std::ceil(x));
    auto grow = [this](double value) {
        if (std::isfinite(value) && value > max_loss_) {
            max_loss_ = value;
            loss_axis_->setRange(0, max_loss_ * 1.05);
        }
    };
    // Summaries carry the weighted objective; bar points the running values SpecForge shows in
    // its progress bar.
    if (summary && std::isfinite(loss)) {
        if (!objective_series_->isVisible()) {
            objective_series_->setVisible(true);
            for (QLegendMarker* marker : chart_view_->chart()->legend()->markers(objective_series_)) marker->setVisible(true);
        }
        objective_series_->append(x, loss);
        grow(loss);
        return;
    }
    if (std::isfinite(loss)) {
        loss_series_->append(x, loss);
        grow(loss);
    }
    if (std::isfinite(accuracy)) accuracy_series_->append(x, accuracy);
}

void DraftDialog::startCompare() {
    if (running_ || !service_) return;
    request_.out_dir = out_->text();
    request_.steps = steps_->value();
    request_.eval_tree_top_k = tree_top_k_->value();
    std::vector<DraftLayerSet> sets = {{tr("chosen"), request_.layers}};
    sets.insert(sets.end(), request_.baselines.begin(), request_.baselines.end());
    cancel_ = std::make_shared<CancelToken>();
    setRunning(true);
    status_->setText(tr("Comparing %1 layer sets…").arg(sets.size()));
    QPointer<DraftDialog> self(this);
    auto cancel = cancel_;
    DraftTrainingService* service = service_;
    DraftTrainingRequest request = request_;
    QThreadPool::globalInstance()->start([self, cancel, service, request, sets] {
        QString message;
        std::vector<DraftEvalSummary> rows;
        try {
            rows = service->compare(request, sets, cancel.get(), [self](const DraftTrainingUpdate& u) {
                QMetaObject::invokeMethod(self.data(), [self, u] {
                    if (self) self->onUpdate(u.phase, u.step, u.total_steps, u.loss, u.accuracy0);
                }, Qt::QueuedConnection);
            });
            message = rows.empty() ? QObject::tr("This training service cannot compare layer sets.")
                                   : QObject::tr("Compared %1 layer sets on held-out prompts.").arg(rows.size());
        } catch (const Cancelled&) {
            message = QObject::tr("Comparison cancelled.");
        } catch (const std::exception& e) {
            message = QObject::tr("Comparison failed: %1").arg(QString::fromStdString(e.what()));
        }
        QMetaObject::invokeMethod(self.data(), [self, message, rows] {
            if (self) self->onCompared(message, rows);
        }, Qt::QueuedConnection);
    });
}

void DraftDialog::onCompared(const QString& message, const std::vector<DraftEvalSummary>& rows) {
    setRunning(false);
    status_->setText(message);
    if (rows.empty()) return;
    tau_table_->setRowCount(0);   // the comparison replaces any single-draft row
    for (const DraftEvalSummary& row : rows) addTauRow(row);
}

void DraftDialog::onFinished(const QString& message, bool ok, const std::optional<DraftEvalSummary>& eval) {
    setRunning(false);
    status_->setText(ok ? message : tr("Stopped: %1").arg(message));
    if (eval) addTauRow(*eval);
}

void DraftDialog::addTauRow(const DraftEvalSummary& eval) {
    QStringList acceptance;
    for (double a : eval.acceptance) acceptance << QString::number(a, 'f', 2);
    QString lossless = tr("not checked");
    if (eval.lossless_checked)
        lossless = eval.lossless_mismatches == 0 ? tr("yes") : tr("no (%1 differing outputs)").arg(eval.lossless_mismatches);
    const int row = tau_table_->rowCount();
    tau_table_->insertRow(row);
    QString drafting;
    if (eval.k > 0)
        drafting = eval.tree_top_k > 1 ? tr("tree, depth %1 × top-%2").arg(eval.k).arg(eval.tree_top_k) : tr("chain of %1").arg(eval.k);
    if (eval.verify_tokens_per_round > 0)
        drafting += tr(" (%1 verified per round)").arg(eval.verify_tokens_per_round, 0, 'f', 1);
    const QStringList cells = {
        QStringLiteral("%1 %2").arg(eval.set_name, QString::fromStdString(layersText(eval.layers))),
        QString::number(eval.tau, 'f', 3), acceptance.join(QStringLiteral(" · ")), lossless, drafting};
    for (int c = 0; c < cells.size(); ++c) tau_table_->setItem(row, c, new QTableWidgetItem(cells[c]));
    tau_table_->resizeColumnsToContents();
    tau_table_->setVisible(true);
}

}  // namespace wl
