#include "selection_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "report_adapter.h"

namespace wl {

namespace {

QTableWidget* makeTable(QWidget* parent, const QStringList& headers, const QString& name) {
    auto* t = new QTableWidget(0, headers.size(), parent);
    t->setObjectName(name);
    t->setHorizontalHeaderLabels(headers);
    t->verticalHeader()->setVisible(false);
    t->horizontalHeader()->setStretchLastSection(true);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->setAlternatingRowColors(true);
    t->setMouseTracking(true);
    return t;
}

std::vector<int> layersFromText(const QString& text) {
    std::vector<int> layers;
    QString t = text;
    t.remove('[').remove(']');
    for (const QString& part : t.split(',', Qt::SkipEmptyParts)) layers.push_back(part.trimmed().toInt());
    return layers;
}

void addRow(QTableWidget* table, const QStringList& cells, bool bold = false) {
    const int row = table->rowCount();
    table->insertRow(row);
    for (int c = 0; c < cells.size(); ++c) {
        auto* item = new QTableWidgetItem(cells[c]);
        if (bold) {
            QFont f = item->font();
            f.setBold(true);
            item->setFont(f);
        }
        if (c > 0) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        table->setItem(row, c, item);
    }
}

}  // namespace

SelectionPanel::SelectionPanel(QWidget* parent) : QGroupBox(tr("Layer selection (ELSI)"), parent) {
    setObjectName(QStringLiteral("selectionPanel"));
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    method_ = new QComboBox(this);
    method_->setObjectName(QStringLiteral("selectionMethod"));
    method_->addItem(tr("ELSI-C (diverse, CKA-aware)"), static_cast<int>(SelectionMethod::ElsiC));
    method_->addItem(tr("ELSI (entropy only)"), static_cast<int>(SelectionMethod::Elsi));
    form->addRow(tr("Method"), method_);
    auto* sizes = new QHBoxLayout;
    m_ = new QSpinBox(this);
    m_->setObjectName(QStringLiteral("selectionM"));
    m_->setRange(1, 8);
    m_->setValue(3);
    m_->setPrefix(tr("m = "));
    beam_ = new QSpinBox(this);
    beam_->setObjectName(QStringLiteral("selectionBeam"));
    beam_->setRange(1, 64);
    beam_->setValue(8);
    beam_->setPrefix(tr("beam = "));
    sizes->addWidget(m_);
    sizes->addWidget(beam_);
    form->addRow(tr("Layers / beam"), sizes);
    diversity_ = new QComboBox(this);
    diversity_->setObjectName(QStringLiteral("selectionDiversity"));
    diversity_->addItem(tr("one layer per CKA segment"), static_cast<int>(DiversityRule::OnePerSegment));
    diversity_->addItem(tr("CKA penalty (λ)"), static_cast<int>(DiversityRule::CkaPenalty));
    form->addRow(tr("Diversity"), diversity_);
    lambda_ = new QDoubleSpinBox(this);
    lambda_->setRange(0, 10);
    lambda_->setSingleStep(0.05);
    lambda_->setValue(0.1);
    form->addRow(tr("λ"), lambda_);
    objective_ = new QComboBox(this);
    objective_->addItem(tr("concatenation"), static_cast<int>(SetObjective::Concat));
    objective_->addItem(tr("Hadamard (joint)"), static_cast<int>(SetObjective::Hadamard));
    form->addRow(tr("Set entropy"), objective_);
    layout->addLayout(form);
    auto update_enabled = [this] {
        const bool c = static_cast<SelectionMethod>(method_->currentData().toInt()) == SelectionMethod::ElsiC;
        diversity_->setEnabled(c);
        lambda_->setEnabled(c && static_cast<DiversityRule>(diversity_->currentData().toInt()) == DiversityRule::CkaPenalty);
    };
    connect(method_, qOverload<int>(&QComboBox::currentIndexChanged), this, update_enabled);
    connect(diversity_, qOverload<int>(&QComboBox::currentIndexChanged), this, update_enabled);
    update_enabled();

    run_ = new QPushButton(tr("Run selection"), this);
    run_->setObjectName(QStringLiteral("runSelection"));
    layout->addWidget(run_);

    layout->addWidget(new QLabel(tr("Beam search"), this));
    steps_ = makeTable(this, {tr("step"), tr("layer set"), tr("entropy"), tr("score")}, QStringLiteral("beamTable"));
    layout->addWidget(steps_, 2);
    layout->addWidget(new QLabel(tr("Result vs baselines"), this));
    results_ = makeTable(this, {tr("set"), tr("layers"), tr("entropy")}, QStringLiteral("resultTable"));
    layout->addWidget(results_, 1);
    summary_ = new QLabel(this);
    summary_->setObjectName(QStringLiteral("selectionSummary"));
    summary_->setWordWrap(true);
    layout->addWidget(summary_);

    auto* export_row = new QHBoxLayout;
    format_ = new QComboBox(this);
    format_->setObjectName(QStringLiteral("exportFormat"));
    for (const char* f : {"vllm", "sglang", "specforge", "trtllm", "modelopt"}) format_->addItem(QString::fromLatin1(f));
    export_ = new QPushButton(tr("Export config…"), this);
    export_->setObjectName(QStringLiteral("exportConfig"));
    export_row->addWidget(format_, 1);
    export_row->addWidget(export_);
    layout->addLayout(export_row);
    train_ = new QPushButton(tr("Train draft…"), this);
    train_->setObjectName(QStringLiteral("trainDraft"));
    layout->addWidget(train_);

    connect(run_, &QPushButton::clicked, this, &SelectionPanel::runRequested);
    connect(export_, &QPushButton::clicked, this, [this] { Q_EMIT exportRequested(format_->currentText()); });
    connect(train_, &QPushButton::clicked, this, &SelectionPanel::trainRequested);
    for (QTableWidget* t : {steps_, results_}) {
        connect(t, &QTableWidget::cellEntered, this, [this, t](int row, int) {
            if (auto* item = t->item(row, 1)) Q_EMIT setHovered(layersFromText(item->text()));
        });
        connect(t, &QTableWidget::currentCellChanged, this, [this, t](int row, int) {
            if (auto* item = t->item(row, 1)) Q_EMIT setHovered(layersFromText(item->text()));
        });
    }
    setCanRun(false);
    setHasResult(false);
}

SelectionOptions SelectionPanel::options() const {
    SelectionOptions o;
    o.method = static_cast<SelectionMethod>(method_->currentData().toInt());
    o.m = m_->value();
    o.beam_width = beam_->value();
    o.diversity = static_cast<DiversityRule>(diversity_->currentData().toInt());
    o.penalty_lambda = lambda_->value();
    o.objective = static_cast<SetObjective>(objective_->currentData().toInt());
    return o;
}

QJsonObject SelectionPanel::toJson() const {
    const SelectionOptions o = options();
    return QJsonObject{{QStringLiteral("method"), QString::fromLatin1(toString(o.method))},
                       {QStringLiteral("m"), o.m},
                       {QStringLiteral("beam"), o.beam_width},
                       {QStringLiteral("diversity"), QString::fromLatin1(toString(o.diversity))},
                       {QStringLiteral("lambda"), o.penalty_lambda},
                       {QStringLiteral("objective"), QString::fromLatin1(toString(o.objective))},
                       {QStringLiteral("export_format"), format_->currentText()}};
}

void SelectionPanel::fromJson(const QJsonObject& j) {
    auto pick = [](QComboBox* box, int value) {
        const int i = box->findData(value);
        if (i >= 0) box->setCurrentIndex(i);
    };
    if (j.contains(QStringLiteral("method")))
        pick(method_, static_cast<int>(parseSelectionMethod(j.value(QStringLiteral("method")).toString().toStdString(), "session")));
    if (j.contains(QStringLiteral("diversity")))
        pick(diversity_, static_cast<int>(parseDiversityRule(j.value(QStringLiteral("diversity")).toString().toStdString(), "session")));
    if (j.contains(QStringLiteral("objective")))
        pick(objective_, static_cast<int>(parseSetObjective(j.value(QStringLiteral("objective")).toString().toStdString(), "session")));
    m_->setValue(j.value(QStringLiteral("m")).toInt(m_->value()));
    beam_->setValue(j.value(QStringLiteral("beam")).toInt(beam_->value()));
    lambda_->setValue(j.value(QStringLiteral("lambda")).toDouble(lambda_->value()));
    const int f = format_->findText(j.value(QStringLiteral("export_format")).toString());
    if (f >= 0) format_->setCurrentIndex(f);
}

QString SelectionPanel::exportFormat() const { return format_->currentText(); }

void SelectionPanel::clear() {
    steps_->setRowCount(0);
    results_->setRowCount(0);
    summary_->clear();
    setHasResult(false);
}

void SelectionPanel::addStep(const BeamStep& step) {
    // The kept beam of each step (best first); the full candidate list would swamp the table.
    bool first = true;
    for (const ScoredSet& s : step.kept) {
        addRow(steps_, {QString::number(step.step), QString::fromStdString(layersText(s.states)),
                        QString::number(s.entropy, 'f', 4), QString::number(s.score, 'f', 4)}, first);
        first = false;
    }
    steps_->scrollToBottom();
}

void SelectionPanel::showResult(const SelectionResult& r) {
    results_->setRowCount(0);
    const std::vector<LayerSetRow> rows = selectionTable(r);
    for (size_t k = 0; k < rows.size(); ++k)
        addRow(results_, {QString::fromStdString(rows[k].label), QString::fromStdString(layersText(rows[k].layers)),
                          QString::number(rows[k].score, 'f', 4)}, k == 0);
    QString text = tr("Chosen %1 in %2 s from %3 candidates.")
                       .arg(QString::fromStdString(layersText(r.chosen.states)))
                       .arg(r.seconds, 0, 'f', 2)
                       .arg(r.candidates.size());
    for (const std::string& w : r.warnings) text += QStringLiteral("\n⚠ ") + QString::fromStdString(w);
    summary_->setText(text);
    setHasResult(true);
}

void SelectionPanel::setCanRun(bool can_run) { run_->setEnabled(can_run); }

void SelectionPanel::setHasResult(bool has_result) {
    export_->setEnabled(has_result);
    train_->setEnabled(has_result);
}

}  // namespace wl
