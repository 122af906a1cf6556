// Copyright 2026 The shoal Authors.
//
// SegmentWriter: builds a collection's segment files outside any database
// (in another process, on another machine), for DB::IngestSegments to take
// in atomically (RocksDB's SstFileWriter). The files are the ones a
// DB::BulkLoad of the same rows would build: the same graph, codes and
// records.
//
//   shoal::SegmentWriterOptions o;
//   o.collection = *db->GetCollectionOptions("docs");  // as stored
//   auto writer = shoal::SegmentWriter::Create("/data/part-7", o);
//   (*writer)->Add(ids, vectors);                      // any number of times
//   auto files = (*writer)->Finish();                  // builds, writes
//   db->IngestSegments("docs", *files);
//
// Rows are routed by id as the database routes them (xxh3(id) % the shard
// count), so each file holds one shard's rows (or, with one_graph, every
// shard's rows in one graph). Each file records the collection settings it
// was built for (dim, metric, code, R, shard count, attribute names, which
// shard), and IngestSegments refuses a file built for another shape.
//
// Memory: Add copies the rows (and records' parts) until Finish builds the
// graphs, as BulkLoad holds its input: about (4 * dim + 8) bytes a vector.
//
// Thread safety: one writer is used by one thread at a time; writers of
// different directories (or prefixes) may run at once.

#ifndef SHOAL_INCLUDE_SHOAL_SEGMENT_WRITER_H_
#define SHOAL_INCLUDE_SHOAL_SEGMENT_WRITER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "shoal/options.h"
#include "shoal/record.h"

namespace shoal {

class FileSystem;  // shoal/file_system.h

struct SegmentWriterOptions {
  // The collection the files are for, as DB::GetCollectionOptions returns
  // it: dim, metric, shard_count (REQUIRED here: 1..256, the stored one;
  // 0 is refused, since hardware_concurrency differs between machines),
  // graph, code and attributes. Checked as CreateCollection checks them.
  CollectionOptions collection;
  // One file holding every shard's rows in one graph (a shared segment, as
  // BulkLoad builds for a collection of at most
  // CompactionOptions::one_graph_max_vectors vectors: a query walks one
  // graph instead of one a shard), instead of one file a shard. Either
  // kind can be ingested into any collection of this shape.
  bool one_graph = false;
  // Files are named "<file_prefix>-shard-<s>.vamana" (one_graph:
  // "<file_prefix>-all.vamana") in the writer's directory: writers that
  // share a directory need different prefixes. 1..128 characters of
  // [A-Za-z0-9_.-].
  std::string file_prefix = "segment";
  // Threads that build the graphs: 0 = std::thread::hardware_concurrency().
  uint32_t threads = 0;
  // Where the files are written (null: FileSystem::Default()). Not owned.
  FileSystem* file_system = nullptr;
};

class SegmentWriter {
 public:
  // A writer of files in `dir` (created when missing). InvalidArgument for
  // bad options; AlreadyExists when a file this writer would write exists.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SegmentWriter>> Create(
      const std::string& dir, const SegmentWriterOptions& options);

  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;
  // A writer destroyed before Finish writes nothing.
  virtual ~SegmentWriter() = default;

  // Adds rows: `vectors` is row-major, ids.size() * dim floats, checked as
  // DB::PutBatch checks them (InvalidArgument naming the row, adding
  // nothing). An id added twice keeps its last row, as in BulkLoad.
  [[nodiscard]] virtual absl::Status Add(std::span<const uint64_t> ids,
                                         std::span<const float> vectors) = 0;
  // Adds records (shoal/record.h), each checked as DB::PutBatch(records)
  // checks it against the collection's attributes; a bad one adds nothing.
  [[nodiscard]] virtual absl::Status Add(std::span<const Record> records) = 0;
  // Rows added so far (an id added twice counts twice).
  virtual uint64_t rows() const = 0;

  // Builds each file's graph and writes it (temporary name, fdatasync,
  // rename, directory fsync: a file that exists is whole and durable).
  // Returns the files' paths, in shard order (none when no row was added).
  // On error the files written so far are removed. Later calls of Add and
  // Finish return FailedPrecondition.
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::string>> Finish() = 0;

 protected:
  SegmentWriter() = default;
};

}  // namespace shoal

#endif  // SHOAL_INCLUDE_SHOAL_SEGMENT_WRITER_H_
