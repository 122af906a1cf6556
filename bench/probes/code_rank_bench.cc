// Copyright 2026 The shoal Authors.
//
// How well the codes a disk-resident segment keeps in RAM rank a query's
// true nearest neighbours: the bound they put on the block reads of any
// search that reranks with full vectors read from disk.
//
// A search that reads only to rerank (every candidate's full vector is one
// block read) and ranks candidates by code distance needs at least M reads
// to find the true 10 nearest when they are among the M nearest by code.
// So, per code, this prints the share of the true 10 nearest found among
// the M nearest by code distance, for each M of --ranks:
//   - over every vector (an exhaustive scan: the best any candidate
//     generation can do, graph walk or inverted lists);
//   - for the 4-bit codes, over the vectors of the --probes groups whose
//     centres are nearest the query (inverted lists over the code groups).
// and, per code, the smallest M whose share reaches 0.95. Besides the codes
// shoal keeps, extended RaBitQ (bench/probes/ex_rabitq.h) at --rabitq_bits bits a
// dimension, over every vector: residuals to the mean, and residuals to the
// 4-bit code's group centres (2 bytes more), encoded, like the 4-bit codes,
// from the vectors the SQ8 codes decode to.
//
// The codes are made as DiskSegmentReader makes them: SQ8 trained on every
// vector; the 4-bit residual codes fitted to a sample of the vectors the SQ8
// codes read back as (ResidualSq4::SampleCount of them, vector i * n /
// count) and encoded from those vectors. Two differences: the vectors are
// in the data set's order (a segment's nodes are in its locality order,
// so its sample holds other vectors), and they are one segment of all n
// vectors (a DB of S shards holds S segments of about n / S, each with
// fewer groups).
//
//   code_rank_bench --dataset large --queries 200
//
// Uses src/ internals (codes/sq8.h, codes/residual_sq4.h).
//
// Figures: docs/performance-history.md, "Extended RaBitQ against SQ8 and the 4-bit
// residual codes" and "What bounds the disk reads and the pipelined gain".

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/dataset.h"
#include "common/ground_truth.h"
#include "distance/distance.h"
#include "codes/residual_sq4.h"
#include "codes/sq8.h"
#include "probes/ex_rabitq.h"
#include "util/thread_pool.h"

ABSL_FLAG(std::string, dataset, "large", "small, medium, large or embed");
ABSL_FLAG(uint64_t, seed, 42, "data seed (the bench's default)");
ABSL_FLAG(uint64_t, queries, 200, "queries (the data set's first ones)");
ABSL_FLAG(std::string, ranks, "10,12,15,20,30,40", "M: ranks by code distance to look within");
ABSL_FLAG(std::string, probes, "8,32,128", "4-bit code groups probed (inverted lists)");
ABSL_FLAG(uint32_t, threads, 0, "threads (0 = all cores)");
ABSL_FLAG(std::string, rabitq_bits, "1,2,3,4",
          "extended RaBitQ (ex_rabitq.h): bits a dimension to measure ('' = none), each "
          "with one centre (the mean) and with the 4-bit code's groups as centres");

namespace {

using shoal::Metric;
using shoal::codes::ResidualSq4;
using shoal::codes::ResidualSq4Query;
using shoal::codes::Sq8;
using shoal::codes::Sq8Query;

constexpr uint32_t kK = 10;
constexpr size_t kMaxRank = 200;  // ranks searched for the 0.95 point

std::vector<uint32_t> ParseList(const std::string& text) {
  std::vector<uint32_t> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    uint32_t v;
    if (!absl::SimpleAtoi(part, &v) || v == 0 || v > kMaxRank) {
      std::fprintf(stderr, "not a number in 1..%zu: %s\n", kMaxRank, std::string(part).c_str());
      std::exit(2);
    }
    out.push_back(v);
  }
  return out;
}

// Per query: the rank (0-based) by code distance of each of its true k
// nearest among `candidates` scored by `distance` (kMaxRank when beyond).
template <typename DistanceFn>
std::vector<size_t> TruthRanks(const std::vector<uint64_t>& truth,
                               const std::vector<uint32_t>& candidates, DistanceFn distance) {
  std::vector<std::pair<float, uint32_t>> scored;
  scored.reserve(candidates.size());
  for (const uint32_t v : candidates) scored.push_back({distance(v), v});
  const size_t keep = std::min(kMaxRank, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + keep, scored.end());
  std::vector<size_t> ranks;
  for (size_t t = 0; t < kK && t < truth.size(); ++t) {
    size_t r = kMaxRank;
    for (size_t i = 0; i < keep; ++i) {
      if (scored[i].second == truth[t]) {
        r = i;
        break;
      }
    }
    ranks.push_back(r);
  }
  return ranks;
}

// One line: the share of the true k within each M of `ranks`, and the
// smallest M reaching 0.95.
void Report(const char* name, const std::vector<std::vector<size_t>>& truth_ranks,
            const std::vector<uint32_t>& ranks, double scored_per_query) {
  std::vector<size_t> within(kMaxRank + 1, 0);  // within[m]: true ones at rank < m
  size_t total = 0;
  for (const auto& q : truth_ranks) {
    for (const size_t r : q) {
      for (size_t m = r + 1; m <= kMaxRank; ++m) ++within[m];
      ++total;
    }
  }
  std::printf("%-34s %9.0f", name, scored_per_query);
  for (const uint32_t m : ranks) {
    std::printf("  %6.3f", static_cast<double>(within[std::min<size_t>(m, kMaxRank)]) / total);
  }
  size_t needed = 0;
  for (size_t m = 1; m <= kMaxRank && needed == 0; ++m) {
    if (within[m] >= 0.95 * static_cast<double>(total)) needed = m;
  }
  if (needed > 0) {
    std::printf("  %6zu\n", needed);
  } else {
    std::printf("  >%5zu\n", kMaxRank);
  }
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::StatusOr<shoal_bench::DatasetSpec> spec =
      shoal_bench::DatasetSpecByName(absl::GetFlag(FLAGS_dataset));
  if (!spec.ok()) {
    std::fprintf(stderr, "%s\n", spec.status().ToString().c_str());
    return 2;
  }
  const std::vector<uint32_t> ranks = ParseList(absl::GetFlag(FLAGS_ranks));
  const std::vector<uint32_t> probes = ParseList(absl::GetFlag(FLAGS_probes));
  shoal_bench::Dataset data = shoal_bench::GenerateDataset(*spec, absl::GetFlag(FLAGS_seed));
  const size_t queries = std::min<size_t>(absl::GetFlag(FLAGS_queries), data.num_queries());
  data.queries.resize(queries * data.dim());
  const Metric metric = spec->metric == "cosine" ? Metric::kCosine : Metric::kL2;
  const size_t n = data.size();
  const uint32_t dim = data.dim();
  std::unique_ptr<shoal::ThreadPool> pool =
      std::make_unique<shoal::ThreadPool>(absl::GetFlag(FLAGS_threads));
  const std::vector<std::vector<uint64_t>> truth =
      shoal_bench::BruteForceKnn(data, metric, kK, absl::GetFlag(FLAGS_threads));

  // The codes, as a disk-resident segment keeps them.
  const Sq8 sq8 = Sq8::Train(data.base.data(), n, dim);
  const size_t sq8_bytes = Sq8::CodeBytes(dim);
  std::vector<uint8_t> sq8_codes(n * sq8_bytes);
  pool->ParallelFor(n, [&](size_t i) {
    sq8.Encode(&data.base[i * dim], &sq8_codes[i * sq8_bytes]);
  });
  const uint32_t groups = ResidualSq4::ChooseGroups(n);
  const uint64_t samples = ResidualSq4::SampleCount(n, dim, groups);
  std::vector<float> sample(samples * dim);
  for (uint64_t s = 0; s < samples; ++s) {
    sq8.Decode(&sq8_codes[(s * n / samples) * sq8_bytes], &sample[s * dim]);
  }
  const ResidualSq4 four = ResidualSq4::Fit(sample.data(), samples, dim, groups, pool.get());
  const size_t four_bytes = four.code_bytes();
  std::vector<uint8_t> four_codes(n * four_bytes);
  pool->ParallelFor(n, [&](size_t i) {
    std::vector<float> v(dim);
    sq8.Decode(&sq8_codes[i * sq8_bytes], v.data());
    four.Encode(v.data(), &four_codes[i * four_bytes]);
  });
  std::vector<std::vector<uint32_t>> members(four.groups());
  std::vector<uint16_t> group_of(n);
  for (size_t i = 0; i < n; ++i) {
    group_of[i] = ResidualSq4::Group(&four_codes[i * four_bytes], dim);
    members[group_of[i]].push_back(static_cast<uint32_t>(i));
  }

  std::printf("%s: %zu x %u, %s, %zu queries; true %u nearest by brute force\n",
              spec->name.c_str(), n, dim, spec->metric.c_str(), queries, kK);
  std::printf("SQ8: %zu bytes a vector; 4-bit residual: %zu bytes a vector, %u groups "
              "(fitted to %llu sample vectors)\n",
              sq8_bytes, four_bytes, four.groups(), static_cast<unsigned long long>(samples));
  std::printf("share of the true %u nearest among the M nearest by code distance\n", kK);
  std::printf("%-34s %9s", "code, candidates", "scored/q");
  for (const uint32_t m : ranks) std::printf("  %6s", ("M=" + std::to_string(m)).c_str());
  std::printf("  M@0.95\n");

  std::vector<uint32_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = static_cast<uint32_t>(i);
  std::vector<std::vector<size_t>> truth_ranks(queries);
  // Every vector scored by its code (Query: Sq8Query or ResidualSq4Query).
  auto exhaustive = [&]<typename Query>(const auto& code, const std::vector<uint8_t>& codes,
                                        size_t code_bytes, const char* name) {
    pool->ParallelFor(queries, [&](size_t q) {
      Query query;
      query.Reset(code, metric, &data.queries[q * dim]);
      truth_ranks[q] = TruthRanks(truth[q], all, [&](uint32_t v) {
        return query.Distance(&codes[size_t{v} * code_bytes]);
      });
    });
    Report(name, truth_ranks, ranks, static_cast<double>(n));
  };
  exhaustive.operator()<Sq8Query>(sq8, sq8_codes, sq8_bytes, "SQ8, every vector");
  exhaustive.operator()<ResidualSq4Query>(four, four_codes, four_bytes,
                                          "4-bit residual, every vector");
  // Extended RaBitQ, every vector scored, encoded from what the SQ8 codes
  // decode to (as the 4-bit codes are). Under kCosine the vectors are made
  // unit length, so L2 ranks them as cosine does.
  std::vector<float> base(n * dim), query_rows = data.queries;
  pool->ParallelFor(n, [&](size_t i) { sq8.Decode(&sq8_codes[i * sq8_bytes], &base[i * dim]); });
  if (metric == Metric::kCosine) {
    for (size_t i = 0; i < n; ++i) (void)shoal::NormalizeInPlace(&base[i * dim], dim);
    for (size_t q = 0; q < queries; ++q) (void)shoal::NormalizeInPlace(&query_rows[q * dim], dim);
  }
  std::vector<float> mean(dim, 0.0f);
  for (size_t i = 0; i < n; ++i) {
    for (uint32_t d = 0; d < dim; ++d) mean[d] += base[i * dim + d] / static_cast<float>(n);
  }
  for (const uint32_t bits : ParseList(absl::GetFlag(FLAGS_rabitq_bits))) {
    if (bits > 8) {
      std::fprintf(stderr, "--rabitq_bits: %u is more than 8\n", bits);
      return 2;
    }
    const shoal_bench::ExRabitq rabitq(dim, bits, absl::GetFlag(FLAGS_seed) + bits);
    for (const bool grouped : {false, true}) {
      std::vector<shoal_bench::ExRabitq::Code> codes(n);
      pool->ParallelFor(n, [&](size_t i) {
        codes[i] = rabitq.Encode(&base[i * dim], grouped ? four.centre(group_of[i]) : mean.data());
      });
      pool->ParallelFor(queries, [&](size_t q) {
        const float* row = &query_rows[q * dim];
        std::vector<shoal_bench::ExRabitq::Query> prepared;
        if (grouped) {
          for (uint32_t g = 0; g < four.groups(); ++g) {
            prepared.push_back(rabitq.Prepare(row, four.centre(g)));
          }
        } else {
          prepared.push_back(rabitq.Prepare(row, mean.data()));
        }
        truth_ranks[q] = TruthRanks(truth[q], all, [&](uint32_t v) {
          return rabitq.Distance(prepared[grouped ? group_of[v] : 0], codes[v]);
        });
      });
      const std::string name = "ex-RaBitQ " + std::to_string(bits) + " bit, " +
                               std::to_string(rabitq.CodeBytes() + (grouped ? 2 : 0)) + " B, " +
                               (grouped ? "groups" : "mean");
      Report(name.c_str(), truth_ranks, ranks, static_cast<double>(n));
    }
  }
  for (const uint32_t p : probes) {
    const size_t take = std::min<size_t>(p, four.groups());
    std::vector<size_t> scored(queries, 0);
    pool->ParallelFor(queries, [&](size_t q) {
      ResidualSq4Query query;
      query.Reset(four, metric, &data.queries[q * dim]);
      std::vector<std::pair<float, uint32_t>> nearest;
      for (uint32_t g = 0; g < four.groups(); ++g) nearest.push_back({query.group_terms()[g], g});
      std::partial_sort(nearest.begin(), nearest.begin() + take, nearest.end());
      std::vector<uint32_t> candidates;
      for (size_t i = 0; i < take; ++i) {
        const std::vector<uint32_t>& m = members[nearest[i].second];
        candidates.insert(candidates.end(), m.begin(), m.end());
      }
      scored[q] = candidates.size();
      truth_ranks[q] = TruthRanks(truth[q], candidates, [&](uint32_t v) {
        return query.Distance(&four_codes[size_t{v} * four_bytes]);
      });
    });
    size_t sum = 0;
    for (const size_t s : scored) sum += s;
    const std::string name = "4-bit residual, " + std::to_string(take) + " nearest groups";
    Report(name.c_str(), truth_ranks, ranks, static_cast<double>(sum) / queries);
  }
  return 0;
}
