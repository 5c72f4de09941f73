#pragma once
// Direct (non-streaming) matrix entropy and CKA formulas on small dense matrices, float64.
// Used as building blocks of the streaming analyzer and as references in tests.
// Matrices are row-major std::vector<double> with explicit sizes, or Eigen in the .cpp.
#include <cstdint>
#include <vector>

#include "analysis/analysis_options.h"

namespace wl {

// LAPACK driver for eigenvalues only. The two-stage reduction (full -> band with BLAS-3,
// then band -> tridiagonal) beats dsyevd's memory-bound one-stage reduction on large
// matrices (1.3x at n = 1536, 1.9x at n = 2560 on this project's CI machine) and loses on
// small ones (0.7x at n = 1024).
enum class EigenDriver { Auto, OneStage, TwoStage };
constexpr int64_t kTwoStageMinDim = 1536;   // Auto picks TwoStage from this size up

// Eigenvalues (ascending) of a symmetric n x n row-major matrix (LAPACK dsyevd or
// dsyevd_2stage, values only). Taken by value: LAPACK overwrites its input, so a caller
// that moves its matrix in saves an n x n copy.
std::vector<double> symmetricEigenvalues(std::vector<double> a, int64_t n,
                                         EigenDriver driver = EigenDriver::Auto);

// Renyi entropy of the spectrum of a PSD matrix: p = max(eig, 0) / sum; alpha = 1 Shannon.
double spectrumEntropy(const std::vector<double>& eigenvalues, double alpha);
// Same from the matrix; alpha = 2 uses -ln(||A||_F^2 / tr(A)^2) without an eigensolve.
double psdMatrixEntropy(std::vector<double> a, int64_t n, double alpha);
double normalizeEntropy(double entropy, EntropyNormalization normalization, int64_t n, int64_t d);

// The WaveLab matrix entropy of Z (n x d): row-normalise, centre columns, smaller Gram,
// trace-normalise, Renyi entropy, normalised. Rows with zero norm stay zero.
double matrixEntropy(const std::vector<float>& z, int64_t n, int64_t d, double alpha,
                     EntropyNormalization normalization = EntropyNormalization::Raw);

// Linear CKA between X (n x dx) and Y (n x dy), rows = the same tokens (feature-space form
// ||Y_c^T X_c||_F^2 / (||X_c^T X_c||_F ||Y_c^T Y_c||_F)).
double linearCka(const std::vector<double>& x, const std::vector<double>& y, int64_t n,
                 int64_t dx, int64_t dy);
// Debiased linear CKA (unbiased HSIC, Song et al. 2012; Nguyen et al. 2021). n >= 4.
double debiasedLinearCka(const std::vector<double>& x, const std::vector<double>& y, int64_t n,
                         int64_t dx, int64_t dy);
// HSIC estimators on n x n Gram matrices (K = X X^T, not centred; row-major).
double hsicBiased(const std::vector<double>& k, const std::vector<double>& l, int64_t n);
double hsicUnbiased(const std::vector<double>& k, const std::vector<double>& l, int64_t n);

}  // namespace wl
