// Copyright 2026 The shoal Authors.
//
// Everything at once, for ThreadSanitizer (scripts/test.sh runs this under
// TSan) and for the sanitizers of the default suite: writers (Put, PutBatch,
// Delete), searchers (Search, SearchBatch, Get), a thread that creates,
// fills and drops collections while another writes into them, and a thread
// that calls Flush and Compact, all on one DB; between phases the DB is
// closed and reopened, and every acknowledged write of the default
// collection is checked. Small memtables make background flushes run during
// all of it.

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "testutil/temp_dir.h"

namespace shoal::test {
namespace {

constexpr uint32_t kDim = 8;
constexpr int kWriters = 3;
constexpr uint64_t kIdsPerWriter = 400;

// Statuses a call may return while collections come and go or the DB flushes.
bool Tolerated(const absl::Status& s) {
  return s.ok() || absl::IsNotFound(s) || absl::IsFailedPrecondition(s) ||
         absl::IsUnimplemented(s) || absl::IsAlreadyExists(s);
}

class Stress {
 public:
  Stress(DB* db, uint64_t seed) : db_(db), seed_(seed) {}

  // Runs every thread for `duration`; returns the first unexpected status.
  std::string Run(std::chrono::milliseconds duration) {
    std::vector<std::thread> threads;
    for (int w = 0; w < kWriters; ++w) threads.emplace_back([this, w] { Writer(w); });
    for (int s = 0; s < 2; ++s) threads.emplace_back([this, s] { Searcher(s); });
    threads.emplace_back([this] { Churner(); });
    threads.emplace_back([this] { ChurnWriter(); });
    threads.emplace_back([this] { Flusher(); });
    std::this_thread::sleep_for(duration);
    stop_ = true;
    for (auto& t : threads) t.join();
    stop_ = false;
    return error_;
  }

  // The last acknowledged write of each id the writers touched: a vector, or
  // nullopt for a delete.
  const std::map<uint64_t, std::optional<std::vector<float>>>& touched() const {
    return touched_;
  }
  uint64_t ops() const { return ops_.load(); }

 private:
  void Fail(const std::string& what, const absl::Status& s) {
    std::lock_guard<std::mutex> lock(error_mu_);
    if (error_.empty()) error_ = what + " -> " + s.ToString();
  }

  void Writer(int w) {
    std::mt19937_64 rng(seed_ * 31 + w);
    const uint64_t base = w * kIdsPerWriter;
    while (!stop_) {
      const uint64_t dice = rng() % 10;
      if (dice < 5) {
        const uint64_t id = base + rng() % kIdsPerWriter;
        std::vector<float> v = RandomVector(kDim, rng());
        absl::Status s = db_->Put(id, v);
        if (!s.ok()) return Fail("Put", s);
        Record(id, std::move(v));
      } else if (dice < 8) {
        std::vector<uint64_t> ids;
        std::vector<float> rows;
        for (int i = 0, n = 1 + static_cast<int>(rng() % 32); i < n; ++i) {
          ids.push_back(base + rng() % kIdsPerWriter);
          std::vector<float> v = RandomVector(kDim, rng());
          rows.insert(rows.end(), v.begin(), v.end());
        }
        absl::Status s = db_->PutBatch(ids, rows);
        if (!s.ok()) return Fail("PutBatch", s);
        for (size_t i = 0; i < ids.size(); ++i) {
          Record(ids[i], std::vector<float>(rows.begin() + i * kDim, rows.begin() + (i + 1) * kDim));
        }
      } else {
        const uint64_t id = base + rng() % kIdsPerWriter;
        absl::Status s = db_->Delete(id);
        if (!s.ok()) return Fail("Delete", s);
        Record(id, {});
      }
      ++ops_;
    }
  }

  void Record(uint64_t id, std::vector<float> v) {
    std::lock_guard<std::mutex> lock(model_mu_);
    if (v.empty()) {
      touched_[id] = std::nullopt;
    } else {
      touched_[id] = std::move(v);
    }
  }

  void Searcher(int s) {
    std::mt19937_64 rng(seed_ * 77 + s);
    while (!stop_) {
      SearchOptions so;
      so.k = 1 + static_cast<uint32_t>(rng() % 20);
      so.list_size = std::max<uint32_t>(so.k, 32);
      const std::string collection = rng() % 4 == 0 ? CurrentChurn() : "default";
      absl::StatusOr<std::vector<Neighbor>> r =
          db_->Search(collection, RandomVector(kDim, rng()), so);
      if (!Tolerated(r.status())) return Fail("Search", r.status());
      if (r.ok() && !IsSortedTopK(*r, so.k)) return Fail("Search order", absl::InternalError(""));
      const std::vector<float> queries = RandomVectors(4, kDim, rng());
      absl::StatusOr<std::vector<std::vector<Neighbor>>> batch =
          db_->SearchBatch(collection, queries, so);
      if (!Tolerated(batch.status())) return Fail("SearchBatch", batch.status());
      absl::StatusOr<std::vector<float>> got = db_->Get(rng() % (kWriters * kIdsPerWriter));
      if (!Tolerated(got.status())) return Fail("Get", got.status());
      ++ops_;
    }
  }

  std::string CurrentChurn() {
    std::lock_guard<std::mutex> lock(churn_mu_);
    return churn_;
  }

  // Creates a collection, lets it fill, drops it; again.
  void Churner() {
    std::mt19937_64 rng(seed_ * 13);
    for (int i = 0; !stop_; ++i) {
      const std::string name = "churn-" + std::to_string(i % 3);
      CollectionOptions co;
      co.dim = kDim;
      co.shard_count = 1 + static_cast<uint32_t>(rng() % 3);
      absl::Status s = db_->CreateCollection(name, co);
      if (!Tolerated(s)) return Fail("CreateCollection", s);
      {
        std::lock_guard<std::mutex> lock(churn_mu_);
        churn_ = name;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 20));
      s = db_->DropCollection(name);
      if (!Tolerated(s)) return Fail("DropCollection", s);
      ++ops_;
    }
  }

  // Writes into whatever collection the churner made last, racing its drop.
  void ChurnWriter() {
    std::mt19937_64 rng(seed_ * 17);
    while (!stop_) {
      const std::string name = CurrentChurn();
      if (name.empty()) {
        std::this_thread::yield();
        continue;
      }
      absl::Status s = db_->Put(name, rng() % 1000, RandomVector(kDim, rng()));
      if (!Tolerated(s)) return Fail("Put to a churning collection", s);
      if (rng() % 8 == 0) {
        s = db_->Delete(name, rng() % 1000);
        if (!Tolerated(s)) return Fail("Delete in a churning collection", s);
      }
      ++ops_;
    }
  }

  void Flusher() {
    std::mt19937_64 rng(seed_ * 19);
    while (!stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng() % 30));
      absl::Status s = rng() % 4 == 0 ? db_->Compact() : db_->Flush();
      if (!Tolerated(s)) return Fail("Flush/Compact", s);
      ++ops_;
    }
  }

  DB* const db_;
  const uint64_t seed_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> ops_{0};
  std::mutex error_mu_;
  std::string error_;
  std::mutex model_mu_;
  std::map<uint64_t, std::optional<std::vector<float>>> touched_;
  std::mutex churn_mu_;
  std::string churn_;
};

TEST(StressTest, EverythingAtOnceWithCloseAndReopenBetweenPhases) {
  TempDir dir;
  VectorMap carried;  // what the default collection held after the last phase
  uint64_t total_ops = 0;
  const FsyncPolicy policies[] = {FsyncPolicy::kNever, FsyncPolicy::kAlways,
                                  FsyncPolicy::kInterval, FsyncPolicy::kNever};
  for (int phase = 0; phase < 4; ++phase) {
    Options o = DefaultOptions(kDim, Metric::kL2, /*shard_count=*/3);
    o.fsync = policies[phase];
    o.sync_interval_us = 2000;
    o.memtable_bytes = 16 << 10;  // background flushes during the phase
    o.wal_file_bytes = 4 << 10;  // rotations race the flushes that delete old logs
    o.default_collection.graph.max_degree = 16;
    o.default_collection.graph.build_list_size = 32;
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
    ASSERT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, carried)) << "phase " << phase;
    Stress stress(db.get(), 1000 + phase);
    const std::string error = stress.Run(std::chrono::milliseconds(1500));
    ASSERT_EQ(error, "") << "phase " << phase;
    std::vector<uint64_t> deleted;
    for (const auto& [id, v] : stress.touched()) {
      if (v.has_value()) {
        carried[id] = *v;
      } else {
        carried.erase(id);
        deleted.push_back(id);
      }
    }
    ASSERT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, carried, deleted))
        << "phase " << phase;
    ASSERT_OK(db->Close());
    total_ops += stress.ops();
  }
  Options o = DefaultOptions(kDim, Metric::kL2, 3);
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, carried));
  EXPECT_GT(total_ops, 1000u);
}

// A BulkLoad takes its sequence S (freezing the memtable), then builds its
// segments; meanwhile writes after S may be flushed into segments. A
// Compact() that merged those with older segments would make one segment
// whose range reaches past S (or past a frozen memtable), and the bulk
// segment, installed later, would rank below it: older versions would win
// over the bulk-loaded vectors (no crash needed). Compaction merges only the
// segments older than every bulk part in flight and every memtable.
TEST(StressTest, CompactionDuringBulkLoadsKeepsTheNewestVersion) {
  for (int round = 0; round < 10; ++round) {
    TempDir dir;
    Options o = DefaultOptions(kDim, Metric::kL2, /*shard_count=*/2);
    o.memtable_bytes = 16 << 10;
    o.default_collection.graph.max_degree = 16;
    o.default_collection.graph.build_list_size = 32;
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
    std::atomic<bool> stop{false};
    std::vector<VectorMap> models(2);
    std::vector<std::thread> threads;
    for (int w = 0; w < 2; ++w) {
      threads.emplace_back([&, w] {
        std::mt19937_64 rng(round * 10 + w);
        while (!stop) {
          std::vector<uint64_t> ids;
          std::vector<float> rows;
          for (int i = 0, n = 1 + static_cast<int>(rng() % 32); i < n; ++i) {
            ids.push_back(w * 1000 + rng() % 200);
            std::vector<float> v = RandomVector(kDim, rng());
            rows.insert(rows.end(), v.begin(), v.end());
          }
          const bool bulk = rng() % 8 == 0;
          absl::Status s = bulk ? db->BulkLoad(ids, rows) : db->PutBatch(ids, rows);
          if (!s.ok()) return;
          for (size_t i = 0; i < ids.size(); ++i) {
            models[w][ids[i]] = std::vector<float>(rows.begin() + i * kDim,
                                                   rows.begin() + (i + 1) * kDim);
          }
        }
      });
    }
    threads.emplace_back([&] {
      while (!stop) (void)db->Compact();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
    for (auto& t : threads) t.join();
    for (const VectorMap& m : models) {
      ASSERT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, m)) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace shoal::test
