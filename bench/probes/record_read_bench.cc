// Copyright 2026 The shoal Authors.
//
// What a record's other parts cost searches (issue 43), side by side in
// one process, in turns:
//   plain     a DB whose records are vectors alone, searched;
//   records   the same vectors as records (--labels labels, 2 attributes, a
//             --payload-byte payload each), searched: no slower, since
//             searches never read the parts;
//   +payload  the records DB searched, then GetRecords(the top k,
//             kPayloadPart) for every query, as an application showing its
//             results does.
// Both DBs are bulk loaded and reopened with memory-mapped segments, then
// with disk-resident ones (where the payloads' reads are counted: the read
// system calls of the process, /proc/self/io, during the GetRecords calls).
//
//   ./build/bench/record_read_bench --n 100000 --dim 128 --queries 2000 --rounds 3
//
// Figures: docs/performance.md ("Records") and docs/performance-history.md.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "shoal/db.h"

ABSL_FLAG(std::string, dir, "/dev/shm/shoal-record-read", "scratch directory");
ABSL_FLAG(size_t, n, 100000, "records");
ABSL_FLAG(uint32_t, dim, 128, "floats a vector");
ABSL_FLAG(size_t, queries, 2000, "queries a measurement");
ABSL_FLAG(int, rounds, 3, "rounds of the measurements, in turns");
ABSL_FLAG(uint32_t, k, 10, "k");
ABSL_FLAG(uint32_t, list_size, 100, "list size");
ABSL_FLAG(uint32_t, labels, 4, "labels a record");
ABSL_FLAG(size_t, payload, 200, "payload bytes a record");
ABSL_FLAG(std::string, storage, "both", "mapped, disk or both");

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

void Check(const absl::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

// Read system calls this process made so far (/proc/self/io, syscr).
uint64_t ReadCalls() {
  std::ifstream in("/proc/self/io");
  std::string key;
  uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "syscr:") return value;
  }
  return 0;
}

std::unique_ptr<shoal::DB> OpenDb(const std::string& path, shoal::SegmentStorage storage) {
  shoal::Options o;
  o.segment_storage = storage;
  o.compaction.automatic = false;
  absl::StatusOr<std::unique_ptr<shoal::DB>> db = shoal::DB::Open(o, path);
  Check(db.status(), "open");
  return std::move(db).value();
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string dir = absl::GetFlag(FLAGS_dir);
  const size_t n = absl::GetFlag(FLAGS_n), nq = absl::GetFlag(FLAGS_queries);
  const uint32_t dim = absl::GetFlag(FLAGS_dim), label_count = absl::GetFlag(FLAGS_labels);
  const size_t payload_bytes = absl::GetFlag(FLAGS_payload);
  // Clustered data (64 centres), queries near stored vectors.
  std::mt19937_64 rng(42);
  std::normal_distribution<float> gauss;
  std::vector<float> centres(64 * dim), rows(n * dim), queries(nq * dim);
  for (float& x : centres) x = gauss(rng);
  for (size_t i = 0; i < n; ++i) {
    const float* c = centres.data() + (rng() % 64) * dim;
    for (uint32_t d = 0; d < dim; ++d) rows[i * dim + d] = c[d] + 0.3f * gauss(rng);
  }
  for (size_t q = 0; q < nq; ++q) {
    const float* r = rows.data() + (rng() % n) * dim;
    for (uint32_t d = 0; d < dim; ++d) queries[q * dim + d] = r[d] + 0.05f * gauss(rng);
  }
  std::vector<uint64_t> ids(n);
  std::vector<uint32_t> labels(n * label_count);
  std::vector<shoal::AttributeValue> attributes(2 * n);
  std::string payloads(n * payload_bytes, '\0');
  for (size_t i = 0; i < n; ++i) {
    ids[i] = i * 7 + 1;
    for (uint32_t l = 0; l < label_count; ++l) labels[i * label_count + l] = l * 100 + i % 100;
    attributes[2 * i] = {0, static_cast<int64_t>(1700000000 + i)};
    attributes[2 * i + 1] = {1, static_cast<int64_t>(i % 1000)};
  }
  for (char& c : payloads) c = static_cast<char>(rng());
  std::vector<shoal::Record> records(n);
  for (size_t i = 0; i < n; ++i) {
    records[i] = shoal::Record{
        ids[i], std::span<const float>(rows.data() + i * dim, dim),
        std::span<const uint32_t>(labels.data() + i * label_count, label_count),
        std::span<const shoal::AttributeValue>(attributes.data() + 2 * i, 2),
        std::string_view(payloads.data() + i * payload_bytes, payload_bytes)};
  }

  std::filesystem::remove_all(dir);
  const std::string plain_path = dir + "/plain", records_path = dir + "/records";
  for (const bool with_records : {false, true}) {
    shoal::Options o;
    o.default_collection.dim = dim;
    o.default_collection.shard_count = 2;
    o.default_collection.attributes = {"timestamp", "group"};
    o.compaction.automatic = false;
    absl::StatusOr<std::unique_ptr<shoal::DB>> db =
        shoal::DB::Open(o, with_records ? records_path : plain_path);
    Check(db.status(), "create");
    const auto start = std::chrono::steady_clock::now();
    Check(with_records ? (*db)->BulkLoad(records) : (*db)->BulkLoad(ids, rows), "bulk load");
    std::printf("bulk load of %zu %s: %.2f s\n", n, with_records ? "records" : "vectors",
                Seconds(start));
    Check((*db)->Close(), "close");
  }

  shoal::SearchOptions so;
  so.k = absl::GetFlag(FLAGS_k);
  so.list_size = absl::GetFlag(FLAGS_list_size);
  std::printf("%zu x %u-d, %u labels, 2 attributes, %zu payload bytes a record; %zu queries, "
              "k %u, L %u, one thread\n",
              n, dim, label_count, payload_bytes, nq, so.k, so.list_size);
  for (const shoal::SegmentStorage storage :
       {shoal::SegmentStorage::kMapped, shoal::SegmentStorage::kDisk}) {
    const char* storage_name = storage == shoal::SegmentStorage::kMapped ? "mapped" : "disk";
    if (absl::GetFlag(FLAGS_storage) != "both" && absl::GetFlag(FLAGS_storage) != storage_name) {
      continue;
    }
    std::unique_ptr<shoal::DB> plain = OpenDb(plain_path, storage);
    std::unique_ptr<shoal::DB> with = OpenDb(records_path, storage);
    std::vector<double> plain_qps, records_qps, payload_qps;
    std::vector<double> get_shares;  // GetRecords' time / the searches' time, in turn 2
    double reads_per_result = 0;
    const int rounds = absl::GetFlag(FLAGS_rounds);
    // Rounds 0.. are timed; round -1 (last) counts the payloads' reads.
    for (int r = 0; r <= rounds; ++r) {
      const int round = r == rounds ? -1 : r;
      if (round < 0 && storage != shoal::SegmentStorage::kDisk) break;
      for (int turn = round < 0 ? 2 : 0; turn < 3; ++turn) {
        shoal::DB& db = turn == 0 ? *plain : *with;
        uint64_t reads = 0, results = 0;
        double get_seconds = 0;
        const auto start = std::chrono::steady_clock::now();
        for (size_t q = 0; q < nq; ++q) {
          absl::StatusOr<std::vector<shoal::Neighbor>> found =
              db.Search(std::span<const float>(queries.data() + q * dim, dim), so);
          Check(found.status(), "search");
          if (turn < 2) continue;
          std::vector<uint64_t> hits;
          for (const shoal::Neighbor& nb : *found) hits.push_back(nb.id);
          // The read calls are counted in a last, untimed round (reading
          // /proc costs more than a search).
          const bool count = round < 0;
          const uint64_t before = count ? ReadCalls() : 0;
          const auto get_start = std::chrono::steady_clock::now();
          auto got = db.GetRecords(hits, shoal::kPayloadPart);
          get_seconds += Seconds(get_start);
          if (count) reads += ReadCalls() - before;
          results += hits.size();
          Check(got.status(), "get records");
          for (const auto& r : *got) {
            if (!r.has_value() || r->payload.size() != payload_bytes) {
              std::fprintf(stderr, "a result's payload is missing\n");
              return 1;
            }
          }
        }
        const double qps = nq / Seconds(start);
        if (round >= 0) {
          (turn == 0 ? plain_qps : turn == 1 ? records_qps : payload_qps).push_back(qps);
          if (turn == 2) {
            const double total = nq / qps;
            get_shares.push_back(get_seconds / (total - get_seconds));
          }
        } else if (results > 0) {
          // Reading /proc/self/io makes read calls itself: as many as two
          // readings with nothing between them differ by.
          const uint64_t first = ReadCalls();
          const uint64_t overhead = ReadCalls() - first;
          reads_per_result = static_cast<double>(reads - nq * overhead) / results;
        }
      }
    }
    // GetRecords alone: the payloads of 10 random ids a call.
    {
      std::mt19937_64 pick(7);
      const int calls = 20000;
      std::vector<uint64_t> some(so.k);
      const auto start = std::chrono::steady_clock::now();
      for (int c = 0; c < calls; ++c) {
        for (uint64_t& id : some) id = ids[pick() % n];
        Check(with->GetRecords(some, shoal::kPayloadPart).status(), "get records");
      }
      std::printf("%-6s GetRecords(%u ids, payload): %.2f us a record\n", storage_name, so.k,
                  1e6 * Seconds(start) / (calls * so.k));
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const double p = median(plain_qps), r = median(records_qps), w = median(payload_qps);
    std::printf("%-6s plain %.0f QPS | records %.0f QPS (%.3fx plain) | records + payloads of "
                "the top %u %.0f QPS (%.1f%% more time than records alone; the GetRecords "
                "calls took %.1f%% of the searches' time)",
                storage_name, p, r, r / p, so.k, w, 100.0 * (r / w - 1.0),
                100.0 * median(get_shares));
    if (storage == shoal::SegmentStorage::kDisk) {
      std::printf(" | %.2f read calls a result", reads_per_result);
    }
    std::printf("\n");
  }
  std::filesystem::remove_all(dir);
  return 0;
}
