// Copyright 2026 The shoal Authors.
//
// The kill -9 loop. Protocol, child to parent, one 16-byte message per event
// (atomic on a pipe): {thread, phase, seed}, phase 0 = about to run the op
// made from (thread, seed), 1 = it returned OK. Per thread the parent knows
// the acknowledged ops in order and at most one in flight; the in-flight one
// may have happened, on each shard independently.

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "crash/loops.h"

namespace shoal::crash {
namespace {

struct Msg {
  uint32_t thread;
  uint32_t phase;
  uint64_t seed;
};
static_assert(sizeof(Msg) == 16);

struct ThreadLog {
  std::vector<uint64_t> acked;        // seeds, in order
  std::optional<uint64_t> in_flight;  // intent without acknowledgement
};

[[noreturn]] void ChildMain(const std::string& path, const DbShape& shape, FsyncPolicy policy,
                            int threads, uint64_t seed, int fd) {
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(MakeOptions(shape, policy), path);
  if (!db.ok()) {
    std::fprintf(stderr, "child: Open -> %s\n", db.status().ToString().c_str());
    _exit(3);
  }
  std::vector<std::thread> writers;
  if (seed % 3 == 0) {
    // A third of the children checkpoint without a pause beside the
    // writers, so that kills land inside checkpoints.
    writers.emplace_back([&] {
      for (int slot = 0;; slot = 1 - slot) {
        absl::Status s = RunCheckpoint(**db, path, slot, FileSystem::Default());
        if (!s.ok()) {
          std::fprintf(stderr, "child: Checkpoint -> %s\n", s.ToString().c_str());
          _exit(4);
        }
      }
    });
  }
  for (int t = 0; t < threads; ++t) {
    writers.emplace_back([&, t] {
      std::mt19937_64 rng(seed ^ (0x9E3779B97F4A7C15ull * (t + 1)));
      for (uint64_t i = 0;; ++i) {
        if (t == 0 && i % 97 == 96) {
          // Flush (now and then Compact or Checkpoint) while others write:
          // a kill may land inside a segment build, a manifest update or a
          // checkpoint's copy.
          const uint64_t pick = rng() % 10;
          absl::Status s = pick < 2 ? RunCompact(**db)
                           : pick < 4 && seed % 3 != 0
                               ? RunCheckpoint(**db, path, static_cast<int>(i % 2), FileSystem::Default())
                               : (*db)->Flush();
          if (!s.ok() && !absl::IsUnimplemented(s)) {
            std::fprintf(stderr, "child: Flush/Compact/Checkpoint -> %s\n",
                         s.ToString().c_str());
            _exit(4);
          }
          continue;
        }
        Msg m{static_cast<uint32_t>(t), 0, rng()};
        if (write(fd, &m, sizeof(m)) != sizeof(m)) _exit(5);
        absl::Status s = RunOp(**db, MakeOp(t, m.seed), shape.dim);
        if (!s.ok()) {
          std::fprintf(stderr, "child: op -> %s\n", s.ToString().c_str());
          _exit(4);
        }
        m.phase = 1;
        if (write(fd, &m, sizeof(m)) != sizeof(m)) _exit(5);
      }
    });
  }
  for (auto& w : writers) w.join();  // never: the parent kills us
  _exit(6);
}

// Reads what the child reported until `deadline`, then kills it and reads
// the rest. Returns the number of messages.
uint64_t CollectAndKill(pid_t pid, int fd, std::chrono::steady_clock::time_point deadline,
                        std::vector<ThreadLog>* logs) {
  std::vector<char> pending;
  uint64_t messages = 0;
  bool killed = false;
  char buf[1 << 14];
  while (true) {
    int timeout_ms = -1;
    if (!killed) {
      const auto left = deadline - std::chrono::steady_clock::now();
      timeout_ms = static_cast<int>(
          std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(left).count()));
      if (timeout_ms == 0) {
        kill(pid, SIGKILL);
        killed = true;
        continue;
      }
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) == 0) continue;
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: every writer is gone
    pending.insert(pending.end(), buf, buf + n);
    size_t used = 0;
    for (; used + sizeof(Msg) <= pending.size(); used += sizeof(Msg)) {
      Msg m;
      std::memcpy(&m, pending.data() + used, sizeof(m));
      ThreadLog& log = (*logs)[m.thread];
      if (m.phase == 0) {
        log.in_flight = m.seed;
      } else {
        log.acked.push_back(m.seed);
        log.in_flight.reset();
      }
      ++messages;
    }
    pending.erase(pending.begin(), pending.begin() + used);
  }
  if (!killed) kill(pid, SIGKILL);  // the child closed the pipe early (it failed)
  return messages;
}

}  // namespace

bool RunKillLoop(const LoopConfig& config, Figures* figures) {
  std::mt19937_64 rng(config.seed);
  std::unique_ptr<ScratchDir> dir;
  DbShape shape;
  Model model;
  // On a failure the directory stays for a post-mortem.
  auto keep = [&] {
    dir->Keep();
    return false;
  };
  for (uint64_t cycle = 0; cycle < config.cycles; ++cycle) {
    if (cycle % config.cycles_per_db == 0) {
      dir = std::make_unique<ScratchDir>(config.root);
      const uint32_t dims[] = {1, 3, 8, 17, 64};
      shape.dim = dims[rng() % 5];
      shape.shards = 1 + static_cast<uint32_t>(rng() % 4);
      shape.wal_file_bytes = size_t{4096} << (rng() % 7);         // 4 KiB .. 256 KiB
      const size_t memtables[] = {16 << 10, 256 << 10, 64 << 20};  // flushes, some, none
      shape.memtable_bytes = memtables[rng() % 3];
      model.clear();
    }
    const std::string path = dir->Sub("db");
    const FsyncPolicy policy = static_cast<FsyncPolicy>(rng() % 3);
    const int threads = 1 + static_cast<int>(rng() % kMaxThreads);
    const uint64_t child_seed = rng();
    // Mostly while writing; now and then during the child's recovery.
    const int delay_ms = rng() % 8 == 0 ? static_cast<int>(rng() % 5)
                                        : 3 + static_cast<int>(rng() % 40);

    int fds[2];
    if (pipe(fds) != 0) return keep();
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) return keep();
    if (pid == 0) {
      close(fds[0]);
      ChildMain(path, shape, policy, threads, child_seed, fds[1]);
    }
    close(fds[1]);
    std::vector<ThreadLog> logs(kMaxThreads);
    const uint64_t messages = CollectAndKill(
        pid, fds[0], std::chrono::steady_clock::now() + std::chrono::milliseconds(delay_ms), &logs);
    close(fds[0]);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    if (!WIFSIGNALED(wstatus) || WTERMSIG(wstatus) != SIGKILL) {
      std::fprintf(stderr, "kill loop: cycle %llu: the child failed (exit %d) in %s\n",
                   static_cast<unsigned long long>(cycle), WEXITSTATUS(wstatus), path.c_str());
      return keep();
    }

    // The oracle: acknowledged ops applied; in-flight ones per shard either way.
    struct Uncertain {
      Effect effect;  // one shard's part
      int thread;     // whose in-flight op it is
      bool whole;     // a BulkLoad: all of its parts or none
    };
    std::vector<Uncertain> uncertain;
    const Model before = model;
    Possible possible;  // what a checkpoint of the cycle may hold
    for (int t = 0; t < kMaxThreads; ++t) {
      for (uint64_t seed : logs[t].acked) {
        for (const auto& [shard, effect] :
             EffectsByShard(MakeOp(t, seed), shape.dim, shape.shards)) {
          AddPossible(effect, before, &possible);
          Apply(effect, &model);
        }
        ++figures->ops_acked;
        ++figures->required_checked;  // kill -9: every acknowledged op, any policy
      }
      if (logs[t].in_flight.has_value()) {
        ++figures->in_flight;
        const Op op = MakeOp(t, *logs[t].in_flight);
        for (auto& [shard, effect] : EffectsByShard(op, shape.dim, shape.shards)) {
          AddPossible(effect, before, &possible);
          uncertain.push_back({std::move(effect), t, op.kind == OpKind::kBulkLoad});
        }
      }
    }
    figures->cuts_mid_segment_write += SegmentWritesInProgress(path) > 0;
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(MakeOptions(shape, policy), path);
    if (!db.ok()) {
      std::fprintf(stderr, "kill loop: cycle %llu: reopen of %s -> %s\n",
                   static_cast<unsigned long long>(cycle), path.c_str(),
                   db.status().ToString().c_str());
      return keep();
    }
    absl::StatusOr<Model> observed = Observe(**db, shape.dim, rng());
    if (!observed.ok()) {
      std::fprintf(stderr, "kill loop: cycle %llu (%s): %s\n",
                   static_cast<unsigned long long>(cycle), path.c_str(),
                   observed.status().ToString().c_str());
      return keep();
    }
    std::set<uint64_t> uncertain_ids;
    std::set<int> applied;  // threads whose in-flight op is there (on some shard)
    std::set<int> bulk_applied, bulk_not_applied;
    for (const Uncertain& u : uncertain) {
      bool before = true, after = true;
      for (const auto& [id, h] : u.effect) {
        uncertain_ids.insert(id);
        before &= HashOf(*observed, id) == HashOf(model, id);
        after &= HashOf(*observed, id) == h;
      }
      // A BulkLoad publishes every shard's segment in one manifest write.
      if (u.whole && !after) bulk_not_applied.insert(u.thread);
      if (u.whole && !before) bulk_applied.insert(u.thread);
      if (!before && !after) {
        std::fprintf(stderr,
                     "kill loop: cycle %llu (%s, %s): the shard part of an in-flight op "
                     "is half applied\n",
                     static_cast<unsigned long long>(cycle), PolicyName(policy), path.c_str());
        return keep();
      }
      if (!before) applied.insert(u.thread);
    }
    for (int t : bulk_applied) {
      if (bulk_not_applied.contains(t)) {
        std::fprintf(stderr,
                     "kill loop: cycle %llu (%s): an in-flight BulkLoad is there on some "
                     "shards and not on others\n",
                     static_cast<unsigned long long>(cycle), path.c_str());
        return keep();
      }
    }
    figures->in_flight_applied += applied.size();
    for (uint64_t id = 0; id < kFirstUnusedId; ++id) {
      if (uncertain_ids.contains(id)) continue;
      if (HashOf(*observed, id) != HashOf(model, id)) {
        ++figures->lost;
        std::fprintf(stderr,
                     "kill loop: cycle %llu (%s, %d threads, dim %u, %u shards, %s): id %llu "
                     "is %s, the acknowledged history says %s\n",
                     static_cast<unsigned long long>(cycle), PolicyName(policy), threads,
                     shape.dim, shape.shards, path.c_str(), static_cast<unsigned long long>(id),
                     HashOf(*observed, id) == 0 ? "absent" : "present",
                     HashOf(model, id) == 0 ? "absent" : "present (another value)");
        return keep();
      }
    }
    model = std::move(observed).value();
    if (absl::Status s = CheckNoFileLeaked(**db, path); !s.ok()) {
      std::fprintf(stderr, "kill loop: cycle %llu: %s\n", static_cast<unsigned long long>(cycle),
                   s.ToString().c_str());
      return keep();
    }
    uint64_t checkpoints_found = 0;
    if (absl::Status s = CheckCheckpoint(path, MakeOptions(shape, policy), shape.dim, before,
                                         possible, rng(), &checkpoints_found);
        !s.ok()) {
      std::fprintf(stderr, "kill loop: cycle %llu (%s): %s\n",
                   static_cast<unsigned long long>(cycle), PolicyName(policy),
                   s.ToString().c_str());
      return keep();
    }
    figures->checkpoints += checkpoints_found;
    if (absl::Status s = (*db)->Close(); !s.ok()) {
      std::fprintf(stderr, "kill loop: Close -> %s\n", s.ToString().c_str());
      return keep();
    }
    ++figures->cycles;
    ++figures->cycles_by_policy[static_cast<int>(policy)];
    ++figures->faults;  // one kill
    figures->kills_before_first_write += messages == 0;
    if (config.verbose) {
      std::printf("kill cycle %llu: %s, %d threads, %llu messages\n",
                  static_cast<unsigned long long>(cycle), PolicyName(policy), threads,
                  static_cast<unsigned long long>(messages));
    }
  }
  return true;
}

}  // namespace shoal::crash
