// Copyright 2026 The shoal Authors.

#include "crash/workload.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "testutil/temp_dir.h"
#include "db/inspect.h"
#include "util/hash.h"
#include "util/status_macros.h"
#include "version/filename.h"

namespace shoal::crash {

ScratchDir::ScratchDir(const std::string& root) {
  std::string tmpl = (!root.empty()                   ? root
                      : access("/dev/shm", W_OK) == 0 ? std::string("/dev/shm")
                                                      : std::string("/tmp")) +
                     std::string("/shoal_crash_XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    std::exit(2);
  }
  path_ = tmpl;
}

ScratchDir::~ScratchDir() {
  if (keep_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Options MakeOptions(const DbShape& shape, FsyncPolicy policy) {
  Options o;
  o.default_collection.dim = shape.dim;
  o.default_collection.metric = Metric::kL2;
  o.default_collection.shard_count = shape.shards;
  o.default_collection.graph.max_degree = 16;  // small graphs: quick flushes
  o.default_collection.graph.build_list_size = 32;
  for (uint32_t a = 0; a < kAttributeCount; ++a) {
    o.default_collection.attributes.push_back(absl::StrCat("a", a));
  }
  o.fsync = policy;
  o.sync_interval_us = 10000;
  o.wal_file_bytes = shape.wal_file_bytes;
  o.memtable_bytes = shape.memtable_bytes;
  o.arena_block_bytes = 64 << 10;
  o.worker_threads = 2;
  return o;
}

const char* PolicyName(FsyncPolicy policy) {
  switch (policy) {
    case FsyncPolicy::kNever: return "kNever";
    case FsyncPolicy::kAlways: return "kAlways";
    case FsyncPolicy::kInterval: return "kInterval";
  }
  return "?";
}

Op MakeOp(int thread, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Op op;
  const uint64_t base = static_cast<uint64_t>(thread) * kIdsPerThread;
  const uint64_t dice = rng() % 100;
  size_t n = 1;
  if (dice < 45) {
    op.kind = OpKind::kPut;
  } else if (dice < 63) {
    op.kind = OpKind::kDelete;
  } else if (dice < 95) {
    op.kind = OpKind::kBatch;
    n = 1 + rng() % 64;
  } else if (dice < 96) {
    // Large enough (at dim 64) for the pool to write the shards' parts
    // through the log files rather than through their mappings.
    op.kind = OpKind::kBatch;
    n = 1024 + rng() % 1024;
  } else {
    op.kind = OpKind::kBulkLoad;
    n = 1 + rng() % 64;
  }
  for (size_t i = 0; i < n; ++i) {
    op.ids.push_back(base + rng() % kIdsPerThread);
    if (op.kind != OpKind::kDelete) op.value_seeds.push_back(rng());
  }
  op.records = op.kind != OpKind::kDelete && rng() % 2 == 0;
  return op;
}

RecordValue MakeRecordValue(uint32_t dim, uint64_t value_seed, bool with_parts) {
  RecordValue r;
  r.vector = Value(dim, value_seed);
  if (!with_parts) return r;
  std::mt19937_64 rng(value_seed ^ 0x9e3779b97f4a7c15ull);
  if (rng() % 4 == 0) return r;  // a record without parts
  const size_t labels = rng() % 9;
  for (size_t i = 0; i < labels; ++i) r.labels.push_back(static_cast<uint32_t>(rng() % 1000));
  std::sort(r.labels.begin(), r.labels.end());
  r.labels.erase(std::unique(r.labels.begin(), r.labels.end()), r.labels.end());
  for (uint32_t a = 0; a < kAttributeCount; ++a) {
    if (rng() % 3 != 0) r.attributes.push_back({a, static_cast<int64_t>(rng())});
  }
  const size_t payload = rng() % 50 == 0 ? (100 << 10) : rng() % 3000;
  r.payload.resize(payload);
  for (char& c : r.payload) c = static_cast<char>(rng());
  return r;
}

uint64_t RecordHash(std::span<const float> vector, std::span<const uint32_t> labels,
                    std::span<const AttributeValue> attributes, std::string_view payload) {
  std::string bytes(reinterpret_cast<const char*>(vector.data()), vector.size_bytes());
  auto put = [&](uint64_t v) { bytes.append(reinterpret_cast<const char*>(&v), 8); };
  put(labels.size());
  for (uint32_t l : labels) put(l);
  put(attributes.size());
  for (const AttributeValue& a : attributes) {
    put(a.attribute);
    put(static_cast<uint64_t>(a.value));
  }
  put(payload.size());
  bytes.append(payload);
  const uint64_t h = Checksum64(bytes.data(), bytes.size());
  return h == 0 ? 1 : h;
}

uint64_t ValueHash(uint32_t dim, uint64_t value_seed, bool with_parts) {
  const RecordValue r = MakeRecordValue(dim, value_seed, with_parts);
  return RecordHash(r.vector, r.labels, r.attributes, r.payload);
}

std::vector<float> Value(uint32_t dim, uint64_t value_seed) {
  return test::RandomVector(dim, value_seed);
}


absl::Status RunCompact(DB& db) { return db.Compact(); }

std::string CheckpointPath(const std::string& path, int slot) {
  return absl::StrCat(path, "-checkpoint-", slot);
}

absl::Status RunCheckpoint(DB& db, const std::string& path, int slot, FileSystem* fs) {
  const std::string to = CheckpointPath(path, slot);
  // The MANIFEST first: a kill in the middle of removing the rest must not
  // leave a directory that looks whole (CheckCheckpoint opens those).
  if (absl::Status s = fs->RemoveFile(JoinPath(to, kManifestFile)); !s.ok() && !absl::IsNotFound(s)) {
    return s;
  }
  SHOAL_RETURN_IF_ERROR(fs->RemoveDirRecursive(to));
  SHOAL_RETURN_IF_ERROR(fs->RemoveDirRecursive(to + ".tmp"));
  return db.Checkpoint(to);
}

void AddPossible(const Effect& effect, const Model& before, Possible* possible) {
  for (const auto& [id, hash] : effect) {
    auto [it, added] = possible->try_emplace(id);
    if (added) it->second.insert(HashOf(before, id));
    it->second.insert(hash);
  }
}

absl::Status CheckCheckpoint(const std::string& path, const Options& options, uint32_t dim,
                             const Model& before, const Possible& possible, uint64_t seed,
                             uint64_t* found) {
  FileSystem* fs = options.file_system != nullptr ? options.file_system : FileSystem::Default();
  for (int slot = 0; slot < kCheckpointSlots; ++slot) {
    const std::string copy = CheckpointPath(path, slot);
    if (fs->Exists(JoinPath(copy, kManifestFile))) {
      ++*found;
      Options o = options;
      o.create_if_missing = false;
      absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(o, copy);
      if (!db.ok()) {
        return absl::InternalError(absl::StrCat("checkpoint ", copy, " does not open: ",
                                                db.status().ToString()));
      }
      SHOAL_ASSIGN_OR_RETURN(Model observed, Observe(**db, dim, seed));
      for (uint64_t id = 0; id < kFirstUnusedId; ++id) {
        const uint64_t h = HashOf(observed, id);
        auto it = possible.find(id);
        const bool ok = it == possible.end() ? h == HashOf(before, id) : it->second.contains(h);
        if (!ok) {
          return absl::InternalError(absl::StrCat("checkpoint ", copy, ": id ", id,
                                                  " holds a value it never held in the cycle (",
                                                  h == 0 ? "absent" : "present", ")"));
        }
      }
      SHOAL_RETURN_IF_ERROR((*db)->Close());
    }
    SHOAL_RETURN_IF_ERROR(fs->RemoveDirRecursive(copy));
    SHOAL_RETURN_IF_ERROR(fs->RemoveDirRecursive(copy + ".tmp"));
  }
  return fs->SyncDir(std::filesystem::path(path).parent_path().string());
}

absl::Status RunOp(DB& db, const Op& op, uint32_t dim) {
  switch (op.kind) {
    case OpKind::kPut:
      if (op.records) {
        const RecordValue r = MakeRecordValue(dim, op.value_seeds[0], true);
        return db.Put(r.View(op.ids[0]));
      }
      return db.Put(op.ids[0], Value(dim, op.value_seeds[0]));
    case OpKind::kDelete:
      return db.Delete(op.ids[0]);
    case OpKind::kBatch:
    case OpKind::kBulkLoad: {
      if (op.records) {
        std::vector<RecordValue> values;
        values.reserve(op.ids.size());
        std::vector<Record> records;
        for (size_t i = 0; i < op.ids.size(); ++i) {
          values.push_back(MakeRecordValue(dim, op.value_seeds[i], true));
        }
        for (size_t i = 0; i < op.ids.size(); ++i) records.push_back(values[i].View(op.ids[i]));
        if (op.kind == OpKind::kBatch) return db.PutBatch(records);
        return db.BulkLoad(records);
      }
      std::vector<float> rows;
      rows.reserve(op.ids.size() * dim);
      for (uint64_t s : op.value_seeds) {
        std::vector<float> v = Value(dim, s);
        rows.insert(rows.end(), v.begin(), v.end());
      }
      if (op.kind == OpKind::kBatch) return db.PutBatch(op.ids, rows);
      return db.BulkLoad(op.ids, rows);
    }
  }
  return absl::InternalError("unknown op");
}

std::map<uint32_t, Effect> EffectsByShard(const Op& op, uint32_t dim, uint32_t shards) {
  std::map<uint32_t, Effect> out;
  for (size_t i = 0; i < op.ids.size(); ++i) {
    const uint64_t h =
        op.kind == OpKind::kDelete ? 0 : ValueHash(dim, op.value_seeds[i], op.records);
    out[ShardOf(op.ids[i], shards)][op.ids[i]] = h;  // later copies overwrite
  }
  return out;
}

void Apply(const Effect& effect, Model* model) {
  for (const auto& [id, h] : effect) {
    if (h == 0) {
      model->erase(id);
    } else {
      (*model)[id] = h;
    }
  }
}

int SegmentWritesInProgress(const std::string& path) {
  int writing = 0;
  std::error_code ec;
  for (std::filesystem::recursive_directory_iterator it(path, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    uint64_t number;
    writing += IsTempFileName(name) &&
               ParseSegmentFileName(name.substr(0, name.size() - kTempSuffix.size()), &number);
  }
  return writing;
}

absl::Status CheckNoFileLeaked(DB& db, const std::string& path) {
  SHOAL_RETURN_IF_ERROR(db.WaitForCompact());
  SHOAL_ASSIGN_OR_RETURN(std::vector<CollectionReport> stats, CollectStats(db));
  uint64_t named = 0;
  for (const CollectionReport& c : stats) {
    // A shared segment is one file, however many shards name it.
    std::set<uint64_t> shared;
    for (const ShardReport& shard : c.shards) {
      named += shard.segments - shard.shared_segments.size();
      shared.insert(shard.shared_segments.begin(), shard.shared_segments.end());
    }
    named += shared.size();
  }
  uint64_t on_disk = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(path)) {
    const std::string name = e.path().filename().string();
    uint64_t number;
    if (IsTempFileName(name)) {
      return absl::InternalError(absl::StrCat("temporary file left: ", e.path().string()));
    }
    on_disk += ParseSegmentFileName(name, &number);
  }
  if (on_disk != named) {
    return absl::InternalError(absl::StrCat(on_disk, " segment files in ", path, ", ", named,
                                            " named by the manifest"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Model> Observe(DB& db, uint32_t dim, uint64_t seed) {
  Model observed;
  for (uint64_t id = 0; id < kFirstUnusedId; ++id) {
    absl::StatusOr<RecordData> r = db.GetRecord(id);
    if (r.ok()) {
      if (r->vector.size() != dim) {
        return absl::InternalError(
            absl::StrCat("GetRecord(", id, ") has ", r->vector.size(), " floats"));
      }
      observed[id] = RecordHash(r->vector, r->labels, r->attributes, r->payload);
    } else if (!absl::IsNotFound(r.status())) {
      return absl::InternalError(
          absl::StrCat("GetRecord(", id, ") -> ", r.status().ToString()));
    }
  }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 32; ++i) {
    const uint64_t id = kFirstUnusedId + rng() % (uint64_t{1} << 40);
    absl::StatusOr<std::vector<float>> v = db.Get(id);
    if (!absl::IsNotFound(v.status())) {
      return absl::InternalError(absl::StrCat("never-written id ", id, " -> ",
                                              v.status().ToString()));
    }
  }
  for (int q = 0; q < 3; ++q) {
    SearchOptions so;
    so.k = 1 + static_cast<uint32_t>(rng() % 64);
    so.list_size = std::max<uint32_t>(so.k, 64);
    absl::StatusOr<std::vector<Neighbor>> found = db.Search(Value(dim, rng()), so);
    if (!found.ok()) return absl::InternalError(absl::StrCat("Search -> ", found.status().ToString()));
    std::set<uint64_t> seen;
    for (size_t i = 0; i < found->size(); ++i) {
      const Neighbor& n = (*found)[i];
      if (!observed.contains(n.id)) {
        return absl::InternalError(absl::StrCat("Search returned id ", n.id,
                                                ", which Get does not find"));
      }
      if (!seen.insert(n.id).second) {
        return absl::InternalError(absl::StrCat("Search returned id ", n.id, " twice"));
      }
      if (i > 0 && (*found)[i - 1].distance > n.distance) {
        return absl::InternalError("Search results are not sorted by distance");
      }
    }
    if (found->size() > so.k) return absl::InternalError("Search returned more than k");
  }
  return observed;
}

}  // namespace shoal::crash
