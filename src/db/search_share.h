// Copyright 2026 The shoal Authors.
//
// How a collection's search is split over its shards. Ids are spread over
// shards by a hash, independently of their vectors, so the k true neighbours
// of a query fall into a shard holding a fraction p of the vectors as a
// binomial(k, p) draw: about k p of them, rarely many more. A shard is
// therefore asked for k_s < k neighbours: the fewest whose expected
// overflow, the true neighbours beyond k_s that it would drop, stays within
// kShareRecallLoss of k p. Its list stays L: a graph search needs about the
// same list for its top k_s as for its top k, whatever the graph's size
// (a list of L p lost up to 0.1 of recall@10 on shards of 2,000 clustered
// vectors). docs/performance.md ("Fan-out") has the measurements.

#ifndef SHOAL_SRC_DB_SEARCH_SHARE_H_
#define SHOAL_SRC_DB_SEARCH_SHARE_H_

#include <cstdint>

#include "shoal/options.h"

namespace shoal {

// The expected fraction of the true neighbours a shard may drop by being
// asked for fewer than k (0.25% of recall@k, summed over the shards).
inline constexpr double kShareRecallLoss = 0.0025;

// Above this k a shard is asked for all k (the sum below is O(k)).
inline constexpr uint32_t kShareMaxK = 1 << 16;

// The smallest m in [1, k] such that E[max(0, X - m)] <= kShareRecallLoss * k * p
// for X ~ binomial(k, p). p >= 1 (or k > kShareMaxK) gives k.
uint32_t ShareOfK(uint32_t k, double p);

// The options to search one shard holding fraction p of the collection's
// vectors with: k as above; list_size and beam_width unchanged. p >= 1 (a
// single shard) returns `options` itself.
SearchOptions ShardSearchOptions(const SearchOptions& options, double p);

}  // namespace shoal

#endif  // SHOAL_SRC_DB_SEARCH_SHARE_H_
