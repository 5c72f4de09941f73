#include "folder_field.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>

namespace wl {

QHBoxLayout* folderField(QLineEdit* edit, QWidget* parent, const QString& title) {
    auto* row = new QHBoxLayout;
    auto* browse = new QPushButton(QObject::tr("…"), parent);
    row->addWidget(edit, 1);
    row->addWidget(browse);
    QObject::connect(browse, &QPushButton::clicked, parent, [edit, parent, title] {
        const QString d = QFileDialog::getExistingDirectory(parent, title, edit->text());
        if (!d.isEmpty()) edit->setText(d);
    });
    return row;
}

}  // namespace wl
