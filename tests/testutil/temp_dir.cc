// Copyright 2026 The shoal Authors.

#include "testutil/temp_dir.h"

#include <stdlib.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>
#include <system_error>

namespace shoal::test {

namespace {

std::string DiskRoot() {
  struct statfs fs;
  if (::access("/var/tmp", W_OK) == 0 && ::statfs("/var/tmp", &fs) == 0 &&
      fs.f_type != TMPFS_MAGIC) {
    return "/var/tmp";
  }
  return ".";
}

std::string TempRoot() {
  struct stat st;
  if (::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
      ::access("/dev/shm", W_OK) == 0) {
    return "/dev/shm";
  }
  return "/tmp";
}

// Float rounding slack used to decide that two oracle distances are a tie.
bool NearTie(double a, double b) {
  return std::fabs(a - b) <= 1e-5 * std::max(std::fabs(a), std::fabs(b)) + 1e-6;
}

bool DistanceNear(double actual, double expected) {
  return std::fabs(actual - expected) <= 1e-4 * std::fabs(expected) + 1e-5;
}

std::string Describe(const std::vector<Neighbor>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) os << ", ";
    os << v[i].id << ":" << v[i].distance;
  }
  os << "]";
  return os.str();
}

}  // namespace

TempDir::TempDir(Storage storage) {
  std::string tmpl =
      (storage == Storage::kDisk ? DiskRoot() : TempRoot()) + "/shoal_test_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const char* made = ::mkdtemp(buf.data());
  if (made == nullptr) {
    ADD_FAILURE() << "mkdtemp(" << tmpl << ") failed: " << std::strerror(errno);
    path_ = tmpl;
    return;
  }
  path_ = made;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::Sub(const std::string& name) const {
  return path_ + "/" + name;
}

std::vector<float> RandomVector(size_t dim, uint64_t seed) {
  return RandomVectors(1, dim, seed);
}

std::vector<float> RandomVectors(size_t n, size_t dim, uint64_t seed) {
  // Own mapping from 64-bit words to floats (not std::uniform_real_distribution,
  // whose output differs between standard libraries).
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull);
  std::vector<float> out(n * dim);
  for (float& x : out) {
    const uint64_t bits = rng() >> 40;  // 24 random bits
    x = static_cast<float>(bits) / static_cast<float>(1u << 23) - 1.0f;
  }
  return out;
}

std::vector<float> Normalized(std::span<const float> v) {
  double norm2 = 0;
  for (float x : v) norm2 += static_cast<double>(x) * x;
  const double norm = std::sqrt(norm2);
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    out[i] = norm > 0 ? static_cast<float>(v[i] / norm) : 0.0f;
  }
  return out;
}

double OracleDistance(Metric metric, std::span<const float> a,
                      std::span<const float> b) {
  double dot = 0, l2 = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a[i], y = b[i];
    dot += x * y;
    l2 += (x - y) * (x - y);
    na += x * x;
    nb += y * y;
  }
  switch (metric) {
    case Metric::kL2:
      return l2;
    case Metric::kInnerProduct:
      return -dot;
    case Metric::kCosine:
      if (na == 0 || nb == 0) return 1.0;
      return 1.0 - dot / (std::sqrt(na) * std::sqrt(nb));
  }
  return 0;
}

namespace {

struct Ranked {
  uint64_t id;
  double distance;
};

std::vector<Ranked> RankAll(const VectorMap& data, std::span<const float> query,
                            Metric metric) {
  std::vector<Ranked> all;
  all.reserve(data.size());
  for (const auto& [id, v] : data) {
    all.push_back({id, OracleDistance(metric, query, v)});
  }
  std::sort(all.begin(), all.end(), [](const Ranked& x, const Ranked& y) {
    if (x.distance != y.distance) return x.distance < y.distance;
    return x.id < y.id;
  });
  return all;
}

}  // namespace

std::vector<Neighbor> BruteForceTopK(const VectorMap& data,
                                     std::span<const float> query,
                                     Metric metric, size_t k) {
  std::vector<Ranked> all = RankAll(data, query, metric);
  all.resize(std::min(k, all.size()));
  std::vector<Neighbor> out;
  out.reserve(all.size());
  for (const Ranked& r : all) {
    out.push_back({r.id, static_cast<float>(r.distance)});
  }
  return out;
}

::testing::AssertionResult MatchesOracle(const std::vector<Neighbor>& actual,
                                         const VectorMap& data,
                                         std::span<const float> query,
                                         Metric metric, size_t k) {
  const std::vector<Ranked> all = RankAll(data, query, metric);
  const size_t n = std::min(k, all.size());
  std::vector<Neighbor> expected;
  for (size_t i = 0; i < n; ++i) {
    expected.push_back({all[i].id, static_cast<float>(all[i].distance)});
  }
  auto fail = [&](const std::string& why) {
    return ::testing::AssertionFailure()
           << why << "\n  metric " << MetricName(metric) << ", k " << k
           << ", " << data.size() << " vectors\n  actual:   "
           << Describe(actual) << "\n  expected: " << Describe(expected);
  };
  if (::testing::AssertionResult sorted = IsSortedTopK(actual, k); !sorted) {
    return fail(sorted.message());
  }
  if (actual.size() != n) {
    return fail("size " + std::to_string(actual.size()) + " != " +
                std::to_string(n));
  }
  for (size_t i = 0; i < n; ++i) {
    const uint64_t id = actual[i].id;
    auto it = data.find(id);
    if (it == data.end()) {
      return fail("position " + std::to_string(i) + ": id " +
                  std::to_string(id) + " is not (or no longer) stored");
    }
    const double true_distance = OracleDistance(metric, query, it->second);
    if (id != all[i].id) {
      // Only a near tie (equal up to float rounding) may reorder ids; the
      // engine's own ordering of equal distances by id is checked above.
      if (!NearTie(true_distance, all[i].distance)) {
        return fail("position " + std::to_string(i) + ": id " +
                    std::to_string(id) + " != " + std::to_string(all[i].id));
      }
    }
    if (!DistanceNear(actual[i].distance, true_distance)) {
      std::ostringstream os;
      os << "position " << i << ": distance " << actual[i].distance
         << " of id " << id << " != " << true_distance;
      return fail(os.str());
    }
  }
  // Ids are unique: with the near-tie allowance a repeated id could otherwise
  // slip through.
  std::vector<uint64_t> ids;
  for (const Neighbor& nb : actual) ids.push_back(nb.id);
  std::sort(ids.begin(), ids.end());
  if (std::adjacent_find(ids.begin(), ids.end()) != ids.end()) {
    return fail("an id is repeated");
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult IsSortedTopK(const std::vector<Neighbor>& result,
                                        size_t k) {
  if (result.size() > k) {
    return ::testing::AssertionFailure()
           << result.size() << " results > k = " << k << ": "
           << Describe(result);
  }
  for (size_t i = 1; i < result.size(); ++i) {
    const Neighbor& a = result[i - 1];
    const Neighbor& b = result[i];
    if (a.distance > b.distance || (a.distance == b.distance && a.id >= b.id)) {
      return ::testing::AssertionFailure()
             << "not sorted by (distance, id) at position " << i << ": "
             << Describe(result);
    }
  }
  std::vector<uint64_t> ids;
  for (const Neighbor& nb : result) ids.push_back(nb.id);
  std::sort(ids.begin(), ids.end());
  if (std::adjacent_find(ids.begin(), ids.end()) != ids.end()) {
    return ::testing::AssertionFailure()
           << "an id is repeated: " << Describe(result);
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult VectorsNear(std::span<const float> actual,
                                       std::span<const float> expected,
                                       float tolerance) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << "size " << actual.size() << " != " << expected.size();
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!(std::fabs(actual[i] - expected[i]) <= tolerance)) {
      return ::testing::AssertionFailure()
             << "component " << i << ": " << actual[i]
             << " != " << expected[i];
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult HoldsExactly(DB& db, std::string_view collection,
                                        Metric metric, const VectorMap& model,
                                        std::span<const uint64_t> absent) {
  for (const auto& [id, v] : model) {
    absl::StatusOr<std::vector<float>> got = db.Get(collection, id);
    if (!got.ok()) {
      return ::testing::AssertionFailure()
             << "Get(" << collection << ", " << id << ") -> " << got.status();
    }
    const std::vector<float> want =
        metric == Metric::kCosine ? Normalized(v) : v;
    // Non-cosine vectors are stored as given: bit-exact.
    const float tol = metric == Metric::kCosine ? 1e-6f : 0.0f;
    ::testing::AssertionResult r = VectorsNear(*got, want, tol);
    if (!r) {
      return ::testing::AssertionFailure()
             << "Get(" << collection << ", " << id << "): " << r.message();
    }
  }
  for (uint64_t id : absent) {
    if (model.count(id)) continue;
    absl::StatusOr<std::vector<float>> got = db.Get(collection, id);
    if (got.status().code() != absl::StatusCode::kNotFound) {
      return ::testing::AssertionFailure()
             << "Get(" << collection << ", " << id
             << ") of an absent id -> " << got.status() << " (want NotFound)";
    }
  }
  return ::testing::AssertionSuccess();
}

Options DefaultOptions(uint32_t dim, Metric metric, uint32_t shard_count) {
  Options o;
  o.default_collection.dim = dim;
  o.default_collection.metric = metric;
  o.default_collection.shard_count = shard_count;
  // Small logs and arenas keep tests light; memtables stay large enough that
  // small tests never flush (so searches are exact).
  o.arena_block_bytes = 1 << 20;
  o.wal_file_bytes = 4 << 20;
  o.worker_threads = 2;
  return o;
}

std::string MetricName(Metric metric) {
  switch (metric) {
    case Metric::kL2:
      return "L2";
    case Metric::kInnerProduct:
      return "InnerProduct";
    case Metric::kCosine:
      return "Cosine";
  }
  return "Unknown";
}

std::vector<std::string> SegmentFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.path().extension() == ".vamana") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace shoal::test
