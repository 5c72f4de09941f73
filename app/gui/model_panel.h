#pragma once
// "Model" panel: choose a model (file dialog, drop, recent list), see its architecture and
// memory estimate before loading, then load it.
#include <QGroupBox>

#include "gui_types.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QToolButton;
class QMenu;

namespace wl {

class ModelPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit ModelPanel(QWidget* parent = nullptr);

    QString modelPath() const;
    void setModelPath(const QString& path);           // inspects the config (no weights)
    void showSummary(const ModelSummary& summary, bool loaded);
    void showError(const QString& message);
    void setBusy(bool busy);
    void setRecent(const QStringList& paths);
    bool canLoad() const { return inspected_ok_; }
    QPushButton* loadButton() const { return load_; }

Q_SIGNALS:
    void pathChosen(const QString& path);
    void loadRequested(const QString& path);

private:
    void browse();
    QLineEdit* path_ = nullptr;
    QPushButton* browse_ = nullptr;
    QToolButton* recent_ = nullptr;
    QMenu* recent_menu_ = nullptr;
    QPushButton* load_ = nullptr;
    QLabel* info_ = nullptr;
    QLabel* memory_ = nullptr;
    bool inspected_ok_ = false;
    bool busy_ = false;
};

}  // namespace wl
