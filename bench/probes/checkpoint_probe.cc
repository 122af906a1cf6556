// Copyright 2026 The shoal Authors.
//
// A checkpoint's speed against cp -r of the same files, and what it costs
// concurrent writers (issue 46, item 1). Each round, in turns:
//   cp      a checkpoint onto the database's own file system (--dir's: logs
//           copied, segments linked) gives exactly the files a checkpoint
//           writes; `cp -r` of them to --to's file system, then `sync`;
//   ckpt    DB::Checkpoint to --to with no writer;
//   during  DB::Checkpoint to --to while one writer PutBatch()es for as
//           long as it takes: the checkpoint's time and the writer's
//           vectors/s;
//   alone   the same number of vectors PutBatch()ed with no checkpoint.
// The database is preloaded with --bulk vectors by BulkLoad (segments) and
// --preload more by PutBatch (memtables, large enough that nothing flushes,
// so graph builds do not blur the figure), and grows by what each round
// writes; the copies are removed after each step.
//
//   ./build/bench/checkpoint_probe --dir /dev/shm/shoal-ckpt
//       --to /var/tmp/shoal-ckpt --preload 1000000 --rounds 3   (one line)
//
// Figures: docs/architecture.md ("Checkpoints").

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "shoal/db.h"

ABSL_FLAG(std::string, dir, "/dev/shm/shoal-ckpt", "the database (scratch)");
ABSL_FLAG(std::string, to, "/var/tmp/shoal-ckpt", "where the checkpoint goes (scratch)");
ABSL_FLAG(size_t, bulk, 0, "vectors bulk-loaded (segments) before the rounds");
ABSL_FLAG(size_t, preload, 400000, "vectors PutBatch()ed (memtables) before the rounds");
ABSL_FLAG(uint32_t, dim, 128, "floats a vector");
ABSL_FLAG(size_t, batch, 10000, "vectors a PutBatch");
ABSL_FLAG(int, rounds, 3, "rounds (during, then alone)");

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

uint64_t TreeBytes(const std::string& dir) {
  uint64_t bytes = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) bytes += e.file_size();
  }
  return bytes;
}

void Check(const absl::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

// The database of every phase: --bulk vectors bulk-loaded, then --preload
// PutBatch()ed, from scratch, so that each phase starts from the same state.
struct Loaded {
  std::unique_ptr<shoal::DB> db;
  uint64_t next_id = 0;
};

Loaded Load(const std::string& dir, const std::vector<float>& rows, size_t batch, uint32_t dim) {
  std::filesystem::remove_all(dir);
  shoal::Options options;
  options.memtable_bytes = size_t{4} << 30;  // nothing flushes
  options.wal_file_bytes = size_t{1} << 30;
  options.default_collection.dim = dim;
  options.default_collection.shard_count = 2;
  auto db = shoal::DB::Open(options, dir);
  Check(db.status(), "open");
  Loaded loaded{std::move(db).value(), 0};
  if (const size_t bulk = absl::GetFlag(FLAGS_bulk); bulk > 0) {
    std::vector<uint64_t> ids(bulk);
    std::vector<float> bulk_rows(bulk * dim);
    std::mt19937 rng(2);
    for (float& x : bulk_rows) x = std::uniform_real_distribution<float>(0, 1)(rng);
    for (uint64_t& id : ids) id = loaded.next_id++;
    Check(loaded.db->BulkLoad(ids, bulk_rows), "BulkLoad");
  }
  const uint64_t end = loaded.next_id + absl::GetFlag(FLAGS_preload);
  std::vector<uint64_t> ids(batch);
  while (loaded.next_id < end) {
    for (uint64_t& id : ids) id = loaded.next_id++;
    Check(loaded.db->PutBatch(ids, rows), "PutBatch");
  }
  return loaded;
}

void RunSync() {
  Check(std::system("sync") == 0 ? absl::OkStatus() : absl::InternalError("sync"), "sync");
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string dir = absl::GetFlag(FLAGS_dir), to = absl::GetFlag(FLAGS_to);
  const uint32_t dim = absl::GetFlag(FLAGS_dim);
  const size_t batch = absl::GetFlag(FLAGS_batch);
  const std::string ref = dir + "-ref", cp_to = to + "-cp";
  std::filesystem::remove_all(to);
  std::vector<float> rows(batch * dim);
  std::mt19937 rng(1);
  for (float& x : rows) x = std::uniform_real_distribution<float>(0, 1)(rng);
  std::vector<uint64_t> ids(batch);

  std::printf(
      "round,bytes,cp_s,ckpt_s,during_ckpt_s,cp_over_ckpt,cp_over_during,vectors,during_per_s,"
      "alone_per_s,writer_ratio\n");
  for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
    Loaded l = Load(dir, rows, batch, dim);
    // cp -r of exactly the files a checkpoint writes.
    std::filesystem::remove_all(ref);
    Check(l.db->Checkpoint(ref), "Checkpoint (reference)");
    const uint64_t bytes = TreeBytes(ref);
    std::filesystem::remove_all(cp_to);
    RunSync();
    const Clock::time_point cp_start = Clock::now();
    const std::string cp = "cp -r '" + ref + "' '" + cp_to + "' && sync";
    Check(std::system(cp.c_str()) == 0 ? absl::OkStatus() : absl::InternalError(cp), "cp");
    const double cp_s = Seconds(cp_start, Clock::now());
    std::filesystem::remove_all(ref);
    std::filesystem::remove_all(cp_to);
    RunSync();

    const Clock::time_point ckpt_start = Clock::now();
    Check(l.db->Checkpoint(to), "Checkpoint (alone)");
    const double ckpt_s = Seconds(ckpt_start, Clock::now());
    std::filesystem::remove_all(to);
    RunSync();

    std::atomic<bool> done{false};
    double checkpoint_s = 0;
    const Clock::time_point start = Clock::now();
    std::thread checkpoint([&] {
      Check(l.db->Checkpoint(to), "Checkpoint");
      checkpoint_s = Seconds(start, Clock::now());
      done.store(true);
    });
    uint64_t written = 0;
    while (!done.load()) {
      for (uint64_t& id : ids) id = l.next_id++;
      Check(l.db->PutBatch(ids, rows), "PutBatch");
      written += batch;
    }
    const double during_s = Seconds(start, Clock::now());
    checkpoint.join();
    std::filesystem::remove_all(to);
    Check(l.db->Close(), "close");
    l.db.reset();
    RunSync();

    // The same writes on the same state, alone.
    l = Load(dir, rows, batch, dim);
    const Clock::time_point alone_start = Clock::now();
    for (uint64_t w = 0; w < written; w += batch) {
      for (uint64_t& id : ids) id = l.next_id++;
      Check(l.db->PutBatch(ids, rows), "PutBatch");
    }
    const double alone_s = Seconds(alone_start, Clock::now());
    Check(l.db->Close(), "close");
    l.db.reset();
    const double during = written / during_s, alone = written / alone_s;
    std::printf("%d,%llu,%.3f,%.3f,%.3f,%.3f,%.3f,%llu,%.0f,%.0f,%.3f\n", round,
                static_cast<unsigned long long>(bytes), cp_s, ckpt_s, checkpoint_s, cp_s / ckpt_s,
                cp_s / checkpoint_s, static_cast<unsigned long long>(written), during, alone,
                during / alone);
    std::fflush(stdout);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
