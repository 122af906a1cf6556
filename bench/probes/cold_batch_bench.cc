// Copyright 2026 The shoal Authors.
//
// Sustained PutBatch with cold rows, next to a raw write() of the same
// bytes in the same process (issue 19). comprehensive_bench's ingest phase
// writes its base set over and over (cache-resident at --dataset small);
// a program loading a million distinct vectors reads each row from RAM
// once. Each run: a fresh DB under --dir (kNever, memtables that never
// flush), --n vectors in batches of --batch, timed; then write() of the
// same bytes to a file under --dir, in 1 MiB calls, timed. Both are
// printed per run, with their ratio in MB/s.
//
//   ./build/bench/cold_batch_bench --dim 128 --batch 10000 --runs 5
//   ./build/bench/cold_batch_bench --dim 384 --metric cosine
//   ./build/bench/cold_batch_bench --records   (issue 43)
//
// With --records each vector is a record with --labels labels, 2
// attributes and a --payload-byte payload (DB::PutBatch of Records), and
// the raw write() writes the same bytes: each record's id, vector, labels,
// attributes (index and value) and payload.
//
// Figures: docs/performance-history.md, "The log written through the file, rows read
// in place" and "A large record written and hashed in runs" (issue 19).

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "shoal/db.h"

ABSL_FLAG(std::string, dir, "/dev/shm/shoal-cold-batch", "scratch directory (removed per run)");
ABSL_FLAG(size_t, n, 1000000, "vectors a run");
ABSL_FLAG(uint32_t, dim, 128, "floats a vector");
ABSL_FLAG(size_t, batch, 10000, "vectors a PutBatch call");
ABSL_FLAG(std::string, metric, "l2", "l2 or cosine");
ABSL_FLAG(uint32_t, shards, 2, "shards of the collection");
ABSL_FLAG(int, runs, 3, "runs");
ABSL_FLAG(bool, records, false, "write records (labels, attributes, payload), not vectors");
ABSL_FLAG(uint32_t, labels, 4, "--records: labels a record");
ABSL_FLAG(size_t, payload, 200, "--records: payload bytes a record");
ABSL_FLAG(size_t, wal_file_bytes, shoal::Options{}.wal_file_bytes, "Options::wal_file_bytes");

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// write() of `bytes` bytes at `data` to a new file `path`, 1 MiB a call.
double RawWrite(const std::string& path, const char* data, size_t bytes) {
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  const auto start = std::chrono::steady_clock::now();
  for (size_t done = 0; done < bytes;) {
    const ssize_t w = write(fd, data + done, std::min<size_t>(size_t{1} << 20, bytes - done));
    if (w <= 0) {
      close(fd);
      return -1;
    }
    done += static_cast<size_t>(w);
  }
  const double t = Seconds(start);
  close(fd);
  unlink(path.c_str());
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string dir = absl::GetFlag(FLAGS_dir);
  const size_t n = absl::GetFlag(FLAGS_n), batch = std::max<size_t>(1, absl::GetFlag(FLAGS_batch));
  const uint32_t dim = absl::GetFlag(FLAGS_dim);
  // Distinct rows, cheap to make: a linear congruential sequence in [-0.5, 0.5).
  std::vector<float> rows(n * dim);
  uint32_t state = 1;
  for (float& x : rows) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>(state >> 8) * (1.0f / 16777216.0f) - 0.5f;
  }
  // --records: each record's parts, and the same bytes laid out flat for
  // the raw write().
  const bool with_records = absl::GetFlag(FLAGS_records);
  const uint32_t label_count = absl::GetFlag(FLAGS_labels);
  const size_t payload_bytes = absl::GetFlag(FLAGS_payload);
  std::vector<uint32_t> labels;
  std::vector<shoal::AttributeValue> attributes;
  std::string payloads;
  std::string flat;
  if (with_records) {
    labels.resize(n * label_count);
    attributes.resize(n * 2);
    payloads.resize(n * payload_bytes);
    for (size_t i = 0; i < n; ++i) {
      for (uint32_t l = 0; l < label_count; ++l) {
        labels[i * label_count + l] = static_cast<uint32_t>(l * 1000 + i % 1000);
      }
      attributes[2 * i] = {0, static_cast<int64_t>(1700000000 + i)};
      attributes[2 * i + 1] = {1, static_cast<int64_t>(i % 100000)};
    }
    for (char& c : payloads) {
      state = state * 1664525u + 1013904223u;
      c = static_cast<char>(state >> 24);
    }
    const size_t record_bytes = 8 + dim * 4 + label_count * 4 + 2 * 12 + payload_bytes;
    flat.reserve(n * record_bytes);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t id = i;
      flat.append(reinterpret_cast<const char*>(&id), 8);
      flat.append(reinterpret_cast<const char*>(rows.data() + i * dim), dim * 4);
      flat.append(reinterpret_cast<const char*>(labels.data() + i * label_count),
                  label_count * 4);
      for (int a = 0; a < 2; ++a) {
        flat.append(reinterpret_cast<const char*>(&attributes[2 * i + a].attribute), 4);
        flat.append(reinterpret_cast<const char*>(&attributes[2 * i + a].value), 8);
      }
      flat.append(payloads.data() + i * payload_bytes, payload_bytes);
    }
  }
  const double mb = static_cast<double>(with_records ? flat.size()
                                                     : rows.size() * sizeof(float)) / 1e6;
  std::printf("%zu %s x %u-d (%s), PutBatch(%zu), %u shards, under %s\n", n,
              with_records ? "records" : "vectors", dim, absl::GetFlag(FLAGS_metric).c_str(),
              batch, absl::GetFlag(FLAGS_shards), dir.c_str());
  if (with_records) {
    std::printf("each record: %u labels, 2 attributes, %zu payload bytes (%zu bytes in all)\n",
                label_count, payload_bytes, flat.size() / n);
  }
  for (int run = 0; run < absl::GetFlag(FLAGS_runs); ++run) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const double raw =
        with_records ? RawWrite(dir + "/raw", flat.data(), flat.size())
                     : RawWrite(dir + "/raw", reinterpret_cast<const char*>(rows.data()),
                                rows.size() * sizeof(float));
    shoal::Options o;
    o.default_collection.dim = dim;
    o.default_collection.shard_count = absl::GetFlag(FLAGS_shards);
    if (absl::GetFlag(FLAGS_metric) == "cosine") o.default_collection.metric = shoal::Metric::kCosine;
    o.memtable_bytes = (rows.size() * sizeof(float) + flat.size()) * 2;  // never flushes
    if (with_records) o.default_collection.attributes = {"timestamp", "price_cents"};
    o.fsync = shoal::FsyncPolicy::kNever;
    o.wal_file_bytes = absl::GetFlag(FLAGS_wal_file_bytes);
    absl::StatusOr<std::unique_ptr<shoal::DB>> db = shoal::DB::Open(o, dir + "/db");
    if (!db.ok()) {
      std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
      return 1;
    }
    std::vector<uint64_t> ids(batch);
    std::vector<shoal::Record> records(with_records ? batch : 0);
    const auto start = std::chrono::steady_clock::now();
    for (size_t first = 0; first < n; first += batch) {
      const size_t count = std::min(batch, n - first);
      for (size_t i = 0; i < count; ++i) ids[i] = first + i;
      if (with_records) {
        // Building the views is the caller's work: timed with the call.
        for (size_t i = 0; i < count; ++i) {
          const size_t r = first + i;
          records[i] = shoal::Record{
              r, std::span<const float>(rows.data() + r * dim, dim),
              std::span<const uint32_t>(labels.data() + r * label_count, label_count),
              std::span<const shoal::AttributeValue>(attributes.data() + 2 * r, 2),
              std::string_view(payloads.data() + r * payload_bytes, payload_bytes)};
        }
      }
      absl::Status s =
          with_records
              ? (*db)->PutBatch(std::span<const shoal::Record>(records.data(), count))
              : (*db)->PutBatch(std::span<const uint64_t>(ids.data(), count),
                                std::span<const float>(rows.data() + first * dim, count * dim));
      if (!s.ok()) {
        std::fprintf(stderr, "%s\n", s.ToString().c_str());
        return 1;
      }
    }
    const double put = Seconds(start);
    (void)(*db)->Close();
    std::printf("run %d: PutBatch %.3f s (%.0f MB/s)  raw write() %.3f s (%.0f MB/s)  ratio %.3f\n",
                run + 1, put, mb / put, raw, mb / raw, raw / put);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
