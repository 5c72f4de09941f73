#include "colour_map.h"

#include <algorithm>
#include <cmath>

namespace wl {

namespace {
// viridis at 0, 1/8, ..., 1: viridisLite::viridis(9) = #440154 #472D7B #3B528B #2C728E
// #21908C #27AD81 #5DC863 #AADC32 #FDE725; linear in between.
constexpr int kStops = 9;
constexpr unsigned char kViridis[kStops][3] = {
    {0x44, 0x01, 0x54}, {0x47, 0x2D, 0x7B}, {0x3B, 0x52, 0x8B}, {0x2C, 0x72, 0x8E}, {0x21, 0x90, 0x8C},
    {0x27, 0xAD, 0x81}, {0x5D, 0xC8, 0x63}, {0xAA, 0xDC, 0x32}, {0xFD, 0xE7, 0x25},
};
}  // namespace

QColor viridis(double v) {
    if (std::isnan(v)) return QColor(128, 128, 128);
    v = std::clamp(v, 0.0, 1.0);
    const double x = v * (kStops - 1);
    const int i = std::min(static_cast<int>(x), kStops - 2);
    const double f = x - i;
    auto mix = [&](int c) {
        return static_cast<int>(std::lround(kViridis[i][c] * (1.0 - f) + kViridis[i + 1][c] * f));
    };
    return QColor(mix(0), mix(1), mix(2));
}

}  // namespace wl
