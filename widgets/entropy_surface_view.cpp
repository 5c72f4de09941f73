#include "entropy_surface_view.h"

#include <QGuiApplication>
#include <QLabel>
#include <QMouseEvent>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLWidget>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include <vtkActor.h>
#include <vtkCallbackCommand.h>
#include <vtkCamera.h>
#include <vtkCellArray.h>
#include <vtkCommand.h>
#include <vtkCubeAxesActor.h>
#include <vtkDoubleArray.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkGenericRenderWindowInteractor.h>
#include <vtkInteractorStyleTrackballCamera.h>
#include <vtkLookupTable.h>
#include <vtkNew.h>
#include <vtkOpenGLState.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkPolyDataNormals.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkScalarBarActor.h>
#include <vtkSmartPointer.h>
#include <vtkTextProperty.h>

#include "colour_map.h"

namespace wl {

// QOpenGLWidget hosting a vtkGenericOpenGLRenderWindow. VTK renders into its own framebuffer
// and blits into Qt's FBO at the end of Render() (BlitToCurrent).
class VtkSurfaceGLWidget : public QOpenGLWidget {
public:
    explicit VtkSurfaceGLWidget(QWidget* parent) : QOpenGLWidget(parent) {
        window_->SetReadyForRendering(false);
        window_->SetFrameBlitModeToBlitToCurrent();
        window_->SetMultiSamples(0);
        window_->AddRenderer(renderer_);
        interactor_->SetRenderWindow(window_);
        interactor_->SetInteractorStyle(style_);
        interactor_->EnableRenderOff();   // Qt decides when to paint
        renderer_->SetBackground(1.0, 1.0, 1.0);
        renderer_->SetBackground2(0.90, 0.93, 0.97);
        renderer_->GradientBackgroundOn();

        auto make_current = vtkSmartPointer<vtkCallbackCommand>::New();
        make_current->SetClientData(this);
        make_current->SetCallback([](vtkObject*, unsigned long, void* client, void*) {
            // Never QOpenGLWidget::makeCurrent() here: that rebinds Qt's FBO under VTK.
            auto* self = static_cast<VtkSurfaceGLWidget*>(client);
            QOpenGLContext* ctx = self->context();
            if (ctx && QOpenGLContext::currentContext() != ctx) ctx->makeCurrent(ctx->surface());
        });
        window_->AddObserver(vtkCommand::WindowMakeCurrentEvent, make_current);
        auto is_current = vtkSmartPointer<vtkCallbackCommand>::New();
        is_current->SetClientData(this);
        is_current->SetCallback([](vtkObject*, unsigned long, void* client, void* call) {
            auto* self = static_cast<VtkSurfaceGLWidget*>(client);
            *static_cast<bool*>(call) = self->context() && QOpenGLContext::currentContext() == self->context();
        });
        window_->AddObserver(vtkCommand::WindowIsCurrentEvent, is_current);
        auto frame = vtkSmartPointer<vtkCallbackCommand>::New();
        frame->SetClientData(this);
        frame->SetCallback([](vtkObject*, unsigned long, void* client, void*) {
            auto* self = static_cast<VtkSurfaceGLWidget*>(client);
            if (!self->in_paint_) self->update();   // interaction asked for a render
        });
        window_->AddObserver(vtkCommand::WindowFrameEvent, frame);
        setFocusPolicy(Qt::StrongFocus);
        setMouseTracking(false);
    }

    ~VtkSurfaceGLWidget() override {
        QObject::disconnect(context_connection_);   // ~QOpenGLWidget destroys the context later
        if (initialised_) {
            makeCurrent();
            window_->Finalize();
            doneCurrent();
        }
    }

    vtkRenderer* renderer() { return renderer_; }

protected:
    void initializeGL() override {
        window_->SetIsDirect(true);
        window_->SetSupportsOpenGL(true);
        window_->SetOwnContext(false);
        window_->SetMapped(true);
        window_->InitializeFromCurrentContext();
        initialised_ = true;
        context_connection_ = connect(context(), &QOpenGLContext::aboutToBeDestroyed, this, [this] {
            makeCurrent();
            window_->Finalize();
            initialised_ = false;
            doneCurrent();
        });
    }

    void resizeGL(int w, int h) override {
        const double dpr = devicePixelRatioF();
        const int pw = static_cast<int>(std::lround(w * dpr)), ph = static_cast<int>(std::lround(h * dpr));
        window_->SetSize(pw, ph);
        interactor_->SetSize(pw, ph);
        interactor_->ConfigureEvent();
    }

    void paintGL() override {
        if (!initialised_) return;
        in_paint_ = true;
        window_->SetReadyForRendering(true);
        vtkOpenGLState* state = window_->GetState();
        state->Reset();               // Qt changed the GL state behind VTK's cache
        state->Push();
        window_->Render();            // ends with a blit into Qt's bound FBO
        state->Pop();
        window_->SetReadyForRendering(false);
        in_paint_ = false;
    }

    void mousePressEvent(QMouseEvent* e) override { forward(e, true); }
    void mouseReleaseEvent(QMouseEvent* e) override { forward(e, false); }
    void mouseMoveEvent(QMouseEvent* e) override {
        setEventPosition(e);
        interactor_->InvokeEvent(vtkCommand::MouseMoveEvent, nullptr);
        update();
    }
    void wheelEvent(QWheelEvent* e) override {
        const double dpr = devicePixelRatioF();
        interactor_->SetEventInformationFlipY(static_cast<int>(e->position().x() * dpr),
                                              static_cast<int>(e->position().y() * dpr));
        interactor_->InvokeEvent(e->angleDelta().y() > 0 ? vtkCommand::MouseWheelForwardEvent
                                                         : vtkCommand::MouseWheelBackwardEvent, nullptr);
        update();
    }

private:
    void setEventPosition(QMouseEvent* e) {
        const double dpr = devicePixelRatioF();
        interactor_->SetEventInformationFlipY(static_cast<int>(e->position().x() * dpr),
                                              static_cast<int>(e->position().y() * dpr),
                                              (e->modifiers() & Qt::ControlModifier) ? 1 : 0,
                                              (e->modifiers() & Qt::ShiftModifier) ? 1 : 0);
    }
    void forward(QMouseEvent* e, bool press) {
        setEventPosition(e);
        unsigned long id = 0;
        switch (e->button()) {
            case Qt::LeftButton: id = press ? vtkCommand::LeftButtonPressEvent : vtkCommand::LeftButtonReleaseEvent; break;
            case Qt::RightButton: id = press ? vtkCommand::RightButtonPressEvent : vtkCommand::RightButtonReleaseEvent; break;
            case Qt::MiddleButton: id = press ? vtkCommand::MiddleButtonPressEvent : vtkCommand::MiddleButtonReleaseEvent; break;
            default: return;
        }
        interactor_->InvokeEvent(id, nullptr);
        update();
    }

    vtkNew<vtkGenericOpenGLRenderWindow> window_;
    vtkNew<vtkRenderer> renderer_;
    vtkNew<vtkGenericRenderWindowInteractor> interactor_;
    vtkNew<vtkInteractorStyleTrackballCamera> style_;
    QMetaObject::Connection context_connection_;
    bool initialised_ = false;
    bool in_paint_ = false;
};

namespace {

// Builds the surface: x = hidden state, y = quantile bin, z = entropy scaled to the x extent
// so the surface is neither flat nor a spike whatever the entropy units.
void buildScene(vtkRenderer* renderer, const SurfaceData& s) {
    renderer->RemoveAllViewProps();
    if (s.rows < 2 || s.cols < 2 || s.values.size() != static_cast<size_t>(s.rows) * s.cols) return;
    double lo = s.values[0], hi = s.values[0];
    for (double v : s.values)
        if (std::isfinite(v)) { lo = std::min(lo, v); hi = std::max(hi, v); }
    const double range = hi > lo ? hi - lo : 1.0;
    const double x_extent = s.rows - 1, y_extent = s.cols - 1;
    const double z_extent = 0.6 * std::max(x_extent, y_extent);
    const double y_scale = x_extent / std::max(1.0, y_extent);   // square footprint

    vtkNew<vtkPoints> points;
    vtkNew<vtkDoubleArray> scalars;
    scalars->SetName("entropy");
    for (int r = 0; r < s.rows; ++r)
        for (int c = 0; c < s.cols; ++c) {
            const double v = s.at(r, c);
            const double t = std::isfinite(v) ? (v - lo) / range : 0.0;
            points->InsertNextPoint(r, c * y_scale, t * z_extent);
            scalars->InsertNextValue(std::isfinite(v) ? v : lo);
        }
    vtkNew<vtkCellArray> quads;
    for (int r = 0; r + 1 < s.rows; ++r)
        for (int c = 0; c + 1 < s.cols; ++c) {
            const vtkIdType a = r * s.cols + c;
            const vtkIdType ids[4] = {a, a + s.cols, a + s.cols + 1, a + 1};
            quads->InsertNextCell(4, ids);
        }
    vtkNew<vtkPolyData> poly;
    poly->SetPoints(points);
    poly->SetPolys(quads);
    poly->GetPointData()->SetScalars(scalars);
    vtkNew<vtkPolyDataNormals> normals;
    normals->SetInputData(poly);
    normals->SplittingOff();

    vtkNew<vtkLookupTable> lut;
    lut->SetNumberOfTableValues(256);
    for (int i = 0; i < 256; ++i) {
        const QColor c = viridis(i / 255.0);
        lut->SetTableValue(i, c.redF(), c.greenF(), c.blueF(), 1.0);
    }
    lut->SetRange(lo, hi > lo ? hi : lo + 1.0);
    lut->Build();

    vtkNew<vtkPolyDataMapper> mapper;
    mapper->SetInputConnection(normals->GetOutputPort());
    mapper->SetLookupTable(lut);
    mapper->SetScalarRange(lo, hi > lo ? hi : lo + 1.0);
    mapper->ScalarVisibilityOn();
    vtkNew<vtkActor> actor;
    actor->SetMapper(mapper);
    actor->GetProperty()->SetEdgeVisibility(true);
    actor->GetProperty()->SetEdgeColor(0.25, 0.25, 0.25);
    actor->GetProperty()->SetLineWidth(0.5);
    actor->GetProperty()->SetSpecular(0.2);
    renderer->AddActor(actor);

    vtkNew<vtkCubeAxesActor> axes;
    axes->SetBounds(0, x_extent, 0, y_extent * y_scale, 0, z_extent);
    axes->SetXAxisRange(0, x_extent);
    axes->SetYAxisRange(1, s.cols);
    axes->SetZAxisRange(lo, hi);
    axes->SetXTitle(s.row_title.c_str());
    axes->SetYTitle(s.col_title.c_str());
    axes->SetZTitle(s.value_title.c_str());
    axes->SetCamera(renderer->GetActiveCamera());
    axes->SetFlyModeToOuterEdges();
    axes->SetLabelScaling(false, 0, 0, 0);   // keep the formats below
    axes->SetXLabelFormat("%.0f");
    axes->SetYLabelFormat("%.0f");
    axes->SetZLabelFormat("%.2f");
    axes->SetScreenSize(7.0);
    axes->SetLabelOffset(12);
    axes->SetTitleOffset(18);
    axes->XAxisMinorTickVisibilityOff();
    axes->YAxisMinorTickVisibilityOff();
    axes->ZAxisMinorTickVisibilityOff();
    axes->SetGridLineLocation(vtkCubeAxesActor::VTK_GRID_LINES_FURTHEST);
    axes->DrawXGridlinesOn();
    axes->DrawYGridlinesOn();
    axes->DrawZGridlinesOn();
    for (int i = 0; i < 3; ++i) {
        axes->GetTitleTextProperty(i)->SetColor(0.1, 0.1, 0.1);
        axes->GetLabelTextProperty(i)->SetColor(0.2, 0.2, 0.2);
    }
    axes->GetXAxesLinesProperty()->SetColor(0.3, 0.3, 0.3);
    axes->GetYAxesLinesProperty()->SetColor(0.3, 0.3, 0.3);
    axes->GetZAxesLinesProperty()->SetColor(0.3, 0.3, 0.3);
    axes->GetXAxesGridlinesProperty()->SetColor(0.8, 0.8, 0.8);
    axes->GetYAxesGridlinesProperty()->SetColor(0.8, 0.8, 0.8);
    axes->GetZAxesGridlinesProperty()->SetColor(0.8, 0.8, 0.8);
    renderer->AddActor(axes);

    vtkNew<vtkScalarBarActor> bar;
    bar->SetLookupTable(lut);
    bar->SetTitle(s.value_title.c_str());
    bar->SetNumberOfLabels(5);
    bar->SetLabelFormat("%.2f");
    bar->UnconstrainedFontSizeOn();
    bar->GetLabelTextProperty()->SetFontSize(12);
    bar->GetTitleTextProperty()->SetFontSize(12);
    bar->SetWidth(0.08);
    bar->SetHeight(0.6);
    bar->SetPosition(0.86, 0.15);
    bar->GetTitleTextProperty()->SetColor(0.1, 0.1, 0.1);
    bar->GetLabelTextProperty()->SetColor(0.1, 0.1, 0.1);
    renderer->AddActor2D(bar);

    vtkCamera* camera = renderer->GetActiveCamera();
    camera->SetFocalPoint(x_extent / 2, y_extent * y_scale / 2, z_extent / 2);
    camera->SetPosition(x_extent * 2.2, -y_extent * y_scale * 1.4, z_extent * 2.0);
    camera->SetViewUp(0, 0, 1);
    renderer->ResetCamera();
    camera->Zoom(0.9);
}

}  // namespace

bool EntropySurfaceView::openGLAvailable() {
    static const bool available = [] {
        const QString platform = QGuiApplication::platformName();
        if (platform == QLatin1String("offscreen") || platform == QLatin1String("minimal")) return false;
        if (qEnvironmentVariableIsSet("WAVELAB_NO_OPENGL")) return false;
        QOpenGLContext probe;
        if (!probe.create()) return false;
        QOffscreenSurface surface;
        surface.setFormat(probe.format());
        surface.create();
        const bool ok = surface.isValid() && probe.makeCurrent(&surface);
        if (ok) probe.doneCurrent();
        return ok;
    }();
    return available;
}

EntropySurfaceView::EntropySurfaceView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("entropySurfaceView"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    if (openGLAvailable()) {
        gl_ = new VtkSurfaceGLWidget(this);
        layout->addWidget(gl_);
    } else {
        placeholder_ = new QLabel(this);
        placeholder_->setAlignment(Qt::AlignCenter);
        placeholder_->setWordWrap(true);
        placeholder_->setStyleSheet(QStringLiteral("QLabel { color: #666; background: #f4f6f9; border: 1px dashed #bbb; }"));
        placeholder_->setText(tr("3D entropy surface\n\nOpenGL is not available on this display (%1),\n"
                                 "so the 3D view is off. The wave and CKA views are unaffected.")
                                  .arg(QGuiApplication::platformName()));
        layout->addWidget(placeholder_);
    }
}

EntropySurfaceView::~EntropySurfaceView() = default;

void EntropySurfaceView::setSurface(const SurfaceData& surface) {
    surface_ = surface;
    if (gl_) {
        buildScene(gl_->renderer(), surface_);
        gl_->update();
    } else if (placeholder_ && surface.rows > 0) {
        placeholder_->setToolTip(tr("%1 x %2 surface (not drawn: no OpenGL)").arg(surface.rows).arg(surface.cols));
    }
}

QImage EntropySurfaceView::grabFrame() {
    return gl_ ? gl_->grabFramebuffer() : QImage();
}

void EntropySurfaceView::resetCamera() {
    if (!gl_) return;
    buildScene(gl_->renderer(), surface_);
    gl_->update();
}

}  // namespace wl
