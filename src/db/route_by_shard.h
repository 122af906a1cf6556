// Copyright 2026 The shoal Authors.
//
// How a batch is split by shard (Collection's Partition and
// PartitionRecords): a counting sort of the rows by ShardOf(id), keeping the
// batch's order within each shard so that the last copy of a repeated id
// wins; with dedupe, only the last row of each id takes part.

#ifndef SHOAL_SRC_DB_ROUTE_BY_SHARD_H_
#define SHOAL_SRC_DB_ROUTE_BY_SHARD_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "util/hash.h"

namespace shoal {

// Calls place(row, at) for every row of 0..n-1 that takes part (id_of(row)
// is its id), `at` being its place in the output, shard s's rows in
// [(*start)[s], (*start)[s + 1]), and returns the number of places.
template <typename IdOf, typename Place>
size_t RouteByShard(size_t n, uint32_t shard_count, bool dedupe, IdOf&& id_of, Place&& place,
                    std::vector<size_t>* start) {
  std::vector<bool> keep;
  if (dedupe) {
    keep.assign(n, true);
    absl::flat_hash_map<uint64_t, size_t> last;
    last.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      auto [it, inserted] = last.try_emplace(id_of(i), i);
      if (!inserted) {
        keep[it->second] = false;
        it->second = i;
      }
    }
  }
  std::vector<uint32_t> shard_of(n);
  start->assign(shard_count + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    shard_of[i] = ShardOf(id_of(i), shard_count);
    if (!dedupe || keep[i]) ++(*start)[shard_of[i] + 1];
  }
  for (uint32_t s = 0; s < shard_count; ++s) (*start)[s + 1] += (*start)[s];
  std::vector<size_t> fill(start->begin(), start->end() - 1);
  for (size_t i = 0; i < n; ++i) {
    if (dedupe && !keep[i]) continue;
    place(i, fill[shard_of[i]]++);
  }
  return start->back();
}

}  // namespace shoal

#endif  // SHOAL_SRC_DB_ROUTE_BY_SHARD_H_
