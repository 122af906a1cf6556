// Copyright 2026 The shoal Authors.
//
// What a checkpoint costs concurrent writers (issue 46, item 1), in turns:
//   during  a checkpoint of the database (--to, e.g. on a disk) runs while
//           one writer PutBatch()es for as long as it takes: vectors/s;
//   alone   the same number of vectors PutBatch()ed with no checkpoint.
// The database is preloaded with --preload vectors (memtables only: the
// memtables are large enough that nothing flushes, so graph builds do not
// blur the figure), and grows by what each round writes; the copy is
// removed after each round.
//
//   ./build/bench/checkpoint_probe --dir /dev/shm/shoal-ckpt --to /var/tmp/shoal-ckpt \
//       --preload 400000 --rounds 3
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
ABSL_FLAG(size_t, preload, 400000, "vectors written before the rounds");
ABSL_FLAG(uint32_t, dim, 128, "floats a vector");
ABSL_FLAG(size_t, batch, 10000, "vectors a PutBatch");
ABSL_FLAG(int, rounds, 3, "rounds (during, then alone)");

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void Check(const absl::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string dir = absl::GetFlag(FLAGS_dir), to = absl::GetFlag(FLAGS_to);
  const uint32_t dim = absl::GetFlag(FLAGS_dim);
  const size_t batch = absl::GetFlag(FLAGS_batch);
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(to);
  shoal::Options options;
  options.memtable_bytes = size_t{4} << 30;  // nothing flushes
  options.wal_file_bytes = size_t{1} << 30;
  options.default_collection.dim = dim;
  options.default_collection.shard_count = 2;
  auto db = shoal::DB::Open(options, dir);
  Check(db.status(), "open");

  std::vector<float> rows(batch * dim);
  std::mt19937 rng(1);
  for (float& x : rows) x = std::uniform_real_distribution<float>(0, 1)(rng);
  std::vector<uint64_t> ids(batch);
  uint64_t next_id = 0;
  auto put_batch = [&] {
    for (uint64_t& id : ids) id = next_id++;
    Check((*db)->PutBatch(ids, rows), "PutBatch");
  };
  while (next_id < absl::GetFlag(FLAGS_preload)) put_batch();

  std::printf("round,checkpoint_s,vectors,during_per_s,alone_per_s,ratio\n");
  for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
    std::atomic<bool> done{false};
    double checkpoint_s = 0;
    const Clock::time_point start = Clock::now();
    std::thread checkpoint([&] {
      Check((*db)->Checkpoint(to), "Checkpoint");
      checkpoint_s = Seconds(start, Clock::now());
      done.store(true);
    });
    uint64_t written = 0;
    while (!done.load()) {
      put_batch();
      written += batch;
    }
    const double during_s = Seconds(start, Clock::now());
    checkpoint.join();
    std::filesystem::remove_all(to);

    const Clock::time_point alone_start = Clock::now();
    for (uint64_t w = 0; w < written; w += batch) put_batch();
    const double alone_s = Seconds(alone_start, Clock::now());
    const double during = written / during_s, alone = written / alone_s;
    std::printf("%d,%.3f,%llu,%.0f,%.0f,%.3f\n", round, checkpoint_s,
                static_cast<unsigned long long>(written), during, alone, during / alone);
    std::fflush(stdout);
  }
  Check((*db)->Close(), "close");
  std::filesystem::remove_all(dir);
  return 0;
}
