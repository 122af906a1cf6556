// Copyright 2026 The shoal Authors.

#include "db/search_share.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace shoal {

uint32_t ShareOfK(uint32_t k, double p) {
  if (!(p < 1.0) || k > kShareMaxK) return k;
  if (!(p > 0.0)) p = 1e-9;
  // pmf[j] = P(X = j), each term from log-gammas (no overflow for any k).
  std::vector<double> pmf(size_t{k} + 1);
  const double lp = std::log(p), lq = std::log1p(-p);
  for (uint32_t j = 0; j <= k; ++j) {
    pmf[j] = std::exp(std::lgamma(k + 1.0) - std::lgamma(j + 1.0) - std::lgamma(k - j + 1.0) +
                      j * lp + (k - j) * lq);
  }
  const double budget = kShareRecallLoss * k * p;
  // overflow(m) = sum_{j > m} (j - m) pmf[j] = tail_mass(m) - m tail_count(m),
  // with the tails summed from the top; it falls as m grows.
  double tail_count = 0, tail_mass = 0;  // over j > m
  std::vector<double> overflow(size_t{k} + 1, 0.0);
  for (uint32_t m = k; m-- > 0;) {
    tail_count += pmf[m + 1];
    tail_mass += (m + 1.0) * pmf[m + 1];
    overflow[m] = tail_mass - m * tail_count;
  }
  for (uint32_t m = 1; m < k; ++m) {
    if (overflow[m] <= budget) return m;
  }
  return k;
}

SearchOptions ShardSearchOptions(const SearchOptions& options, double p) {
  if (!(p < 1.0)) return options;
  SearchOptions share = options;
  share.k = ShareOfK(options.k, p);
  return share;
}

}  // namespace shoal
