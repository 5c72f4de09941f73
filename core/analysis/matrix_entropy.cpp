// Direct float64 matrix entropy, CKA and HSIC formulas (references and building blocks).
#include "analysis/matrix_entropy.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "analysis/blas_lapack.h"
#include "util/error.h"

namespace wl {

namespace {
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
}

std::vector<double> symmetricEigenvalues(std::vector<double> a, int64_t n64, EigenDriver driver) {
    if (n64 <= 0) return {};
    if (static_cast<int64_t>(a.size()) != n64 * n64) throw Error("eigensolver", "matrix size mismatch");
    const int n = static_cast<int>(n64);
    const bool two_stage = driver == EigenDriver::TwoStage || (driver == EigenDriver::Auto && n64 >= kTwoStageMinDim);
    const auto solve = two_stage ? dsyevd_2stage_ : dsyevd_;   // overwrites a (symmetric: row- == column-major)
    std::vector<double> w(n);
    int info = 0, lwork = -1, liwork = -1, iwork_query = 0;
    double work_query = 0;
    solve("N", "L", &n, a.data(), &n, w.data(), &work_query, &lwork, &iwork_query, &liwork, &info);
    lwork = std::max(1, static_cast<int>(work_query));
    liwork = std::max(1, iwork_query);
    std::vector<double> work(lwork);
    std::vector<int> iwork(liwork);
    solve("N", "L", &n, a.data(), &n, w.data(), work.data(), &lwork, iwork.data(), &liwork, &info);
    if (info != 0)
        throw Error("eigensolver", std::string("LAPACK ") + (two_stage ? "dsyevd_2stage" : "dsyevd") + " failed (info " +
                                       std::to_string(info) + ")");
    return w;
}

double spectrumEntropy(const std::vector<double>& eigenvalues, double alpha) {
    double total = 0;
    for (double e : eigenvalues) total += std::max(e, 0.0);
    if (!(total > 0)) return 0.0;  // no variance: a single point has zero entropy
    if (std::abs(alpha - 1.0) < 1e-12) {
        double h = 0;
        for (double e : eigenvalues) {
            double p = std::max(e, 0.0) / total;
            if (p > 0) h -= p * std::log(p);
        }
        return h;
    }
    double s = 0;
    for (double e : eigenvalues) {
        double p = std::max(e, 0.0) / total;
        if (p > 0) s += std::pow(p, alpha);
    }
    return std::log(s) / (1.0 - alpha);
}

double psdMatrixEntropy(std::vector<double> a, int64_t n, double alpha) {
    if (!(alpha > 0)) throw Error("matrix entropy", "alpha must be > 0");
    if (std::abs(alpha - 2.0) < 1e-12) {
        double trace = 0, fro2 = 0;
        for (int64_t i = 0; i < n; ++i) trace += a[i * n + i];
        for (double v : a) fro2 += v * v;
        if (!(trace > 0) || !(fro2 > 0)) return 0.0;
        return -std::log(fro2 / (trace * trace));
    }
    return spectrumEntropy(symmetricEigenvalues(std::move(a), n), alpha);
}

double normalizeEntropy(double entropy, EntropyNormalization normalization, int64_t n, int64_t d) {
    double denom = 1.0;
    switch (normalization) {
        case EntropyNormalization::Raw: return entropy;
        case EntropyNormalization::LogN: denom = std::log(static_cast<double>(n)); break;
        case EntropyNormalization::LogD: denom = std::log(static_cast<double>(d)); break;
        case EntropyNormalization::LogMinND: denom = std::log(static_cast<double>(std::min(n, d))); break;
    }
    return denom > 0 ? entropy / denom : 0.0;
}

double matrixEntropy(const std::vector<float>& z, int64_t n, int64_t d, double alpha,
                     EntropyNormalization normalization) {
    if (static_cast<int64_t>(z.size()) != n * d) throw Error("matrix entropy", "matrix size mismatch");
    if (n == 0) return std::numeric_limits<double>::quiet_NaN();
    RowMatrix u(n, d);
    for (int64_t i = 0; i < n; ++i) {
        double norm2 = 0;
        for (int64_t j = 0; j < d; ++j) norm2 += double(z[i * d + j]) * z[i * d + j];
        double inv = norm2 > 0 ? 1.0 / std::sqrt(norm2) : 0.0;
        for (int64_t j = 0; j < d; ++j) u(i, j) = z[i * d + j] * inv;
    }
    u.rowwise() -= u.colwise().mean();
    RowMatrix g = n <= d ? RowMatrix(u * u.transpose()) : RowMatrix(u.transpose() * u);
    const int64_t m = g.rows();
    std::vector<double> gv(g.data(), g.data() + m * m);
    return normalizeEntropy(psdMatrixEntropy(std::move(gv), m, alpha), normalization, n, d);
}

namespace {
RowMatrix toMatrix(const std::vector<double>& x, int64_t n, int64_t d) {
    if (static_cast<int64_t>(x.size()) != n * d) throw Error("CKA", "matrix size mismatch");
    return Eigen::Map<const RowMatrix>(x.data(), n, d);
}
}  // namespace

double linearCka(const std::vector<double>& xv, const std::vector<double>& yv, int64_t n, int64_t dx,
                 int64_t dy) {
    RowMatrix x = toMatrix(xv, n, dx), y = toMatrix(yv, n, dy);
    x.rowwise() -= x.colwise().mean();
    y.rowwise() -= y.colwise().mean();
    const double cross = (y.transpose() * x).squaredNorm();
    const double nx = (x.transpose() * x).norm(), ny = (y.transpose() * y).norm();
    return cross / (nx * ny);
}

double hsicBiased(const std::vector<double>& k, const std::vector<double>& l, int64_t n) {
    RowMatrix km = toMatrix(k, n, n), lm = toMatrix(l, n, n);
    RowMatrix h = RowMatrix::Identity(n, n) - RowMatrix::Constant(n, n, 1.0 / n);
    RowMatrix kc = h * km * h, lc = h * lm * h;
    return (kc.array() * lc.array()).sum() / ((n - 1.0) * (n - 1.0));
}

double hsicUnbiased(const std::vector<double>& k, const std::vector<double>& l, int64_t n) {
    if (n < 4) throw Error("HSIC", "the unbiased estimator needs n >= 4");
    RowMatrix kt = toMatrix(k, n, n), lt = toMatrix(l, n, n);
    kt.diagonal().setZero();
    lt.diagonal().setZero();
    const double nn = static_cast<double>(n);
    const double trace_kl = (kt.array() * lt.array()).sum();  // tr(K L) for symmetric K, L
    const double sum_k = kt.sum(), sum_l = lt.sum();
    const double cross = (kt.rowwise().sum().transpose() * lt.rowwise().sum())(0, 0);
    return (trace_kl + sum_k * sum_l / ((nn - 1) * (nn - 2)) - 2.0 / (nn - 2) * cross) / (nn * (nn - 3));
}

double debiasedLinearCka(const std::vector<double>& xv, const std::vector<double>& yv, int64_t n,
                         int64_t dx, int64_t dy) {
    RowMatrix x = toMatrix(xv, n, dx), y = toMatrix(yv, n, dy);
    RowMatrix kx = x * x.transpose(), ky = y * y.transpose();
    std::vector<double> k(kx.data(), kx.data() + n * n), l(ky.data(), ky.data() + n * n);
    return hsicUnbiased(k, l, n) / std::sqrt(hsicUnbiased(k, k, n) * hsicUnbiased(l, l, n));
}

}  // namespace wl
