// Copyright 2026 The shoal Authors.
//
// shoal: the command-line tool.
//   shoal create DIR --dim D [--metric l2|ip|cosine] [--shards N] [--collection NAME]
//   shoal load DIR FILE [--bulk] [--batch N] [--first_id N] [--collection NAME]
//   shoal search DIR --query FILE [-k 10] [--list_size L] [--collection NAME]
//   shoal export DIR --collection NAME --to FILE.npy|FILE.fbin
//   shoal write-segments OUT FILE --like DIR [--collection NAME] [--first_id N] [--one_graph]
//   shoal ingest DIR SEGMENT... [--collection NAME] [--method link|copy|move]
//   shoal checkpoint DIR TO
//   shoal stats DIR
//   shoal verify DIR
//   shoal dump-wal FILE
// Exit status: 0 success, 1 failure, 2 bad usage, 3 (verify) damage found.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "dataset/dataset_format.h"
#include "dataset/dataset_reader.h"
#include "dataset/row_file_writer.h"
#include "db/inspect.h"
#include "version/filename.h"
#include "fmt/format.h"
#include "record/record_format.h"
#include "shoal/shoal.h"
#include "util/coding.h"
#include "util/file_system.h"
#include "wal/wal_format.h"
#include "wal/wal_reader.h"
#include "wal/wal_writer.h"

ABSL_FLAG(uint32_t, dim, 0, "create: dimension of the vectors (1..4096)");
ABSL_FLAG(std::string, metric, "l2", "create: l2, ip (inner product) or cosine");
ABSL_FLAG(uint32_t, shards, 0, "create: shard count (0 = one per core)");
ABSL_FLAG(std::string, collection, "default", "the collection to use");
ABSL_FLAG(bool, bulk, false, "load: build segments directly (BulkLoad) instead of PutBatch");
ABSL_FLAG(uint32_t, batch, 10000, "load: vectors per PutBatch call");
ABSL_FLAG(std::string, labels, "",
          "load: a text file of labels, line i for vector i: unsigned integers separated by "
          "spaces or commas (an empty line: none)");
ABSL_FLAG(std::string, attributes, "",
          "create: the collection's attribute names, separated by commas");
ABSL_FLAG(uint64_t, first_id, 0, "load: id of the file's first vector (the rest follow)");
ABSL_FLAG(uint64_t, max_rows, UINT64_MAX, "load/search: read at most this many vectors");
ABSL_FLAG(std::string, query, "", "search: file of query vectors (any supported format)");
ABSL_FLAG(std::string, to, "",
          "export: the file to write the vectors to (.npy or .fbin); the ids go beside it "
          "(FILE.ids.npy or FILE.ids.u64bin)");
ABSL_FLAG(std::string, like, "",
          "write-segments: the database whose collection (--collection) the segments are for");
ABSL_FLAG(bool, one_graph, false,
          "write-segments: one file holding every shard's rows in one graph");
ABSL_FLAG(std::string, prefix, "segment", "write-segments: the files' name prefix");
ABSL_FLAG(std::string, method, "link",
          "ingest: link (hard link, else copy), copy, or move (link, then remove the file)");
ABSL_FLAG(bool, verify_checksums, true,
          "ingest: read every byte of every file and check its checksums first");
ABSL_FLAG(uint32_t, k, 10, "search: neighbours per query");
ABSL_FLAG(uint32_t, list_size, 100,
          "search: candidate list size L (>= 1; below k: shorter walks, lower recall)");

namespace {

constexpr int kOk = 0, kFailed = 1, kUsage = 2, kDamaged = 3;

const char* kUsageText =
    "shoal: a sharded, durable, embedded vector database - command-line tool\n"
    "\n"
    "usage: shoal <command> [arguments] [flags]   (shoal <command> --help for its flags)\n"
    "  create DIR --dim D [--metric l2|ip|cosine] [--shards N] [--attributes a,b]\n"
    "             [--collection NAME]\n"
    "  load DIR FILE [--bulk] [--batch N] [--first_id N] [--labels FILE]\n"
    "             FILE: .fvecs .bvecs .fbin .u8bin .npy; --labels: one line of labels a vector\n"
    "  search DIR --query FILE [-k 10] [--list_size 100]\n"
    "  export DIR --to FILE [--collection NAME]\n"
    "             every live record's vector to FILE (.npy or .fbin), ids beside it\n"
    "             (FILE.ids.npy: uint64 (n, 1); FILE.ids.u64bin: uint32 n, uint32 1, n uint64)\n"
    "  write-segments OUT FILE --like DIR [--first_id N] [--one_graph] [--prefix P]\n"
    "             segment files of FILE's vectors for DIR's collection, built here (no DB open)\n"
    "  ingest DIR SEGMENT... [--method link|copy|move]\n"
    "             segment files from write-segments (or a SegmentWriter), all or nothing\n"
    "  checkpoint DIR TO  a consistent copy of the database at TO (which must not exist):\n"
    "             segments hard-linked on the same file system, copied otherwise\n"
    "  stats DIR          collections, shards, segments, memtable and log bytes, deletes\n"
    "  verify DIR         checks every checksum; exit 3 when something is damaged\n"
    "  dump-wal FILE      prints the records of one write-ahead log file\n";

int Fail(const absl::Status& s, std::string_view what) {
  fmt::print(stderr, "shoal: {}: {}\n", what, s.ToString());
  return kFailed;
}

absl::StatusOr<shoal::Metric> ParseMetric(const std::string& m) {
  if (m == "l2") return shoal::Metric::kL2;
  if (m == "ip") return shoal::Metric::kInnerProduct;
  if (m == "cosine") return shoal::Metric::kCosine;
  return absl::InvalidArgumentError(absl::StrCat("unknown metric '", m, "' (l2, ip, cosine)"));
}

const char* MetricName(shoal::Metric m) {
  switch (m) {
    case shoal::Metric::kL2: return "l2";
    case shoal::Metric::kInnerProduct: return "ip";
    case shoal::Metric::kCosine: return "cosine";
  }
  return "?";
}

absl::StatusOr<std::unique_ptr<shoal::DB>> OpenExisting(const std::string& dir) {
  shoal::Options options;
  options.create_if_missing = false;
  return shoal::DB::Open(options, dir);
}

int Create(const std::vector<char*>& args) {
  if (args.size() != 2) return kUsage;
  absl::StatusOr<shoal::Metric> metric = ParseMetric(absl::GetFlag(FLAGS_metric));
  if (!metric.ok()) return Fail(metric.status(), "create");
  shoal::CollectionOptions c;
  c.dim = absl::GetFlag(FLAGS_dim);
  c.metric = *metric;
  c.shard_count = absl::GetFlag(FLAGS_shards);
  if (!absl::GetFlag(FLAGS_attributes).empty()) {
    c.attributes = absl::StrSplit(absl::GetFlag(FLAGS_attributes), ',');
  }
  shoal::Options options;
  auto db = shoal::DB::Open(options, args[1]);
  if (!db.ok()) return Fail(db.status(), "create");
  const std::string name = absl::GetFlag(FLAGS_collection);
  absl::Status s = (*db)->CreateCollection(name, c);
  if (!s.ok()) return Fail(s, "create");
  s = (*db)->Close();
  if (!s.ok()) return Fail(s, "create");
  fmt::print("created collection '{}' in {}: dim {}, metric {}\n", name, args[1], c.dim,
             MetricName(c.metric));
  return kOk;
}

// The labels of `n` vectors from a text file: line i holds vector i's,
// unsigned 32-bit integers separated by spaces or commas. Lines past the
// n-th are ignored only when --max_rows cut the vectors short.
absl::StatusOr<std::vector<std::vector<uint32_t>>> ReadLabels(const std::string& path,
                                                             size_t n) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open labels file ", path));
  std::vector<std::vector<uint32_t>> out;
  out.reserve(n);
  std::string line;
  size_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (out.size() == n) {
      if (absl::GetFlag(FLAGS_max_rows) != UINT64_MAX) break;
      return absl::InvalidArgumentError(absl::StrCat(
          "labels file ", path, " has more lines than the ", n, " vectors loaded"));
    }
    std::vector<uint32_t>& labels = out.emplace_back();
    for (absl::string_view word : absl::StrSplit(line, absl::ByAnyChar(" ,\t\r"),
                                                 absl::SkipEmpty())) {
      uint32_t label = 0;
      if (!absl::SimpleAtoi(word, &label)) {
        return absl::InvalidArgumentError(
            absl::StrCat("labels file ", path, " line ", line_number, ": '", word,
                         "' is not an unsigned 32-bit integer"));
      }
      labels.push_back(label);
    }
  }
  if (out.size() != n) {
    return absl::InvalidArgumentError(absl::StrCat("labels file ", path, " has ", out.size(),
                                                   " lines for ", n, " vectors"));
  }
  return out;
}

int WriteSegments(const std::vector<char*>& args) {
  if (args.size() != 3 || absl::GetFlag(FLAGS_like).empty()) return kUsage;
  const std::string name = absl::GetFlag(FLAGS_collection);
  shoal::SegmentWriterOptions options;
  {
    // The collection's settings, read from the database and closed again:
    // the build needs no database.
    auto db = OpenExisting(absl::GetFlag(FLAGS_like));
    if (!db.ok()) return Fail(db.status(), "write-segments");
    absl::StatusOr<shoal::CollectionOptions> c = (*db)->GetCollectionOptions(name);
    if (!c.ok()) return Fail(c.status(), "write-segments");
    options.collection = *c;
  }
  options.one_graph = absl::GetFlag(FLAGS_one_graph);
  options.file_prefix = absl::GetFlag(FLAGS_prefix);
  absl::StatusOr<shoal::Matrix> data =
      shoal::ReadVectors(shoal::FileSystem::Default(), args[2], absl::GetFlag(FLAGS_max_rows));
  if (!data.ok()) return Fail(data.status(), "write-segments");
  const auto start = std::chrono::steady_clock::now();
  auto writer = shoal::SegmentWriter::Create(args[1], options);
  if (!writer.ok()) return Fail(writer.status(), "write-segments");
  std::vector<uint64_t> ids(data->rows);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = absl::GetFlag(FLAGS_first_id) + i;
  absl::Status s = (*writer)->Add(ids, data->data);
  if (!s.ok()) return Fail(s, "write-segments");
  absl::StatusOr<std::vector<std::string>> files = (*writer)->Finish();
  if (!files.ok()) return Fail(files.status(), "write-segments");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const std::string& f : *files) fmt::print("{}\n", f);
  fmt::print(stderr, "wrote {} vectors into {} files in {:.2f} s\n", ids.size(), files->size(),
             seconds);
  return kOk;
}

int Ingest(const std::vector<char*>& args) {
  if (args.size() < 3) return kUsage;
  shoal::IngestOptions options;
  const std::string method = absl::GetFlag(FLAGS_method);
  if (method == "link") {
    options.method = shoal::IngestMethod::kLinkOrCopy;
  } else if (method == "copy") {
    options.method = shoal::IngestMethod::kCopy;
  } else if (method == "move") {
    options.method = shoal::IngestMethod::kMove;
  } else {
    return kUsage;
  }
  options.verify_checksums = absl::GetFlag(FLAGS_verify_checksums);
  auto db = OpenExisting(args[1]);
  if (!db.ok()) return Fail(db.status(), "ingest");
  const std::vector<std::string> files(args.begin() + 2, args.end());
  const auto start = std::chrono::steady_clock::now();
  absl::Status s = (*db)->IngestSegments(absl::GetFlag(FLAGS_collection), files, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!s.ok()) return Fail(s, "ingest");
  s = (*db)->Close();
  if (!s.ok()) return Fail(s, "ingest (close)");
  fmt::print("ingested {} files into '{}' in {:.3f} s ({})\n", files.size(),
             absl::GetFlag(FLAGS_collection), seconds, method);
  return kOk;
}

int Load(const std::vector<char*>& args) {
  if (args.size() != 3) return kUsage;
  auto db = OpenExisting(args[1]);
  if (!db.ok()) return Fail(db.status(), "load");
  absl::StatusOr<shoal::Matrix> data =
      shoal::ReadVectors(shoal::FileSystem::Default(), args[2], absl::GetFlag(FLAGS_max_rows));
  if (!data.ok()) return Fail(data.status(), "load");
  const std::string name = absl::GetFlag(FLAGS_collection);
  const size_t n = data->rows, dim = data->cols;
  absl::StatusOr<shoal::CollectionOptions> target = (*db)->GetCollectionOptions(name);
  if (!target.ok()) return Fail(target.status(), "load");
  if (n > 0 && dim != target->dim) {
    fmt::print(stderr, "shoal: load: {} has dim {}, collection '{}' has dim {}\n", args[2], dim,
               name, target->dim);
    return kFailed;
  }
  std::vector<uint64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = absl::GetFlag(FLAGS_first_id) + i;
  std::vector<std::vector<uint32_t>> labels;
  if (!absl::GetFlag(FLAGS_labels).empty()) {
    absl::StatusOr<std::vector<std::vector<uint32_t>>> read =
        ReadLabels(absl::GetFlag(FLAGS_labels), n);
    if (!read.ok()) return Fail(read.status(), "load");
    labels = std::move(read).value();
  }
  // Records when labels are given, else plain vectors.
  std::vector<shoal::Record> records;
  if (!labels.empty()) {
    records.resize(n);
    for (size_t i = 0; i < n; ++i) {
      records[i].id = ids[i];
      records[i].vector = std::span<const float>(data->data.data() + i * dim, dim);
      records[i].labels = labels[i];
    }
  }
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (absl::GetFlag(FLAGS_bulk)) {
    absl::Status s = records.empty() ? (*db)->BulkLoad(name, ids, data->data)
                                     : (*db)->BulkLoad(name, records);
    if (!s.ok()) return Fail(s, "load");
  } else {
    const size_t batch = std::max<uint32_t>(1, absl::GetFlag(FLAGS_batch));
    for (size_t first = 0; first < n; first += batch) {
      const size_t count = std::min(batch, n - first);
      absl::Status s =
          records.empty()
              ? (*db)->PutBatch(name, std::span<const uint64_t>(ids.data() + first, count),
                                std::span<const float>(data->data.data() + first * dim,
                                                       count * dim))
              : (*db)->PutBatch(name,
                                std::span<const shoal::Record>(records.data() + first, count));
      if (!s.ok()) return Fail(s, fmt::format("load (vectors {}..{})", first, first + count));
      fmt::print(stderr, "\rload: {}/{} vectors, {:.0f} vectors/s", first + count, n,
                 (first + count) / std::max(seconds(), 1e-9));
    }
    fmt::print(stderr, "\n");
  }
  const double load_seconds = seconds();
  absl::Status s = (*db)->Close();
  if (!s.ok()) return Fail(s, "load (close)");
  fmt::print("loaded {} vectors of dim {} into '{}' in {:.2f} s: {:.0f} vectors/s ({})\n", n, dim,
             name, load_seconds, n / std::max(load_seconds, 1e-9),
             absl::GetFlag(FLAGS_bulk) ? "BulkLoad" : "PutBatch");
  return kOk;
}

int Search(const std::vector<char*>& args) {
  if (args.size() != 2 || absl::GetFlag(FLAGS_query).empty()) return kUsage;
  auto db = OpenExisting(args[1]);
  if (!db.ok()) return Fail(db.status(), "search");
  absl::StatusOr<shoal::Matrix> queries = shoal::ReadVectors(
      shoal::FileSystem::Default(), absl::GetFlag(FLAGS_query), absl::GetFlag(FLAGS_max_rows));
  if (!queries.ok()) return Fail(queries.status(), "search");
  shoal::SearchOptions options;
  options.k = absl::GetFlag(FLAGS_k);
  options.list_size = absl::GetFlag(FLAGS_list_size);
  const auto start = std::chrono::steady_clock::now();
  auto results = (*db)->SearchBatch(absl::GetFlag(FLAGS_collection), queries->data, options);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!results.ok()) return Fail(results.status(), "search");
  for (size_t q = 0; q < results->size(); ++q) {
    std::string line = fmt::format("{}:", q);
    for (const shoal::Neighbor& n : (*results)[q]) line += fmt::format(" {}:{:.6g}", n.id, n.distance);
    fmt::print("{}\n", line);
  }
  fmt::print(stderr, "search: {} queries in {:.3f} s ({:.0f} QPS)\n", results->size(), secs,
             results->size() / std::max(secs, 1e-9));
  return kOk;
}

double Percent(uint64_t done, uint64_t total) {
  return total == 0 ? 100.0 : 100.0 * static_cast<double>(done) / static_cast<double>(total);
}

// A ProgressFn that shows `show`'s line at most every 200 ms, and always
// the last one (done == total); a repeat of the same count is skipped.
shoal::ProgressFn ProgressLine(std::function<void(uint64_t done, uint64_t total)> show) {
  using Clock = std::chrono::steady_clock;
  struct State {
    Clock::time_point shown = Clock::now();
    uint64_t shown_done = UINT64_MAX;
  };
  auto state = std::make_shared<State>();
  return [state, show = std::move(show)](uint64_t done, uint64_t total) {
    const Clock::time_point now = Clock::now();
    if (done == state->shown_done ||
        (done < total && now - state->shown < std::chrono::milliseconds(200))) {
      return;
    }
    state->shown = now;
    state->shown_done = done;
    show(done, total);
  };
}

// Writes every live record of a collection, at the moment the export
// starts, to FILE (vectors) and the ids file beside it, each atomically
// (dataset/row_file_writer.h); the ids file is renamed into place first.
// A progress line on stderr at most every 200 ms.
int Export(const std::vector<char*>& args) {
  const std::string to = absl::GetFlag(FLAGS_to);
  if (args.size() != 2 || to.empty()) return kUsage;
  const shoal::DatasetFormat format = shoal::DetectFormat(to);
  if (format != shoal::DatasetFormat::kNpy && format != shoal::DatasetFormat::kFbin) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
                    "'", to, "': the vectors are written as .npy or .fbin (by the extension)")),
                "export");
  }
  const bool npy = format == shoal::DatasetFormat::kNpy;
  const std::string ids_path = to + (npy ? ".ids.npy" : ".ids.u64bin");
  const std::string name = absl::GetFlag(FLAGS_collection);
  auto db = OpenExisting(args[1]);
  if (!db.ok()) return Fail(db.status(), "export");
  auto options = (*db)->GetCollectionOptions(name);
  if (!options.ok()) return Fail(options.status(), "export");
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  shoal::ExportOptions eo;
  eo.parts = shoal::kVectorPart;
  eo.progress = ProgressLine([](uint64_t done, uint64_t total) {
    fmt::print(stderr, "\rexport: {} of {} entries ({:.0f}%)", done, total, Percent(done, total));
  });
  auto it = (*db)->Export(name, eo);
  if (!it.ok()) return Fail(it.status(), "export");
  const auto header = npy ? shoal::RowFileWriter::Header::kNpy : shoal::RowFileWriter::Header::kBin;
  auto vectors = shoal::RowFileWriter::Create(to, header, "<f4", options->dim, sizeof(float));
  if (!vectors.ok()) return Fail(vectors.status(), "export");
  auto ids = shoal::RowFileWriter::Create(ids_path, header, "<u8", 1, sizeof(uint64_t));
  if (!ids.ok()) return Fail(ids.status(), "export");
  absl::Status s;
  for (shoal::RecordIterator& i = **it; s.ok() && i.Valid(); i.Next()) {
    const shoal::RecordData& r = i.record();
    s = (*vectors)->Append(r.vector.data(), 1);
    if (s.ok()) s = (*ids)->Append(&r.id, 1);
  }
  fmt::print(stderr, "\n");
  if (s.ok()) s = (*it)->status();
  if (s.ok()) s = (*ids)->Finish();
  if (s.ok()) s = (*vectors)->Finish();
  if (!s.ok()) return Fail(s, "export");
  it->reset();
  s = (*db)->Close();
  if (!s.ok()) return Fail(s, "export");
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  fmt::print("exported {} records of '{}' to {} and {} in {:.2f} s\n", (*vectors)->rows(), name,
             to, ids_path, seconds);
  return kOk;
}

// Makes TO a copy of the database DIR at one moment (DB::Checkpoint), with
// a progress line on stderr at most every 200 ms. The database is opened
// here, so no other process may hold it (reader processes: issue 46).
int Checkpoint(const std::vector<char*>& args) {
  if (args.size() != 3) return kUsage;
  auto db = OpenExisting(args[1]);
  if (!db.ok()) return Fail(db.status(), "checkpoint");
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  shoal::CheckpointOptions co;
  co.progress = ProgressLine([](uint64_t done, uint64_t total) {
    fmt::print(stderr, "\rcheckpoint: {:.1f} of {:.1f} MiB ({:.0f}%)", done / 1048576.0,
               total / 1048576.0, Percent(done, total));
  });
  absl::Status s = (*db)->Checkpoint(args[2], co);
  fmt::print(stderr, "\n");
  if (!s.ok()) return Fail(s, "checkpoint");
  s = (*db)->Close();
  if (!s.ok()) return Fail(s, "checkpoint");
  fmt::print("checkpoint of {} at {} in {:.2f} s\n", args[1], args[2],
             std::chrono::duration<double>(Clock::now() - start).count());
  return kOk;
}

int Stats(const std::vector<char*>& args) {
  if (args.size() != 2) return kUsage;
  auto db = OpenExisting(args[1]);
  if (!db.ok()) return Fail(db.status(), "stats");
  absl::StatusOr<std::vector<shoal::CollectionReport>> report = shoal::CollectStats(**db);
  if (!report.ok()) return Fail(report.status(), "stats");
  fmt::print("database {}: {} collection(s)\n", args[1], report->size());
  for (const shoal::CollectionReport& c : *report) {
    fmt::print("collection '{}': dim {}, metric {}, {} shard(s), graph R={} L={} alpha={}\n",
               c.name, c.options.dim, MetricName(c.options.metric), c.options.shard_count,
               c.options.graph.max_degree, c.options.graph.build_list_size,
               c.options.graph.alpha);
    fmt::print("  {:>5} {:>14} {:>6} {:>8} {:>15} {:>12} {:>6} {:>9} {:>9} {:>9} {:>14}\n",
               "shard", "memtable B", "frozen", "segments", "segment vecs", "live vecs", "dead",
               "space amp", "deleted", "log files", "log bytes");
    for (const shoal::ShardReport& s : c.shards) {
      fmt::print("  {:>5} {:>14} {:>6} {:>8} {:>15} {:>12} {:>5.1f}% {:>9.2f} {:>9} {:>9} "
                 "{:>14}\n",
                 s.index, s.memtable_bytes, s.frozen_memtables, s.segments, s.segment_vectors,
                 s.live_vectors, 100 * s.DeadFraction(), s.SpaceAmplification(), s.deleted,
                 s.wal_files, s.wal_bytes);
    }
    uint64_t labels = 0, attributes = 0, payloads = 0;
    for (const shoal::ShardReport& s : c.shards) {
      labels += s.segment_label_bytes;
      attributes += s.segment_attribute_bytes;
      payloads += s.segment_payload_bytes;
    }
    fmt::print("  attributes: {}; in segments: label bytes {}, attribute bytes {}, payload "
               "bytes {} (memtable B counts the memtables' records whole)\n",
               c.options.attributes.empty() ? "none" : absl::StrJoin(c.options.attributes, ","),
               labels, attributes, payloads);
  }
  fmt::print("(live vecs: ids whose newest version is a vector; dead: stored vectors deleted or "
             "overwritten since, which merges drop; space amp: stored / live vectors; log bytes "
             "include space reserved ahead by the open database)\n");
  return kOk;
}

int Verify(const std::vector<char*>& args) {
  if (args.size() != 2) return kUsage;
  absl::StatusOr<shoal::VerifyReport> report =
      shoal::VerifyDatabase(shoal::FileSystem::Default(), args[1]);
  if (!report.ok()) return Fail(report.status(), "verify");
  for (const shoal::VerifyProblem& p : report->problems) {
    fmt::print("{}: {}: {}\n", p.fatal ? "DAMAGED" : "warning", p.path, p.what);
  }
  fmt::print("verify: {} file(s), {} bytes checked: {}\n", report->files_checked,
             report->bytes_checked, report->ok() ? "OK" : "DAMAGE FOUND");
  return report->ok() ? kOk : kDamaged;
}

// dump-wal's lines for a kPutRecords record: each op's labels, attributes
// and payload size, with a printable prefix of the payload (the first 8 ops).
void PrintExtras(const shoal::wal::RecordView& r) {
  std::string_view rest = r.extras;  // checked by the reader
  for (uint32_t i = 0; i < std::min<uint32_t>(r.count, 8); ++i) {
    shoal::record::ExtrasView e;
    size_t size = 0;
    if (!shoal::record::Parse(rest, &e, &size).ok()) return;
    rest.remove_prefix(size);
    std::string labels, attributes, prefix;
    for (size_t j = 0; j < e.label_count(); ++j) {
      labels += fmt::format("{}{}", j == 0 ? "" : " ", e.label(j));
    }
    for (size_t j = 0; j < e.attribute_count(); ++j) {
      const shoal::AttributeValue a = e.attribute(j);
      attributes += fmt::format("{}{}={}", j == 0 ? "" : " ", a.attribute, a.value);
    }
    constexpr size_t kPrefix = 24;
    for (char c : e.payload().substr(0, kPrefix)) {
      prefix += (c >= 0x20 && c < 0x7f) ? c : '.';
    }
    fmt::print("    id {:>10}  labels [{}]  attributes [{}]  payload {} bytes \"{}{}\"\n",
               shoal::DecodeFixed64(r.ids + size_t{i} * 8), labels, attributes,
               e.payload().size(), prefix, e.payload().size() > kPrefix ? "..." : "");
  }
  if (r.count > 8) fmt::print("    ...\n");
}

int DumpWal(const std::vector<char*>& args) {
  if (args.size() != 2) return kUsage;
  const std::string path = args[1];
  uint64_t number = 0;
  const std::string base = path.substr(path.find_last_of('/') + 1);
  if (!shoal::ParseWalFileName(base, &number)) {
    fmt::print(stderr, "shoal: dump-wal: '{}' is not named wal-<number>.log\n", path);
    return kUsage;
  }
  absl::StatusOr<std::string> bytes = shoal::FileSystem::Default()->ReadFile(path);
  if (!bytes.ok()) return Fail(bytes.status(), "dump-wal");
  using namespace shoal::wal;
  const uint32_t shard = bytes->size() >= kFileHeaderSize ? shoal::DecodeFixed32(bytes->data() + 12) : 0;
  // The reader checks every put against the collection's dimension: take it
  // from the first put record (walking record headers; the reader then checks
  // everything, checksums included).
  uint32_t dim = 0;
  for (size_t off = kFileHeaderSize; off + kRecordHeaderSize <= bytes->size();) {
    const char* h = bytes->data() + off;
    const uint32_t length = shoal::DecodeFixed32(h + 8);
    if (static_cast<uint8_t>(h[12]) == static_cast<uint8_t>(RecordType::kPut) ||
        static_cast<uint8_t>(h[12]) == static_cast<uint8_t>(RecordType::kPutRecords)) {
      dim = shoal::DecodeFixed32(h + 28);
      break;
    }
    if (length == 0 && shoal::DecodeFixed64(h) == 0) break;  // end of the records
    off += AlignRecord(kRecordHeaderSize + length);
  }
  fmt::print("{}: shard {}, file {}, {} bytes\n", path, shard, number, bytes->size());
  uint64_t records = 0;
  absl::StatusOr<ReadResult> result = ReadWalFile(
      *bytes, path, shard, number, dim, [&](const RecordView& r) {
        const char* type = r.type == RecordType::kPut          ? "put"
                           : r.type == RecordType::kPutRecords ? "records"
                           : r.type == RecordType::kDelete     ? "delete"
                           : r.type == RecordType::kBarrier    ? "barrier"
                                                               : "other";
        std::string ids;
        for (uint32_t i = 0; i < std::min<uint32_t>(r.count, 8) && r.type != RecordType::kBarrier;
             ++i) {
          ids += fmt::format(" {}", shoal::DecodeFixed64(r.ids + size_t{i} * 8));
        }
        if (r.count > 8 && r.type != RecordType::kBarrier) ids += " ...";
        fmt::print("offset {:>10}  {:<7} seq {:>10}  count {:>6}  dim {:>4}  ids:{}\n", r.offset,
                   type, r.sequence, r.count, r.dim, ids);
        if (r.type == RecordType::kPutRecords) PrintExtras(r);
        ++records;
        return absl::OkStatus();
      });
  if (!result.ok()) return Fail(result.status(), "dump-wal");
  fmt::print("{} record(s); valid up to offset {}{}{}\n", records, result->valid_end,
             result->torn_tail ? "; torn tail after it" : "",
             result->corrupted ? "; DAMAGED record there, with valid records after it" : "");
  return result->corrupted ? kDamaged : kOk;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "{}", kUsageText);
    return kUsage;
  }
  const std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    fmt::print("{}", kUsageText);
    return kOk;
  }
  struct Command {
    const char* name;
    int (*run)(const std::vector<char*>&);
    const char* usage;
  };
  static const Command kCommands[] = {
      {"create", Create, "shoal create DIR --dim D [--metric l2|ip|cosine] [--shards N] [--attributes a,b] [--collection NAME]"},
      {"load", Load, "shoal load DIR FILE [--bulk] [--batch N] [--first_id N] [--max_rows N] [--labels FILE] [--collection NAME]"},
      {"search", Search, "shoal search DIR --query FILE [-k 10] [--list_size 100] [--collection NAME]"},
      {"export", Export, "shoal export DIR --to FILE.npy|FILE.fbin [--collection NAME]"},
      {"write-segments", WriteSegments, "shoal write-segments OUT FILE --like DIR [--collection NAME] [--first_id N] [--max_rows N] [--one_graph] [--prefix P]"},
      {"ingest", Ingest, "shoal ingest DIR SEGMENT... [--collection NAME] [--method link|copy|move] [--noverify_checksums]"},
      {"checkpoint", Checkpoint, "shoal checkpoint DIR TO"},
      {"stats", Stats, "shoal stats DIR"},
      {"verify", Verify, "shoal verify DIR   (exit 0: intact, 3: damage found)"},
      {"dump-wal", DumpWal, "shoal dump-wal FILE"},
  };
  const Command* chosen = nullptr;
  for (const Command& c : kCommands) {
    if (command == c.name) chosen = &c;
  }
  if (chosen == nullptr) {
    fmt::print(stderr, "shoal: unknown command '{}'\n\n{}", command, kUsageText);
    return kUsage;
  }
  absl::SetProgramUsageMessage(chosen->usage);
  // --help lists this file's flags (by default abseil looks for flags in a
  // file named after the program, and the program name here has the command).
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "tools/shoal.cc");
  };
  usage_config.contains_helpshort_flags = usage_config.contains_help_flags;
  absl::SetFlagsUsageConfig(usage_config);
  // Parse the flags after the command word.
  std::string program = std::string(argv[0]) + " " + command;
  std::vector<char*> rest = {program.data()};
  for (int i = 2; i < argc; ++i) rest.push_back(argv[i]);
  std::vector<char*> args = absl::ParseCommandLine(static_cast<int>(rest.size()), rest.data());
  const int code = chosen->run(args);
  if (code == kUsage) fmt::print(stderr, "usage: {}\n", chosen->usage);
  return code;
}
