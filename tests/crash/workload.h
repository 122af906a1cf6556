// Copyright 2026 The shoal Authors.
//
// The workload of the crash loops and the oracle that checks a database
// against it.
//
// Writers are threads; thread t owns the ids [t * kIdsPerThread,
// (t + 1) * kIdsPerThread), so the newest value of an id is decided by one
// thread's order of operations, which the loops record. An operation is a
// pure function of (thread, seed): a put, a delete, a batch of 1..64 puts, or
// now and then a BulkLoad of 1..64 vectors (ids may repeat in both; the last
// copy wins). Values are seeded random vectors and
// are compared by a hash of their bytes (0 = absent).

#ifndef SHOAL_TESTS_CRASH_WORKLOAD_H_
#define SHOAL_TESTS_CRASH_WORKLOAD_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "shoal/db.h"
#include "shoal/file_system.h"

namespace shoal::crash {

inline constexpr uint64_t kIdsPerThread = 256;
inline constexpr int kMaxThreads = 4;
// Ids at and above this are never written: they must never appear.
inline constexpr uint64_t kFirstUnusedId = kIdsPerThread * kMaxThreads;

// A fresh directory under /dev/shm (or /tmp), removed by the destructor
// unless Keep() was called (a failing loop keeps it for a post-mortem).
class ScratchDir {
 public:
  // Under `root`, or /dev/shm (else /tmp) when it is empty.
  explicit ScratchDir(const std::string& root = "");
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }
  void Keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

// The shape of one database directory of a loop (fixed while it lives).
struct DbShape {
  uint32_t dim = 8;
  uint32_t shards = 2;
  size_t wal_file_bytes = 64 << 10;
  size_t memtable_bytes = 64 << 20;
};

Options MakeOptions(const DbShape& shape, FsyncPolicy policy);
const char* PolicyName(FsyncPolicy policy);

enum class OpKind : uint8_t { kPut = 0, kDelete = 1, kBatch = 2, kBulkLoad = 3 };
struct Op {
  OpKind kind = OpKind::kPut;
  std::vector<uint64_t> ids;
  std::vector<uint64_t> value_seeds;  // one per id; empty for kDelete
  // Written as records (DB::Put(Record), PutBatch/BulkLoad of records),
  // each with the labels, attributes and payload its seed gives (some
  // none); else as plain vectors.
  bool records = false;
};
Op MakeOp(int thread, uint64_t seed);
absl::Status RunOp(DB& db, const Op& op, uint32_t dim);
// db.Compact(), concurrent with everything else, BulkLoad included (until
// 2026-11-25 the two excluded each other here, for a bug fixed on
// 2026-11-23: a compaction racing a bulk load ranked older data above newer).
absl::Status RunCompact(DB& db);

std::vector<float> Value(uint32_t dim, uint64_t value_seed);
// The record a value seed stands for: Value's vector and, when
// `with_parts`, labels, attributes and a payload drawn from the seed (a
// quarter of the seeds draw none; a few draw a payload of 100 KiB). Labels
// and attributes are canonical (as GetRecord returns them).
struct RecordValue {
  std::vector<float> vector;
  std::vector<uint32_t> labels;
  std::vector<AttributeValue> attributes;
  std::string payload;
  Record View(uint64_t id) const { return Record{id, vector, labels, attributes, payload}; }
};
RecordValue MakeRecordValue(uint32_t dim, uint64_t value_seed, bool with_parts);
// The attributes the loops' collections declare.
inline constexpr uint32_t kAttributeCount = 3;
// A hash of every part of a record (never 0): a record torn between its
// parts hashes to something else.
uint64_t RecordHash(std::span<const float> vector, std::span<const uint32_t> labels,
                    std::span<const AttributeValue> attributes, std::string_view payload);
uint64_t ValueHash(uint32_t dim, uint64_t value_seed, bool with_parts);

// id -> value hash; absent ids are not in the map.
using Model = std::unordered_map<uint64_t, uint64_t>;
// What an operation does on one shard: id -> new hash (0 = deleted), the
// last copy of a repeated id winning.
using Effect = std::map<uint64_t, uint64_t>;
std::map<uint32_t, Effect> EffectsByShard(const Op& op, uint32_t dim, uint32_t shards);
void Apply(const Effect& effect, Model* model);
inline uint64_t HashOf(const Model& m, uint64_t id) {
  auto it = m.find(id);
  return it == m.end() ? 0 : it->second;
}

// The checkpoints the loops make beside `path` (the database), in two
// slots used in turn, so that a whole copy is there while the next is made:
// CheckpointPath(path, slot) is replaced each time (the earlier copy, and
// what a crash left of one, removed first through `fs`).
inline constexpr int kCheckpointSlots = 2;
std::string CheckpointPath(const std::string& path, int slot);
absl::Status RunCheckpoint(DB& db, const std::string& path, int slot, FileSystem* fs);
// id -> every value hash (0 = absent) the id held at some moment of a
// cycle: its value at the cycle's start, then each one an operation of the
// cycle gave it (acknowledged or in flight).
using Possible = std::unordered_map<uint64_t, std::set<uint64_t>>;
void AddPossible(const Effect& effect, const Model& before, Possible* possible);
// After a crash: for each slot whose CheckpointPath holds a database (its
// MANIFEST is there, so the copy was whole), opens it with `options` and
// checks it with Observe, and that every id holds a value it held at some
// moment of the cycle. Then removes the copies and anything a crash left of
// one, and syncs their parent: no copy outlives its cycle. *found: the
// whole copies checked.
absl::Status CheckCheckpoint(const std::string& path, const Options& options, uint32_t dim,
                             const Model& before, const Possible& possible, uint64_t seed,
                             uint64_t* found);

// Reads every id a writer may own with GetRecord (every part), and checks that a sample of
// never-written ids is NotFound and that Search returns only live ids, in
// order, without repeats.
absl::StatusOr<Model> Observe(DB& db, uint32_t dim, uint64_t seed);

// Segment files (flushes, bulk loads, merges, consolidations) being written
// under the database directory `path` now: their temporaries.
int SegmentWritesInProgress(const std::string& path);
// After a reopen: waits for the background work the reopen started, then
// checks that no temporary file is left under `path` and that every segment
// file there is one the manifest names (nothing a crash left is leaked).
absl::Status CheckNoFileLeaked(DB& db, const std::string& path);

// Figures of a loop, printed at the end in the form docs/guarantees.md quotes.
struct Figures {
  uint64_t cycles = 0;
  uint64_t cycles_by_policy[3] = {0, 0, 0};
  uint64_t ops_acked = 0;
  uint64_t in_flight = 0;          // ops cut by the crash: may or may not be there
  uint64_t in_flight_applied = 0;  // ... and were found applied (on a shard)
  uint64_t required_checked = 0;   // acknowledged ops that had to be present
  uint64_t faults = 0;             // kills, or failed operations of the fault FS
  uint64_t kills_before_first_write = 0;
  uint64_t prefix_keeps = 0;       // power losses keeping a prefix of unsynced data
  uint64_t block_keeps = 0;        // power losses keeping random blocks of it
  uint64_t clean_closes = 0;
  uint64_t flushes = 0;            // Flush/Compact calls that completed
  uint64_t checkpoints = 0;        // whole checkpoints found after a crash and checked
  uint64_t cuts_mid_segment_write = 0;  // crashes while a segment file was written
  uint64_t lost = 0;               // acknowledged writes not found: must be 0
};

}  // namespace shoal::crash

#endif  // SHOAL_TESTS_CRASH_WORKLOAD_H_
