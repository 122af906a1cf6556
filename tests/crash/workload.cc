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
  return op;
}

std::vector<float> Value(uint32_t dim, uint64_t value_seed) {
  return test::RandomVector(dim, value_seed);
}

uint64_t ValueHash(std::span<const float> v) {
  const uint64_t h = Checksum64(v.data(), v.size_bytes());
  return h == 0 ? 1 : h;
}

absl::Status RunCompact(DB& db) { return db.Compact(); }

absl::Status RunOp(DB& db, const Op& op, uint32_t dim) {
  switch (op.kind) {
    case OpKind::kPut:
      return db.Put(op.ids[0], Value(dim, op.value_seeds[0]));
    case OpKind::kDelete:
      return db.Delete(op.ids[0]);
    case OpKind::kBatch:
    case OpKind::kBulkLoad: {
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
    const uint64_t h = op.kind == OpKind::kDelete ? 0 : ValueHash(Value(dim, op.value_seeds[i]));
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
    absl::StatusOr<std::vector<float>> v = db.Get(id);
    if (v.ok()) {
      if (v->size() != dim) {
        return absl::InternalError(absl::StrCat("Get(", id, ") has ", v->size(), " floats"));
      }
      observed[id] = ValueHash(*v);
    } else if (!absl::IsNotFound(v.status())) {
      return absl::InternalError(absl::StrCat("Get(", id, ") -> ", v.status().ToString()));
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
