#include "model_panel.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

#include "engine.h"

namespace wl {

ModelPanel::ModelPanel(QWidget* parent) : QGroupBox(tr("Model"), parent) {
    setObjectName(QStringLiteral("modelPanel"));
    auto* layout = new QVBoxLayout(this);
    auto* row = new QHBoxLayout;
    path_ = new QLineEdit(this);
    path_->setObjectName(QStringLiteral("modelPath"));
    path_->setPlaceholderText(tr("HF model directory or llama2.c .bin (drop it on the window)"));
    browse_ = new QPushButton(tr("Browse…"), this);
    recent_ = new QToolButton(this);
    recent_->setText(tr("Recent"));
    recent_->setPopupMode(QToolButton::InstantPopup);
    recent_menu_ = new QMenu(recent_);
    recent_->setMenu(recent_menu_);
    row->addWidget(path_, 1);
    row->addWidget(browse_);
    row->addWidget(recent_);
    layout->addLayout(row);

    info_ = new QLabel(tr("No model selected."), this);
    info_->setObjectName(QStringLiteral("modelInfo"));
    info_->setTextFormat(Qt::RichText);
    info_->setWordWrap(true);
    layout->addWidget(info_);
    memory_ = new QLabel(this);
    memory_->setObjectName(QStringLiteral("modelMemory"));
    memory_->setWordWrap(true);
    layout->addWidget(memory_);

    load_ = new QPushButton(tr("Load model"), this);
    load_->setObjectName(QStringLiteral("loadModel"));
    load_->setEnabled(false);
    layout->addWidget(load_);

    connect(browse_, &QPushButton::clicked, this, &ModelPanel::browse);
    connect(path_, &QLineEdit::editingFinished, this, [this] {
        if (!path_->text().isEmpty()) setModelPath(path_->text());
    });
    connect(load_, &QPushButton::clicked, this, [this] { Q_EMIT loadRequested(modelPath()); });
}

QString ModelPanel::modelPath() const { return path_->text().trimmed(); }

void ModelPanel::browse() {
    // A checkpoint file, or (Cancel, then) a directory for Hugging Face models.
    QString path = QFileDialog::getOpenFileName(this, tr("Open model (llama2.c .bin or config.json of an HF model)"),
                                                QFileInfo(modelPath()).absolutePath(),
                                                tr("Models (*.bin config.json *.safetensors);;All files (*)"));
    if (path.isEmpty()) path = QFileDialog::getExistingDirectory(this, tr("Open Hugging Face model directory"));
    if (path.isEmpty()) return;
    if (path.endsWith(QStringLiteral("config.json")) || path.endsWith(QStringLiteral(".safetensors")))
        path = QFileInfo(path).absolutePath();
    setModelPath(path);
}

void ModelPanel::setModelPath(const QString& path) {
    path_->setText(path);
    try {
        const ModelSummary s = Engine::inspect(path);
        showSummary(s, false);
        Q_EMIT pathChosen(path);
    } catch (const std::exception& e) {
        showError(QString::fromStdString(e.what()));
    }
}

void ModelPanel::showSummary(const ModelSummary& s, bool loaded) {
    const ModelConfig& c = s.config;
    const double params = static_cast<double>(c.numParameters());
    const QString params_text = params >= 1e9 ? tr("%1 B").arg(params / 1e9, 0, 'f', 2)
                              : params >= 1e6 ? tr("%1 M").arg(params / 1e6, 0, 'f', 2)
                                              : tr("%1 K").arg(params / 1e3, 0, 'f', 1);
    info_->setText(tr("<table cellspacing='2'>"
                      "<tr><td><b>%1</b></td><td>%2%3</td></tr>"
                      "<tr><td>architecture</td><td>%4 (%5)</td></tr>"
                      "<tr><td>layers</td><td>%6 decoder layers → %7 hidden states</td></tr>"
                      "<tr><td>hidden size</td><td>%8, %9 heads (%10 kv), vocab %11</td></tr>"
                      "<tr><td>parameters</td><td>%12</td></tr>"
                      "<tr><td>device</td><td>%13, %14</td></tr></table>")
                       .arg(QString::fromStdString(c.name).toHtmlEscaped(),
                            loaded ? tr("<span style='color:#2ca02c'> ● loaded</span>") : QString(),
                            s.tokenizer.isEmpty() ? QString() : tr(" · tokenizer %1").arg(s.tokenizer),
                            QString::fromStdString(c.architecture), QString::fromStdString(c.source_format))
                       .arg(c.num_layers)
                       .arg(c.num_layers + 1)
                       .arg(c.hidden_size)
                       .arg(c.num_heads)
                       .arg(c.num_kv_heads)
                       .arg(c.vocab_size)
                       .arg(params_text, s.device.toUpper(), s.dtype));
    memory_->setText(tr("Memory: %1").arg(s.fitMessage()));
    memory_->setStyleSheet(s.fits ? QStringLiteral("color: #333;") : QStringLiteral("color: #c62828; font-weight: bold;"));
    inspected_ok_ = s.fits;
    load_->setEnabled(inspected_ok_ && !busy_);
    load_->setToolTip(s.fits ? QString() : tr("Refused: the model would not fit in the available memory."));
}

void ModelPanel::showError(const QString& message) {
    info_->setText(QStringLiteral("<span style='color:#c62828'>%1</span>").arg(message.toHtmlEscaped()));
    memory_->clear();
    inspected_ok_ = false;
    load_->setEnabled(false);
}

void ModelPanel::setBusy(bool busy) {
    busy_ = busy;
    load_->setEnabled(inspected_ok_ && !busy);
    browse_->setEnabled(!busy);
    path_->setEnabled(!busy);
    recent_->setEnabled(!busy);
}

void ModelPanel::setRecent(const QStringList& paths) {
    recent_menu_->clear();
    for (const QString& p : paths) {
        QAction* a = recent_menu_->addAction(p);
        connect(a, &QAction::triggered, this, [this, p] { setModelPath(p); });
    }
    recent_->setEnabled(!paths.isEmpty());
}

}  // namespace wl
