#pragma once
// 3D entropy surface (hidden state x token-entropy quantile, or x prompt) rendered by VTK in a
// Qt 6 QOpenGLWidget through vtkGenericOpenGLRenderWindow; rotate/zoom with the mouse.
// Where there is no OpenGL (Qt's `offscreen` platform) it shows a placeholder instead:
// Debian's VTK has no OSMesa/EGL, and a QOpenGLWidget there would crash.
#include <QWidget>
#include <memory>

#include "wave_data.h"

class QLabel;
class QStackedLayout;

namespace wl {

class VtkSurfaceGLWidget;

class EntropySurfaceView : public QWidget {
    Q_OBJECT
public:
    explicit EntropySurfaceView(QWidget* parent = nullptr);
    ~EntropySurfaceView() override;

    // True when this process can host an OpenGL widget (not `offscreen`/`minimal`, and an
    // OpenGL context can be created). Checked once.
    static bool openGLAvailable();

    void setSurface(const SurfaceData& surface);
    const SurfaceData& surface() const { return surface_; }
    bool isRendering3D() const { return gl_ != nullptr; }
    // Last rendered frame (empty when no OpenGL): for PNG export and screenshots.
    QImage grabFrame();
    void resetCamera();

    QSize sizeHint() const override { return {520, 420}; }

private:
    SurfaceData surface_;
    VtkSurfaceGLWidget* gl_ = nullptr;
    QLabel* placeholder_ = nullptr;
};

}  // namespace wl
