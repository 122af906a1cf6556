// Copyright 2026 The shoal Authors.
//
// shoal: a sharded, durable, embedded vector database.
//
// A DB is one directory holding named collections. Each collection has its
// own dimension, metric and shard count; a vector id (uint64) lives in shard
// xxh3(id) % shard_count. Writes go to that shard's write-ahead log and its
// in-memory table, and are searchable the moment the call returns.
//
// Thread safety: a DB is safe for concurrent use from many threads without
// external synchronization. Writers to different shards never wait for each
// other. Close() must not race with other calls.
//
// Errors: every call returns absl::Status (or StatusOr). Bad input returns
// InvalidArgumentError and changes nothing; an unknown collection is
// NotFoundError; damaged files are DataLossError; I/O failures are
// InternalError / the errno-derived code; a full disk, memory or threads
// the system refuses are ResourceExhaustedError. No call throws.
//
// Vectors: every component finite; under kL2 and kInnerProduct a squared
// Euclidean norm of at most 2^124 (~2.1e37), so that no distance overflows a
// float (kCosine normalizes, so any finite nonzero vector will do).

#ifndef SHOAL_INCLUDE_SHOAL_DB_H_
#define SHOAL_INCLUDE_SHOAL_DB_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "shoal/options.h"
#include "shoal/record.h"
#include "shoal/record_iterator.h"

namespace shoal {

// The collection used by the calls that take no collection name.
inline constexpr std::string_view kDefaultCollection = "default";

struct Neighbor {
  uint64_t id;
  float distance;  // smaller is closer; see Metric
};

class DB {
 public:
  // Opens (or, with create_if_missing, creates) the database at `path`,
  // replaying every shard's write-ahead log in parallel.
  // Errors: FailedPrecondition when another DB object or process holds the
  // directory (LOCK); NotFound when it does not exist and !create_if_missing;
  // AlreadyExists with error_if_exists; InvalidArgument when
  // options.default_collection disagrees with what is stored; DataLoss when a
  // log or the manifest is damaged (see Options::salvage_corrupt_wal).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DB>> Open(
      const Options& options, const std::string& path);

  DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;
  virtual ~DB() = default;  // closes, like Close(), ignoring its status

  // ---- Calls on a named collection ----

  // Creates an empty collection. Names: 1..128 characters of [A-Za-z0-9_.-],
  // not starting with '.'. AlreadyExists when the name is taken;
  // InvalidArgument for a bad name or options (dim 0 or > 4096, ...).
  [[nodiscard]] virtual absl::Status CreateCollection(
      std::string_view name, const CollectionOptions& options) = 0;
  // Removes a collection and all of its data. NotFound when absent. A call
  // on the collection that runs while it is dropped either completes before
  // the drop (its status as usual) or returns NotFound naming the collection
  // (never FailedPrecondition: only Close() closes the database). A flush,
  // merge or bulk load of it in progress is finished (or refused) first;
  // other collections' calls go on meanwhile, and a CreateCollection of the
  // same name waits until the drop has removed the old one's files.
  [[nodiscard]] virtual absl::Status DropCollection(std::string_view name) = 0;
  // Names of all collections, sorted.
  virtual std::vector<std::string> ListCollections() const = 0;
  // The options a collection was created with (shard_count resolved).
  [[nodiscard]] virtual absl::StatusOr<CollectionOptions> GetCollectionOptions(
      std::string_view name) const = 0;

  // Inserts or replaces the vector stored under `id`. `vector` must have the
  // collection's dim components, all finite.
  [[nodiscard]] virtual absl::Status Put(std::string_view collection,
                                         uint64_t id,
                                         std::span<const float> vector) = 0;
  // Puts many vectors: `vectors` is row-major, ids.size() * dim floats. When
  // an id appears twice, the later row wins. The batch is validated as a
  // whole first: on bad input nothing is written. A call that returns an
  // error other than an I/O error met after its records were written (a
  // failed log sync) stores nothing on any shard: every shard is checked,
  // and room reserved, before any part is written (a full disk is
  // ResourceExhausted). Each shard's part of the batch is one log record,
  // atomic on that shard (a crash keeps all of it or none of it); parts on
  // different shards are independent across a crash. Exceptions: a shard's
  // part over 256 MiB is several records, each atomic, written shard after
  // shard; a batch of 2^20 (1,048,576) vectors or more is a BulkLoad (all of
  // it or none of it, also across a crash).
  [[nodiscard]] virtual absl::Status PutBatch(
      std::string_view collection, std::span<const uint64_t> ids,
      std::span<const float> vectors) = 0;
  // Deletes `id`. Deleting an absent id is OK (and is recorded, so that an
  // older copy can never come back).
  [[nodiscard]] virtual absl::Status Delete(std::string_view collection,
                                            uint64_t id) = 0;
  // The vector stored under `id` (normalized, for kCosine). NotFound when the
  // id is absent or deleted.
  [[nodiscard]] virtual absl::StatusOr<std::vector<float>> Get(
      std::string_view collection, uint64_t id) = 0;
  // At most options.k neighbours of `query`, sorted by ascending distance
  // (ties by id). InvalidArgument when k == 0, list_size == 0, or the query
  // is malformed; a list_size below k still answers k (SearchOptions). k and
  // list_size may exceed what the collection holds: memory and work are
  // bounded by the data (a list as long as a segment searches all of it).
  [[nodiscard]] virtual absl::StatusOr<std::vector<Neighbor>> Search(
      std::string_view collection, std::span<const float> query,
      const SearchOptions& options = {}) = 0;
  // Many queries (row-major, n * dim floats) answered on all cores; result i
  // belongs to query i.
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::vector<Neighbor>>>
  SearchBatch(std::string_view collection, std::span<const float> queries,
              const SearchOptions& options = {}) = 0;
  // Loads many vectors straight into on-disk segments, skipping the log.
  // Validated as PutBatch; no ids and no vectors is OK and loads nothing.
  // options.progress, when set, reports how far the graphs are built.
  [[nodiscard]] virtual absl::Status BulkLoad(
      std::string_view collection, std::span<const uint64_t> ids,
      std::span<const float> vectors, const BulkLoadOptions& options) = 0;
  [[nodiscard]] absl::Status BulkLoad(std::string_view collection,
                                      std::span<const uint64_t> ids,
                                      std::span<const float> vectors) {
    return BulkLoad(collection, ids, vectors, BulkLoadOptions());
  }

  // Ingests segment files that a SegmentWriter (shoal/segment_writer.h)
  // built for this collection, in this process or elsewhere (RocksDB's
  // IngestExternalFile). Every file is checked first: its format version
  // (a newer one is FailedPrecondition), its checksums (DataLoss naming the
  // file and offset; with options.verify_checksums every byte is read),
  // and that it was written for this collection (InvalidArgument naming
  // the file: dim, metric, vector code, graph degree R, shard count,
  // attribute names, every id in the shard the file holds; a file not
  // written by a SegmentWriter is refused too). Then each file is linked
  // or copied into the collection's directory (options.method) and all of
  // them are published in one manifest write.
  //
  // All or nothing: on any error nothing changes (files linked or copied
  // in are removed again), and after a crash (kill -9, or a machine crash
  // for files that were durable when given) either every record of every
  // file is in the collection or none is.
  //
  // Ingested records are newer than everything the collection held when
  // the call began: an id that a file holds replaces the record an earlier
  // Put stored, and comes back after an earlier Delete; a Put or Delete
  // after the call returns wins over it. Among the files, a later one wins
  // over an earlier one for an id both hold; within a file the writer kept
  // the last row of each id. Writes running during the call are ordered
  // before or after it, each as a whole, shard by shard. Empty `files`: OK,
  // nothing changes. A file may be ingested into one collection only (it
  // carries no name) and, once ingested with a link, must not be changed.
  [[nodiscard]] virtual absl::Status IngestSegments(std::string_view collection,
                                                    std::span<const std::string> files,
                                                    const IngestOptions& options) = 0;
  [[nodiscard]] absl::Status IngestSegments(std::string_view collection,
                                            std::span<const std::string> files) {
    return IngestSegments(collection, files, IngestOptions());
  }

  // ---- Records: a vector with labels, attributes and a payload ----
  // (shoal/record.h). The calls above write and read records without them.

  // Inserts `record`, or replaces the whole record stored under its id
  // (parts it does not give are gone). InvalidArgument, writing nothing,
  // when the vector is malformed (as Put), it has more than kMaxLabels
  // distinct labels, names an attribute the collection does not declare or
  // one twice, or its payload is over kMaxPayloadBytes. All of its parts
  // are one log record: after a crash all of them survive or none.
  [[nodiscard]] virtual absl::Status Put(std::string_view collection,
                                         const Record& record) = 0;
  // Puts many records, as PutBatch(ids, vectors) puts vectors (the same
  // atomicity, the same exceptions for very large batches), each record
  // checked as Put(record) checks it: a bad one writes nothing at all, and
  // the error names its index in `records`.
  [[nodiscard]] virtual absl::Status PutBatch(std::string_view collection,
                                              std::span<const Record> records) = 0;
  // Loads many records straight into on-disk segments, as
  // BulkLoad(ids, vectors) loads vectors.
  [[nodiscard]] virtual absl::Status BulkLoad(std::string_view collection,
                                              std::span<const Record> records,
                                              const BulkLoadOptions& options) = 0;
  [[nodiscard]] absl::Status BulkLoad(std::string_view collection,
                                      std::span<const Record> records) {
    return BulkLoad(collection, records, BulkLoadOptions());
  }
  // The record stored under `id`, with the parts `parts` names (RecordParts;
  // others left empty). NotFound when the id is absent or deleted;
  // InvalidArgument when `parts` has a bit RecordParts does not name.
  // Reading only labels, attributes or payload of a disk-resident segment's
  // record reads its payload bytes alone (no node block).
  [[nodiscard]] virtual absl::StatusOr<RecordData> GetRecord(
      std::string_view collection, uint64_t id, uint32_t parts = kAllParts) = 0;
  // GetRecord for each of `ids` (e.g. a search's results, to show them):
  // entry i is ids[i]'s record, or nullopt when it is absent or deleted.
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::optional<RecordData>>>
  GetRecords(std::string_view collection, std::span<const uint64_t> ids,
             uint32_t parts = kAllParts) = 0;

  // ---- Export ----

  // An iterator over every live record of `collection` at one point in
  // time: the moment this call takes its view (shoal/record_iterator.h says
  // what it yields, in what order, and how long it may live). Writes,
  // deletes, flushes, merges and drops after that do not change what it
  // yields. Taking the view holds every shard's lock (shared) at once, for
  // as long as it takes to note where each active memtable's rows are (no
  // vector is copied: 22 ms for 1M rows of 128-d, 65 ms the first time;
  // a default 64 MiB memtable of 128-d holds ~120K): writers wait that
  // long, readers do not; the iteration itself holds no lock. A PutBatch is in the view
  // whole or not at all; a BulkLoad running meanwhile may be in on some
  // shards and not on others (as for searches).
  // Errors: NotFound for an unknown collection; FailedPrecondition once the
  // database is closed; InvalidArgument for bad options.parts. Errors met
  // while iterating are the iterator's status().
  [[nodiscard]] virtual absl::StatusOr<std::unique_ptr<RecordIterator>> Export(
      std::string_view collection, const ExportOptions& options) = 0;
  [[nodiscard]] absl::StatusOr<std::unique_ptr<RecordIterator>> Export(
      std::string_view collection) {
    return Export(collection, ExportOptions());
  }

  // ---- Checkpoint ----

  // Makes `dir` a database that Open opens, holding every collection as it
  // was at one moment during the call (the cut), while writes, flushes and
  // merges go on: every write acknowledged before the call is in it, none
  // that started after the cut is. A PutBatch is in it whole or not at
  // all; a BulkLoad running meanwhile may be in on some shards and not on
  // others (as for Export). Immutable files (segments) are hard-linked
  // when `dir` is on the same file system (FileSystem::LinkFile), copied
  // otherwise; log files are copied up to the cut. Everything is synced,
  // and MANIFEST is written last: a crash or an error during the call
  // leaves no directory that opens as a database (`dir` + ".tmp", or a
  // `dir` without MANIFEST; the next Checkpoint to `dir` removes either).
  // The cut holds every shard's lock (shared) for microseconds; until the
  // call returns, files that flushes and merges make obsolete are kept
  // (disk space, not time). docs/architecture.md, "Checkpoints".
  // Errors: AlreadyExists when `dir` exists (other than a checkpoint's
  // leftovers); FailedPrecondition once the database is closed; I/O errors
  // (then nothing is left at `dir`); a collection dropped during the call
  // makes it fail.
  [[nodiscard]] virtual absl::Status Checkpoint(const std::string& dir,
                                                const CheckpointOptions& options) = 0;
  [[nodiscard]] absl::Status Checkpoint(const std::string& dir) {
    return Checkpoint(dir, CheckpointOptions());
  }

  // ---- Whole database ----

  // Moves every memtable into on-disk segments; returns when durable. Every
  // collection is flushed, also after one failed (the first error is
  // returned); a collection dropped while the call runs is skipped.
  [[nodiscard]] virtual absl::Status Flush() = 0;
  // Merges segments, dropping deleted and overwritten vectors. Every
  // collection, as Flush.
  // `progress`, when set, is called on this thread with (shards done,
  // shards of all collections): after each shard is compacted, and for a
  // collection whose shards share one graph, once when that graph is.
  [[nodiscard]] virtual absl::Status Compact(const ProgressFn& progress) = 0;
  [[nodiscard]] absl::Status Compact() { return Compact(ProgressFn()); }
  // Returns once no flush or background compaction is queued or running in
  // any collection (as RocksDB's WaitForCompact); it flushes nothing itself
  // (call Flush() first for that). Returns the error of the last flush or
  // background compaction when it failed and nothing retries it.
  [[nodiscard]] virtual absl::Status WaitForCompact() = 0;
  // Makes every write durable (fdatasync of every log) and releases the
  // directory. Later calls return FailedPrecondition. Idempotent. A flush or
  // background merge already running is finished first (queued ones are
  // not started: the memtables are in the log, and merges resume after the
  // next Open), so Close can take as long as one graph build.
  [[nodiscard]] virtual absl::Status Close() = 0;

  // ---- The same calls on kDefaultCollection ----
  [[nodiscard]] absl::Status Put(uint64_t id, std::span<const float> vector) {
    return Put(kDefaultCollection, id, vector);
  }
  [[nodiscard]] absl::Status PutBatch(std::span<const uint64_t> ids,
                                      std::span<const float> vectors) {
    return PutBatch(kDefaultCollection, ids, vectors);
  }
  [[nodiscard]] absl::Status Delete(uint64_t id) {
    return Delete(kDefaultCollection, id);
  }
  [[nodiscard]] absl::StatusOr<std::vector<float>> Get(uint64_t id) {
    return Get(kDefaultCollection, id);
  }
  [[nodiscard]] absl::StatusOr<std::vector<Neighbor>> Search(
      std::span<const float> query, const SearchOptions& options = {}) {
    return Search(kDefaultCollection, query, options);
  }
  [[nodiscard]] absl::StatusOr<std::vector<std::vector<Neighbor>>> SearchBatch(
      std::span<const float> queries, const SearchOptions& options = {}) {
    return SearchBatch(kDefaultCollection, queries, options);
  }
  [[nodiscard]] absl::Status BulkLoad(std::span<const uint64_t> ids,
                                      std::span<const float> vectors) {
    return BulkLoad(kDefaultCollection, ids, vectors);
  }
  [[nodiscard]] absl::Status Put(const Record& record) {
    return Put(kDefaultCollection, record);
  }
  [[nodiscard]] absl::Status PutBatch(std::span<const Record> records) {
    return PutBatch(kDefaultCollection, records);
  }
  [[nodiscard]] absl::Status BulkLoad(std::span<const Record> records) {
    return BulkLoad(kDefaultCollection, records);
  }
  [[nodiscard]] absl::StatusOr<RecordData> GetRecord(uint64_t id, uint32_t parts = kAllParts) {
    return GetRecord(kDefaultCollection, id, parts);
  }
  [[nodiscard]] absl::StatusOr<std::vector<std::optional<RecordData>>> GetRecords(
      std::span<const uint64_t> ids, uint32_t parts = kAllParts) {
    return GetRecords(kDefaultCollection, ids, parts);
  }
};

}  // namespace shoal

#endif  // SHOAL_INCLUDE_SHOAL_DB_H_
