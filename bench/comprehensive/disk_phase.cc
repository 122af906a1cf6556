// Copyright 2026 The shoal Authors.
//
// --phases disk: shoal with SegmentStorage::kDisk (issue 20).
//
// The database is built once with BulkLoad in c.disk.dir (a real disk: on
// tmpfs there is no disk to wait for, and before Linux 6.6 no O_DIRECT)
// and kept: a marker
// file beside it names the data (name, source, size, a hash of the ids and
// vectors) and the collection's shape, and a later run on the same data and
// shape reuses it rather than spend minutes rebuilding.
//
// Searches run in a child process (this binary again, with --disk_child) so
// that the RSS measured is the database's, not this process's copy of the
// base vectors. The parent writes the queries and their exact neighbours
// into c.disk.dir, the child writes its figures there as JSON, and the
// parent reads them into report.disk, with the DiskANN peer's results
// (bench/peers/diskann_disk_peer.py) when a file of them exists for this data.

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/bench_util.h"
#include "common/export_dataset.h"
#include "common/json_reader.h"
#include "common/progress.h"
#include "comprehensive/phases.h"
#include "fmt/core.h"

extern char** environ;

namespace shoal_bench {
namespace {

constexpr std::string_view kMarkerName = "bench-database.txt";
constexpr std::string_view kBuildSecondsKey = "build_seconds=";

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The type of the file system holding `path`: the longest mount point of
// /proc/mounts that contains it.
std::string FsType(const std::string& path) {
  std::error_code ec;
  const std::string abs = std::filesystem::weakly_canonical(path, ec).string();
  std::ifstream mounts("/proc/mounts");
  std::string device, mount, type, rest, best_mount, best_type = "?";
  while (mounts >> device >> mount >> type && std::getline(mounts, rest)) {
    const bool inside = abs == mount || mount == "/" ||
                        (abs.size() > mount.size() && abs.compare(0, mount.size(), mount) == 0 &&
                         abs[mount.size()] == '/');
    if (inside && mount.size() >= best_mount.size()) {
      best_mount = mount;
      best_type = type;
    }
  }
  return best_type;
}

uint64_t TreeBytes(const std::string& dir) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) bytes += entry.file_size(ec);
  }
  return bytes;
}

// The writer's file layout: bump when segments are written differently
// (a database written before is then rebuilt, not measured stale).
constexpr std::string_view kWriterLayout = "block-order-2026-11-26";

// What the database must hold to be reused: the data, the collection's
// shape and the writer's layout, one "key=value" a line.
std::string MarkerIdentity(const Config& c, const Dataset& data) {
  const std::string_view ids(reinterpret_cast<const char*>(data.ids.data()),
                             data.ids.size() * sizeof(uint64_t));
  const std::string_view base(reinterpret_cast<const char*>(data.base.data()),
                              data.base.size() * sizeof(float));
  const size_t hash = std::hash<std::string_view>{}(ids) * 31 + std::hash<std::string_view>{}(base);
  const uint32_t shards = c.run.shards != 0 ? c.run.shards : std::thread::hardware_concurrency();
  return fmt::format(
      "shoal comprehensive_bench disk-phase database\n"
      "dataset={}\nsource={}\nvectors={}\ndim={}\nmetric={}\ncontent_hash={:016x}\n"
      "shards={}\nmax_degree={}\nbuild_list_size={}\nalpha={}\ncode={}\nlayout={}\n",
      data.spec.name, data.source, data.size(), data.dim(), c.run.metric, hash, shards,
      c.graph.max_degree, c.graph.build_list_size, c.graph.alpha, c.run.code, kWriterLayout);
}

// The marker's identity lines and its build time.
void ParseMarker(const std::string& text, std::string* identity, double* build_seconds) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(kBuildSecondsKey)) {
      *build_seconds = std::strtod(line.c_str() + kBuildSecondsKey.size(), nullptr);
    } else {
      *identity += line + "\n";
    }
  }
}

// Reuses the database in s.dir when its marker matches this data, else
// (re)builds it with BulkLoad; the marker is written last, so a build cut
// short is never reused.
void EnsureDatabase(const Config& c, const Dataset& data, DiskFigures& d) {
  const std::string marker_path = c.disk.dir + "/" + std::string(kMarkerName);
  const std::string db_dir = c.disk.dir + "/db";
  const std::string want = MarkerIdentity(c, data);
  std::string have;
  double built_seconds = 0;
  std::error_code ec;
  if (std::filesystem::exists(marker_path, ec)) ParseMarker(ReadText(marker_path), &have, &built_seconds);
  if (!c.disk.rebuild && have == want && std::filesystem::is_directory(db_dir, ec)) {
    d.reused = true;
    d.build_seconds = built_seconds;
    StatusLine(fmt::format("[disk]   reusing {} (its {} names this data; --disk_rebuild to "
                           "build anew)", db_dir, kMarkerName));
    return;
  }
  std::filesystem::remove(marker_path, ec);
  CheckOk(RemoveTree(db_dir), "wipe " + db_dir);
  shoal::Options o = c.DbOptions(shoal::FsyncPolicy::kNever);
  o.error_if_exists = true;
  auto db = ValueOrDie(shoal::DB::Open(o, db_dir), "Open " + db_dir);
  {
    Progress progress("disk BulkLoad", 0);
    const Stopwatch sw;
    CheckOk(db->BulkLoad(data.ids, data.base), "BulkLoad " + db_dir);
    CheckOk(db->Close(), "Close " + db_dir);
    d.build_seconds = sw.Seconds();
  }
  WriteFileAtomically(marker_path, want + fmt::format("{}{:.3f}\n", kBuildSecondsKey, d.build_seconds));
  StatusLine(fmt::format("[disk]   BulkLoad of {} vectors into {}: {:.1f} s", data.size(), db_dir,
                         d.build_seconds));
}

std::string Joined(const std::vector<uint32_t>& values) {
  std::string out;
  for (const uint32_t v : values) {
    if (!out.empty()) out += ',';
    out += std::to_string(v);
  }
  return out;
}

// Runs this binary again with the parent's arguments, then the settings as
// resolved here (a later flag overrides an earlier one), and --disk_child.
void RunChild(const DiskSettings& s) {
  std::vector<std::string> args = s.child_args;
  args.push_back("--disk_list_sizes=" + Joined(s.list_sizes));
  args.push_back("--disk_beam_widths=" + Joined(s.beam_widths));
  args.push_back("--disk_threads=" + Joined(s.threads));
  args.push_back(fmt::format("--disk_min_seconds={}", s.min_seconds));
  args.push_back(fmt::format("--node_cache_bytes={}", s.node_cache_bytes));
  args.push_back(fmt::format("--memory_budget_bytes={}", s.memory_budget_bytes));
  args.push_back("--disk_child=" + s.dir);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ);
  if (err != 0) Die("spawn the disk child", absl::ErrnoToStatus(err, "/proc/self/exe"));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) Die("wait for the disk child", absl::ErrnoToStatus(errno, "waitpid"));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    Die("disk child", absl::InternalError(fmt::format("exited with status {:#x}", status)));
  }
}

// The single-thread rows of a bench/peers/diskann_disk_peer.py results file, when
// it exists and is of this data set; else sets d.peer_note.
void ReadPeer(const std::string& path, const Dataset& data, DiskFigures& d) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    d.peer_note = fmt::format("no results file {} (scripts/diskann_peer.sh {} writes it)", path,
                              data.spec.name);
    return;
  }
  d.peer_file = path;
  absl::StatusOr<JsonValue> doc = ParseJson(ReadText(path));
  if (!doc.ok()) {
    d.peer_note = fmt::format("{}: {}", path, std::string(doc.status().message()));
    return;
  }
  const JsonValue& ds = (*doc)["dataset"];
  if (ds["name"].string() != data.spec.name || ds["source"].string() != data.source ||
      ds["num_vectors"].number() != static_cast<double>(data.size()) ||
      ds["dim"].number() != data.dim() || ds["num_queries"].number() != data.num_queries()) {
    d.peer_note = fmt::format("{} is of another data set ({}, {}, {} x {}); skipped", path,
                              ds["name"].string(), ds["source"].string(),
                              ds["num_vectors"].number(), ds["dim"].number());
    return;
  }
  for (const JsonValue& row : (*doc)["rows"].elements()) {
    if (row["mode"].string() != "single") continue;
    d.peer.push_back({static_cast<uint32_t>(row["L"].number()),
                      static_cast<uint32_t>(row["W"].number()),
                      static_cast<uint32_t>(row["cache_nodes"].number()), row["recall"].number(),
                      row["reads_per_query"].number(), row["qps"].number(),
                      row["mean_us"].number()});
  }
}

}  // namespace

void DiskPhase(const Config& c, const Dataset& data, const Truth& truth, Report& report) {
  const DiskSettings& s = c.disk;
  DiskFigures& d = report.disk;
  d.dir = s.dir + "/db";
  CheckOk(MakeDirs(s.dir), "mkdir " + s.dir);
  d.fs_type = FsType(s.dir);
  if (d.fs_type == "tmpfs" || d.fs_type == "ramfs") {
    StatusLine(fmt::format("[disk]   WARNING: {} is on {}: no disk behind it (O_DIRECT, "
                           "where taken, copies from memory, and its pages cannot be dropped); "
                           "the figures are of memory (--disk_mode_dir)", s.dir, d.fs_type));
  }
  EnsureDatabase(c, data, d);
  d.db_bytes = TreeBytes(d.dir);
  d.raw_vector_bytes = data.BaseBytes();
  d.shards = c.run.shards != 0 ? c.run.shards : std::thread::hardware_concurrency();
  d.node_cache_bytes = s.node_cache_bytes;
  d.memory_budget_bytes = s.memory_budget_bytes;
  CheckOk(ExportQueries(data, truth, c.search.k, s.dir), "disk phase: write the queries");
  const std::string result = DiskChildResultPath(s.dir);
  std::error_code ec;
  std::filesystem::remove(result, ec);
  RunChild(s);
  const JsonValue figures = ValueOrDie(ParseJson(ReadText(result)), result);
  DiskFiguresFromJson(figures, d);
  for (const char* name : {"query.fbin", "groundtruth.ibin"}) {
    std::filesystem::remove(s.dir + "/" + name, ec);
  }
  std::filesystem::remove(result, ec);
  ReadPeer(s.diskann_results, data, d);
  d.done = true;
}

}  // namespace shoal_bench
