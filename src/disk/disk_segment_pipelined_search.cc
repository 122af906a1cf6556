// Copyright 2026 The shoal Authors.
//
// Pipelined search over a disk-resident segment (DiskSegmentReader::
// WalkPipelined), as PipeANN: beam search without hops. Up to W =
// beam_width block reads are in flight (a ReadQueue: io_uring on POSIX);
// whenever one arrives its block is checked (CheckBlock, as beam search's
// ReadBlocks does) and its node expanded at once (ExpandRecord, as beam
// search does), and the closest listed node neither expanded nor being read
// takes the freed place. A beam search hop waits for its slowest read, then
// computes while nothing is read; here the reads overlap the expansions and
// each other, and each expansion already steers the next read.
//
// A block's other records are used as beam search uses them
// (ExpandBlockMates). Cached nodes are expanded when they are taken, without
// a read. Nodes that
// share a block (nodes_per_block > 1) taken while it is in flight wait for
// that read. The walk ends when no listed node is left to take and nothing
// is in flight. At W = 1 it takes, reads and expands the same nodes in the
// same order as beam search: the same answers.
//
// On an error (a failed read, a damaged block) the walk returns at once; the
// queue, destroyed on the way out, waits for the reads still in flight
// before their buffers (the thread's scratch) can be reused.

#include <algorithm>
#include <memory>
#include <vector>

#include "disk/disk_search_scratch.h"
#include "disk/disk_segment_reader.h"
#include "util/status_macros.h"

namespace shoal::disk {

absl::Status DiskSegmentReader::WalkPipelined(const float* query, const SearchOptions& options,
                                              DiskSearchScratch* s, SegmentSearchStats* stats,
                                              IoCounts* io) const {
  const size_t block_bytes = header_.layout.block_bytes();
  graph::CandidateList& list = s->list;
  StartWalk(options, s, stats);
  std::unique_ptr<ReadQueue> queue =
      file_->NewReadQueue(std::max<uint32_t>(1, options.beam_width));
  const size_t width = queue->depth();
  char* const buffer = s->buffer.Reserve(width * block_bytes);
  s->slots.resize(std::max(s->slots.size(), width));
  for (size_t i = 0; i < width; ++i) {
    s->slots[i].block = DiskSearchScratch::kNoBlock;
    s->slots[i].nodes.clear();
  }

  // Slots whose block is being read or waits to be expanded (the queue's
  // in_flight() no longer counts completions Wait has returned).
  size_t busy = 0;
  // Takes listed nodes, closest first, until every slot is busy or none is
  // left: cached ones are expanded now, others read.
  auto fill = [&] {
    while (busy < width) {
      const size_t i = list.NextUnexpanded();
      if (i == list.size()) return;
      list.MarkExpanded(i);
      const uint32_t u = list.node(i);
      s->expanded.TestAndSet(u);
      if (const char* record = cache_.Find(u); record != nullptr) {
        ++stats->cache_hits;
        ExpandRecord(query, u, record, s, stats);
        continue;
      }
      const uint32_t block = BlockOf(u);
      size_t open_slot = width;
      bool joined = false;
      for (size_t j = 0; j < width && !joined; ++j) {
        DiskSearchScratch::Slot& slot = s->slots[j];
        if (slot.block == block) {
          slot.nodes.push_back(u);
          joined = true;
        } else if (slot.block == DiskSearchScratch::kNoBlock && open_slot == width) {
          open_slot = j;
        }
      }
      if (joined) continue;
      // open_slot < width: fewer than `width` slots are busy.
      ++busy;
      s->slots[open_slot].block = block;
      s->slots[open_slot].nodes.push_back(u);
      const uint64_t start = MonotonicNs();
      queue->Submit(BlockOffset(block), block_bytes, buffer + open_slot * block_bytes, open_slot);
      io->wait_ns += MonotonicNs() - start;
      ++io->reads;
    }
  };

  fill();
  while (busy > 0) {
    s->done.clear();
    const uint64_t start = MonotonicNs();
    queue->Wait(&s->done);
    io->wait_ns += MonotonicNs() - start;
    for (ReadQueue::Completion& c : s->done) {
      DiskSearchScratch::Slot& slot = s->slots[c.tag];
      const char* bytes = buffer + c.tag * block_bytes;
      SHOAL_RETURN_IF_ERROR(ReadResult(BlockOffset(slot.block), block_bytes, std::move(c.status)));
      SHOAL_RETURN_IF_ERROR(CheckBlock(bytes, slot.block));
      for (const uint32_t u : slot.nodes) {
        ExpandRecord(query, u, bytes + OffsetInBlock(u), s, stats);
      }
      // The block's other records came for free (as in beam search).
      if (header_.layout.nodes_per_block > 1) {
        ExpandBlockMates(slot.block, bytes, query, s, stats);
      }
      slot.block = DiskSearchScratch::kNoBlock;
      slot.nodes.clear();
      --busy;
      fill();
    }
  }
  return absl::OkStatus();
}

}  // namespace shoal::disk
