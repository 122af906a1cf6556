// Copyright 2026 The shoal Authors.
//
// Tables and JSON for the disk phase, and the JSON that carries its figures
// from the child process (which measures them) to the parent (which reports
// them): one writer for both, DiskFiguresToJson.

#include <cmath>
#include <limits>

#include "common/json_reader.h"
#include "common/json_writer.h"
#include "comprehensive/report/report.h"
#include "fmt/core.h"

namespace shoal_bench {
namespace {

constexpr double kMiB = 1 << 20;

double Mib(double kib) { return kib / 1024; }

template <typename Point, typename Better>
const Point* BestAtRecall(const std::vector<Point>& points, Better better) {
  const Point* best = nullptr;
  for (const Point& p : points) {
    if (p.recall >= kDiskRecall && (best == nullptr || better(p, *best))) best = &p;
  }
  return best;
}

void LatencyToJson(const LatencyFigures& l, JsonWriter& w) {
  w.Key("latency_us");
  w.BeginObject();
  w.Field("mean", l.mean);
  w.Field("p50", l.p50);
  w.Field("p95", l.p95);
  w.Field("p99", l.p99);
  w.Field("p99.9", l.p999);
  w.EndObject();
}

void PointToJson(const DiskPoint& p, JsonWriter& w) {
  w.BeginObject();
  w.Field("kind", p.kind);
  w.Field("list_size", p.list_size);
  w.Field("beam_width", p.beam_width);
  w.Field("threads", p.threads);
  w.Field("queries", uint64_t{p.queries});
  w.Field("seconds", p.seconds);
  w.Field("qps", p.Qps());
  w.Field("recall", p.recall);
  LatencyToJson(p.latency, w);
  w.Field("reads_per_query", p.reads);
  w.Field("kernel_4k_reads_per_query", p.kernel_reads);
  w.Field("cache_hits_per_query", p.cache_hits);
  w.Field("hops_per_query", p.hops);
  w.Field("io_wait_share", p.io_wait_share);
  w.EndObject();
}

DiskPoint PointFromJson(const JsonValue& v) {
  DiskPoint p;
  p.kind = v["kind"].string();
  p.list_size = static_cast<uint32_t>(v["list_size"].number());
  p.beam_width = static_cast<uint32_t>(v["beam_width"].number());
  p.threads = static_cast<uint32_t>(v["threads"].number());
  p.queries = static_cast<size_t>(v["queries"].number());
  p.seconds = v["seconds"].number();
  p.recall = v["recall"].number();
  const JsonValue& l = v["latency_us"];
  p.latency = {l["mean"].number(), l["p50"].number(), l["p95"].number(), l["p99"].number(),
               l["p99.9"].number()};
  p.reads = v["reads_per_query"].number();
  p.kernel_reads = v["kernel_4k_reads_per_query"].number();
  p.cache_hits = v["cache_hits_per_query"].number();
  p.hops = v["hops_per_query"].number();
  p.io_wait_share = v["io_wait_share"].number();
  return p;
}

void RssToJson(std::string_view key, const RssFigures& r, JsonWriter& w) {
  w.Key(key);
  w.BeginObject();
  w.Field("vm_rss_kib", r.rss_kib);
  w.Field("vm_hwm_kib", r.hwm_kib);
  w.EndObject();
}

RssFigures RssFromJson(const JsonValue& v) {
  return {v["vm_rss_kib"].number(), v["vm_hwm_kib"].number()};
}

void PointsToJson(std::string_view key, const std::vector<DiskPoint>& points, JsonWriter& w) {
  w.Key(key);
  w.BeginArray();
  for (const DiskPoint& p : points) PointToJson(p, w);
  w.EndArray();
}

// The figures the child measures, as members of the object being written.
void ChildFields(const DiskFigures& d, JsonWriter& w) {
  w.Field("direct_io", d.direct_io);
  w.Field("segments", d.segments);
  w.Field("page_cache_before_mib", d.page_cache_before_mib);
  w.Field("page_cache_after_mib", d.page_cache_after_mib);
  w.Field("open_seconds", d.open_seconds);
  RssToJson("rss_before_open", d.rss_before_open, w);
  RssToJson("rss_after_open", d.rss_after_open, w);
  RssToJson("rss_after_search", d.rss_after_search, w);
  PointsToJson("sweep", d.sweep, w);
  PointsToJson("threads", d.threads, w);
}

std::string PointName(const DiskPoint& p) {
  return fmt::format("{} W={} L={}", p.kind, p.beam_width, p.list_size);
}

void PrintSweep(const std::vector<DiskPoint>& points, uint32_t k) {
  fmt::print("{:<10} {:>2} {:>4} {:>9} {:>8} {:>8} {:>8} {:>8} {:>9} {:>7} {:>7} {:>7}\n", "kind",
             "W", "L", fmt::format("recall@{}", k), "QPS", "mean us", "p99 us", "reads/q",
             "kern 4K/q", "hits/q", "hops/q", "io wait");
  for (const DiskPoint& p : points) {
    fmt::print("{:<10} {:>2} {:>4} {:>9.4f} {:>8.0f} {:>8.0f} {:>8.0f} {:>8.1f} {:>9.1f} {:>7.1f} "
               "{:>7.1f} {:>6.0f}%\n",
               p.kind, p.beam_width, p.list_size, p.recall, p.Qps(), p.latency.mean,
               p.latency.p99, p.reads, p.kernel_reads, p.cache_hits, p.hops,
               100 * p.io_wait_share);
  }
}

void PrintThreads(const std::vector<DiskPoint>& points, uint32_t k) {
  if (points.empty()) return;
  fmt::print("\nThreads, each Search one call at a time, at {} (the fewest reads reaching "
             "recall@{} {:.2f}, or the best recall)\n", PointName(points[0]), k, kDiskRecall);
  fmt::print("{:>7} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "threads",
             fmt::format("recall@{}", k), "QPS", "mean us", "p95 us", "p99.9 us", "reads/q",
             "io wait");
  for (const DiskPoint& p : points) {
    fmt::print("{:>7} {:>9.4f} {:>8.0f} {:>8.0f} {:>8.0f} {:>8.0f} {:>8.1f} {:>7.0f}%\n",
               p.threads, p.recall, p.Qps(), p.latency.mean, p.latency.p95, p.latency.p999,
               p.reads, 100 * p.io_wait_share);
  }
}

void PrintAtRecall(const DiskFigures& d, uint32_t k) {
  fmt::print("\nAt recall@{} >= {:.2f}, one thread:\n", k, kDiskRecall);
  const DiskPoint* few = FewestReadsAtRecall(d.sweep);
  const DiskPoint* fast = BestQpsAtRecall(d.sweep);
  if (few == nullptr) {
    fmt::print("  shoal: no point of the sweep reaches it\n");
  } else {
    fmt::print("  shoal   fewest reads: {:<22} {:6.1f} reads/q ({:.1f} kernel 4K) {:8.0f} QPS\n",
               PointName(*few), few->reads, few->kernel_reads, few->Qps());
    fmt::print("  shoal   most QPS:     {:<22} {:6.1f} reads/q ({:.1f} kernel 4K) {:8.0f} QPS\n",
               PointName(*fast), fast->reads, fast->kernel_reads, fast->Qps());
  }
  if (!d.peer_note.empty()) fmt::print("  DiskANN: {}\n", d.peer_note);
  if (d.peer_file.empty() || !d.peer_note.empty()) return;
  const PeerDiskPoint* pfew = PeerFewestReadsAtRecall(d.peer);
  const PeerDiskPoint* pfast = PeerBestQpsAtRecall(d.peer);
  if (pfew == nullptr) {
    fmt::print("  DiskANN ({}): no single-thread row reaches it\n", d.peer_file);
    return;
  }
  for (const auto& [label, p] : {std::pair{"fewest reads:", pfew}, std::pair{"most QPS:    ", pfast}}) {
    fmt::print("  DiskANN {} {:<22} {:6.1f} reads/q (kernel 4K)  {:8.0f} QPS\n", label,
               fmt::format("W={} L={} cache={}", p->beam_width, p->list_size, p->cache_nodes),
               p->reads, p->qps);
  }
  fmt::print("  (DiskANN: {}; its reads are 4 KiB sectors counted by the kernel, shoal's "
             "reads/q are node blocks)\n", d.peer_file);
  if (few != nullptr) {
    fmt::print("  shoal / DiskANN: reads {:.2f} (node blocks) {:.2f} (kernel 4K), QPS {:.2f}\n",
               few->reads / pfew->reads, few->kernel_reads / pfew->reads,
               fast->Qps() / pfast->qps);
  }
}

}  // namespace

const DiskPoint* FewestReadsAtRecall(const std::vector<DiskPoint>& points) {
  return BestAtRecall(points, [](const DiskPoint& a, const DiskPoint& b) {
    return a.reads < b.reads;
  });
}
const DiskPoint* BestQpsAtRecall(const std::vector<DiskPoint>& points) {
  return BestAtRecall(points,
                      [](const DiskPoint& a, const DiskPoint& b) { return a.Qps() > b.Qps(); });
}
const PeerDiskPoint* PeerFewestReadsAtRecall(const std::vector<PeerDiskPoint>& points) {
  return BestAtRecall(points, [](const PeerDiskPoint& a, const PeerDiskPoint& b) {
    return a.reads < b.reads;
  });
}
const PeerDiskPoint* PeerBestQpsAtRecall(const std::vector<PeerDiskPoint>& points) {
  return BestAtRecall(points, [](const PeerDiskPoint& a, const PeerDiskPoint& b) {
    return a.qps > b.qps;
  });
}

std::string DiskFiguresToJson(const DiskFigures& d) {
  JsonWriter w;
  w.BeginObject();
  ChildFields(d, w);
  w.EndObject();
  return w.str();
}

void DiskFiguresFromJson(const JsonValue& v, DiskFigures& d) {
  d.direct_io = v["direct_io"].boolean();
  d.segments = static_cast<uint32_t>(v["segments"].number());
  d.page_cache_before_mib = v["page_cache_before_mib"].number();
  d.page_cache_after_mib = v["page_cache_after_mib"].number();
  d.open_seconds = v["open_seconds"].number();
  d.rss_before_open = RssFromJson(v["rss_before_open"]);
  d.rss_after_open = RssFromJson(v["rss_after_open"]);
  d.rss_after_search = RssFromJson(v["rss_after_search"]);
  d.sweep.clear();
  for (const JsonValue& p : v["sweep"].elements()) d.sweep.push_back(PointFromJson(p));
  d.threads.clear();
  for (const JsonValue& p : v["threads"].elements()) d.threads.push_back(PointFromJson(p));
}

void PrintDisk(const Report& r) {
  const DiskFigures& d = r.disk;
  if (!d.done) return;
  const RunConfig& c = r.config;
  fmt::print("Disk-resident search (SegmentStorage::kDisk, searched in a child process; "
             "{} x {}, {} shards, {} segments, node cache {:.1f} MiB per segment, memory budget "
             "{}; k={})\n",
             c.num_vectors, c.dim, d.shards, d.segments, d.node_cache_bytes / kMiB,
             d.memory_budget_bytes == 0 ? std::string("none")
                                        : fmt::format("{:.1f} MiB", d.memory_budget_bytes / kMiB),
             c.k);
  fmt::print("  database {} on {}: {:.0f} MiB; {}\n", d.dir, d.fs_type, d.db_bytes / kMiB,
             d.reused ? fmt::format("reused (BulkLoad {:.1f} s in the run that built it)",
                                    d.build_seconds)
                      : fmt::format("built now (BulkLoad {:.1f} s)", d.build_seconds));
  fmt::print("  O_DIRECT: {}; page cache held {:.1f} MiB of the database before the drop "
             "(posix_fadvise DONTNEED), {:.1f} MiB after; Open {:.3f} s\n",
             d.direct_io ? "yes, every segment file" : "NO (reads go through the page cache)",
             d.page_cache_before_mib, d.page_cache_after_mib, d.open_seconds);
  fmt::print("  RSS of the child (MiB, VmRSS / VmHWM): before Open {:.1f} / {:.1f}; after Open "
             "{:.1f} / {:.1f}; after the searches {:.1f} / {:.1f}\n",
             Mib(d.rss_before_open.rss_kib), Mib(d.rss_before_open.hwm_kib),
             Mib(d.rss_after_open.rss_kib), Mib(d.rss_after_open.hwm_kib),
             Mib(d.rss_after_search.rss_kib), Mib(d.rss_after_search.hwm_kib));
  fmt::print("  RSS goal: <= 10% of the raw vectors ({:.1f} MiB) + 64 MiB = {:.1f} MiB; peak "
             "{:.1f} MiB: {}\n\n", d.raw_vector_bytes / kMiB, d.RssBudgetBytes() / kMiB,
             Mib(d.rss_after_search.hwm_kib),
             d.rss_after_search.hwm_kib * 1024 <= d.RssBudgetBytes() ? "met" : "MISSED");
  fmt::print("One thread, one Search at a time, every query at least once and for >= the "
             "point's minimum time (reads/q: node blocks read, SearchStats; kern 4K/q: "
             "/proc/self/io read_bytes / 4 KiB)\n");
  PrintSweep(d.sweep, c.k);
  PrintThreads(d.threads, c.k);
  PrintAtRecall(d, c.k);
  fmt::print("\n");
}

void DiskToJson(const Report& r, JsonWriter& w) {
  const DiskFigures& d = r.disk;
  w.Key("disk");
  if (!d.done) return w.Null();
  w.BeginObject();
  w.Field("dir", d.dir);
  w.Field("fs_type", d.fs_type);
  w.Field("reused", d.reused);
  w.Field("build_seconds", d.build_seconds);
  w.Field("db_bytes", d.db_bytes);
  w.Field("raw_vector_bytes", d.raw_vector_bytes);
  w.Field("rss_budget_bytes", d.RssBudgetBytes());
  w.Field("shards", d.shards);
  w.Field("node_cache_bytes", d.node_cache_bytes);
  w.Field("memory_budget_bytes", d.memory_budget_bytes);
  ChildFields(d, w);
  w.Field("diskann_file", d.peer_file);
  w.Field("diskann_note", d.peer_note);
  w.Key("diskann_single_thread");
  w.BeginArray();
  for (const PeerDiskPoint& p : d.peer) {
    w.BeginObject();
    w.Field("list_size", p.list_size);
    w.Field("beam_width", p.beam_width);
    w.Field("cache_nodes", p.cache_nodes);
    w.Field("recall", p.recall);
    w.Field("reads_per_query", p.reads);
    w.Field("qps", p.qps);
    w.Field("mean_us", p.mean_us);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

}  // namespace shoal_bench
