// Copyright 2026 The shoal Authors.

#include "segment/vamana_builder.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <cstdlib>

#include "segment/medoid.h"

namespace shoal::segment {
namespace {

// DiskANN's "graph slack": a list may grow to 1.3 R through backward edges
// before it is pruned back to R, so the cost of a prune is shared by ~0.3 R
// insertions instead of paid on every one.
constexpr double kSlack = 1.3;

// Positions of the insertion order are claimed this many at a time.
constexpr size_t kChunk = 32;

// Vectors this far ahead of the one being compared are prefetched.
static size_t kPrefetchAhead = getenv("PFA") ? atoi(getenv("PFA")) : 4;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// SplitMix64: a tiny, fully specified generator, so the insertion order (and
// with one thread the whole graph) is the same with every standard library.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : x_(seed) {}
  uint64_t Next() {
    uint64_t z = (x_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t x_;
};

std::vector<uint32_t> ShuffledOrder(size_t n, uint64_t seed) {
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  SplitMix64 rng(seed);
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.Next() % i]);
  return order;
}

// Runs fn(t) for t in [0, threads) concurrently, one per pool thread.
void OnEveryThread(ThreadPool* pool, size_t threads, const std::function<void(size_t)>& fn) {
  if (threads == 1) {
    fn(0);
  } else {
    pool->ParallelFor(threads, fn);
  }
}

}  // namespace

VamanaBuilder::VamanaBuilder(const BuildDistance& distance, const GraphOptions& options,
                             uint64_t seed)
    : distance_(distance),
      n_(distance.size()),
      max_degree_(options.max_degree),
      list_size_(options.build_list_size),
      alpha_(options.alpha),
      capacity_(static_cast<uint32_t>(std::ceil(options.max_degree * kSlack))),
      seed_(seed) {}

void VamanaBuilder::Lock(uint32_t node) {
  std::atomic<uint8_t>& lock = locks_[node];
  int spins = 0;
  while (lock.exchange(1, std::memory_order_acquire) != 0) {
    while (lock.load(std::memory_order_relaxed) != 0) {
      // With more threads than cores the holder may be descheduled: stop
      // burning its core after a short spin.
      if (++spins < 64) {
        CpuRelax();
      } else {
        std::this_thread::yield();
      }
    }
  }
}

void VamanaBuilder::Build(ThreadPool* pool, SegmentBuildStats* stats) {
  if (n_ == 0) return;
  auto start = std::chrono::steady_clock::now();
  medoid_ = FindMedoid(distance_, pool);
  if (stats != nullptr) stats->medoid_seconds = Seconds(start);

  counts_.assign(n_, 0);
  const size_t slots = n_ * capacity_;
  ids_ = std::make_unique_for_overwrite<uint32_t[]>(slots);
  distances_ = std::make_unique_for_overwrite<float[]>(slots);
  locks_ = std::make_unique<std::atomic<uint8_t>[]>(n_);
  const size_t threads = pool == nullptr ? 1 : std::max<size_t>(1, pool->size());
  scratch_.resize(threads);

  start = std::chrono::steady_clock::now();
  RunPass(ShuffledOrder(n_, seed_), 1.0f, pool);
  if (stats != nullptr) stats->pass1_seconds = Seconds(start);

  start = std::chrono::steady_clock::now();
  RunPass(ShuffledOrder(n_, seed_ + 1), alpha_, pool);
  FinalPrune(pool, alpha_);
  if (stats != nullptr) stats->pass2_seconds = Seconds(start);

  uint64_t computed = 2 * n_;  // the medoid's two passes
  for (const Scratch& s : scratch_) computed += s.distances;
  if (stats != nullptr) stats->distance_computations = computed;
  distances_.reset();
  scratch_.clear();
  scratch_.shrink_to_fit();
}

void VamanaBuilder::RunPass(const std::vector<uint32_t>& order, float alpha,
                            ThreadPool* pool) {
  std::atomic<size_t> next{0};
  OnEveryThread(pool, scratch_.size(), [&](size_t t) {
    Scratch* s = &scratch_[t];
    for (size_t begin; (begin = next.fetch_add(kChunk)) < n_;) {
      const size_t end = std::min(n_, begin + kChunk);
      for (size_t i = begin; i < end; ++i) Insert(order[i], alpha, s);
    }
  });
}

void VamanaBuilder::Search(uint32_t p, Scratch* s) {
  CandidateList& list = s->list;
  list.Reset(list_size_);
  s->visited.Clear(n_);
  s->expanded.clear();
  s->visited.TestAndSet(medoid_);
  list.Insert(distance_(p, medoid_), medoid_);
  uint64_t computed = 1;
  for (size_t i; (i = list.NextUnexpanded()) < list.size();) {
    const uint32_t u = list.node(i);
    s->expanded.push_back({list.distance(i), u});
    list.MarkExpanded(i);
    Lock(u);
    s->neighbors.assign(&ids_[size_t{u} * capacity_],
                        &ids_[size_t{u} * capacity_] + counts_[u]);
    Unlock(u);
    s->todo.clear();
    for (uint32_t v : s->neighbors) {
      if (!s->visited.TestAndSet(v)) s->todo.push_back(v);
    }
    const size_t m = s->todo.size();
    for (size_t j = 0; j < std::min(m, kPrefetchAhead); ++j) distance_.Prefetch(s->todo[j]);
    for (size_t j = 0; j < m; ++j) {
      if (j + kPrefetchAhead < m) distance_.Prefetch(s->todo[j + kPrefetchAhead]);
      const uint32_t v = s->todo[j];
      list.Insert(distance_(p, v), v);
    }
    computed += m;
  }
  s->distances += computed;
}

void VamanaBuilder::Insert(uint32_t p, float alpha, Scratch* s) {
  Search(p, s);
  // Candidates: the nodes the search expanded, plus p's current neighbours
  // (pass 2, and backward edges other insertions gave p), each once.
  s->pool.clear();
  s->visited.Clear(n_);
  for (const Candidate& c : s->expanded) {
    if (c.node != p && !s->visited.TestAndSet(c.node)) s->pool.push_back(c);
  }
  const size_t base = size_t{p} * capacity_;
  Lock(p);
  for (uint32_t k = 0; k < counts_[p]; ++k) {
    if (!s->visited.TestAndSet(ids_[base + k])) {
      s->pool.push_back({distances_[base + k], ids_[base + k]});
    }
  }
  Unlock(p);
  SortCandidates(p, &s->pool);
  RobustPrune(p, s->pool, alpha, max_degree_, distance_, &s->pruned, &s->distances);

  Lock(p);
  for (size_t k = 0; k < s->pruned.size(); ++k) {
    ids_[base + k] = s->pruned[k].node;
    distances_[base + k] = s->pruned[k].distance;
  }
  counts_[p] = static_cast<uint32_t>(s->pruned.size());
  Unlock(p);

  // s->pruned is reused by the prunes below (and p's list may change under
  // other threads): walk a copy.
  s->chosen.assign(s->pruned.begin(), s->pruned.end());
  for (const Candidate& c : s->chosen) AddBackEdge(c.node, p, c.distance, alpha, s);
}

void VamanaBuilder::AddBackEdge(uint32_t from, uint32_t to, float distance, float alpha,
                                Scratch* s) {
  const size_t base = size_t{from} * capacity_;
  Lock(from);
  const uint32_t count = counts_[from];
  if (std::find(&ids_[base], &ids_[base] + count, to) == &ids_[base] + count) {
    if (count < capacity_) {
      ids_[base + count] = to;
      distances_[base + count] = distance;
      counts_[from] = count + 1;
    } else {
      const Candidate extra{distance, to};
      PruneList(from, &extra, alpha, s);
    }
  }
  Unlock(from);
}

void VamanaBuilder::PruneList(uint32_t node, const Candidate* extra, float alpha,
                              Scratch* s) {
  const size_t base = size_t{node} * capacity_;
  s->pool.clear();
  for (uint32_t k = 0; k < counts_[node]; ++k) {
    s->pool.push_back({distances_[base + k], ids_[base + k]});
  }
  if (extra != nullptr) s->pool.push_back(*extra);
  SortCandidates(node, &s->pool);
  RobustPrune(node, s->pool, alpha, max_degree_, distance_, &s->pruned, &s->distances);
  for (size_t k = 0; k < s->pruned.size(); ++k) {
    ids_[base + k] = s->pruned[k].node;
    distances_[base + k] = s->pruned[k].distance;
  }
  counts_[node] = static_cast<uint32_t>(s->pruned.size());
}

void VamanaBuilder::FinalPrune(ThreadPool* pool, float alpha) {
  std::atomic<size_t> next{0};
  OnEveryThread(pool, scratch_.size(), [&](size_t t) {
    Scratch* s = &scratch_[t];
    for (size_t begin; (begin = next.fetch_add(1024)) < n_;) {
      for (size_t i = begin; i < std::min(n_, begin + 1024); ++i) {
        // Each node is visited by one thread only; no lock needed.
        if (counts_[i] > max_degree_) PruneList(static_cast<uint32_t>(i), nullptr, alpha, s);
      }
    }
  });
}

}  // namespace shoal::segment
