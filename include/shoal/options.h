// Copyright 2026 The shoal Authors.
//
// Options that control a shoal database, its collections and its searches.
// Every field has a default; the comment of each gives the trade-off and
// what it accepts. An enum must hold one of its listed values; a field
// outside what its comment accepts makes the call that takes it (DB::Open,
// CreateCollection, every search) return InvalidArgumentError naming the
// field and the accepted range.

#ifndef SHOAL_INCLUDE_SHOAL_OPTIONS_H_
#define SHOAL_INCLUDE_SHOAL_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace shoal {

class FileSystem;  // shoal/file_system.h
struct Filter;     // shoal/filter.h

// How distances are measured. Smaller distance is always closer.
enum class Metric : uint8_t {
  kL2 = 0,            // squared Euclidean distance
  kInnerProduct = 1,  // distance = -dot(a, b)
  kCosine = 2,        // vectors are normalized on write; distance = 1 - cos(a, b)
};

// When the write-ahead log reaches stable storage. Every policy survives the
// process being killed (kill -9): a write whose call returned OK is in the
// operating system's page cache before the call returns. The policies differ
// in what survives a machine crash (power loss):
enum class FsyncPolicy : uint8_t {
  // The OS writes back when it likes; after a machine crash a prefix of each
  // shard's writes survives. Fastest.
  kNever = 0,
  // A write returns only after its bytes are on stable storage. Concurrent
  // writers share one fdatasync (group commit).
  kAlways = 1,
  // As kNever, plus a background fdatasync every `sync_interval_us`: a machine
  // crash loses at most about that window, and what survives is a prefix.
  kInterval = 2,
};

// The compact code a segment stores per vector, next to the full vector, for
// its graph search to navigate on (the full vectors then rerank the search's
// candidates, so results keep full-precision distances).
enum class VectorCode : uint8_t {
  kNone = 0,  // navigate on the full vectors
  kSq8 = 1,   // one byte per dimension (per-dimension ranges): a quarter of
              // the bytes per distance (docs/performance-history.md, "Codes")
};

// Where a segment's full vectors and neighbour lists are read from while it
// is searched (docs/architecture.md, "Disk-resident segments"). Chosen at
// each DB::Open; the files are the same either way.
enum class SegmentStorage : uint8_t {
  // The whole file is memory-mapped: searches read node records through the
  // page cache, and every full vector must fit in RAM to search fast.
  kMapped = 0,
  // Only the id table, the codes and a node cache (Options::node_cache_bytes)
  // are in RAM; each expanded node's block (its full vector and neighbour
  // list) is read from the file, with direct I/O where the file system
  // allows it (else through the page cache, said once on stderr). Segments
  // without codes (version 1, or written with VectorCode::kNone) have
  // nothing to navigate on in RAM: they are mapped as under kMapped (said
  // once on stderr) until a merge rewrites them with codes; so are all
  // segments on a FileSystem without OpenRandomAccess.
  kDisk = 1,
};

// Vamana graph parameters (DiskANN's names). Used by segments.
struct GraphOptions {
  uint32_t max_degree = 64;         // R: neighbours kept per node; 1..1024
  uint32_t build_list_size = 100;   // L at build time: larger = better graph, slower build;
                                    // 1..16384 (no larger than a segment in effect).
                                    // Keep it well above max_degree: at L = R = 64 recall
                                    // fell (docs/performance-history.md, "Builds")
  float alpha = 1.2f;               // robust-prune slack (finite, >= 1): larger = longer
                                    // edges kept
};

// Background compaction: as memtables flush, a shard's segments accumulate
// (one per flush); a search visits every one. Two rules keep them few
// (docs/architecture.md, "Compaction policy"):
//   - tiers: a run of at least min_merge_width adjacent segments of similar
//     size is merged into one (size-tiered, as RocksDB's universal
//     compaction), so that writes at any rate leave O(log N) segments;
//   - fold: the segments newer than a shard's largest are merged into it
//     once they hold fold_ratio of its size (quiescent_fold_ratio when the
//     shard holds no unflushed writes, e.g. after Flush()), so that a shard
//     mostly is one large graph, and a database at rest one per shard.
// The fold is checked first; a flush that makes it due is itself the fold
// (the memtable is merged straight into the large segment). A merge extends
// its largest input's graph (inserting the others' vectors) instead of
// building from scratch, so folding a few small segments into a large one
// costs about what building the small ones cost; but when newer inputs
// delete or overwrite ids of the largest, the merge rebuilds the whole graph
// (extending a graph around dropped nodes lost recall, docs/performance-history.md).
// Then consolidation, and back-pressure on writers: see the fields below.
struct CompactionOptions {
  // Merge in the background after flushes. Off: only DB::Compact() merges.
  bool automatic = true;
  // T (>= 2): a run of at least this many adjacent segments of similar size
  // is merged into one. Larger: fewer merges (less rewriting), more segments.
  uint32_t min_merge_width = 4;
  // What "similar" means: walking from the newest segment to older ones, the
  // next older one joins the run while its size (vectors and tombstones) is
  // at most (1 + size_ratio) times the run's so far (finite, >= 0).
  double size_ratio = 0.2;
  // Fold when the newer segments' sizes add up to at least this fraction of
  // the largest's (finite, >= 0). Smaller: fewer segments, the largest rewritten
  // more often (about 0.7 / fold_ratio times each time it doubles).
  double fold_ratio = 0.125;
  // The same while the shard holds no unflushed writes (finite, >= 0).
  double quiescent_fold_ratio = 1.0 / 64;
  // Consolidation: a segment whose vectors are dead (their ids deleted or
  // overwritten in newer segments) for at least this fraction of its
  // vectors is rewritten alone without them, so that deletes free space
  // even where no merge is due; its graph is rebuilt (docs/architecture.md
  // says why not repaired). In (0, 1]: smaller frees space sooner and
  // rewrites more often. Checked after the fold and the tiers.
  double consolidate_dead_fraction = 0.25;
  // Back-pressure (>= 2): while a shard holds this many segments and a merge
  // is queued or running, writes to it wait for the merge (as they wait for
  // flushes, Options::memtable_bytes), so that segment counts, and with them
  // search cost, stay bounded when writes outpace merges. The policy keeps
  // far fewer in steady state (about min_merge_width per tier).
  uint32_t max_segments = 24;
  // One graph for a small collection: while a collection of several shards
  // stores at most this many vectors, its segments are shared by its
  // shards (one graph, so a query walks one graph, not one a shard): a bulk
  // load builds one segment for all of them, Compact() merges every shard's
  // segments into one, and with `automatic` flushes and background merges
  // fold them into it by the fold rule above (docs/architecture.md, "One
  // graph while small"). Above it each shard merges its own segments (each
  // builds its graph on its own, which costs less than one graph of them
  // all); a shared segment built before stays until Compact(). 0: never.
  // Any value.
  uint64_t one_graph_max_vectors = 65536;
};

// The shape of one collection. Fixed when the collection is created.
struct CollectionOptions {
  uint32_t dim = 0;                 // REQUIRED: 1..4096
  Metric metric = Metric::kL2;      // one of the Metric values above
  uint32_t shard_count = 0;         // 0..256; 0 = std::thread::hardware_concurrency()
  GraphOptions graph;
  // Segments written from now on store this code (segments keep the code
  // they were written with; a collection created before codes existed
  // opens with kNone). One of the VectorCode values above.
  VectorCode code = VectorCode::kSq8;
  // The int64 attributes its records may carry (shoal/record.h), by name:
  // at most kMaxAttributes, each 1..kMaxAttributeNameLength characters of
  // [A-Za-z0-9_], all different. A record names an attribute by its index
  // in this list. Fixed when the collection is created, like the fields
  // above (a collection created before records existed has none).
  std::vector<std::string> attributes;
};

// Options for a DB: one directory holding many collections.
struct Options {
  // ---- Behaviour ----
  // Create the directory (and an empty database) when it does not exist.
  bool create_if_missing = true;
  // Fail Open with AlreadyExistsError when the directory already holds a database.
  bool error_if_exists = false;
  // Durability of writes; one of the FsyncPolicy values above.
  FsyncPolicy fsync = FsyncPolicy::kNever;
  // kInterval only: period of the background fdatasync, in microseconds
  // (>= 1 under kInterval; ignored, so any value, under the other policies).
  uint32_t sync_interval_us = 100000;
  // Recovery: when a write-ahead log is damaged before its tail (a checksum
  // failure followed by valid records), Open returns DataLossError naming the
  // file and offset. With salvage set, Open instead keeps the longest valid
  // prefix of that shard's log, drops the rest, and succeeds.
  bool salvage_corrupt_wal = false;
  // Open the database as a reader (docs/architecture.md, "Reader
  // processes"): any number of processes (or DB objects) may open it so,
  // beside the one writer that holds it, or with none. A reader never
  // creates, writes, truncates or removes a file (not even LOCK: it takes no
  // lock, so it neither waits for the writer nor keeps it out), runs no
  // flush or merge, and sees the database as it was at Open; DB::CatchUp
  // (or catch_up_interval_ms) moves it to the writer's present. Every call
  // that would change the database returns FailedPreconditionError.
  // Open catches up once (UnavailableError as DB::CatchUp says, when the
  // writer keeps changing the files it reads).
  // create_if_missing is ignored (a missing database is NotFoundError);
  // error_if_exists must be false; the default collection is never created
  // (when it is absent, calls on it are NotFoundError). kAlways with a
  // commit log: a reader reads the shards' logs, which hold every
  // acknowledged write while the writer runs (after a machine crash, the
  // records only the commit log kept appear once a writer has opened the
  // database).
  bool read_only = false;
  // read_only only: also catch up in the background every this many
  // milliseconds (0: only when DB::CatchUp is called). A background
  // catch-up that fails is retried at the next period; DB::CatchUp reports
  // its own errors. Any value.
  uint32_t catch_up_interval_ms = 0;
  // The collection named kDefaultCollection, used by the calls without a
  // collection name. Created on first Open when dim > 0. On a later Open,
  // dim 0 means "as stored"; a different dim or metric is InvalidArgument,
  // and so are attributes other than the stored ones (none: as stored).
  // Its fields are checked as CreateCollection checks them (dim may be 0),
  // also when dim is 0.
  CollectionOptions default_collection;

  // ---- Performance ----
  // Per shard: memtable size before it is flushed into a segment. Writers
  // wait while two full memtables of their shard wait for their flush. When
  // a background flush fails (a full disk), a write that would wait returns
  // the flush's error instead, and the first such write after a back-off
  // (10 ms, doubling with each failure up to 1 s) retries the flush and
  // waits for it: writing resumes by itself once there is room. Any value
  // (0: every write freezes its memtable, so every write is a flush).
  size_t memtable_bytes = 64 << 20;
  // Memtable vectors live in arena blocks of this size (rounded up to hold at
  // least one vector). At most 1 GiB (1 << 30).
  size_t arena_block_bytes = 4 << 20;
  // Touch arena blocks and log space up front, so writes take no page faults.
  bool preallocate = false;
  // Size of one write-ahead log file; a record larger than this gets a file of
  // its own. Log space is reserved (mapped) this much at a time. At most
  // 4 GiB (1 << 32).
  size_t wal_file_bytes = 64 << 20;
  // kAlways only: write the log that writes wait for (the collection's
  // commit log, or each shard's log without collection_commit_log) with
  // direct I/O (O_DIRECT|O_DSYNC) rather than through a shared mapping, on
  // file systems that have it (not tmpfs).
  // A sync then costs one block write whatever it covers: with 8 writers,
  // ~1.6x the throughput of the mapped log (docs/performance-history.md). The log's
  // bytes are the same either way. Ignored under kNever and kInterval, whose
  // writes must survive the process being killed before any sync.
  bool direct_io_log = true;
  // kAlways only: make writes durable through one commit log per collection
  // rather than by syncing each shard's log. Every record a shard appends to
  // its own log is copied into the commit log, and concurrent writers on all
  // the collection's shards then share one write + one fdatasync (with
  // direct_io_log, on the commit log); the shard logs are synced when the
  // commit log moves to a new file (every wal_file_bytes), at Close and by
  // Open, which replays the commit log into any shard log a machine crash
  // cut short. With 8 writers: ~1.05x the throughput of syncing the shard
  // logs at 2 shards, ~1.5x at 8 (one flush per round instead of one per
  // shard; docs/performance-history.md). Off: each shard syncs its own log.
  // An Open with any setting replays a commit log left by an earlier run.
  bool collection_commit_log = true;
  // Where the database's files live: every file operation goes through it
  // (shoal/file_system.h). Null means FileSystem::Default() (POSIX). Not
  // owned; must outlive the DB.
  FileSystem* file_system = nullptr;
  // Background compaction of every collection's segments.
  CompactionOptions compaction;
  // How segments are read while searched: one of the SegmentStorage values
  // above. kDisk trades
  // latency (one block read per expanded node not in the cache, about
  // list_size per segment per query) for RAM (about code bytes + 24 bytes
  // per vector, plus the cache). With kDisk a search of a collection of
  // 16,384 vectors or more searches its shards at once, on the worker
  // threads too (their reads overlap); each thread that searched keeps a
  // scratch of a few hundred KiB and an io_uring ring for its lifetime.
  SegmentStorage segment_storage = SegmentStorage::kMapped;
  // kDisk only: per segment, bytes of node records (full vector and
  // neighbour list) pinned in RAM: the nodes where walks start (the medoid,
  // then the entry points or, with 4-bit codes, each group's node nearest
  // its centre), then their neighbours breadth-first, so that a search's
  // first hops read nothing. 4 MiB holds about 5,200 records at 128-d: a
  // 1M-vector segment's 4,096 entry points (or its ~2,000 groups' nodes)
  // and some of their neighbours; when the starts do not all fit, as many
  // as fit, spread over them. Per segment (never more than its records), so a
  // DB holds up to this times its segment count (about one per shard at
  // rest).
  // Filled when a segment is opened, one block read per cached node. A
  // read that fails then stops the fill without failing the open: the
  // segment keeps the records read before it (said once on stderr), and
  // searches read the others from the file (reporting the error then if
  // the read fails again); a block that fails its checksum is damage and
  // fails the open (DataLossError). 0: no cache. Any value.
  size_t node_cache_bytes = 4 << 20;
  // kDisk only: RAM for the codes and node caches of all the DB's segments
  // together; 0 = no limit. A segment, when opened, keeps its SQ8 codes
  // (dim + 4 bytes a vector, rounded up to 16) if they fit what is left,
  // else 4-bit residual codes fitted to them at open (ceil(dim / 2) + 10
  // bytes; Open takes ~4 s for a million 128-d vectors on 2 worker
  // threads, against 0.25 s with SQ8; a few more reads for the
  // same recall, docs/performance-history.md), kept even when they do not fit
  // (said once on stderr); then a node cache of what is left, at most
  // node_cache_bytes. A segment's share is freed when it is dropped, so
  // segments opened while a merge runs see less. Not counted: the id tables
  // (24 bytes an entry), the 4-bit codes' group centres (about 2 sqrt(n) x
  // dim floats a segment: 1 MiB for 1M x 128) and searches' scratch. Any
  // value.
  size_t memory_budget_bytes = 0;
  // Threads for parallel work (batch writes, recovery, search fan-out).
  // 0..1024; 0 = std::thread::hardware_concurrency(). Open returns
  // ResourceExhaustedError when the system refuses a thread.
  uint32_t worker_threads = 0;
};

// What one search did, summed over the shards and segments it visited.
// A long call's progress: `done` of `total` units (the call says which).
using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

// Options of DB::BulkLoad.
struct BulkLoadOptions {
  // Called with (vectors placed in their graphs so far, vectors to place)
  // while the load runs: from one thread of the load's own, about every
  // 200 ms when `done` has grown, never twice at once; and once more with
  // done == total when the load has succeeded, before BulkLoad returns.
  // It must not call this DB. Empty: no progress is reported.
  ProgressFn progress;
};

// Options of DB::Checkpoint.
struct CheckpointOptions {
  // Called with (bytes linked or copied so far, bytes to link or copy) from
  // the calling thread, after each file and about every 64 MiB of a copy
  // (a linked file counts its size at once), and once more with done ==
  // total when every file is in place, before the manifest is written. It
  // must not call this DB. Empty: no progress is reported.
  ProgressFn progress;
};

// How DB::IngestSegments brings a file into the database's directory.
enum class IngestMethod : uint8_t {
  // A hard link when the file is on the database's file system (no bytes
  // copied; the file given stays, and both names share the bytes, so it
  // must not be changed afterwards), else a copy.
  kLinkOrCopy = 0,
  // Always a copy (the file given stays, independent of the database).
  kCopy = 1,
  // As kLinkOrCopy, then the file given is removed once the ingest has
  // succeeded (RocksDB's move_files).
  kMove = 2,
};

// Options of DB::IngestSegments.
struct IngestOptions {
  // One of the IngestMethod values above.
  IngestMethod method = IngestMethod::kLinkOrCopy;
  // Read every byte of every file and check every checksum before anything
  // changes (as `shoal verify` does), so that a damaged node block is
  // refused now rather than found by a search later. Off: the header,
  // footer, id table, codes and record regions are still checked (what a
  // segment's open checks), node blocks only when read. Costs one read of
  // each file: about 0.3 s for the two files of 1M x 128 in the page cache
  // (the files are checked at once), of a 0.5 s ingest by link.
  bool verify_checksums = true;
};

struct SearchStats {
  uint64_t segments = 0;               // segment searches
  uint64_t hops = 0;                   // graph nodes expanded
  uint64_t distance_computations = 0;  // on codes and on full vectors
  // SegmentStorage::kDisk (0 under kMapped):
  uint64_t reads = 0;                  // node blocks read from files
  uint64_t cache_hits = 0;             // expanded nodes found in node caches
  uint64_t io_wait_ns = 0;             // time waiting for those reads
  uint64_t compute_ns = 0;             // the rest of the segment searches' time
  // A filtered search (SearchOptions::filter): how its segments were
  // searched. The planner counts each segment's matching nodes first
  // (filter_matches sums those counts; an upper bound when the filter holds
  // an Ids predicate), then skips the segment (none match), scans its
  // matching nodes (few match: by their codes, the closest reranked by
  // their vectors), or walks its graph among the matching nodes; a walk
  // that comes back with fewer than k answers is followed by the scan
  // (filter_short_walks). Memtables are always scanned. A walk for one
  // label alone on a mapped segment follows a graph of that label's nodes
  // when the segment has one (filter_label_graph_walks): the first search
  // that asks queues its build on the DB's threads, and the walks go
  // without it until it is built (filter_label_graph_pending; a few tenths
  // of a second for 5K nodes; docs/architecture.md, "Label graphs").
  uint64_t filter_matches = 0;
  uint64_t filter_skipped = 0;
  uint64_t filter_scanned = 0;
  uint64_t filter_walked = 0;
  uint64_t filter_short_walks = 0;
  uint64_t filter_label_graph_walks = 0;
  uint64_t filter_label_graph_pending = 0;
};

// How a search walks a disk-resident segment's graph (SegmentStorage::
// kDisk; mapped segments ignore it). Both rerank every expanded node by
// its exact distance, and give equally good answers (not always the same
// ones); they differ in when blocks are read.
enum class DiskSearch : uint8_t {
  // kPipelined when beam_width > 1, else kBeam (at width 1 the two read and
  // expand the same nodes in the same order, and kBeam has less to manage).
  // Measured on one thread, 200K x 128 on a VM's disk with O_DIRECT, W 4-16:
  // kPipelined gave 0.97-1.38x kBeam's QPS at equal or better recall, most
  // often above 1.1x (docs/performance-history.md, "Pipelined search").
  kAuto = 0,
  // DiskANN's beam search: each step reads the blocks of the beam_width
  // closest unexpanded nodes together, waits for all of them, then expands
  // them.
  kBeam = 1,
  // PipeANN's pipelined search: beam_width reads stay in flight; each block
  // is expanded as soon as it arrives and the next closest node's read takes
  // its place, so reads overlap each other and the expansions. Reads go
  // through FileSystem's ReadQueue (io_uring on POSIX where the kernel
  // allows it, else one pread at a time, with the same answers).
  kPipelined = 2,
};

// Options for one search.
struct SearchOptions {
  uint32_t k = 10;             // neighbours to return (>= 1; any larger value)
  // L at search time (>= 1): larger = better recall, slower. A graph walk
  // keeps the max(L, k) closest nodes it has seen (on codes max(L, k +
  // max(2, k/4)), a few more for the rerank) and ends once the first L
  // of them are expanded, so L below k still answers k, sooner and with
  // lower recall (memory-mapped segments; disk-resident ones search with
  // max(L, k), since their answers are the nodes they expanded). Any size:
  // a segment never lists more nodes than it holds. Every shard is searched
  // with L. A shard's segments share it: the largest is searched with L,
  // each other one with L in proportion to its size against the largest
  // (at least min(L, k)).
  uint32_t list_size = 100;
  // Graph nodes expanded per step; 0 = the measured best for the storage:
  // 1 on memory-mapped segments, 8 on disk-resident ones. Mapped, 1 is the
  // fastest at equal recall (docs/performance-history.md: ~2x the QPS of 4 on small);
  // larger values only pay off when a step waits on storage
  // (SegmentStorage::kDisk: each step reads beam_width blocks together, or
  // with DiskSearch::kPipelined, beam_width reads stay in flight; on 1M x 128
  // W 8 gave 2x the QPS of W 1 at recall 0.95, docs/performance-history.md). Any
  // value: disk searches keep at most 64 reads in flight, whatever is asked.
  uint32_t beam_width = 0;
  // SegmentStorage::kDisk only: beam or pipelined search; one of the
  // DiskSearch values above (checked under kMapped too).
  DiskSearch disk_search = DiskSearch::kAuto;
  // When not null, the search adds what it did to *stats (not reset first;
  // not owned; must outlive the call). DB::SearchBatch adds every query's.
  // A search that fails may have added part of its work.
  SearchStats* stats = nullptr;
  // When not null, the search answers the nearest neighbours among the
  // live vectors that match *filter (shoal/filter.h), exactly: never an id
  // that fails it, and k results whenever at least k match (all of them
  // when fewer do). Not owned; the caller keeps it alive and unchanged
  // during the call. Checked when the search starts (InvalidArgument: an
  // attribute the collection does not declare, an inverted range, a tree
  // beyond the limits). Null: no filter, and no cost.
  const Filter* filter = nullptr;
};

}  // namespace shoal

#endif  // SHOAL_INCLUDE_SHOAL_OPTIONS_H_
