#include "analysis/analysis_options.h"

#include "util/error.h"

namespace wl {

const char* toString(TokenFilterMode m) {
    switch (m) {
        case TokenFilterMode::None: return "none";
        case TokenFilterMode::Threshold: return "threshold";
        case TokenFilterMode::Percentile: return "percentile";
    }
    return "?";
}

const char* toString(EntropyNormalization n) {
    switch (n) {
        case EntropyNormalization::Raw: return "raw";
        case EntropyNormalization::LogN: return "logn";
        case EntropyNormalization::LogD: return "logd";
        case EntropyNormalization::LogMinND: return "logmin";
    }
    return "?";
}

const char* toString(CkaEstimator e) {
    switch (e) {
        case CkaEstimator::MinibatchUnbiased: return "minibatch-unbiased";
        case CkaEstimator::MinibatchBiased: return "minibatch-biased";
    }
    return "?";
}

TokenFilterMode parseTokenFilterMode(const std::string& s, const std::string& source) {
    for (auto m : {TokenFilterMode::None, TokenFilterMode::Threshold, TokenFilterMode::Percentile})
        if (s == toString(m)) return m;
    throw Error(source, "unknown token filter '" + s + "' (none, threshold, percentile)");
}

EntropyNormalization parseEntropyNormalization(const std::string& s, const std::string& source) {
    for (auto n : {EntropyNormalization::Raw, EntropyNormalization::LogN, EntropyNormalization::LogD,
                   EntropyNormalization::LogMinND})
        if (s == toString(n)) return n;
    throw Error(source, "unknown entropy normalisation '" + s + "' (raw, logn, logd, logmin)");
}

CkaEstimator parseCkaEstimator(const std::string& s, const std::string& source) {
    for (auto e : {CkaEstimator::MinibatchUnbiased, CkaEstimator::MinibatchBiased})
        if (s == toString(e)) return e;
    throw Error(source, "unknown CKA estimator '" + s + "' (minibatch-unbiased, minibatch-biased)");
}

}  // namespace wl
