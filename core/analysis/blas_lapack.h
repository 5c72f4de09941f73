#pragma once
// Fortran BLAS/LAPACK entry points WaveLab's analysis calls directly (liblapack/libblas,
// OpenBLAS on Debian). Private to core/analysis (and bench/analysis_floor.h, which times the
// same calls on their own).
#include <dlfcn.h>

extern "C" {
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info);
void dsyevd_2stage_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
                    double* work, const int* lwork, int* iwork, const int* liwork, int* info);
void ssyrk_(const char* uplo, const char* trans, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* beta, float* c, const int* ldc);
void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* beta, double* c, const int* ldc);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc);
}

namespace wl::blas {

// OpenBLAS's own thread count, looked up at run time because libblas.so.3 may also be the
// reference BLAS, which has no such functions: then threads() is 0 and setThreads() does nothing.
inline int threads() {
    static const auto get = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    return get ? get() : 0;
}
inline void setThreads(int n) {
    static const auto set = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    if (set && n > 0) set(n);
}

// C (n x n, column-major, lower triangle) = A^T A for a row-major k x n matrix A (k rows of n).
inline void gramOfRowsLower(const float* a_rowmajor, int k, int n, float* c) {
    const float one = 1.0f, zero = 0.0f;
    // Row-major k x n == column-major n x k; C = A_cm A_cm^T.
    ssyrk_("L", "N", &n, &k, &one, a_rowmajor, &n, &zero, c, &n);
}
// C (k x k, column-major, lower) = A A^T for a row-major k x n matrix A (token Gram).
inline void gramOfTokensLower(const float* a_rowmajor, int k, int n, float* c) {
    const float one = 1.0f, zero = 0.0f;
    ssyrk_("L", "T", &k, &n, &one, a_rowmajor, &n, &zero, c, &k);
}

}  // namespace wl::blas
