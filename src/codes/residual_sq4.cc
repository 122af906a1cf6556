// Copyright 2026 The shoal Authors.

#include "codes/residual_sq4.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "distance/distance.h"
#include "util/thread_pool.h"

namespace shoal::codes {
namespace {

// Coarse groups a vector's group is looked for in.
constexpr uint32_t kProbes = 2;

// Index of the row of `centres` (count rows) nearest to x; `scratch` holds
// count floats.
uint32_t Nearest(const float* x, const float* centres, uint32_t count, uint32_t dim,
                 std::vector<float>* scratch) {
  scratch->resize(count);
  Kernels().l2_squared_batch(x, centres, count, dim, scratch->data());
  return static_cast<uint32_t>(std::min_element(scratch->begin(), scratch->end()) -
                               scratch->begin());
}

// k-means of the rows points[members[i]]: k centres, seeded with members
// spread evenly over the list, then kIterations Lloyd iterations (an
// emptied centre keeps its place). With fewer members than k the extra
// centres repeat members.
std::vector<float> KMeans(const float* points, const std::vector<uint32_t>& members,
                          uint32_t dim, uint32_t k) {
  std::vector<float> centres(size_t{k} * dim, 0.0f);
  if (members.empty()) return centres;
  for (uint32_t c = 0; c < k; ++c) {
    const size_t pick = members.size() >= k ? size_t{c} * members.size() / k : c % members.size();
    std::copy_n(points + size_t{members[pick]} * dim, dim, &centres[size_t{c} * dim]);
  }
  std::vector<float> scratch;
  std::vector<double> sum(size_t{k} * dim);
  std::vector<size_t> count(k);
  for (int it = 0; it < ResidualSq4::kIterations; ++it) {
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(count.begin(), count.end(), 0);
    for (uint32_t m : members) {
      const float* x = points + size_t{m} * dim;
      const uint32_t c = Nearest(x, centres.data(), k, dim, &scratch);
      ++count[c];
      for (uint32_t j = 0; j < dim; ++j) sum[size_t{c} * dim + j] += x[j];
    }
    for (uint32_t c = 0; c < k; ++c) {
      if (count[c] == 0) continue;
      for (uint32_t j = 0; j < dim; ++j) {
        centres[size_t{c} * dim + j] =
            static_cast<float>(sum[size_t{c} * dim + j] / static_cast<double>(count[c]));
      }
    }
  }
  return centres;
}

// Lloyd-Max over the sorted values of one dimension: kLevels ascending
// levels, seeded at the quantiles.
void FitLevels(const std::vector<float>& sorted, float* level) {
  constexpr uint32_t k = ResidualSq4::kLevels;
  const size_t n = sorted.size();
  for (uint32_t l = 0; l < k; ++l) {
    level[l] = n == 0 ? 0.0f : sorted[std::min(n - 1, static_cast<size_t>((l + 0.5) * n / k))];
  }
  for (int it = 0; it < 2 * ResidualSq4::kIterations; ++it) {
    double sum[k] = {};
    size_t count[k] = {};
    uint32_t l = 0;
    for (float v : sorted) {
      while (l + 1 < k && std::abs(level[l + 1] - v) <= std::abs(level[l] - v)) ++l;
      sum[l] += v;
      ++count[l];
    }
    bool moved = false;
    for (uint32_t i = 0; i < k; ++i) {
      if (count[i] == 0) continue;
      const auto c = static_cast<float>(sum[i] / static_cast<double>(count[i]));
      moved |= c != level[i];
      level[i] = c;
    }
    for (uint32_t i = 1; i < k; ++i) level[i] = std::max(level[i], level[i - 1]);
    if (!moved) break;
  }
}

// The group of x: the nearest of `centres` within the kProbes coarse
// groups nearest to x (coarse group c owns centres [first[c], first[c + 1])).
uint32_t GroupOf(const float* x, const std::vector<float>& coarse,
                 const std::vector<uint32_t>& first, const std::vector<float>& centres,
                 uint32_t dim) {
  const auto coarse_count = static_cast<uint32_t>(coarse.size() / dim);
  thread_local std::vector<float> distances;
  distances.resize(std::max<size_t>(coarse_count, ResidualSq4::kMaxGroups));
  Kernels().l2_squared_batch(x, coarse.data(), coarse_count, dim, distances.data());
  uint32_t probe[kProbes];
  const uint32_t probes = std::min(kProbes, coarse_count);
  for (uint32_t p = 0; p < probes; ++p) {
    const auto it = std::min_element(distances.begin(), distances.begin() + coarse_count);
    probe[p] = static_cast<uint32_t>(it - distances.begin());
    *it = std::numeric_limits<float>::infinity();
  }
  uint32_t best = 0;
  float best_distance = std::numeric_limits<float>::infinity();
  for (uint32_t p = 0; p < probes; ++p) {
    const uint32_t begin = first[probe[p]], end = first[probe[p] + 1];
    Kernels().l2_squared_batch(x, &centres[size_t{begin} * dim], end - begin, dim,
                               distances.data());
    for (uint32_t f = 0; f < end - begin; ++f) {
      if (distances[f] < best_distance) {
        best_distance = distances[f];
        best = begin + f;
      }
    }
  }
  return best;
}

float RootMeanSquare(const float* r, uint32_t dim) {
  double sum = 0;
  for (uint32_t j = 0; j < dim; ++j) sum += double{r[j]} * r[j];
  return static_cast<float>(std::sqrt(sum / dim));
}

}  // namespace

uint32_t ResidualSq4::ChooseGroups(uint64_t n) {
  const auto groups = static_cast<uint64_t>(2 * std::sqrt(static_cast<double>(n)));
  return static_cast<uint32_t>(std::clamp<uint64_t>(groups, 1, kMaxGroups));
}

uint64_t ResidualSq4::SampleCount(uint64_t n, uint32_t dim, uint32_t groups) {
  const uint64_t by_bytes = std::max<uint64_t>(groups, kMaxSampleBytes / (sizeof(float) * dim));
  return std::min({n, uint64_t{groups} * kSamplePerGroup, by_bytes});
}

ResidualSq4 ResidualSq4::Fit(const float* sample, size_t count, uint32_t dim, uint32_t groups,
                             ThreadPool* pool) {
  // Two levels of k-means: sqrt(groups) coarse groups over the whole
  // sample, then each coarse group's members split into fine groups, as
  // many as its share of the sample (at least one).
  const auto coarse_count =
      static_cast<uint32_t>(std::ceil(std::sqrt(static_cast<double>(groups))));
  std::vector<uint32_t> all(count);
  for (size_t i = 0; i < count; ++i) all[i] = static_cast<uint32_t>(i);
  std::vector<float> coarse = KMeans(sample, all, dim, coarse_count);
  std::vector<std::vector<uint32_t>> members(coarse_count);
  std::vector<float> scratch;
  for (size_t i = 0; i < count; ++i) {
    members[Nearest(sample + i * dim, coarse.data(), coarse_count, dim, &scratch)].push_back(
        static_cast<uint32_t>(i));
  }
  std::vector<uint32_t> first(coarse_count + 1, 0);
  for (uint32_t c = 0; c < coarse_count; ++c) {
    const auto share =
        count == 0 ? 0u
                   : static_cast<uint32_t>(static_cast<double>(groups) *
                                           static_cast<double>(members[c].size()) /
                                           static_cast<double>(count));
    // At least one each, and room left for one in every later coarse group.
    const uint32_t room = kMaxGroups - first[c] - (coarse_count - 1 - c);
    first[c + 1] = first[c] + std::clamp<uint32_t>(share, 1, room);
  }
  // The coarse groups split independently (on the pool, each into its own
  // rows): the same centres with or without it.
  std::vector<float> centres(size_t{first[coarse_count]} * dim);
  const auto split = [&](size_t c) {
    float* out = &centres[size_t{first[c]} * dim];
    if (members[c].empty()) {  // one fine group, at the coarse centre
      std::copy_n(&coarse[c * dim], dim, out);
      return;
    }
    const std::vector<float> fine = KMeans(sample, members[c], dim, first[c + 1] - first[c]);
    std::copy(fine.begin(), fine.end(), out);
  };
  if (pool == nullptr) {
    for (uint32_t c = 0; c < coarse_count; ++c) split(c);
  } else {
    pool->ParallelFor(coarse_count, split);
  }
  // The levels: per dimension, over every sample vector's scaled residual
  // (each vector's group and 1 / scale kept, one dimension's values at a
  // time: no second copy of the sample).
  std::vector<uint32_t> group(count);
  std::vector<float> inverse(count);
  std::vector<float> r(dim);
  for (size_t i = 0; i < count; ++i) {
    const float* x = sample + i * dim;
    group[i] = GroupOf(x, coarse, first, centres, dim);
    const float* c = &centres[size_t{group[i]} * dim];
    for (uint32_t j = 0; j < dim; ++j) r[j] = x[j] - c[j];
    const float s = RootMeanSquare(r.data(), dim);
    inverse[i] = s > 0 ? 1.0f / s : 0.0f;
  }
  std::vector<float> level(size_t{dim} * kLevels);
  std::vector<float> values(count);
  for (uint32_t j = 0; j < dim; ++j) {
    for (size_t i = 0; i < count; ++i) {
      // Not finite (vectors near the float range's end): 0, so that the
      // sort below sees a strict order.
      const float v = (sample[i * dim + j] - centres[size_t{group[i]} * dim + j]) * inverse[i];
      values[i] = std::isfinite(v) ? v : 0.0f;
    }
    std::sort(values.begin(), values.end());
    FitLevels(values, &level[size_t{j} * kLevels]);
  }
  // The PQ codebook of the levels: chunk i = dimensions {2i, 2i + 1};
  // centroid c holds level c & 15 of the first and c >> 4 of the second.
  std::vector<uint32_t> offsets;
  for (uint32_t j = 0; j < dim; j += 2) offsets.push_back(j);
  offsets.push_back(dim);
  std::vector<float> grid(size_t{dim} * Pq::kCentroids);
  for (uint32_t j = 0; j < dim; ++j) {
    for (uint32_t c = 0; c < Pq::kCentroids; ++c) {
      const uint32_t l = j % 2 == 1 ? c >> 4 : c & 15;
      grid[size_t{j} * Pq::kCentroids + c] = level[size_t{j} * kLevels + l];
    }
  }
  std::vector<float> midpoint(size_t{kLevels - 1} * dim);
  for (uint32_t j = 0; j < dim; ++j) {
    for (uint32_t i = 0; i + 1 < kLevels; ++i) {
      midpoint[size_t{i} * dim + j] =
          0.5f * (level[size_t{j} * kLevels + i] + level[size_t{j} * kLevels + i + 1]);
    }
  }
  return ResidualSq4(dim, std::move(first), std::move(coarse), std::move(centres),
                     std::move(level), std::move(midpoint),
                     Pq::FromCodebook(dim, std::move(offsets), std::vector<float>(dim, 0.0f),
                                      std::move(grid)));
}

uint32_t ResidualSq4::NearestGroup(const float* x) const {
  return GroupOf(x, coarse_, first_, centres_, dim_);
}

void ResidualSq4::Encode(const float* x, uint8_t* out) const {
  const uint32_t g = NearestGroup(x);
  const float* c = centre(g);
  thread_local std::vector<float> r;
  thread_local std::vector<uint8_t> level;
  r.resize(dim_);
  level.resize(dim_);
  for (uint32_t j = 0; j < dim_; ++j) r[j] = x[j] - c[j];
  const float s = RootMeanSquare(r.data(), dim_);
  const float inverse = s > 0 ? 1.0f / s : 0.0f;
  for (uint32_t j = 0; j < dim_; ++j) r[j] *= inverse;
  // A value's level is the number of midpoints between levels below it
  // (the nearest level; the lower one on a tie).
  std::fill(level.begin(), level.end(), 0);
  for (uint32_t i = 0; i + 1 < kLevels; ++i) {
    const float* t = &midpoint_[size_t{i} * dim_];
    for (uint32_t j = 0; j < dim_; ++j) level[j] += r[j] > t[j] ? 1 : 0;
  }
  const size_t level_bytes = (size_t{dim_} + 1) / 2;
  std::memset(out, 0, level_bytes);
  double cw = 0, ww = 0;
  for (uint32_t j = 0; j < dim_; ++j) {
    const uint8_t l = level[j];
    const float w = level_[size_t{j} * kLevels + l];
    out[j / 2] |= static_cast<uint8_t>(j % 2 == 1 ? l << 4 : l);
    cw += double{c[j]} * w;
    ww += double{w} * w;
  }
  // k serves kL2 only; queries under the other metrics weigh it 0.
  const auto k = static_cast<float>(2.0 * s * cw + double{s} * s * ww);
  const auto group = static_cast<uint16_t>(g);
  std::memcpy(out + level_bytes, &group, sizeof(group));
  std::memcpy(out + level_bytes + 2, &s, sizeof(s));
  std::memcpy(out + level_bytes + 6, &k, sizeof(k));
}

void ResidualSq4::Decode(const uint8_t* code, float* out) const {
  const float* c = centre(Group(code, dim_));
  const float s = Scale(code, dim_);
  for (uint32_t j = 0; j < dim_; ++j) {
    const uint32_t l = j % 2 == 1 ? code[j / 2] >> 4 : code[j / 2] & 15;
    out[j] = c[j] + s * level_[size_t{j} * kLevels + l];
  }
}

void ResidualSq4Query::Reset(const ResidualSq4& code, Metric metric, const float* q) {
  dim_ = code.dim();
  levels_.Reset(code.levels(), Metric::kInnerProduct, q);
  const uint32_t groups = code.groups();
  group_term_.resize(groups);
  if (metric == Metric::kL2) {
    Kernels().l2_squared_batch(q, code.centre(0), groups, dim_, group_term_.data());
    factor_ = 2;
    k_weight_ = 1;
    return;
  }
  Kernels().dot_batch(q, code.centre(0), groups, dim_, group_term_.data());
  const float base = metric == Metric::kCosine ? 1.0f : 0.0f;
  for (float& t : group_term_) t = base - t;
  factor_ = 1;
  k_weight_ = 0;
}

}  // namespace shoal::codes
