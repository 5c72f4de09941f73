#pragma once
// A line edit for a folder path with a "…" button that opens a folder chooser (draft output,
// SpecForge checkout and set-up folders).
class QHBoxLayout;
class QLineEdit;
class QString;
class QWidget;

namespace wl {

// Returns a row holding `edit` and its browse button; the chooser's title is `title`.
QHBoxLayout* folderField(QLineEdit* edit, QWidget* parent, const QString& title);

}  // namespace wl
