// GoogleTest main for the GUI tests: one QApplication for the whole run. Without a display
// (no DISPLAY / WAYLAND_DISPLAY) it uses Qt's `offscreen` platform, where the 3D view shows
// its placeholder; under xvfb-run the VTK view renders for real.
#include <gtest/gtest.h>

#include <QApplication>
#include <cstdlib>

int main(int argc, char** argv) {
    if (!std::getenv("QT_QPA_PLATFORM") && !std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY"))
        setenv("QT_QPA_PLATFORM", "offscreen", 1);
    ::testing::InitGoogleTest(&argc, argv);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("WaveLabTests"));
    QApplication::setApplicationName(QStringLiteral("wavelab-tests"));
    return RUN_ALL_TESTS();
}
