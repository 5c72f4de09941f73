// The UI thread's longest stall while a calibration run streams (target < 50 ms).
// Drives the real window (MainWindow) on stories260K: open + load the model, start the
// calibration run (capture + streaming analysis on the engine's worker, live snapshots,
// chart/heatmap/surface updates on the UI thread), and meanwhile a 5 ms QTimer heartbeat on
// the UI thread records the gaps between its ticks. A gap far above 5 ms means the event
// loop was blocked that long. The same heartbeat is first measured for 1 s with the window
// idle, as the baseline of this machine's timer jitter.
// Run under QT_QPA_PLATFORM=offscreen (scripts/bench does). Usage: bench_gui_stall [--quick]
//   [--prompts 64] [--tokens 128] [--model PATH]
#include <QApplication>
#include <QElapsedTimer>
#include <QSpinBox>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "bench_common.h"
#include "calibration_panel.h"
#include "main_window.h"

namespace {

struct Heartbeat {
    QTimer timer;
    QElapsedTimer clock;
    std::vector<double> gaps_ms;
    qint64 last_ns = -1;
    explicit Heartbeat() {
        timer.setInterval(5);
        timer.setTimerType(Qt::PreciseTimer);
        QObject::connect(&timer, &QTimer::timeout, [this] {
            const qint64 now = clock.nsecsElapsed();
            if (last_ns >= 0) gaps_ms.push_back((now - last_ns) / 1e6);
            last_ns = now;
        });
    }
    void start() {
        gaps_ms.clear();
        last_ns = -1;
        clock.start();
        timer.start();
    }
    void stop() { timer.stop(); }
    double max() const { return gaps_ms.empty() ? 0 : *std::max_element(gaps_ms.begin(), gaps_ms.end()); }
    double percentile(double q) const {
        if (gaps_ms.empty()) return 0;
        std::vector<double> s = gaps_ms;
        std::sort(s.begin(), s.end());
        return s[static_cast<size_t>(q * (s.size() - 1))];
    }
    size_t over(double ms) const {
        return static_cast<size_t>(std::count_if(gaps_ms.begin(), gaps_ms.end(), [&](double g) { return g > ms; }));
    }
};

}  // namespace

int main(int argc, char** argv) {
    wl::bench::Args args(argc, argv);
    const bool quick = args.flag("--quick");
    const QString model = QString::fromStdString(
        args.get("--model", std::string(WAVELAB_MODELS_DIR) + "/stories260K/stories260K.bin"));
    const int prompts = static_cast<int>(args.getInt("--prompts", quick ? 32 : 64));
    const int tokens = static_cast<int>(args.getInt("--tokens", 128));
    QApplication app(argc, argv);
    wl::bench::printMachine("bench_gui_stall");
    std::printf("# platform %s, model %s, %d prompts x <= %d tokens (bundled calibration set)\n",
                qPrintable(QGuiApplication::platformName()), qPrintable(model), prompts, tokens);

    wl::MainWindow window;
    window.setInteractive(false);
    window.resize(1400, 900);
    window.show();
    Heartbeat beat;
    int status = 0;
    QElapsedTimer run_clock;
    auto report = [&](const char* phase, double seconds) {
        std::printf("%-22s %8zu %10.1f %10.2f %10.1f %10.1f %10zu %8.1f\n", phase, beat.gaps_ms.size(), beat.max(),
                    beat.percentile(0.5), beat.percentile(0.99), seconds, beat.over(50.0), 50.0);
        std::fflush(stdout);
    };
    std::printf("%-22s %8s %10s %10s %10s %10s %10s %8s\n", "phase", "ticks", "max ms", "median ms", "p99 ms",
                "seconds", ">50 ms", "target");
    QObject::connect(&window, &wl::MainWindow::errorShown, [&](const QString& m) {
        std::fprintf(stderr, "bench_gui_stall: %s\n", qPrintable(m));
        status = 1;
        app.quit();
    });
    QObject::connect(&window, &wl::MainWindow::modelReady, [&] {
        window.calibrationPanel()->promptsSpin()->setValue(prompts);
        window.calibrationPanel()->tokensSpin()->setValue(tokens);
        beat.start();
        run_clock.start();
        window.startRun();
    });
    QObject::connect(&window, &wl::MainWindow::runCompleted, [&] {
        beat.stop();
        report("calibration run", run_clock.elapsed() / 1e3);
        std::printf("# max stall while streaming: %.1f ms (target < 50 ms: %s)\n", beat.max(),
                    beat.max() < 50.0 ? "met" : "NOT met");
        app.quit();
    });
    // Idle baseline first, then open + load the model.
    QTimer::singleShot(0, [&] {
        beat.start();
        QTimer::singleShot(1000, [&] {
            beat.stop();
            report("idle window (baseline)", 1.0);
            window.openModel(model);
            window.loadModel();
        });
    });
    QTimer::singleShot(600000, [&] {
        std::fprintf(stderr, "bench_gui_stall: no result after 10 minutes\n");
        status = 2;
        app.quit();
    });
    const int rc = app.exec();
    return status ? status : rc;
}
