#include "calibration_panel.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>

namespace wl {

namespace {
const char* kDefaultData = "bundled default set";
}

CalibrationPanel::CalibrationPanel(QWidget* parent) : QGroupBox(tr("Calibration"), parent) {
    setObjectName(QStringLiteral("calibrationPanel"));
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

    data_ = new QComboBox(this);
    data_->setObjectName(QStringLiteral("calibrationData"));
    data_->addItem(tr(kDefaultData), QString());
    data_->addItem(tr("Choose a file (text / JSONL / ShareGPT)…"), QStringLiteral("<choose>"));
    connect(data_, qOverload<int>(&QComboBox::activated), this, [this](int index) {
        if (data_->itemData(index).toString() != QLatin1String("<choose>")) return;
        const QString path = QFileDialog::getOpenFileName(this, tr("Calibration prompts"), QString(),
                                                          tr("Prompts (*.txt *.jsonl *.json);;All files (*)"));
        if (path.isEmpty()) {
            data_->setCurrentIndex(0);
            return;
        }
        data_->insertItem(1, path, path);
        data_->setCurrentIndex(1);
    });
    form->addRow(tr("Data"), data_);

    prompts_ = new QSpinBox(this);
    prompts_->setObjectName(QStringLiteral("calibrationPrompts"));
    prompts_->setRange(1, 100000);
    prompts_->setValue(64);
    form->addRow(tr("Prompts"), prompts_);
    tokens_ = new QSpinBox(this);
    tokens_->setObjectName(QStringLiteral("calibrationTokens"));
    tokens_->setRange(8, 32768);
    tokens_->setValue(128);
    tokens_->setSuffix(tr(" tokens / prompt"));
    form->addRow(tr("Max tokens"), tokens_);

    filter_mode_ = new QComboBox(this);
    filter_mode_->setObjectName(QStringLiteral("filterMode"));
    filter_mode_->addItem(tr("percentile of token entropy"), static_cast<int>(TokenFilterMode::Percentile));
    filter_mode_->addItem(tr("threshold (nats)"), static_cast<int>(TokenFilterMode::Threshold));
    filter_mode_->addItem(tr("off (all tokens)"), static_cast<int>(TokenFilterMode::None));
    form->addRow(tr("Token filter"), filter_mode_);
    auto* slider_row = new QHBoxLayout;
    filter_slider_ = new QSlider(Qt::Horizontal, this);
    filter_slider_->setObjectName(QStringLiteral("filterSlider"));
    filter_value_ = new QLabel(this);
    filter_value_->setMinimumWidth(64);
    slider_row->addWidget(filter_slider_, 1);
    slider_row->addWidget(filter_value_);
    form->addRow(tr("Keep ≥"), slider_row);
    filter_slider_->setRange(0, 99);
    filter_slider_->setValue(50);
    connect(filter_mode_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
        const auto mode = static_cast<TokenFilterMode>(filter_mode_->currentData().toInt());
        filter_slider_->setRange(0, mode == TokenFilterMode::Threshold ? 80 : 99);   // threshold in 0.1 nats
        filter_slider_->setValue(mode == TokenFilterMode::Threshold ? 10 : 50);
        updateFilterControls();
    });
    connect(filter_slider_, &QSlider::valueChanged, this, &CalibrationPanel::updateFilterControls);

    alpha_ = new QComboBox(this);
    alpha_->setObjectName(QStringLiteral("alpha"));
    for (double a : {1.0, 2.0, 0.5, 3.0}) alpha_->addItem(a == 1.0 ? tr("1 (von Neumann)") : QString::number(a), a);
    alpha_->setToolTip(tr("Rényi order of the matrix entropy (applies to the next run)"));
    form->addRow(tr("Entropy α"), alpha_);
    layout->addLayout(form);

    auto* buttons = new QHBoxLayout;
    start_ = new QPushButton(tr("Start"), this);
    start_->setObjectName(QStringLiteral("startRun"));
    pause_ = new QPushButton(tr("Pause"), this);
    pause_->setObjectName(QStringLiteral("pauseRun"));
    pause_->setCheckable(true);
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->setObjectName(QStringLiteral("cancelRun"));
    buttons->addWidget(start_);
    buttons->addWidget(pause_);
    buttons->addWidget(cancel_);
    layout->addLayout(buttons);
    progress_ = new QProgressBar(this);
    progress_->setObjectName(QStringLiteral("runProgress"));
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setFormat(tr("%v / %m prompts"));
    layout->addWidget(progress_);
    stats_ = new QLabel(tr("Idle."), this);
    stats_->setObjectName(QStringLiteral("runStats"));
    stats_->setWordWrap(true);
    layout->addWidget(stats_);

    connect(start_, &QPushButton::clicked, this, &CalibrationPanel::startRequested);
    connect(pause_, &QPushButton::toggled, this, [this](bool on) {
        pause_->setText(on ? tr("Resume") : tr("Pause"));
        Q_EMIT pauseToggled(on);
    });
    connect(cancel_, &QPushButton::clicked, this, &CalibrationPanel::cancelRequested);
    updateFilterControls();
    setRunning(false);
}

void CalibrationPanel::updateFilterControls() {
    const auto mode = static_cast<TokenFilterMode>(filter_mode_->currentData().toInt());
    filter_slider_->setEnabled(mode != TokenFilterMode::None);
    if (mode == TokenFilterMode::Percentile) filter_value_->setText(tr("p%1").arg(filter_slider_->value()));
    else if (mode == TokenFilterMode::Threshold) filter_value_->setText(tr("%1 nats").arg(filter_slider_->value() / 10.0, 0, 'f', 1));
    else filter_value_->setText(tr("all"));
}

RunOptions CalibrationPanel::options() const {
    RunOptions o;
    o.data_path = data_->currentData().toString();
    if (o.data_path == QLatin1String("<choose>")) o.data_path.clear();
    o.max_prompts = prompts_->value();
    o.max_tokens = tokens_->value();
    o.analysis.filter.mode = static_cast<TokenFilterMode>(filter_mode_->currentData().toInt());
    if (o.analysis.filter.mode == TokenFilterMode::Percentile) o.analysis.filter.percentile = filter_slider_->value();
    if (o.analysis.filter.mode == TokenFilterMode::Threshold) o.analysis.filter.threshold_nats = filter_slider_->value() / 10.0;
    o.analysis.filter.warmup_tokens = 512;
    o.analysis.alpha = alpha_->currentData().toDouble();
    o.analysis.normalization = EntropyNormalization::Raw;   // normalised for display by the wave panel
    o.analysis.unfiltered_curve = true;
    return o;
}

QJsonObject CalibrationPanel::toJson() const {
    return QJsonObject{{QStringLiteral("data"), data_->currentData().toString()},
                       {QStringLiteral("prompts"), prompts_->value()},
                       {QStringLiteral("max_tokens"), tokens_->value()},
                       {QStringLiteral("filter_mode"), QString::fromLatin1(toString(static_cast<TokenFilterMode>(filter_mode_->currentData().toInt())))},
                       {QStringLiteral("filter_value"), filter_slider_->value()},
                       {QStringLiteral("alpha"), alpha_->currentData().toDouble()}};
}

void CalibrationPanel::fromJson(const QJsonObject& j) {
    const QString data = j.value(QStringLiteral("data")).toString();
    if (!data.isEmpty() && data != QLatin1String("<choose>")) {
        if (data_->findData(data) < 0) data_->insertItem(1, data, data);
        data_->setCurrentIndex(data_->findData(data));
    } else {
        data_->setCurrentIndex(0);
    }
    prompts_->setValue(j.value(QStringLiteral("prompts")).toInt(prompts_->value()));
    tokens_->setValue(j.value(QStringLiteral("max_tokens")).toInt(tokens_->value()));
    const QString mode = j.value(QStringLiteral("filter_mode")).toString();
    if (!mode.isEmpty()) {
        const int mode_value = static_cast<int>(parseTokenFilterMode(mode.toStdString(), "session"));
        filter_mode_->setCurrentIndex(filter_mode_->findData(mode_value));
    }
    filter_slider_->setValue(j.value(QStringLiteral("filter_value")).toInt(filter_slider_->value()));
    const int a = alpha_->findData(j.value(QStringLiteral("alpha")).toDouble(1.0));
    if (a >= 0) alpha_->setCurrentIndex(a);
    updateFilterControls();
}

void CalibrationPanel::setCanStart(bool can_start) {
    can_start_ = can_start;
    setRunning(running_);
}

void CalibrationPanel::setRunning(bool running, bool paused) {
    running_ = running;
    start_->setEnabled(!running && can_start_);
    pause_->setEnabled(running);
    cancel_->setEnabled(running);
    if (!running) {
        pause_->blockSignals(true);
        pause_->setChecked(false);
        pause_->setText(tr("Pause"));
        pause_->blockSignals(false);
    } else if (paused) {
        stats_->setText(stats_->text() + tr(" — paused"));
    }
    for (QWidget* w : std::initializer_list<QWidget*>{data_, prompts_, tokens_, filter_mode_, filter_slider_, alpha_})
        w->setEnabled(!running);
}

void CalibrationPanel::showProgress(const RunProgress& p) {
    progress_->setRange(0, static_cast<int>(std::max<int64_t>(1, p.prompts_total)));
    progress_->setValue(static_cast<int>(p.prompts_done));
    const double tps = p.seconds > 0 ? p.tokens_done / p.seconds : 0;
    QString eta = QStringLiteral("–");
    if (p.prompts_done > 0 && p.prompts_total > p.prompts_done) {
        const double remaining = p.seconds / p.prompts_done * (p.prompts_total - p.prompts_done);
        eta = remaining < 90 ? tr("%1 s").arg(remaining, 0, 'f', 0) : tr("%1 min").arg(remaining / 60, 0, 'f', 1);
    } else if (p.prompts_total > 0 && p.prompts_done >= p.prompts_total) {
        eta = tr("done");
    }
    stats_->setText(tr("%1 tokens · %2 tokens/s · ETA %3").arg(p.tokens_done).arg(tps, 0, 'f', 0).arg(eta));
}

void CalibrationPanel::showFinished(const QString& message) { stats_->setText(message); }

}  // namespace wl
