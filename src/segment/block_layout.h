// Copyright 2026 The shoal Authors.
//
// Which node goes in which block of a segment file (Starling, SIGMOD'24:
// "block shuffling"). A disk-resident search reads a whole block to expand
// one node; when the block's other records are that node's nearest graph
// neighbours, the search finds in them nodes it was about to read next, and
// expands them for free (disk_segment_search.cc). So blocks are filled
// greedily: the first unplaced node in graph order, then its neighbours
// breadth-first (each list nearest first, as the prune leaves it), until
// the block is full; a block the walk cannot fill takes the next seed.
//
// The graph order is the locality order (locality_order.h), so consecutive
// seeds, and their blocks, are still near each other in space: memory-mapped
// searches keep their page locality.

#ifndef SHOAL_SRC_SEGMENT_BLOCK_LAYOUT_H_
#define SHOAL_SRC_SEGMENT_BLOCK_LAYOUT_H_

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace shoal::segment {

// A permutation of 0..n-1: position (file node) -> graph node. A pure
// function of its arguments. neighbors(u) lists u's out-neighbours, each
// < n. With nodes_per_block <= 1 the identity.
std::vector<uint32_t> BlockLayout(
    uint32_t n, uint32_t nodes_per_block,
    const std::function<std::span<const uint32_t>(uint32_t)>& neighbors);

}  // namespace shoal::segment

#endif  // SHOAL_SRC_SEGMENT_BLOCK_LAYOUT_H_
