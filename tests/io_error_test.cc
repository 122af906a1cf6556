// Copyright 2026 The shoal Authors.
//
// I/O error loops: for every N, the Nth file-system operation of a call
// fails, until N is past the last operation the call makes. Three modes:
//   Once:       only the Nth fails; then the program goes on (one more write
//               to each collection) and closes the DB;
//   OnceThenDie: only the Nth fails; when the call returns, the process
//               "dies" (every later operation fails, as if killed: nothing
//               that the engine would still do to repair things happens);
//   Persistent: the Nth and every later one fails (a disk that stays broken);
//   PowerLoss:  the power goes off at the Nth (it and every later one fail,
//               nothing more becomes durable), then everything unsynced is
//               dropped (FaultInjectionFileSystem::DropUnsyncedData); only
//               for the cases marked power_loss, whose acknowledged writes
//               are durable (kAlways): merges and consolidations.
// Each time:
//   - the call returns (never crashes, never hangs: a watchdog aborts);
//   - the DB object can be closed and destroyed;
//   - a reopen on a healthy file system succeeds and holds every write
//     acknowledged before (and after) the failure; the failed call's own
//     effect may be there or not, id by id (its parts on different shards
//     are independent), and nothing else appears.
// The calls are scripts of DB operations run through a Tracker, which keeps,
// for every (collection, id), the set of states the DB may legitimately be
// in. A state is a whole record (vector, labels, attributes, payload: a
// record is atomic, so a torn one matches no state) and is checked with
// GetRecord, every part. New calls are added to Cases() below; one that
// returns Unimplemented without a fault is skipped and reported.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "db/inspect.h"
#include "gtest/gtest.h"
#include "shoal/record.h"
#include "shoal/segment_writer.h"
#include "testutil/fault_injection_fs.h"
#include "testutil/temp_dir.h"
#include "version/filename.h"

namespace shoal::test {
namespace {

namespace stdfs = std::filesystem;

constexpr uint32_t kDim = 4;
constexpr char kOther[] = "other";
// The attributes the collections declare: the default collection two, the
// other one (records give values by index).
constexpr uint32_t kDefaultAttributes = 2;
constexpr uint32_t kOtherAttributes = 1;

uint32_t AttributeCount(const std::string& collection) {
  return collection == kOther ? kOtherAttributes : kDefaultAttributes;
}

// A record as GetRecord returns it (labels ascending and distinct,
// attributes by index), ordered so that states can live in a std::set.
struct Value {
  std::vector<float> vector;
  std::vector<uint32_t> labels;
  std::vector<std::pair<uint32_t, int64_t>> attributes;
  std::string payload;

  auto operator<=>(const Value&) const = default;
};

Value FromRecordData(const RecordData& r) {
  Value v{r.vector, r.labels, {}, r.payload};
  for (const AttributeValue& a : r.attributes) v.attributes.emplace_back(a.attribute, a.value);
  return v;
}

// What a state looks like in a failure message.
std::string Describe(const std::optional<Value>& v) {
  if (!v) return "absent";
  std::string out = "vector [";
  for (float x : v->vector) out += std::to_string(x) + " ";
  out += "] labels {";
  for (uint32_t l : v->labels) out += std::to_string(l) + " ";
  out += "} attributes {";
  for (const auto& [a, x] : v->attributes) {
    out += std::to_string(a) + ":" + std::to_string(x) + " ";
  }
  out += "} payload " + std::to_string(v->payload.size()) + " bytes";
  return out;
}

using State = std::optional<Value>;  // nullopt: absent

// A record to write, owning its parts (Record views them), given as a caller
// may: labels unsorted with a repeat, attributes out of index order.
struct OwnedRecord {
  uint64_t id = 0;
  std::vector<float> vector;
  std::vector<uint32_t> labels;
  std::vector<AttributeValue> attributes;
  std::string payload;

  Record View() const { return Record{id, vector, labels, attributes, payload}; }
  Value Expected() const {
    Value v{vector, labels, {}, payload};
    std::sort(v.labels.begin(), v.labels.end());
    v.labels.erase(std::unique(v.labels.begin(), v.labels.end()), v.labels.end());
    for (const AttributeValue& a : attributes) v.attributes.emplace_back(a.attribute, a.value);
    std::sort(v.attributes.begin(), v.attributes.end());
    return v;
  }
};

std::vector<float> Vec(uint64_t seed) { return RandomVector(kDim, seed); }

// Payload bytes of `size`, every byte value among them (opaque: zeros too).
std::string PayloadBytes(size_t size, uint64_t seed) {
  std::string p(size, '\0');
  for (size_t i = 0; i < size; ++i) p[i] = static_cast<char>((i * 131 + seed * 7) & 0xff);
  return p;
}

// Record `id` with parts chosen by `seed`: a vector alone; a payload alone
// (1 byte to 1.5 KB); every part; labels and one attribute; every part with
// a larger payload. `attributes` is how many its collection declares.
// `large_payload`, when not 0, is the payload size of every record that has
// one.
OwnedRecord MakeRecord(uint64_t id, uint64_t seed, uint32_t attributes,
                       size_t large_payload = 0) {
  OwnedRecord r;
  r.id = id;
  r.vector = Vec(seed * 13 + 5);
  const uint32_t l = static_cast<uint32_t>(seed % 7);
  switch (seed % 5) {
    case 0:  // the vector alone
      break;
    case 1:  // a payload alone
      r.payload = PayloadBytes(seed % 3 == 0 ? 1 : seed % 3 == 1 ? 200 : 1500, seed);
      break;
    case 2:  // every part
      r.labels = {l + 10, 3, l + 10, 1u << 31};
      for (uint32_t a = attributes; a-- > 0;) {
        r.attributes.push_back({a, static_cast<int64_t>(seed) * -1000 - a});
      }
      r.payload = PayloadBytes(16 + seed % 50, seed);
      break;
    case 3:  // labels and one attribute, no payload
      r.labels = {l};
      r.attributes = {{attributes - 1, static_cast<int64_t>(1700000000 + seed)}};
      break;
    default:  // every part, a larger payload
      r.labels = {7, l, 0};
      for (uint32_t a = 0; a < attributes; ++a) {
        r.attributes.push_back({a, a == 0 ? INT64_MIN + static_cast<int64_t>(seed)
                                          : static_cast<int64_t>(seed)});
      }
      r.payload = PayloadBytes(700 + seed % 300, seed);
      break;
  }
  if (large_payload != 0 && !r.payload.empty()) r.payload = PayloadBytes(large_payload, seed);
  return r;
}

std::vector<OwnedRecord> MakeRecords(uint64_t from, uint64_t to, uint64_t seed,
                                     uint32_t attributes, size_t large_payload = 0) {
  std::vector<OwnedRecord> records;
  for (uint64_t id = from; id < to; ++id) {
    records.push_back(MakeRecord(id, id + seed, attributes, large_payload));
  }
  return records;
}

// What the DB may hold: for every collection whether it may exist, and for
// every id the states it may be in. An acknowledged operation narrows a set
// to one state; a failed one adds its outcome to the set.
class Tracker {
 public:
  Tracker() { exists_["default"] = {true}; }  // a reopen creates it if need be

  void Acked(bool ok) { ok ? ++acked_ : ++failed_; }

  // A vector without the other parts (the calls that take spans).
  absl::Status Put(DB& db, const std::string& c, uint64_t id, const std::vector<float>& v) {
    absl::Status s = db.Put(c, id, v);
    Note(s, c, {id}, {State(Value{v, {}, {}, {}})});
    return s;
  }
  absl::Status PutBatch(DB& db, const std::string& c, const std::vector<uint64_t>& ids,
                        const std::vector<float>& rows, bool bulk = false) {
    absl::Status s = bulk ? db.BulkLoad(c, ids, rows) : db.PutBatch(c, ids, rows);
    std::vector<State> states;
    for (size_t i = 0; i < ids.size(); ++i) {
      states.emplace_back(Value{std::vector<float>(rows.begin() + i * kDim,
                                                   rows.begin() + (i + 1) * kDim),
                                {}, {}, {}});
    }
    Note(s, c, ids, states);
    return s;
  }
  // Segment files holding `ids`/`rows` (a SegmentWriter's), ingested.
  absl::Status Ingest(DB& db, const std::string& c, const std::vector<uint64_t>& ids,
                      const std::vector<float>& rows, const std::vector<std::string>& files) {
    absl::Status s = db.IngestSegments(c, files);
    std::vector<State> states;
    for (size_t i = 0; i < ids.size(); ++i) {
      states.emplace_back(Value{std::vector<float>(rows.begin() + i * kDim,
                                                   rows.begin() + (i + 1) * kDim),
                                {}, {}, {}});
    }
    Note(s, c, ids, states);
    return s;
  }
  // Records (DB::Put(Record), PutBatch or BulkLoad of records).
  absl::Status PutRecord(DB& db, const std::string& c, const OwnedRecord& r) {
    absl::Status s = db.Put(c, r.View());
    Note(s, c, {r.id}, {State(r.Expected())});
    return s;
  }
  absl::Status PutRecords(DB& db, const std::string& c, const std::vector<OwnedRecord>& records,
                          bool bulk = false) {
    std::vector<Record> views;
    std::vector<uint64_t> ids;
    std::vector<State> states;
    for (const OwnedRecord& r : records) {
      views.push_back(r.View());
      ids.push_back(r.id);
      states.emplace_back(r.Expected());
    }
    absl::Status s = bulk ? db.BulkLoad(c, std::span<const Record>(views))
                          : db.PutBatch(c, std::span<const Record>(views));
    Note(s, c, ids, states);
    return s;
  }
  absl::Status Delete(DB& db, const std::string& c, uint64_t id) {
    absl::Status s = db.Delete(c, id);
    Note(s, c, {id}, {State()});
    return s;
  }
  absl::Status Create(DB& db, const std::string& c, uint32_t shards) {
    CollectionOptions o;
    o.dim = kDim;
    o.shard_count = shards;
    for (uint32_t a = 0; a < AttributeCount(c); ++a) {
      o.attributes.push_back("a" + std::to_string(a));
    }
    absl::Status s = db.CreateCollection(c, o);
    if (s.ok()) {
      exists_[c] = {true};
    } else {
      if (!exists_.count(c)) exists_[c] = {false};
      exists_[c].insert(true);  // an empty one: its ids are absent either way
    }
    Acked(s.ok());
    return s;
  }
  absl::Status Drop(DB& db, const std::string& c) {
    absl::Status s = db.DropCollection(c);
    if (s.ok()) {
      exists_[c] = {false};
    } else {
      exists_[c].insert(false);
    }
    for (auto& [key, states] : ids_) {
      if (key.first != c) continue;
      if (s.ok()) states.clear();
      states.insert(State());
    }
    Acked(s.ok());
    return s;
  }
  // A call with no effect on the data (Flush, Compact, Close).
  absl::Status NoEffect(absl::Status s) {
    Acked(s.ok());
    return s;
  }

  // Success when `db` is in one of the states allowed.
  ::testing::AssertionResult Check(DB& db) const {
    std::vector<std::string> listed = db.ListCollections();
    for (const std::string& name : listed) {
      auto it = exists_.find(name);
      if (it == exists_.end() || !it->second.count(true)) {
        return ::testing::AssertionFailure() << "collection " << name << " appeared";
      }
    }
    for (const auto& [name, allowed] : exists_) {
      const bool present = std::count(listed.begin(), listed.end(), name) > 0;
      if (!allowed.count(present)) {
        return ::testing::AssertionFailure()
               << "collection " << name << (present ? " exists" : " is missing");
      }
    }
    for (const auto& [key, allowed] : ids_) {
      const auto& [c, id] = key;
      State got;
      if (std::count(listed.begin(), listed.end(), c) > 0) {
        absl::StatusOr<RecordData> r = db.GetRecord(c, id, kAllParts);
        if (r.ok()) {
          got = FromRecordData(*r);
        } else if (!absl::IsNotFound(r.status())) {
          return ::testing::AssertionFailure() << "GetRecord(" << c << ", " << id << ") -> "
                                               << r.status();
        }
      }
      if (!allowed.count(got)) {
        ::testing::AssertionResult failure = ::testing::AssertionFailure();
        failure << c << "/" << id << " is " << Describe(got)
                << ", which no acknowledged history allows; allowed:";
        for (const State& st : allowed) failure << "\n  " << Describe(st);
        return failure;
      }
    }
    return ::testing::AssertionSuccess();
  }

  uint64_t acked() const { return acked_; }

 private:
  void Note(const absl::Status& s, const std::string& c, const std::vector<uint64_t>& ids,
            const std::vector<State>& states) {
    // In a batch the last copy of an id wins; an acknowledged one narrows.
    std::map<uint64_t, State> last;
    for (size_t i = 0; i < ids.size(); ++i) last[ids[i]] = states[i];
    for (const auto& [id, st] : last) {
      std::set<State>& allowed = ids_[{c, id}];
      if (s.ok()) allowed.clear();
      if (allowed.empty() && !s.ok()) allowed.insert(State());  // never written before
      allowed.insert(st);
    }
    Acked(s.ok());
  }

  std::map<std::string, std::set<bool>> exists_;
  std::map<std::pair<std::string, uint64_t>, std::set<State>> ids_;
  uint64_t acked_ = 0, failed_ = 0;
};

// Aborts the process when a call does not return within the deadline: a
// hang is a failure, and ctest would otherwise only see a timeout.
class Watchdog {
 public:
  Watchdog(std::string what, std::chrono::seconds limit) : what_(std::move(what)) {
    thread_ = std::thread([this, limit] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
        std::fprintf(stderr, "HANG: %s did not return within %lld s\n", what_.c_str(),
                     static_cast<long long>(limit.count()));
        std::abort();
      }
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::string what_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

enum class Mode { kOnce, kOnceThenDie, kPersistent, kPowerLoss };

const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kOnce: return "Once";
    case Mode::kOnceThenDie: return "OnceThenDie";
    case Mode::kPersistent: return "Persistent";
    case Mode::kPowerLoss: return "PowerLoss";
  }
  return "?";
}

struct IoCase {
  std::string name;
  FsyncPolicy policy = FsyncPolicy::kNever;
  size_t wal_file_bytes = 4096;
  size_t memtable_bytes = 64 << 20;
  // Runs on a healthy file system before the call. Leaves the DB open (or
  // closed, for a case whose call is Open).
  std::function<void(DB&, Tracker*)> setup;
  // The call under test. Null: the call is opening the DB.
  std::function<absl::Status(DB&, Tracker*)> call;
  // Damages the files after setup (e.g. a torn log tail), before the call.
  std::function<void(const std::string& path)> damage;
  // In a directory on a disk (TempDir::Storage::kDisk), where kAlways logs
  // are written with direct I/O; else on tmpfs, where they are mapped.
  bool on_disk = false;
  // kAlways: Options::collection_commit_log (else each shard syncs its log).
  bool commit_log = true;
  CompactionOptions compaction;
  // Also run with the power going off at each operation in turn
  // (Mode::kPowerLoss). REQUIRES: every write acknowledged before or during
  // the call is durable when acknowledged (kAlways).
  bool power_loss = false;
  // kAlways cases: again on a disk, through the direct-I/O log.
  bool disk_variants = true;
};

Options CaseOptions(const IoCase& c) {
  Options o = DefaultOptions(kDim, Metric::kL2, /*shard_count=*/3);
  o.fsync = c.policy;
  o.wal_file_bytes = c.wal_file_bytes;
  o.memtable_bytes = c.memtable_bytes;
  o.worker_threads = 2;
  o.collection_commit_log = c.commit_log;
  o.compaction = c.compaction;
  for (uint32_t a = 0; a < kDefaultAttributes; ++a) {
    o.default_collection.attributes.push_back("a" + std::to_string(a));
  }
  return o;
}

void PutRange(DB& db, Tracker* t, const std::string& c, uint64_t from, uint64_t to) {
  for (uint64_t id = from; id < to; ++id) ASSERT_OK(t->Put(db, c, id, Vec(id * 7 + 1)));
}

// Puts records from..to one at a time, their parts chosen by id + seed.
void PutRecordRange(DB& db, Tracker* t, const std::string& c, uint64_t from, uint64_t to,
                    uint64_t seed = 0) {
  for (const OwnedRecord& r : MakeRecords(from, to, seed, AttributeCount(c))) {
    ASSERT_OK(t->PutRecord(db, c, r));
  }
}

// Appends bytes that are not a record after the last log file's records of
// shard 0: a torn tail, which recovery truncates and syncs.
void TearLastLog(const std::string& path) {
  const std::string dir = path + "/default/shard-0";
  std::string last;
  for (const auto& e : stdfs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("wal-") && name.ends_with(".log") && name > last) last = name;
  }
  ASSERT_FALSE(last.empty());
  FILE* f = std::fopen((dir + "/" + last).c_str(), "ab");
  ASSERT_NE(f, nullptr);
  const char garbage[24] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::fwrite(garbage, 1, sizeof(garbage), f);
  std::fclose(f);
}

// Flush, then WaitForCompact; InternalError when, without a fault, some
// shard is not `done` (the background merge the case is about did not run).
absl::Status FlushAndWaitFor(DB& db, Tracker* t,
                             const std::function<bool(const ShardReport&)>& done) {
  absl::Status s = t->NoEffect(db.Flush());
  if (s.ok()) s = t->NoEffect(db.WaitForCompact());
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<CollectionReport>> stats = CollectStats(db);
  if (!stats.ok()) return stats.status();
  for (const CollectionReport& c : *stats) {
    for (const ShardReport& shard : c.shards) {
      if (!done(shard)) return absl::InternalError("the background merge did not run");
    }
  }
  return absl::OkStatus();
}

std::vector<IoCase> Cases() {
  std::vector<IoCase> cases;
  auto add = [&](const std::string& name) -> IoCase& {
    cases.emplace_back();
    cases.back().name = name;
    return cases.back();
  };
  // A merge: kAlways (every acknowledged write durable), so the power may
  // go off at each of its steps too; not again on a disk (the merge's files
  // are the same there).
  auto add_merge = [&](const std::string& name) -> IoCase& {
    IoCase& c = add(name);
    c.policy = FsyncPolicy::kAlways;
    c.power_loss = true;
    c.disk_variants = false;
    return c;
  };
  {
    add("OpenNew");
  }
  {
    IoCase& c = add("OpenExisting");
    c.setup = [](DB& db, Tracker* t) {
      ASSERT_OK(t->Create(db, kOther, 2));
      PutRange(db, t, "default", 0, 40);
      PutRange(db, t, kOther, 0, 10);
      ASSERT_OK(t->Delete(db, "default", 3));
      absl::Status flushed = db.Flush();  // segments too, where built
      ASSERT_TRUE(flushed.ok() || absl::IsUnimplemented(flushed)) << flushed;
      PutRange(db, t, "default", 30, 60);
      ASSERT_OK(t->Delete(db, "default", 31));
    };
    c.damage = TearLastLog;
  }
  {
    IoCase& c = add("PutKAlways");
    c.policy = FsyncPolicy::kAlways;
    c.setup = [](DB& db, Tracker* t) { PutRange(db, t, "default", 0, 5); };
    c.call = [](DB& db, Tracker* t) {
      for (uint64_t id = 100; id < 104; ++id) {
        absl::Status s = t->Put(db, "default", id, Vec(id));
        if (!s.ok()) return s;
      }
      return absl::OkStatus();
    };
  }
  {
    IoCase& c = add("PutsThatRotateTheLog");
    c.wal_file_bytes = 256;  // a few records per file
    c.call = [](DB& db, Tracker* t) {
      for (uint64_t id = 0; id < 24; ++id) {
        absl::Status s = t->Put(db, "default", id % 10, Vec(id));
        if (!s.ok()) return s;
      }
      return absl::OkStatus();
    };
  }
  {
    IoCase& c = add("PutBatchKAlways");
    c.policy = FsyncPolicy::kAlways;
    c.setup = [](DB& db, Tracker* t) { PutRange(db, t, "default", 0, 8); };
    c.call = [](DB& db, Tracker* t) {
      std::vector<uint64_t> ids;
      std::vector<float> rows;
      for (uint64_t id = 4; id < 20; ++id) {
        ids.push_back(id);
        std::vector<float> v = Vec(id + 1000);
        rows.insert(rows.end(), v.begin(), v.end());
      }
      return t->PutBatch(db, "default", ids, rows);
    };
  }
  {
    // Large enough for the pool to write each shard's part through the log
    // file (Shard::BeginPuts) rather than through its mapping.
    IoCase& c = add("LargePutBatchKAlways");
    c.policy = FsyncPolicy::kAlways;
    c.power_loss = true;
    c.disk_variants = false;  // the same steps; the tracker's checks take seconds
    c.setup = [](DB& db, Tracker* t) { PutRange(db, t, "default", 0, 8); };
    c.call = [](DB& db, Tracker* t) {
      std::vector<uint64_t> ids;
      std::vector<float> rows;
      for (uint64_t id = 4; id < 4 + 16500; ++id) {  // 66,000 floats, ~130 KB a shard
        ids.push_back(id);
        std::vector<float> v = Vec(id + 1000);
        rows.insert(rows.end(), v.begin(), v.end());
      }
      return t->PutBatch(db, "default", ids, rows);
    };
  }
  {
    IoCase& c = add("DeleteKAlways");
    c.policy = FsyncPolicy::kAlways;
    c.setup = [](DB& db, Tracker* t) { PutRange(db, t, "default", 0, 8); };
    c.call = [](DB& db, Tracker* t) { return t->Delete(db, "default", 5); };
  }
  {
    IoCase& c = add("CreateCollection");
    c.call = [](DB& db, Tracker* t) { return t->Create(db, kOther, 2); };
  }
  {
    IoCase& c = add("DropCollection");
    c.setup = [](DB& db, Tracker* t) {
      ASSERT_OK(t->Create(db, kOther, 2));
      PutRange(db, t, kOther, 0, 10);
    };
    c.call = [](DB& db, Tracker* t) { return t->Drop(db, kOther); };
  }
  {
    IoCase& c = add("Flush");
    c.setup = [](DB& db, Tracker* t) {
      PutRange(db, t, "default", 0, 30);
      ASSERT_OK(t->Delete(db, "default", 7));
    };
    c.call = [](DB& db, Tracker* t) { return t->NoEffect(db.Flush()); };
  }
  {
    IoCase& c = add("BulkLoad");
    c.setup = [](DB& db, Tracker* t) { PutRange(db, t, "default", 0, 10); };
    c.call = [](DB& db, Tracker* t) {
      std::vector<uint64_t> ids;
      std::vector<float> rows;
      for (uint64_t id = 5; id < 40; ++id) {
        ids.push_back(id);
        std::vector<float> v = Vec(id + 5000);
        rows.insert(rows.end(), v.begin(), v.end());
      }
      return t->PutBatch(db, "default", ids, rows, /*bulk=*/true);
    };
  }
  {
    // A checkpoint (issue 46) writes nothing of the source's: a fault in it
    // must leave the source's acknowledged writes and files as they were
    // (checkpoint_test checks the copy's side). kAlways, so the power may go
    // off at each step too.
    IoCase& c = add_merge("Checkpoint");
    c.setup = [](DB& db, Tracker* t) {
      PutRange(db, t, "default", 0, 20);
      absl::Status s = db.Flush();
      if (absl::IsUnimplemented(s)) return;
      ASSERT_OK(s);
      PutRange(db, t, "default", 10, 30);  // in the memtable
      ASSERT_OK(t->Delete(db, "default", 2));
    };
    c.call = [](DB& db, Tracker* t) {
      static TempDir* const target = new TempDir();  // for the whole run
      const std::string copy = target->Sub("copy");
      std::filesystem::remove_all(copy);
      std::filesystem::remove_all(copy + ".tmp");
      return t->NoEffect(db.Checkpoint(copy));
    };
  }
  {
    // Segment files a SegmentWriter built outside the database (on the
    // healthy file system), ingested through the failing one: linked (a
    // failed link or SyncFile falls back to a copy, which fails in turn).
    IoCase& c = add_merge("IngestSegments");  // kAlways, the power lost at each step too
    c.setup = [](DB& db, Tracker* t) { PutRange(db, t, "default", 0, 10); };
    c.call = [](DB& db, Tracker* t) -> absl::Status {
      absl::StatusOr<CollectionOptions> options = db.GetCollectionOptions("default");
      if (!options.ok()) return options.status();
      std::vector<uint64_t> ids;
      std::vector<float> rows;
      for (uint64_t id = 5; id < 40; ++id) {
        ids.push_back(id);
        std::vector<float> v = Vec(id + 6000);
        rows.insert(rows.end(), v.begin(), v.end());
      }
      TempDir out;
      SegmentWriterOptions w;
      w.collection = *options;
      w.threads = 1;
      absl::StatusOr<std::unique_ptr<SegmentWriter>> writer =
          SegmentWriter::Create(out.path(), w);
      if (!writer.ok()) return absl::InternalError(writer.status().ToString());
      absl::Status added = (*writer)->Add(ids, rows);
      if (!added.ok()) return absl::InternalError(added.ToString());
      absl::StatusOr<std::vector<std::string>> files = (*writer)->Finish();
      if (!files.ok()) return absl::InternalError(files.status().ToString());
      return t->Ingest(db, "default", ids, rows, *files);
    };
  }
  {
    IoCase& c = add("Compact");
    c.compaction.automatic = false;  // the flushes below stay segments for Compact
    c.setup = [](DB& db, Tracker* t) {
      PutRange(db, t, "default", 0, 20);
      absl::Status s = db.Flush();
      if (absl::IsUnimplemented(s)) return;
      ASSERT_OK(s);
      PutRange(db, t, "default", 10, 30);
      ASSERT_OK(t->Delete(db, "default", 2));
      ASSERT_OK(db.Flush());
    };
    c.call = [](DB& db, Tracker* t) { return t->NoEffect(db.Compact()); };
  }
  {
    // A fold at flush time (the memtable's few new ids are merged into each
    // shard's large segment, extending its graph, in the flush's one
    // manifest edit), and power lost at each of its steps.
    IoCase& c = add_merge("FlushFold");
    c.compaction.one_graph_max_vectors = 0;  // each shard merges its own
    c.setup = [](DB& db, Tracker* t) {
      PutRange(db, t, "default", 0, 60);
      ASSERT_OK(db.Flush());
      PutRange(db, t, "default", 60, 66);
    };
    c.call = [](DB& db, Tracker* t) {
      return FlushAndWaitFor(db, t, [](const ShardReport& s) { return s.segments == 1; });
    };
  }
  {
    // A fold in the background: a small bulk load's segments are merged
    // into the large ones after the call returns.
    IoCase& c = add_merge("BackgroundFold");
    c.compaction.one_graph_max_vectors = 0;  // each shard merges its own
    c.setup = [](DB& db, Tracker* t) {
      PutRange(db, t, "default", 0, 60);
      ASSERT_OK(db.Flush());
    };
    c.call = [](DB& db, Tracker* t) {
      std::vector<uint64_t> ids;
      std::vector<float> rows;
      for (uint64_t id = 60; id < 66; ++id) {
        ids.push_back(id);
        const std::vector<float> v = Vec(id * 7 + 1);
        rows.insert(rows.end(), v.begin(), v.end());
      }
      absl::Status s = t->PutBatch(db, "default", ids, rows, /*bulk=*/true);
      if (!s.ok()) return s;
      return FlushAndWaitFor(db, t, [](const ShardReport& s) { return s.segments == 1; });
    };
  }
  {
    // Consolidation: half of each shard's segment deleted; it is rewritten
    // without them (no fold or tier is due).
    IoCase& c = add_merge("BackgroundConsolidation");
    c.compaction.one_graph_max_vectors = 0;  // each shard merges its own
    c.compaction.fold_ratio = 1e9;
    c.compaction.quiescent_fold_ratio = 1e9;
    c.compaction.min_merge_width = 1000;
    c.compaction.consolidate_dead_fraction = 0.25;
    c.setup = [](DB& db, Tracker* t) {
      PutRange(db, t, "default", 0, 60);
      ASSERT_OK(db.Flush());
      for (uint64_t id = 0; id < 60; id += 2) ASSERT_OK(t->Delete(db, "default", id));
    };
    c.call = [](DB& db, Tracker* t) {
      return FlushAndWaitFor(db, t, [](const ShardReport& s) {
        return s.stored_vectors == s.live_vectors;
      });
    };
  }
  {
    // One graph while small: the shards' flushed segments folded into one
    // shared segment in the background, extending the shared graph the
    // setup's fold built.
    IoCase& c = add_merge("FoldAcrossShards");
    c.setup = [](DB& db, Tracker* t) {
      PutRange(db, t, "default", 0, 60);
      ASSERT_OK(db.Flush());
      ASSERT_OK(db.WaitForCompact());
    };
    c.call = [](DB& db, Tracker* t) {
      for (uint64_t id = 60; id < 66; ++id) {
        absl::Status s = t->Put(db, "default", id, Vec(id * 7 + 1));
        if (!s.ok()) return s;
      }
      absl::Status s = t->Delete(db, "default", 3);
      if (!s.ok()) return s;
      return FlushAndWaitFor(db, t, [](const ShardReport& s) {
        return s.segments == 1 && s.shared_segments.size() == 1;
      });
    };
  }
  {
    // A collection that grows past one graph: the shards merge their own
    // segments again (the background leaves the shared one as it is), and
    // Compact takes each shard's entries out of the shared segment, which
    // goes once none names it.
    IoCase& c = add_merge("GrowsPastOneGraph");
    c.compaction.one_graph_max_vectors = 40;
    c.compaction.min_merge_width = 2;  // any two segments of a shard merge
    c.compaction.size_ratio = 1e9;
    c.setup = [](DB& db, Tracker* t) {
      PutRange(db, t, "default", 0, 30);
      ASSERT_OK(db.Flush());
      ASSERT_OK(db.WaitForCompact());
    };
    c.call = [](DB& db, Tracker* t) {
      // The first flush still folds (the count passes the limit with it);
      // the next ones are each shard's own.
      for (uint64_t id = 30; id < 70; ++id) {
        absl::Status s = t->Put(db, "default", id, Vec(id * 7 + 1));
        if (!s.ok()) return s;
        if (id == 49 || id == 59) {
          s = t->NoEffect(db.Flush());
          if (!s.ok()) return s;
        }
      }
      absl::Status s = t->NoEffect(db.Compact());
      if (!s.ok()) return s;
      return FlushAndWaitFor(db, t, [](const ShardReport& s) {
        return s.segments == 1 && s.shared_segments.empty();
      });
    };
  }
  {
    IoCase& c = add("PutsWithBackgroundFlushes");
    c.memtable_bytes = 256;  // a freeze and a flush every few puts
    c.call = [](DB& db, Tracker* t) {
      for (uint64_t id = 0; id < 60; ++id) {
        absl::Status s = t->Put(db, "default", id % 25, Vec(id + 77));
        if (!s.ok()) return s;
      }
      return absl::OkStatus();
    };
    // The background flush publishes its manifest edit like Flush does.
  }
  {
    IoCase& c = add("Close");
    c.setup = [](DB& db, Tracker* t) { PutRange(db, t, "default", 0, 20); };
    c.call = [](DB& db, Tracker* t) { return t->NoEffect(db.Close()); };
  }
  {
    IoCase& c = add("PutsThatRotateTheLogKAlways");
    c.policy = FsyncPolicy::kAlways;
    c.wal_file_bytes = 256;
    c.call = [](DB& db, Tracker* t) {
      for (uint64_t id = 0; id < 16; ++id) {
        absl::Status s = t->Put(db, "default", id % 10, Vec(id));
        if (!s.ok()) return s;
      }
      return absl::OkStatus();
    };
  }
  // ---- Records: labels, attributes and payloads beside the vectors ----
  // Each mixes records with every part, with none, and with some, payloads
  // of 1 byte to a few KB (MakeRecord); a later put replaces a whole record.
  {
    // Puts of records one at a time, under kAlways: each put's log record
    // (and its commit log copy) carries the extras; then a record replaced
    // by one without parts, another by one with other parts, and a delete.
    IoCase& c = add("PutRecordsKAlways");
    c.policy = FsyncPolicy::kAlways;
    c.setup = [](DB& db, Tracker* t) { PutRecordRange(db, t, "default", 0, 6); };
    c.call = [](DB& db, Tracker* t) {
      for (const OwnedRecord& r : MakeRecords(100, 105, 0, kDefaultAttributes)) {
        absl::Status s = t->PutRecord(db, "default", r);
        if (!s.ok()) return s;
      }
      absl::Status s = t->PutRecord(db, "default", MakeRecord(2, 0, kDefaultAttributes));
      if (s.ok()) s = t->PutRecord(db, "default", MakeRecord(1, 4, kDefaultAttributes));
      if (s.ok()) s = t->Delete(db, "default", 4);
      return s;
    };
  }
  {
    // A batch of records over the three shards (one log record each, or a
    // commit log entry for them all), replacing some records of the setup.
    IoCase& c = add("PutBatchRecordsKAlways");
    c.policy = FsyncPolicy::kAlways;
    c.setup = [](DB& db, Tracker* t) { PutRecordRange(db, t, "default", 0, 8); };
    c.call = [](DB& db, Tracker* t) {
      return t->PutRecords(db, "default", MakeRecords(4, 20, 3, kDefaultAttributes));
    };
  }
  {
    // Batches whose payloads (3 KB each) make every shard's part larger
    // than a log file (wal_file_bytes is 4 KB): each part takes a file of its
    // own, and the commit log's copy of them all one too; the power goes
    // off at each step as well.
    IoCase& c = add("LargePayloadPutBatchRecordsKAlways");
    c.policy = FsyncPolicy::kAlways;
    c.power_loss = true;
    c.setup = [](DB& db, Tracker* t) { PutRecordRange(db, t, "default", 0, 4); };
    c.call = [](DB& db, Tracker* t) {
      absl::Status s = t->PutRecords(
          db, "default", MakeRecords(2, 14, 0, kDefaultAttributes, /*large_payload=*/3000));
      if (!s.ok()) return s;
      return t->PutRecords(db, "default",
                           MakeRecords(10, 22, 1, kDefaultAttributes, /*large_payload=*/3000));
    };
  }
  {
    // A bulk load of records: segments with record regions written
    // straight to disk, replacing records the log holds.
    IoCase& c = add("BulkLoadRecords");
    c.setup = [](DB& db, Tracker* t) { PutRecordRange(db, t, "default", 0, 10); };
    c.call = [](DB& db, Tracker* t) {
      return t->PutRecords(db, "default", MakeRecords(5, 40, 2, kDefaultAttributes),
                           /*bulk=*/true);
    };
  }
  {
    // A flush of memtables holding records (and a delete) into segments
    // with record regions, with the power going off at each step too.
    IoCase& c = add_merge("FlushRecords");
    c.compaction.automatic = false;  // the flush alone
    c.setup = [](DB& db, Tracker* t) {
      PutRecordRange(db, t, "default", 0, 30);
      ASSERT_OK(t->Delete(db, "default", 7));
    };
    c.call = [](DB& db, Tracker* t) { return t->NoEffect(db.Flush()); };
  }
  {
    // A merge (Compact) of segments holding records: records replaced by
    // others with other parts or none, a delete; the output's record
    // regions are built from its inputs'.
    IoCase& c = add_merge("CompactRecords");
    c.compaction.automatic = false;  // the flushes below stay segments for Compact
    c.setup = [](DB& db, Tracker* t) {
      PutRecordRange(db, t, "default", 0, 20);
      ASSERT_OK(db.Flush());
      PutRecordRange(db, t, "default", 10, 30, /*seed=*/1);
      ASSERT_OK(t->Delete(db, "default", 2));
      ASSERT_OK(db.Flush());
    };
    c.call = [](DB& db, Tracker* t) { return t->NoEffect(db.Compact()); };
  }
  {
    // Opening a database whose logs hold records (a torn tail after them)
    // and whose segments have record regions: the replay and the repairs
    // fail in turn.
    IoCase& c = add("OpenExistingRecords");
    c.setup = [](DB& db, Tracker* t) {
      PutRecordRange(db, t, "default", 0, 20);
      ASSERT_OK(db.Flush());
      PutRecordRange(db, t, "default", 10, 30, /*seed=*/1);
      ASSERT_OK(t->Delete(db, "default", 12));
    };
    c.damage = TearLastLog;
  }
  // The kAlways cases, and opening a database with a torn log tail, again
  // on a disk, through the direct-I/O log: its creation, header sync, block
  // writes, rotation and resume fail in turn.
  const size_t mapped_cases = cases.size();
  for (size_t i = 0; i < mapped_cases; ++i) {
    if (!cases[i].disk_variants) continue;
    if (cases[i].policy != FsyncPolicy::kAlways && !cases[i].name.starts_with("OpenExisting")) {
      continue;
    }
    IoCase c = cases[i];
    c.name += c.policy == FsyncPolicy::kAlways ? "OnDisk" : "KAlwaysOnDisk";
    c.policy = FsyncPolicy::kAlways;
    c.on_disk = true;
    cases.push_back(std::move(c));
  }
  // The disk cases once more with each shard syncing its own log (written
  // with direct I/O) instead of the collection's commit log.
  const size_t commit_log_cases = cases.size();
  for (size_t i = mapped_cases; i < commit_log_cases; ++i) {
    IoCase c = cases[i];
    c.name += "PerShardLog";
    c.commit_log = false;
    cases.push_back(std::move(c));
  }
  return cases;
}

// After a reopen: every segment file on disk is one the manifest names (a
// failed merge's output, a crash's half-written file are gone), and no
// temporary file is left.
::testing::AssertionResult NoFileLeaked(DB& db, const std::string& path) {
  absl::StatusOr<std::vector<CollectionReport>> stats = CollectStats(db);
  if (!stats.ok()) return ::testing::AssertionFailure() << stats.status();
  uint64_t named = 0;
  for (const CollectionReport& c : *stats) {
    // A shared segment is one file, however many shards name it.
    std::set<uint64_t> shared;
    for (const ShardReport& shard : c.shards) {
      named += shard.segments - shard.shared_segments.size();
      shared.insert(shard.shared_segments.begin(), shard.shared_segments.end());
    }
    named += shared.size();
  }
  uint64_t on_disk = 0;
  for (const auto& e : stdfs::recursive_directory_iterator(path)) {
    const std::string name = e.path().filename().string();
    uint64_t number;
    if (IsTempFileName(name)) {
      return ::testing::AssertionFailure() << "temporary file left: " << e.path();
    }
    if (ParseSegmentFileName(name, &number)) ++on_disk;
  }
  if (on_disk != named) {
    return ::testing::AssertionFailure()
           << on_disk << " segment files on disk, " << named << " named by the manifest";
  }
  return ::testing::AssertionSuccess();
}

struct LoopResult {
  uint64_t iterations = 0;
  uint64_t faults = 0;
  uint64_t errors_returned = 0;
  bool unimplemented = false;
  uint64_t direct_files = 0;  // opened with direct I/O, over all iterations
};

// One iteration: the Nth operation (of any kind) of the call fails. Returns
// whether the call hit the fault.
void RunOnce(const IoCase& c, uint64_t n, Mode mode, LoopResult* result, bool* hit) {
  const bool persistent = mode == Mode::kPersistent;
  TempDir dir(c.on_disk ? TempDir::Storage::kDisk : TempDir::Storage::kMemory);
  FaultInjectionFileSystem fs;
  Tracker tracker;
  const Options options = CaseOptions(c);
  const std::string path = dir.Sub("db");
  const std::string where = c.name + "/" + ModeName(mode) + " N=" + std::to_string(n);
  std::unique_ptr<DB> db;
  if (c.setup || c.call) {
    ASSERT_OK_AND_ASSIGN(db, test::OpenOnFileSystem(options, path, &fs));
    if (c.setup) c.setup(*db, &tracker);
    if (::testing::Test::HasFatalFailure()) return;
  }
  absl::Status status;
  uint64_t hits = 0;
  {
    Watchdog watchdog(where, std::chrono::seconds(60));
    if (!c.call) {
      if (db != nullptr) {
        ASSERT_OK(db->Close());
      }
      db.reset();
      if (c.damage) c.damage(path);
      fs.FailNth(FsOp::kAny, n, persistent);
      absl::StatusOr<std::unique_ptr<DB>> opened = test::OpenOnFileSystem(options, path, &fs);
      status = opened.status();
      if (opened.ok()) db = std::move(opened).value();
    } else if (mode == Mode::kPowerLoss) {
      fs.PowerOffAtNth(FsOp::kAny, n);
      status = c.call(*db, &tracker);
    } else {
      fs.FailNth(FsOp::kAny, n, persistent);
      status = c.call(*db, &tracker);
    }
    fs.ClearFaults();
    hits = fs.faults_injected();
    if (mode == Mode::kOnceThenDie) fs.FailNth(FsOp::kAny, 1, /*persistent=*/true);
  }
  *hit = hits > 0;
  if (!*hit && absl::IsUnimplemented(status)) {
    result->unimplemented = true;
    return;
  }
  if (!*hit) {
    ASSERT_OK(status) << where;
  }
  ++result->iterations;
  result->faults += hits;
  result->errors_returned += !status.ok();
  {
    Watchdog watchdog(where + ": writes after the fault, Close", std::chrono::seconds(60));
    if (db != nullptr && mode == Mode::kOnce) {
      // The DB either keeps working or keeps failing; what it acknowledges
      // now must survive too.
      // A record with every part, and a vector alone.
      (void)tracker.PutRecord(*db, "default", MakeRecord(9999, n * 5 + 2, kDefaultAttributes));
      (void)tracker.Put(*db, kOther, 9999, Vec(n + 1));
    }
    if (db != nullptr) (void)db->Close();
    db.reset();
  }
  fs.ClearFaults();
  if (mode == Mode::kPowerLoss && fs.powered_off()) {
    // What the disk holds after the crash: every unsynced byte and directory
    // entry gone.
    ASSERT_OK(fs.DropUnsyncedData()) << where;
  }
  Watchdog watchdog(where + ": reopen", std::chrono::seconds(60));
  Options reopen = options;
  reopen.create_if_missing = true;
  absl::StatusOr<std::unique_ptr<DB>> again = test::OpenOnFileSystem(reopen, path, &fs);
  ASSERT_OK(again) << where << " (status of the call: " << status << ")";
  EXPECT_TRUE(tracker.Check(**again)) << where << " (status of the call: " << status << ")";
  // Background work the reopen started (flushes, merges) writes files too.
  EXPECT_OK((*again)->WaitForCompact()) << where;
  EXPECT_TRUE(NoFileLeaked(**again, path)) << where;
  result->direct_files += fs.direct_files_opened();
}

// gtest prints parameters with these (instead of their bytes).
void PrintTo(const IoCase& c, std::ostream* os) { *os << c.name; }
void PrintTo(Mode m, std::ostream* os) { *os << ModeName(m); }

class IoErrorTest : public ::testing::TestWithParam<std::tuple<IoCase, Mode>> {};

TEST_P(IoErrorTest, EveryFailedOperationLeavesAcknowledgedWritesIntact) {
  const auto& [c, mode] = GetParam();
  LoopResult result;
  uint64_t n = 1;
  for (;; ++n) {
    bool hit = false;
    RunOnce(c, n, mode, &result, &hit);
    if (HasFatalFailure() || result.unimplemented || !hit) break;
    ASSERT_LT(n, 5000u) << "the call never completes without a fault";
  }
  if (result.unimplemented) {
    std::printf("[ SKIPPED  ] %s returns Unimplemented: add its faults once it exists\n",
                c.name.c_str());
    return;
  }
  if (HasFailure()) return;
  if (c.on_disk && result.direct_files == 0) {
    // The file system of TempDir's disk directory has no direct I/O: the
    // case ran on the mapped log, which the tmpfs cases cover already.
    GTEST_SKIP() << "no direct I/O in " << TempDir(TempDir::Storage::kDisk).path();
  }
  std::printf("%s/%s: %llu operations failed in turn, %llu faults injected, %llu errors "
              "returned, 0 acknowledged writes lost\n",
              c.name.c_str(), ModeName(mode), static_cast<unsigned long long>(n - 1),
              static_cast<unsigned long long>(result.faults),
              static_cast<unsigned long long>(result.errors_returned));
}

std::string CaseName(const ::testing::TestParamInfo<std::tuple<IoCase, Mode>>& info) {
  return std::get<0>(info.param).name + "_" + ModeName(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Calls, IoErrorTest,
                         ::testing::Combine(::testing::ValuesIn(Cases()),
                                            ::testing::Values(Mode::kOnce, Mode::kOnceThenDie,
                                                              Mode::kPersistent)),
                         CaseName);

std::vector<IoCase> PowerLossCases() {
  std::vector<IoCase> cases;
  for (const IoCase& c : Cases()) {
    if (c.power_loss) cases.push_back(c);
  }
  return cases;
}

// Power lost at each operation of the call in turn.
INSTANTIATE_TEST_SUITE_P(PowerLoss, IoErrorTest,
                         ::testing::Combine(::testing::ValuesIn(PowerLossCases()),
                                            ::testing::Values(Mode::kPowerLoss)),
                         CaseName);

// A write torn part-way (the manifest is the one file written with Append)
// never leaves a manifest that does not open.
TEST(IoErrorTornWriteTest, TornManifestWriteKeepsTheOldOrTheNewManifest) {
  for (size_t keep : {0, 1, 8, 20, 40}) {
    TempDir dir;
    FaultInjectionFileSystem fs;
    Options options = DefaultOptions(kDim, Metric::kL2, 2);
    options.worker_threads = 2;
    {
      ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(options, dir.path(), &fs));
      ASSERT_OK(db->Put(1, Vec(1)));
      fs.TearNthWrite(1, keep);
      CollectionOptions co;
      co.dim = kDim;
      co.shard_count = 1;
      EXPECT_FALSE(db->CreateCollection(kOther, co).ok()) << "keep " << keep;
      EXPECT_EQ(fs.faults_injected(), 1u);
      ASSERT_OK(db->Close());
    }
    ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(options, dir.path(), &fs));
    EXPECT_EQ(db->ListCollections(), std::vector<std::string>{"default"}) << "keep " << keep;
    EXPECT_OK(db->Get(1));
  }
}

}  // namespace
}  // namespace shoal::test
