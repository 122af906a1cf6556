// Copyright 2026 The shoal Authors.
//
// The power-loss loop (in-process, on the fault-injecting file system).
//
// Each writer thread records its operations with stamps from one global
// counter: `intent` before the call, `ack` after it returned OK. After the
// power cut and the reopen, for every (thread, shard) the state of the
// thread's ids on that shard must equal the result of some prefix of the
// thread's operations on that shard (the prefix lengths that fit form a set
// K, because an operation can leave the state as it was). Then:
//   - kAlways, or a clean Close before the cut: every acknowledged operation
//     is inside the prefix (max K >= acknowledged count);
//   - kInterval: every operation acknowledged more than kIntervalMargin
//     before the cut is inside it;
//   - every policy, across threads: a shard's log is one order, so if thread
//     B's operation number min(K_B) survived, every operation of thread A on
//     that shard acknowledged before B's began (ack < intent) survived too.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "crash/loops.h"
#include "testutil/fault_injection_fs.h"
#include "util/hash.h"

namespace shoal::crash {
namespace {

using Clock = std::chrono::steady_clock;
// Writes acknowledged this long before the cut must survive under kInterval
// (20 sync intervals of 10 ms: generous, so a loaded machine does not fail it).
constexpr auto kIntervalMargin = std::chrono::milliseconds(200);
constexpr uint64_t kNotAcked = ~uint64_t{0};

struct Rec {
  uint64_t seed = 0;
  uint64_t intent = 0;
  uint64_t ack = kNotAcked;
  Clock::time_point ack_time;
};

// Aborts with a message when a cycle hangs.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit) {
    thread_ = std::thread([this, limit] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
        std::fprintf(stderr, "power loop: HANG (a cycle took over %lld s)\n",
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
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

struct Cycle {
  uint64_t number;
  FsyncPolicy policy;
  bool clean_close;
  Clock::time_point cut;
};

// One (thread, shard) sequence: the thread's ops that touch the shard, with
// their effect there.
struct Entry {
  Effect effect;
  const Rec* rec;
};

// Whether the guarantees require `rec` to survive the cut of `c`.
bool MustSurvive(const Cycle& c, const Rec& rec) {
  if (rec.ack == kNotAcked) return false;
  return c.clean_close || c.policy == FsyncPolicy::kAlways ||
         (c.policy == FsyncPolicy::kInterval && rec.ack_time + kIntervalMargin < c.cut);
}

// For a post-mortem: the prefix that fits best, and the ids that differ there
// with the ops that touched them.
void Explain(int t, uint32_t s, uint32_t shards, const Model& model, const Model& observed,
             const std::vector<Entry>& entries) {
  const char* kinds[] = {"put", "delete", "batch", "bulk"};
  Model cur = model;
  size_t best_k = 0, best = ~size_t{0};
  std::vector<Model> states;  // too big for long runs; only on failure
  for (size_t k = 0; k <= entries.size(); ++k) {
    if (k > 0) Apply(entries[k - 1].effect, &cur);
    size_t mismatch = 0;
    for (uint64_t id = t * kIdsPerThread; id < (t + 1) * kIdsPerThread; ++id) {
      if (ShardOf(id, shards) == s && HashOf(observed, id) != HashOf(cur, id)) ++mismatch;
    }
    if (k + 8 > entries.size()) {
      std::fprintf(stderr, "  after %zu ops: %zu ids differ%s\n", k, mismatch,
                   k > 0 ? (std::string(" (last: ") +
                            kinds[static_cast<int>(MakeOp(t, entries[k - 1].rec->seed).kind)] +
                            (entries[k - 1].rec->ack == kNotAcked ? ", not acked)" : ")"))
                               .c_str()
                         : "");
    }
    if (mismatch < best) {
      best = mismatch;
      best_k = k;
    }
  }
  std::fprintf(stderr, "  best prefix: %zu ops, %zu ids differ there\n", best_k, best);
  cur = model;
  for (size_t k = 0; k < best_k; ++k) Apply(entries[k].effect, &cur);
  for (uint64_t id = t * kIdsPerThread; id < (t + 1) * kIdsPerThread; ++id) {
    if (ShardOf(id, shards) != s || HashOf(observed, id) == HashOf(cur, id)) continue;
    std::fprintf(stderr, "  id %llu: observed %016llx, prefix says %016llx, before the cycle %016llx\n",
                 static_cast<unsigned long long>(id),
                 static_cast<unsigned long long>(HashOf(observed, id)),
                 static_cast<unsigned long long>(HashOf(cur, id)),
                 static_cast<unsigned long long>(HashOf(model, id)));
    for (size_t k = 0; k < entries.size(); ++k) {
      auto it = entries[k].effect.find(id);
      if (it == entries[k].effect.end()) continue;
      const Op op = MakeOp(t, entries[k].rec->seed);
      std::fprintf(stderr, "    op %zu (%s%s): sets %016llx\n", k,
                   kinds[static_cast<int>(op.kind)],
                   entries[k].rec->ack == kNotAcked ? ", not acknowledged" : "",
                   static_cast<unsigned long long>(it->second));
    }
  }
}

// Checks `observed` against the logs; prints and returns false on a violation.
bool Verify(const Cycle& c, const DbShape& shape, const Model& model, const Model& observed,
            const std::vector<std::vector<Rec>>& logs, Figures* figures) {
  const uint32_t shards = shape.shards;
  // seq[t][s]
  std::vector<std::vector<std::vector<Entry>>> seq(kMaxThreads,
                                                   std::vector<std::vector<Entry>>(shards));
  for (int t = 0; t < kMaxThreads; ++t) {
    for (const Rec& r : logs[t]) {
      for (auto& [s, effect] : EffectsByShard(MakeOp(t, r.seed), shape.dim, shards)) {
        seq[t][s].push_back({std::move(effect), &r});
      }
    }
  }
  std::vector<std::vector<size_t>> min_k(kMaxThreads, std::vector<size_t>(shards));
  std::vector<std::vector<size_t>> max_k(kMaxThreads, std::vector<size_t>(shards));
  auto where = [&](int t, uint32_t s) {
    std::fprintf(stderr, "power loop: cycle %llu (%s%s, dim %u, %u shards), thread %d, shard %u: ",
                 static_cast<unsigned long long>(c.number), PolicyName(c.policy),
                 c.clean_close ? ", clean Close" : "", shape.dim, shape.shards, t, s);
  };
  for (int t = 0; t < kMaxThreads; ++t) {
    for (uint32_t s = 0; s < shards; ++s) {
      // Replay the sequence, counting the ids whose state differs from what
      // was observed; every point where none does is a prefix that fits.
      Model cur;  // overlay on `model`
      auto state = [&](uint64_t id) {
        auto it = cur.find(id);
        return it != cur.end() ? it->second : HashOf(model, id);
      };
      size_t mismatch = 0;
      for (uint64_t id = t * kIdsPerThread; id < (t + 1) * kIdsPerThread; ++id) {
        if (ShardOf(id, shards) == s && HashOf(observed, id) != HashOf(model, id)) ++mismatch;
      }
      std::vector<size_t> fits;
      if (mismatch == 0) fits.push_back(0);
      const std::vector<Entry>& entries = seq[t][s];
      for (size_t i = 0; i < entries.size(); ++i) {
        for (const auto& [id, h] : entries[i].effect) {
          const uint64_t want = HashOf(observed, id);
          const uint64_t old = state(id);
          if (old == want && h != want) ++mismatch;
          if (old != want && h == want) --mismatch;
          cur[id] = h;
        }
        if (mismatch == 0) fits.push_back(i + 1);
      }
      if (fits.empty()) {
        where(t, s);
        std::fprintf(stderr, "the state is no prefix of the shard's operations (%zu of them)\n",
                     entries.size());
        Explain(t, s, shards, model, observed, entries);
        return false;
      }
      min_k[t][s] = fits.front();
      max_k[t][s] = fits.back();
      size_t required = 0;
      for (const Entry& e : entries) required += MustSurvive(c, *e.rec);
      if (max_k[t][s] < required) {
        ++figures->lost;
        where(t, s);
        std::fprintf(stderr,
                     "only %zu of its operations survived, but %zu acknowledged ones had to\n",
                     max_k[t][s], required);
        return false;
      }
    }
  }
  for (const auto& log : logs) {
    for (const Rec& r : log) figures->required_checked += MustSurvive(c, r);
  }
  // Across threads: one log order per shard.
  for (uint32_t s = 0; s < shards; ++s) {
    for (int b = 0; b < kMaxThreads; ++b) {
      if (min_k[b][s] == 0) continue;
      const uint64_t survived_intent = seq[b][s][min_k[b][s] - 1].rec->intent;
      for (int a = 0; a < kMaxThreads; ++a) {
        if (a == b) continue;
        size_t before = 0;
        for (const Entry& e : seq[a][s]) before += e.rec->ack < survived_intent;
        if (before > max_k[a][s]) {
          ++figures->lost;
          where(a, s);
          std::fprintf(stderr,
                       "a hole: thread %d's operation %zu survived, yet %zu operations of "
                       "this thread acknowledged before it began did not all survive "
                       "(at most %zu did)\n",
                       b, min_k[b][s], before, max_k[a][s]);
          return false;
        }
      }
    }
  }
  return true;
}

}  // namespace

bool RunPowerLossLoop(const LoopConfig& config, Figures* figures) {
  std::mt19937_64 rng(config.seed);
  std::unique_ptr<ScratchDir> dir;
  std::unique_ptr<test::FaultInjectionFileSystem> fs;
  DbShape shape;
  Model model;
  auto keep = [&] {
    dir->Keep();
    return false;
  };
  for (uint64_t n = 0; n < config.cycles; ++n) {
    if (n % config.cycles_per_db == 0) {
      dir = std::make_unique<ScratchDir>(config.root);
      fs = std::make_unique<test::FaultInjectionFileSystem>();
      const uint32_t dims[] = {1, 3, 8, 17, 64};
      shape.dim = dims[rng() % 5];
      shape.shards = 1 + static_cast<uint32_t>(rng() % 4);
      shape.wal_file_bytes = size_t{4096} << (rng() % 5);         // 4 KiB .. 64 KiB
      const size_t memtables[] = {16 << 10, 256 << 10, 64 << 20};  // flushes, some, none
      shape.memtable_bytes = memtables[rng() % 3];
      model.clear();
    }
    Watchdog watchdog(std::chrono::seconds(120));
    const std::string path = dir->Sub("db");
    Cycle c{n, static_cast<FsyncPolicy>(rng() % 3), rng() % 5 == 0, {}};
    const int threads = 1 + static_cast<int>(rng() % kMaxThreads);
    const auto run = c.policy == FsyncPolicy::kInterval
                         ? std::chrono::milliseconds(250 + rng() % 200)
                         : std::chrono::milliseconds(5 + rng() % 60);
    const Options options = MakeOptions(shape, c.policy);

    absl::StatusOr<std::unique_ptr<DB>> db = test::OpenOnFileSystem(options, path, fs.get());
    if (!db.ok()) {
      std::fprintf(stderr, "power loop: cycle %llu: open of %s -> %s\n",
                   static_cast<unsigned long long>(n), path.c_str(),
                   db.status().ToString().c_str());
      return keep();
    }
    std::atomic<uint64_t> clock{1};
    std::atomic<bool> stop{false};
    std::mutex error_mu;
    std::string error;
    std::atomic<uint64_t> flushes{0};
    std::vector<std::vector<Rec>> logs(kMaxThreads);
    std::vector<std::thread> writers;
    auto fail = [&](const std::string& what, const absl::Status& s) {
      if (fs->powered_off()) return;  // expected once the power is off
      std::lock_guard<std::mutex> lock(error_mu);
      if (error.empty()) error = what + " -> " + s.ToString();
    };
    const uint64_t cycle_seed = rng();
    if (cycle_seed % 3 == 0) {
      // A third of the cycles checkpoint without a pause beside the
      // writers, so that cuts land inside checkpoints.
      writers.emplace_back([&] {
        for (int slot = 0; !stop.load(); slot = 1 - slot) {
          absl::Status s = RunCheckpoint(**db, path, slot, fs.get());
          if (!s.ok()) {
            fail("Checkpoint", s);
            break;
          }
        }
      });
    }
    for (int t = 0; t < threads; ++t) {
      writers.emplace_back([&, t] {
        std::mt19937_64 r(cycle_seed ^ (0x9E3779B97F4A7C15ull * (t + 1)));
        std::vector<Rec>& log = logs[t];
        for (uint64_t i = 0; !stop.load(); ++i) {
          if (t == 0 && i % 97 == 96) {
            const uint64_t pick = r() % 10;
            if (pick >= 2 && pick < 4 && cycle_seed % 3 != 0) {  // else a thread does
              // A checkpoint beside the database, on the same file system.
              absl::Status s = RunCheckpoint(**db, path, static_cast<int>(i % 2), fs.get());
              if (!s.ok()) {
                fail("Checkpoint", s);
                break;
              }
              continue;
            }
            absl::Status s = pick < 2 ? RunCompact(**db) : (*db)->Flush();
            if (s.ok()) ++flushes;
            if (!s.ok() && !absl::IsUnimplemented(s)) {
              fail("Flush/Compact", s);
              break;
            }
            continue;
          }
          Rec rec;
          rec.seed = r();
          rec.intent = clock.fetch_add(1);
          log.push_back(rec);
          absl::Status s = RunOp(**db, MakeOp(t, rec.seed), shape.dim);
          if (!s.ok()) {
            fail("a write", s);
            break;
          }
          log.back().ack = clock.fetch_add(1);
          log.back().ack_time = Clock::now();
        }
      });
    }
    std::this_thread::sleep_for(run);
    if (c.clean_close) {
      stop = true;
      for (auto& w : writers) w.join();
      if (absl::Status s = (*db)->Close(); !s.ok()) fail("Close", s);
      c.cut = Clock::now();
      fs->PowerOff();
    } else {
      c.cut = Clock::now();
      fs->PowerOff();
      stop = true;
      for (auto& w : writers) w.join();
    }
    db->reset();  // its Close fails: the power is off
    if (!error.empty()) {
      std::fprintf(stderr, "power loop: cycle %llu (%s): unexpected error before the cut: %s\n",
                   static_cast<unsigned long long>(n), PolicyName(c.policy), error.c_str());
      return keep();
    }
    test::FaultInjectionFileSystem::DropOptions drop;
    switch (rng() % 3) {
      case 0: break;  // every unsynced byte lost
      case 1: drop.keep_random_prefix = true; break;
      default: drop.keep_random_blocks = true; break;
    }
    drop.seed = rng();
    figures->faults += fs->faults_injected();
    figures->cuts_mid_segment_write += SegmentWritesInProgress(path) > 0;
    if (absl::Status s = fs->DropUnsyncedData(drop); !s.ok()) {
      std::fprintf(stderr, "power loop: DropUnsyncedData -> %s\n", s.ToString().c_str());
      return keep();
    }
    db = test::OpenOnFileSystem(options, path, fs.get());
    if (!db.ok()) {
      std::fprintf(stderr, "power loop: cycle %llu (%s%s): reopen after the power loss of %s -> %s\n",
                   static_cast<unsigned long long>(n), PolicyName(c.policy),
                   c.clean_close ? ", clean Close" : "", path.c_str(),
                   db.status().ToString().c_str());
      return keep();
    }
    absl::StatusOr<Model> observed = Observe(**db, shape.dim, rng());
    if (!observed.ok()) {
      std::fprintf(stderr, "power loop: cycle %llu (%s): %s\n", static_cast<unsigned long long>(n),
                   path.c_str(), observed.status().ToString().c_str());
      return keep();
    }
    if (!Verify(c, shape, model, *observed, logs, figures)) {
      std::fprintf(stderr, "power loop: directory kept: %s\n", path.c_str());
      return keep();
    }
    // A checkpoint whose MANIFEST survived the cut was synced whole: it
    // holds the state of one moment of the cycle.
    Possible possible;
    for (int t = 0; t < kMaxThreads; ++t) {
      for (const Rec& r : logs[t]) {
        for (const auto& [shard, effect] :
             EffectsByShard(MakeOp(t, r.seed), shape.dim, shape.shards)) {
          AddPossible(effect, model, &possible);
        }
      }
    }
    uint64_t checkpoints_found = 0;
    Options checkpoint_options = options;
    checkpoint_options.file_system = fs.get();
    if (absl::Status s = CheckCheckpoint(path, checkpoint_options, shape.dim, model, possible,
                                         rng(), &checkpoints_found);
        !s.ok()) {
      std::fprintf(stderr, "power loop: cycle %llu (%s): %s\n",
                   static_cast<unsigned long long>(n), PolicyName(c.policy),
                   s.ToString().c_str());
      return keep();
    }
    figures->checkpoints += checkpoints_found;
    model = std::move(observed).value();
    if (absl::Status s = CheckNoFileLeaked(**db, path); !s.ok()) {
      std::fprintf(stderr, "power loop: cycle %llu: %s\n", static_cast<unsigned long long>(n),
                   s.ToString().c_str());
      return keep();
    }
    if (absl::Status s = (*db)->Close(); !s.ok()) {
      std::fprintf(stderr, "power loop: Close -> %s\n", s.ToString().c_str());
      return keep();
    }
    db->reset();
    for (const auto& log : logs) {
      for (const Rec& r : log) {
        figures->ops_acked += r.ack != kNotAcked;
        figures->in_flight += r.ack == kNotAcked;
      }
    }
    ++figures->cycles;
    ++figures->cycles_by_policy[static_cast<int>(c.policy)];
    figures->prefix_keeps += drop.keep_random_prefix;
    figures->block_keeps += drop.keep_random_blocks;
    figures->clean_closes += c.clean_close;
    figures->flushes += flushes.load();
    if (config.verbose) {
      std::printf("power cycle %llu: %s%s, %d threads, %zu+%zu+%zu+%zu ops\n",
                  static_cast<unsigned long long>(n), PolicyName(c.policy),
                  c.clean_close ? " (clean close)" : "", threads, logs[0].size(), logs[1].size(),
                  logs[2].size(), logs[3].size());
    }
  }
  return true;
}

}  // namespace shoal::crash
