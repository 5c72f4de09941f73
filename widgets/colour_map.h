#pragma once
// Perceptually uniform colour map (matplotlib's viridis) for heatmaps, colour bars and the
// 3D surface, so every view uses the same value-to-colour mapping.
#include <QColor>

namespace wl {

// v in [0, 1] (clamped; NaN maps to mid grey) -> viridis colour.
QColor viridis(double v);

}  // namespace wl
