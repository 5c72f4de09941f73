#pragma once
// "Layer selection" panel: ELSI / ELSI-C options, Run, the beam search step by step, the
// result against the EAGLE baselines, config export and "Train draft…".
#include <QGroupBox>
#include <QJsonObject>

#include "gui_types.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace wl {

class SelectionPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit SelectionPanel(QWidget* parent = nullptr);

    SelectionOptions options() const;
    QJsonObject toJson() const;
    void fromJson(const QJsonObject& json);

    void clear();
    void addStep(const BeamStep& step);
    void showResult(const SelectionResult& result);
    void setCanRun(bool can_run);
    void setHasResult(bool has_result);
    QString exportFormat() const;

    QPushButton* runButton() const { return run_; }
    QPushButton* exportButton() const { return export_; }
    QPushButton* trainButton() const { return train_; }
    QTableWidget* stepsTable() const { return steps_; }
    QTableWidget* resultTable() const { return results_; }

Q_SIGNALS:
    void runRequested();
    void exportRequested(const QString& format);
    void trainRequested();
    void setHovered(const std::vector<int>& layers);   // a table row under the mouse / selected

private:
    QComboBox* method_ = nullptr;
    QSpinBox* m_ = nullptr;
    QSpinBox* beam_ = nullptr;
    QComboBox* diversity_ = nullptr;
    QDoubleSpinBox* lambda_ = nullptr;
    QComboBox* objective_ = nullptr;
    QPushButton* run_ = nullptr;
    QTableWidget* steps_ = nullptr;
    QTableWidget* results_ = nullptr;
    QComboBox* format_ = nullptr;
    QPushButton* export_ = nullptr;
    QPushButton* train_ = nullptr;
    QLabel* summary_ = nullptr;
};

}  // namespace wl
