// Copyright 2026 The shoal Authors.
//
// Search QPS of reader processes beside a writer (issue 46, item 2), in
// phases of --seconds each, over one database of --vectors x --dim
// (bulk-loaded and compacted once: one segment a shard):
//   single      this process, one thread searching (the baseline);
//   threads     this process, --readers threads searching at once;
//   threads+w   the same while a writer thread PutBatch()es --write_rate
//               vectors/s (its memtables flush, and merges run);
//   readers     --readers reader processes (Options::read_only), one
//               searching thread each, no writer;
//   readers+w   the same while this process writes as above, each reader
//               calling CatchUp() every --catch_up_ms;
//   mixed+w     at the same time (so under the same load, on a shared
//               machine): --readers/2 threads searching in the writer's
//               process and --readers/2 reader processes.
// The writer writes into a collection of its own (kWrites); every searcher
// runs the same queries (k 10, --list_size) round robin on the loaded one;
// a reader's QPS over a thread's in the matching in-process phase isolates
// the cost of being a separate process. Readers are this binary again
// (--role reader), started together at an agreed moment.
//
//   flock /tmp/shoal-bench.lock ./build/bench/reader_probe --dir /dev/shm/shoal-readers
//
// Figures: docs/performance.md ("Reader processes").

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

ABSL_FLAG(std::string, dir, "/dev/shm/shoal-readers", "the database (scratch)");
ABSL_FLAG(size_t, vectors, 200000, "vectors bulk-loaded");
ABSL_FLAG(uint32_t, dim, 128, "floats a vector");
ABSL_FLAG(uint32_t, list_size, 50, "search list size");
ABSL_FLAG(int, readers, 4, "reader processes (and threads in the in-process phases)");
ABSL_FLAG(double, seconds, 10, "length of each phase");
ABSL_FLAG(double, write_rate, 20000, "vectors/s the writer puts (batches of 1000)");
ABSL_FLAG(int, catch_up_ms, 100, "a reader's CatchUp period while the writer writes");
ABSL_FLAG(bool, reuse, false, "keep the database at --dir (built by an earlier run)");
ABSL_FLAG(std::string, role, "main", "main, or reader (started by main)");
ABSL_FLAG(int64_t, start_ns, 0, "reader: steady-clock time to start searching at");

namespace {

using Clock = std::chrono::steady_clock;

void Check(const absl::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

std::vector<float> Random(size_t n, uint32_t dim, uint32_t seed) {
  std::vector<float> v(n * dim);
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0, 1);
  for (float& x : v) x = d(rng);
  return v;
}

shoal::Options DbOptions(bool read_only) {
  shoal::Options o;
  o.read_only = read_only;
  o.worker_threads = 2;
  o.memtable_bytes = size_t{4} << 20;  // the writer flushes every ~8K vectors a shard
  return o;
}

constexpr size_t kQueries = 1000;
// The writer writes into a collection of its own, so that every phase
// searches the same data (writes into the searched collection would grow
// its memtables, which every search scans, phase after phase); the readers
// still follow its logs, flushes and merges at each catch-up.
constexpr char kWrites[] = "writes";

// CPU seconds the calling thread has used.
double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// What one searcher did.
struct Searched {
  uint64_t searches = 0;
  uint64_t catch_ups = 0;
  double catch_up_s = 0;      // wall time in CatchUp
  double search_cpu_s = 0;    // CPU time of the searches (the thread's, less CatchUp's)
};

// Searches until `end`. With `catch_up_ms` > 0, calls CatchUp that often.
Searched SearchUntil(shoal::DB& db, const std::vector<float>& queries, uint32_t dim,
                     Clock::time_point end, int catch_up_ms) {
  shoal::SearchOptions options;
  options.k = 10;
  options.list_size = absl::GetFlag(FLAGS_list_size);
  Searched out;
  double catch_up_cpu = 0;
  const double cpu0 = ThreadCpuSeconds();
  auto next_catch_up = Clock::now() + std::chrono::milliseconds(catch_up_ms);
  while (Clock::now() < end) {
    const size_t q = out.searches % kQueries;
    auto found = db.Search({queries.data() + q * dim, dim}, options);
    Check(found.status(), "Search");
    ++out.searches;
    if (catch_up_ms > 0 && Clock::now() >= next_catch_up) {
      const auto t = Clock::now();
      const double c = ThreadCpuSeconds();
      Check(db.CatchUp(), "CatchUp");
      catch_up_cpu += ThreadCpuSeconds() - c;
      out.catch_up_s += std::chrono::duration<double>(Clock::now() - t).count();
      ++out.catch_ups;
      next_catch_up = Clock::now() + std::chrono::milliseconds(catch_up_ms);
    }
  }
  out.search_cpu_s = ThreadCpuSeconds() - cpu0 - catch_up_cpu;
  return out;
}

int ReaderMain() {
  const uint32_t dim = absl::GetFlag(FLAGS_dim);
  auto db = shoal::DB::Open(DbOptions(true), absl::GetFlag(FLAGS_dir));
  Check(db.status(), "reader open");
  const std::vector<float> queries = Random(kQueries, dim, 7);
  const Clock::time_point start{std::chrono::nanoseconds(absl::GetFlag(FLAGS_start_ns))};
  std::this_thread::sleep_until(start);
  const auto end = start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(absl::GetFlag(FLAGS_seconds)));
  const Searched r = SearchUntil(**db, queries, dim, end, absl::GetFlag(FLAGS_catch_up_ms));
  std::printf("%llu %llu %.6f %.6f\n", static_cast<unsigned long long>(r.searches),
              static_cast<unsigned long long>(r.catch_ups), r.catch_up_s, r.search_cpu_s);
  return 0;
}

// Writes --write_rate vectors/s (ids above the loaded ones) until `end`.
void WriteUntil(shoal::DB& db, uint32_t dim, Clock::time_point end, uint64_t* written) {
  constexpr size_t kBatch = 1000;
  const std::vector<float> rows = Random(kBatch, dim, 11);
  std::vector<uint64_t> ids(kBatch);
  uint64_t next = absl::GetFlag(FLAGS_vectors) + 1000000000ull;
  const auto start = Clock::now();
  while (Clock::now() < end) {
    for (uint64_t& id : ids) id = next++;
    Check(db.PutBatch(kWrites, ids, rows), "PutBatch");
    *written += kBatch;
    const auto due = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                                 *written / absl::GetFlag(FLAGS_write_rate)));
    std::this_thread::sleep_until(due);
  }
}

// Starts `n` readers that begin searching at `start`; returns their pids
// and the pipes their results come through.
std::vector<std::pair<pid_t, int>> StartReaders(int n, Clock::time_point start, int catch_up_ms,
                                                const char* self) {
  std::vector<std::pair<pid_t, int>> out;
  for (int r = 0; r < n; ++r) {
    int fds[2];
    if (pipe(fds) != 0) std::exit(1);
    const pid_t pid = fork();
    if (pid == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      const std::string args[] = {
          "--role=reader",
          "--dir=" + absl::GetFlag(FLAGS_dir),
          "--dim=" + std::to_string(absl::GetFlag(FLAGS_dim)),
          "--list_size=" + std::to_string(absl::GetFlag(FLAGS_list_size)),
          "--seconds=" + std::to_string(absl::GetFlag(FLAGS_seconds)),
          "--catch_up_ms=" + std::to_string(catch_up_ms),
          "--start_ns=" + std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             start.time_since_epoch())
                                             .count())};
      std::vector<char*> argv{const_cast<char*>(self)};
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv("/proc/self/exe", argv.data());
      _exit(127);
    }
    close(fds[1]);
    out.emplace_back(pid, fds[0]);
  }
  return out;
}

void ReportReaders(const char* phase, std::vector<std::pair<pid_t, int>> readers, double single,
                   double per_thread, const char* thread_phase) {
  const double seconds = absl::GetFlag(FLAGS_seconds);
  for (size_t r = 0; r < readers.size(); ++r) {
    char buf[256] = {};
    size_t got = 0;
    ssize_t n;
    while ((n = read(readers[r].second, buf + got, sizeof(buf) - 1 - got)) > 0) got += n;
    close(readers[r].second);
    int status = 0;
    waitpid(readers[r].first, &status, 0);
    unsigned long long done = 0, catch_ups = 0;
    double catch_up_s = 0, cpu_s = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        std::sscanf(buf, "%llu %llu %lf %lf", &done, &catch_ups, &catch_up_s, &cpu_s) != 4) {
      std::fprintf(stderr, "%s: reader %zu failed (status %d)\n", phase, r, status);
      std::exit(1);
    }
    const double qps = done / seconds;
    std::printf("%-10s reader %zu: %8.0f QPS  %.3fx single  %.3fx a thread of '%s'  "
                "%6.0f searches/CPU-s  catch-ups %llu (mean %.2f ms)\n",
                phase, r, qps, qps / single, qps / per_thread, thread_phase,
                cpu_s > 0 ? done / cpu_s : 0.0, catch_ups,
                catch_ups ? 1000 * catch_up_s / catch_ups : 0.0);
  }
}

// `threads` threads of this process search for --seconds (with a writer
// thread when `write`); returns the QPS of each thread on average.
// From `start` (default: now).
double InProcess(shoal::DB& db, const std::vector<float>& queries, int threads, bool write,
                 Clock::time_point start = Clock::now()) {
  const uint32_t dim = absl::GetFlag(FLAGS_dim);
  std::this_thread::sleep_until(start);
  const auto end = start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(absl::GetFlag(FLAGS_seconds)));
  std::vector<Searched> done(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] { done[t] = SearchUntil(db, queries, dim, end, 0); });
  }
  uint64_t written = 0;
  if (write) WriteUntil(db, dim, end, &written);
  for (auto& t : pool) t.join();
  uint64_t all = 0;
  double cpu = 0;
  for (const Searched& d : done) {
    all += d.searches;
    cpu += d.search_cpu_s;
  }
  std::printf("           (%.0f searches/CPU-s a thread", cpu > 0 ? all / cpu : 0.0);
  if (write) std::printf("; writer: %llu vectors", static_cast<unsigned long long>(written));
  std::printf(")\n");
  return all / absl::GetFlag(FLAGS_seconds) / threads;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_role) == "reader") return ReaderMain();
  const std::string dir = absl::GetFlag(FLAGS_dir);
  const uint32_t dim = absl::GetFlag(FLAGS_dim);
  const int readers = absl::GetFlag(FLAGS_readers);
  const double seconds = absl::GetFlag(FLAGS_seconds);
  if (!absl::GetFlag(FLAGS_reuse)) {
    std::filesystem::remove_all(dir);
    shoal::Options o = DbOptions(false);
    o.default_collection.dim = dim;
    o.default_collection.shard_count = 2;
    auto db = shoal::DB::Open(o, dir);
    Check(db.status(), "open");
    const size_t n = absl::GetFlag(FLAGS_vectors);
    std::vector<uint64_t> ids(n);
    for (size_t i = 0; i < n; ++i) ids[i] = i;
    const auto t = Clock::now();
    Check((*db)->BulkLoad(ids, Random(n, dim, 3)), "BulkLoad");
    Check((*db)->Compact(), "Compact");
    shoal::CollectionOptions writes;
    writes.dim = dim;
    writes.shard_count = 2;
    Check((*db)->CreateCollection(kWrites, writes), "CreateCollection");
    std::printf("loaded %zu x %u in %.1f s\n", n, dim,
                std::chrono::duration<double>(Clock::now() - t).count());
  }
  const std::vector<float> queries = Random(kQueries, dim, 7);
  double single = 0, per_thread = 0, per_thread_w = 0;
  {
    auto db = shoal::DB::Open(DbOptions(false), dir);
    Check(db.status(), "open");
    single = InProcess(**db, queries, 1, false);
    std::printf("single     %8.0f QPS (one thread, one process)\n", single);
    per_thread = InProcess(**db, queries, readers, false);
    std::printf("threads    %8.0f QPS a thread (%d threads: %.3fx single each)\n", per_thread,
                readers, per_thread / single);
    per_thread_w = InProcess(**db, queries, readers, true);
    std::printf("threads+w  %8.0f QPS a thread (%d threads + a writer: %.3fx single each)\n",
                per_thread_w, readers, per_thread_w / single);
    Check((*db)->Close(), "close");
  }
  const auto in = [&](double s) {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  {
    const auto start = in(2.0);  // time for the readers to open
    ReportReaders("readers", StartReaders(readers, start, 0, argv[0]), single, per_thread,
                  "threads");
  }
  {
    auto db = shoal::DB::Open(DbOptions(false), dir);
    Check(db.status(), "open");
    const auto start = in(2.0);
    auto started = StartReaders(readers, start, absl::GetFlag(FLAGS_catch_up_ms), argv[0]);
    std::this_thread::sleep_until(start);
    uint64_t written = 0;
    WriteUntil(**db, dim, in(seconds), &written);
    ReportReaders("readers+w", std::move(started), single, per_thread_w, "threads+w");
    std::printf("           (writer: %llu vectors)\n", static_cast<unsigned long long>(written));
    Check((*db)->Close(), "close");
  }
  {
    // At the same time, under the same load (the machine may be shared):
    // half the searchers are threads of the writer's process, half are
    // reader processes catching up.
    auto db = shoal::DB::Open(DbOptions(false), dir);
    Check(db.status(), "open");
    const auto start = in(2.0);
    const int half = std::max(1, readers / 2);
    auto started = StartReaders(half, start, absl::GetFlag(FLAGS_catch_up_ms), argv[0]);
    const double thread_qps = InProcess(**db, queries, half, true, start);
    std::printf("mixed+w    %8.0f QPS a thread (%d threads + a writer in this process, beside %d "
                "readers)\n",
                thread_qps, half, half);
    ReportReaders("mixed+w", std::move(started), single, thread_qps, "mixed+w");
    Check((*db)->Close(), "close");
  }
  return 0;
}
