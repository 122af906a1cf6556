// Copyright 2026 The shoal Authors.
//
// The disk phase's child process: a process that holds nothing but the
// database (opened with SegmentStorage::kDisk), the queries and their exact
// neighbours, so that its RSS is the database's. It drops the database's
// files from the page cache first, so that the first queries read what a
// cold start reads, then sweeps every search kind x beam width x list size
// on one thread, then thread counts at the cheapest point that reaches
// kDiskRecall, and writes its figures as JSON for the parent.

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/bench_util.h"
#include "common/export_dataset.h"
#include "common/ground_truth.h"
#include "common/progress.h"
#include "comprehensive/phases.h"
#include "fmt/core.h"
#include "shoal/db.h"
#include "shoal/file_system.h"

namespace shoal_bench {
namespace {

// A kind of search the sweep runs, by name. Adding a kind to the sweep
// (e.g. a pipelined search selected by a SearchOptions field) is one more
// entry here; k, list_size, beam_width and stats are set per point.
struct SearchVariant {
  std::string name;
  shoal::SearchOptions options;
};

std::vector<SearchVariant> SearchVariants() {
  shoal::SearchOptions beam, pipelined;
  beam.disk_search = shoal::DiskSearch::kBeam;
  pipelined.disk_search = shoal::DiskSearch::kPipelined;
  return {
      {"beam", beam},
      {"pipelined", pipelined},
  };
}

// "Name:   123 kB" lines of a /proc file: the value of `name`, or -1.
double ProcField(const char* path, std::string_view name) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > name.size() && line.compare(0, name.size(), name) == 0 &&
        line[name.size()] == ':') {
      return std::strtod(line.c_str() + name.size() + 1, nullptr);
    }
  }
  return -1;
}

RssFigures ReadRss() {
  return {ProcField("/proc/self/status", "VmRSS"), ProcField("/proc/self/status", "VmHWM")};
}

// Bytes this process has had read from block devices (page cache hits and
// tmpfs do not count).
double ReadBytes() { return ProcField("/proc/self/io", "read_bytes"); }

// Bytes of the file at `fd` (`size` long) in the page cache.
uint64_t ResidentBytes(int fd, uint64_t size) {
  if (size == 0) return 0;
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return 0;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> pages((size + page - 1) / page);
  uint64_t resident = 0;
  if (mincore(map, size, pages.data()) == 0) {
    for (unsigned char p : pages) resident += (p & 1) ? page : 0;
  }
  munmap(map, size);
  return resident;
}

// Writes back and drops every file under `dir` from the page cache; sets
// the MiB cached before and after.
void DropPageCache(const std::string& dir, double* before_mib, double* after_mib) {
  uint64_t before = 0, after = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    const int fd = open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    const uint64_t size = entry.file_size(ec);
    before += ResidentBytes(fd, size);
    fdatasync(fd);  // dirty pages are not dropped
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    after += ResidentBytes(fd, size);
    close(fd);
  }
  *before_mib = before / double{1 << 20};
  *after_mib = after / double{1 << 20};
}

// Whether every segment file opens with direct I/O, as DB::Open opened them
// (FileSystem::OpenRandomAccess with direct = true); counts the segments.
bool SegmentsUseDirectIo(const std::string& dir, uint32_t* segments) {
  bool all = true;
  *segments = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".vamana") continue;
    ++*segments;
    auto file = shoal::FileSystem::Default()->OpenRandomAccess(entry.path().string(), true);
    all = all && file.ok() && (*file)->direct();
  }
  return all && *segments > 0;
}

LatencyFigures Summarize(std::vector<double> us) {
  LatencyFigures f;
  if (us.empty()) return f;
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double x : us) sum += x;
  auto at = [&](double p) {
    const size_t rank = static_cast<size_t>(std::ceil(p * us.size()));
    return us[std::clamp<size_t>(rank, 1, us.size()) - 1];
  };
  f.mean = sum / us.size();
  f.p50 = at(0.50);
  f.p95 = at(0.95);
  f.p99 = at(0.99);
  f.p999 = at(0.999);
  return f;
}

struct Worker {
  std::vector<double> us;
  shoal::SearchStats stats;
};

// `threads` threads Search the queries one call at a time, handing them out
// in order, every query at least once and until `min_seconds` have passed.
DiskPoint Measure(shoal::DB& db, const ExportedQueries& in, const SearchVariant& v,
                  uint32_t k, uint32_t list_size, uint32_t beam_width, uint32_t threads,
                  double min_seconds) {
  const size_t nq = in.size();
  std::vector<std::vector<shoal::Neighbor>> first(nq);
  std::vector<Worker> workers(threads);
  std::atomic<size_t> next{0};
  const double read_bytes = ReadBytes();
  const Stopwatch sw;
  auto work = [&](Worker& w) {
    shoal::SearchOptions opts = v.options;
    opts.k = k;
    opts.list_size = list_size;
    opts.beam_width = beam_width;
    opts.stats = &w.stats;
    for (size_t i = next.fetch_add(1); i < nq || sw.Seconds() < min_seconds;
         i = next.fetch_add(1)) {
      const auto t0 = std::chrono::steady_clock::now();
      auto r = ValueOrDie(db.Search(in.Query(i % nq), opts), "Search (disk)");
      w.us.push_back(std::chrono::duration<double, std::micro>(
                         std::chrono::steady_clock::now() - t0).count());
      if (i < nq) first[i] = std::move(r);
    }
  };
  std::vector<std::thread> pool;
  for (uint32_t t = 1; t < threads; ++t) pool.emplace_back(work, std::ref(workers[t]));
  work(workers[0]);
  for (std::thread& t : pool) t.join();
  DiskPoint p;
  p.seconds = sw.Seconds();
  const double kernel_reads = (ReadBytes() - read_bytes) / 4096;
  p.kind = v.name;
  p.list_size = list_size;
  p.beam_width = beam_width;
  p.threads = threads;
  std::vector<double> us;
  shoal::SearchStats sum;
  for (const Worker& w : workers) {
    us.insert(us.end(), w.us.begin(), w.us.end());
    sum.hops += w.stats.hops;
    sum.reads += w.stats.reads;
    sum.cache_hits += w.stats.cache_hits;
    sum.io_wait_ns += w.stats.io_wait_ns;
    sum.compute_ns += w.stats.compute_ns;
  }
  p.queries = us.size();
  const double n = static_cast<double>(p.queries);
  p.recall = RecallAtK(in.truth, first, k);
  p.latency = Summarize(std::move(us));
  p.reads = sum.reads / n;
  p.kernel_reads = kernel_reads / n;
  p.cache_hits = sum.cache_hits / n;
  p.hops = sum.hops / n;
  const double busy = static_cast<double>(sum.io_wait_ns + sum.compute_ns);
  p.io_wait_share = busy > 0 ? sum.io_wait_ns / busy : 0;
  return p;
}

void Log(const DiskPoint& p) {
  StatusLine(fmt::format("[disk]   {:<8} W={:<2} L={:<4} threads {}: recall {:.4f} {:>8.0f} QPS "
                         "mean {:>6.0f} us, {:.1f} reads/q ({:.1f} kernel 4K), {:.1f} hits/q, "
                         "io wait {:.0f}%", p.kind, p.beam_width, p.list_size, p.threads,
                         p.recall, p.Qps(), p.latency.mean, p.reads, p.kernel_reads,
                         p.cache_hits, 100 * p.io_wait_share));
}

// Of `kind`'s sweep points: the fewest reads reaching kDiskRecall, or else
// the best recall.
DiskPoint ThreadSweepPoint(const std::vector<DiskPoint>& sweep, const std::string& kind) {
  std::vector<DiskPoint> mine;
  for (const DiskPoint& p : sweep) {
    if (p.kind == kind) mine.push_back(p);
  }
  if (const DiskPoint* p = FewestReadsAtRecall(mine); p != nullptr) return *p;
  return *std::max_element(mine.begin(), mine.end(), [](const DiskPoint& a, const DiskPoint& b) {
    return a.recall < b.recall;
  });
}

bool Wanted(const DiskSettings& s, const std::string& kind) {
  return s.kinds.empty() || std::find(s.kinds.begin(), s.kinds.end(), kind) != s.kinds.end();
}

// Every wanted kind x W x L on one thread into d.sweep, then each kind's
// thread counts into d.threads.
void Sweep(shoal::DB& db, const ExportedQueries& in, const DiskSettings& s, uint32_t k,
           DiskFigures& d) {
  std::vector<SearchVariant> variants;
  for (const SearchVariant& v : SearchVariants()) {
    if (Wanted(s, v.name)) variants.push_back(v);
  }
  if (variants.empty()) Die("--disk_kinds", absl::InvalidArgumentError("no such search kind"));
  {
    Progress progress("disk sweep", variants.size() * s.beam_widths.size() * s.list_sizes.size());
    for (const SearchVariant& v : variants) {
      for (const uint32_t w : s.beam_widths) {
        for (const uint32_t l : s.list_sizes) {
          d.sweep.push_back(Measure(db, in, v, k, l, w, 1, s.min_seconds));
          Log(d.sweep.back());
          progress.Add(1);
        }
      }
    }
  }
  for (const SearchVariant& v : variants) {
    const DiskPoint at = ThreadSweepPoint(d.sweep, v.name);
    for (const uint32_t t : s.threads) {
      d.threads.push_back(Measure(db, in, v, k, at.list_size, at.beam_width, t, s.min_seconds));
      Log(d.threads.back());
    }
  }
}

}  // namespace

std::string DiskChildResultPath(const std::string& dir) { return dir + "/child-result.json"; }

int DiskChildMain(const DiskSettings& s, uint32_t k, uint32_t worker_threads) {
  const ExportedQueries in = ValueOrDie(ReadExportedQueries(s.dir), "disk child: queries");
  const std::string db_dir = s.dir + "/db";
  DiskFigures d;
  DropPageCache(db_dir, &d.page_cache_before_mib, &d.page_cache_after_mib);
  d.rss_before_open = ReadRss();
  shoal::Options options;
  options.create_if_missing = false;
  options.segment_storage = shoal::SegmentStorage::kDisk;
  options.node_cache_bytes = s.node_cache_bytes;
  options.memory_budget_bytes = s.memory_budget_bytes;
  options.worker_threads = worker_threads;
  options.compaction.automatic = false;  // a database at rest: nothing to merge
  Stopwatch sw;
  std::unique_ptr<shoal::DB> db = ValueOrDie(shoal::DB::Open(options, db_dir), "Open " + db_dir);
  d.open_seconds = sw.Seconds();
  d.rss_after_open = ReadRss();
  d.direct_io = SegmentsUseDirectIo(db_dir, &d.segments);
  StatusLine(fmt::format("[disk]   child opened {} in {:.3f} s: {} segments, O_DIRECT {}, "
                         "RSS {:.1f} MiB", db_dir, d.open_seconds, d.segments,
                         d.direct_io ? "yes" : "no", d.rss_after_open.rss_kib / 1024));
  Sweep(*db, in, s, k, d);
  d.rss_after_search = ReadRss();
  CheckOk(db->Close(), "Close " + db_dir);
  WriteFileAtomically(DiskChildResultPath(s.dir), DiskFiguresToJson(d));
  return 0;
}

}  // namespace shoal_bench
