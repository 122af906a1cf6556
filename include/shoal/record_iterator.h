// Copyright 2026 The shoal Authors.
//
// Export: every live record of a collection at one point in time
// (DB::Export). The model is LevelDB's Iterator over an implicit snapshot:
// the iterator sees the collection as it was when DB::Export returned, and
// nothing written, deleted, flushed or merged after that.
//
//   auto it = db->Export("docs", ExportOptions{.parts = kVectorPart});
//   if (!it.ok()) return it.status();
//   for (; (*it)->Valid(); (*it)->Next()) Use((*it)->record());
//   if (!(*it)->status().ok()) return (*it)->status();  // always check
//
// What it yields: the newest version of every id that is live at that
// point, each id exactly once; a deleted id never. The vector is as Get
// returns it (normalized, for kCosine).
//
// Order: shard by shard (shard 0 first); within a shard, its newest source
// first (the active memtable, frozen memtables, then segments newest first),
// a memtable's records in no particular order, a segment's in node order.
// The order is not sorted by id and may change between versions.

#ifndef SHOAL_INCLUDE_SHOAL_RECORD_ITERATOR_H_
#define SHOAL_INCLUDE_SHOAL_RECORD_ITERATOR_H_

#include <cstdint>

#include "absl/status/status.h"
#include "shoal/options.h"
#include "shoal/record.h"

namespace shoal {

// Options of DB::Export.
struct ExportOptions {
  // The parts of each record to read (RecordParts bits; others left empty).
  // Without kPayloadPart no payload is read. InvalidArgument for a bit
  // RecordParts does not name.
  uint32_t parts = kAllParts;
  // Called on the thread that calls DB::Export (which reads the first
  // batch) or Next(), with (entries examined, entries in the point-in-time
  // view), where entries are the view's vectors and tombstones in every
  // source (so an id overwritten or deleted counts more than once, and a
  // segment shared by several shards once for each shard that holds it):
  // after each batch of entries (a few thousand), and
  // once with done == total when the iterator reaches its end without an
  // error. It must not call this DB. Empty: no progress is reported.
  ProgressFn progress;
};

// A collection's live records at one point in time. Not thread-safe: one
// thread at a time (several iterators may run at once, on any threads).
//
// Lifetime: the iterator holds the memtables and segment files of its
// point in time (as a search does), so merges, flushes and DropCollection
// after it started neither change what it yields nor pull files from under
// it: a segment merged away stays open (its file unlinked, its space freed
// when the iterator is destroyed). Hold it only as long as needed: the
// disk space of segments merged away meanwhile, and the memtables, are
// kept until then. It must be destroyed before its DB (as LevelDB's
// iterators); a Close() of the DB while it lives is not allowed.
class RecordIterator {
 public:
  RecordIterator() = default;
  RecordIterator(const RecordIterator&) = delete;
  RecordIterator& operator=(const RecordIterator&) = delete;
  virtual ~RecordIterator() = default;

  // Whether record() holds a record. False at the end and after an error
  // (then status() says which).
  virtual bool Valid() const = 0;
  // The current record, with the parts ExportOptions::parts names.
  // REQUIRES: Valid(). Valid until the next call of Next().
  virtual const RecordData& record() const = 0;
  // Moves to the next record. REQUIRES: Valid().
  virtual void Next() = 0;
  // OK unless iteration stopped on an error: DataLossError from a damaged
  // segment (naming the file), an I/O error reading one. Check it once
  // Valid() is false: a false Valid() alone does not mean every record was
  // seen.
  virtual absl::Status status() const = 0;
};

}  // namespace shoal

#endif  // SHOAL_INCLUDE_SHOAL_RECORD_ITERATOR_H_
