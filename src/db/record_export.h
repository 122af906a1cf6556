// Copyright 2026 The shoal Authors.
//
// The iterator DB::Export returns (shoal/record_iterator.h): a collection's
// live records from every shard's ExportView, taken at one moment
// (Shard::TakeExportViews).
//
// Within a shard, sources are read newest first: the active memtable's rows
// as they were, frozen memtables, segments. An id is the newest version the
// first time a source names it (as a row or a tombstone), so the iterator
// keeps the ids that newer sources of the shard named and skips them in
// older ones; the oldest source adds none (nothing older is left to hide).
// A compacted shard (one segment, empty memtables) thus keeps no set at all.
// Segments are read a batch of nodes at a time (Segment::ForEachRecordIn),
// so memory stays at one batch plus that set, whatever the collection's
// size.

#ifndef SHOAL_SRC_DB_RECORD_EXPORT_H_
#define SHOAL_SRC_DB_RECORD_EXPORT_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "shard/shard.h"
#include "shoal/record_iterator.h"

namespace shoal {

// REQUIRES: views[s] is shard s's (all shard_count of them, taken together),
// options.parts valid. A shared segment (one graph for several shards) is
// read once per shard that holds it, each time for that shard's entries.
std::unique_ptr<RecordIterator> NewExportIterator(std::vector<Shard::ExportView> views,
                                                  uint32_t dim, const ExportOptions& options);

}  // namespace shoal

#endif  // SHOAL_SRC_DB_RECORD_EXPORT_H_
