// wavelab: the WaveLab window.
//   wavelab [--model PATH] [--session FILE] [--teaching] [--run]
//           [--screenshot OUT.png [--size WxH] [--timeout SECONDS]]
// --run loads the model, runs the calibration and the layer selection (the guided demo
// pipeline). With --screenshot the window is rendered to OUT.png after that (or right away
// without --run) and the program exits; it works under Xvfb and with QT_QPA_PLATFORM=offscreen
// (chosen automatically when there is no display; the 3D view then shows a placeholder).
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QTimer>
#include <cstdio>
#include <cstdlib>

#include "engine.h"
#include "main_window.h"

int main(int argc, char** argv) {
    bool headless_shot = false;
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--screenshot" || std::string(argv[i]).rfind("--screenshot=", 0) == 0) headless_shot = true;
    if (headless_shot && !std::getenv("QT_QPA_PLATFORM") && !std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY"))
        setenv("QT_QPA_PLATFORM", "offscreen", 1);

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("WaveLab"));
    QApplication::setApplicationName(QStringLiteral("wavelab"));
    QApplication::setApplicationVersion(QStringLiteral(WAVELAB_VERSION));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/wavelab.svg")));
    wl::registerGuiMetaTypes();

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("WaveLab: activation waves, CKA and ELSI layer selection for EAGLE3 drafts"));
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption model({QStringLiteral("model"), QStringLiteral("m")}, QStringLiteral("Model directory or checkpoint to open."), QStringLiteral("path"));
    QCommandLineOption session(QStringLiteral("session"), QStringLiteral("Session file to open."), QStringLiteral("file"));
    QCommandLineOption teaching(QStringLiteral("teaching"), QStringLiteral("Teaching mode: captions and the guided demo."));
    QCommandLineOption run(QStringLiteral("run"), QStringLiteral("Load the model, calibrate and select layers right away."));
    QCommandLineOption shot(QStringLiteral("screenshot"), QStringLiteral("Render the window to a PNG and exit."), QStringLiteral("out.png"));
    QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size for --screenshot (default 1600x1000)."), QStringLiteral("WxH"), QStringLiteral("1600x1000"));
    QCommandLineOption timeout(QStringLiteral("timeout"), QStringLiteral("Give up --run after this many seconds (default 600)."), QStringLiteral("s"), QStringLiteral("600"));
    parser.addOptions({model, session, teaching, run, shot, size, timeout});
    parser.process(app);

    wl::MainWindow window;
    const QString shot_path = parser.value(shot);
    const bool headless = !shot_path.isEmpty();
    window.setInteractive(!headless);
    if (headless) {
        const QStringList wh = parser.value(size).split('x');
        window.resize(wh.value(0).toInt() > 0 ? wh.value(0).toInt() : 1600, wh.value(1).toInt() > 0 ? wh.value(1).toInt() : 1000);
    } else {
        window.resize(1600, 1000);
        window.restoreLayout();
    }
    if (parser.isSet(teaching)) window.setTeachingMode(true);
    if (parser.isSet(session)) {
        try {
            window.loadSession(parser.value(session));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "wavelab: %s\n", e.what());
            if (headless) return 1;
        }
    }
    if (parser.isSet(model)) window.openModel(parser.value(model));
    window.show();

    int exit_code = 0;
    auto take_shot = [&] {
        // Let the last snapshot and layout settle before grabbing.
        QTimer::singleShot(300, &window, [&] {
            const QImage image = window.screenshot();
            if (image.isNull() || !image.save(shot_path)) {
                std::fprintf(stderr, "wavelab: %s: could not write the screenshot\n", qPrintable(shot_path));
                exit_code = 1;
            } else {
                std::printf("wavelab: screenshot written to %s (%dx%d)\n", qPrintable(shot_path), image.width(), image.height());
            }
            QApplication::exit(exit_code);
        });
    };
    if (parser.isSet(run)) {
        QObject::connect(&window, &wl::MainWindow::demoFinished, &window, [&](bool ok) {
            if (!ok) {
                std::fprintf(stderr, "wavelab: the run failed\n");
                exit_code = 1;
            }
            if (headless) take_shot();
        });
        if (headless) {
            QObject::connect(&window, &wl::MainWindow::errorShown, &window,
                             [](const QString& m) { std::fprintf(stderr, "wavelab: %s\n", qPrintable(m)); });
            QTimer::singleShot(parser.value(timeout).toInt() * 1000, &window, [&] {
                std::fprintf(stderr, "wavelab: --run timed out\n");
                QApplication::exit(124);
            });
        }
        QTimer::singleShot(0, &window, [&] {
            window.runDemo(parser.isSet(model) ? parser.value(model) : QString());
        });
    } else if (headless) {
        take_shot();
    }
    const int rc = app.exec();
    return rc != 0 ? rc : exit_code;
}
