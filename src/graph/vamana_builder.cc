// Copyright 2026 The shoal Authors.

#include "graph/vamana_builder.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "graph/medoid.h"

namespace shoal::graph {
namespace {

// DiskANN's "graph slack": a list may grow to 1.3 R through backward edges
// before it is pruned back to R, so the cost of a prune is shared by ~0.3 R
// insertions instead of paid on every one.
constexpr double kSlack = 1.3;

// Positions of the insertion order are claimed this many at a time.
constexpr size_t kChunk = 32;

// Vectors this far ahead of the one being compared are prefetched.
constexpr size_t kPrefetchAhead = 4;

// Waiting for a list's writer: spin briefly, then yield — with more threads
// than cores the writer may be descheduled, and spinning would only delay it.
void Backoff(int* spins) {
  if (++*spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  } else {
    std::this_thread::yield();
  }
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

}  // namespace

void VamanaBuilder::OnEveryThread(ThreadPool* pool, size_t threads,
                                  const std::function<void(size_t)>& fn) {
  if (threads == 1) {
    fn(0);
  } else {
    pool->ParallelFor(threads, fn);
  }
}

uint32_t VamanaBuilder::ListCapacity(uint32_t max_degree) {
  return static_cast<uint32_t>(std::ceil(max_degree * kSlack));
}

VamanaBuilder::VamanaBuilder(NodeStore* store, const BuildDistance& distance,
                             const GraphOptions& options, uint64_t seed)
    : store_(store),
      distance_(distance),
      n_(store->size()),
      max_degree_(options.max_degree),
      // A list never holds more nodes than the graph has.
      list_size_(static_cast<uint32_t>(
          std::min<size_t>(options.build_list_size, std::max<size_t>(n_, 1)))),
      alpha_(options.alpha),
      seed_(seed) {}

void VamanaBuilder::Lock(uint32_t node) {
  std::atomic_ref<uint32_t> version = store_->version(node);
  int spins = 0;
  while (true) {
    uint32_t v = version.load(std::memory_order_relaxed);
    if ((v & 1) == 0 &&
        version.compare_exchange_weak(v, v + 1, std::memory_order_acquire)) {
      return;
    }
    Backoff(&spins);
  }
}

void VamanaBuilder::Unlock(uint32_t node) {
  std::atomic_ref<uint32_t> version = store_->version(node);
  version.store(version.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

void VamanaBuilder::ReadIds(uint32_t node, std::vector<uint32_t>* out) {
  std::atomic_ref<uint32_t> version = store_->version(node);
  const uint32_t capacity = store_->capacity();
  int spins = 0;
  while (true) {
    const uint32_t before = version.load(std::memory_order_acquire);
    if ((before & 1) == 0) {
      // Racing with a writer is harmless: every word is read atomically,
      // and a torn copy is detected by the version below and retried.
      const uint32_t count =
          std::min(capacity, std::atomic_ref<uint32_t>(store_->count(node))
                                 .load(std::memory_order_relaxed));
      out->resize(count);
      uint32_t* ids = store_->ids(node);
      for (uint32_t k = 0; k < count; ++k) {
        (*out)[k] = std::atomic_ref<uint32_t>(ids[k]).load(std::memory_order_relaxed);
      }
      std::atomic_thread_fence(std::memory_order_acquire);
      if (version.load(std::memory_order_relaxed) == before) return;
    }
    Backoff(&spins);
  }
}

void VamanaBuilder::Build(ThreadPool* pool, GraphBuildStats* stats) {
  Extend(0, {}, pool, stats);
}

void VamanaBuilder::Extend(size_t seeded, const SeedFn& seed, ThreadPool* pool,
                           GraphBuildStats* stats) {
  if (n_ == 0) return;
  placed_ = stats == nullptr ? nullptr : stats->placed;
  const size_t threads = pool == nullptr ? 1 : std::max<size_t>(1, pool->size());
  scratch_.resize(threads);
  pruned_prefix_.assign(n_, 0);

  auto start = std::chrono::steady_clock::now();
  if (seeded > 0) {
    std::atomic<size_t> next{0};
    OnEveryThread(pool, threads, [&](size_t t) {
      Scratch* s = &scratch_[t];
      for (size_t begin; (begin = next.fetch_add(1024)) < seeded;) {
        const size_t end = std::min(seeded, begin + 1024);
        for (size_t i = begin; i < end; ++i) SeedNode(static_cast<uint32_t>(i), seed, s);
      }
    });
    if (stats != nullptr) {
      stats->seed_seconds = Seconds(start);
      stats->seeded_nodes = seeded;
    }
  }

  start = std::chrono::steady_clock::now();
  // Searches for the new nodes start here: with a seed it must be a seeded
  // node (a new one has no edges yet, and searches from it would never
  // reach the seed).
  medoid_ = FindMedoid(distance_, pool, seeded == 0 ? n_ : seeded);
  if (stats != nullptr) stats->medoid_seconds = Seconds(start);

  // The nodes to insert, in a random order.
  std::vector<uint32_t> order = ShuffledOrder(n_ - seeded, seed_);
  for (uint32_t& node : order) node += static_cast<uint32_t>(seeded);
  start = std::chrono::steady_clock::now();
  RunPass(order, pool);
  FinalPrune(pool);
  const auto connect_start = std::chrono::steady_clock::now();
  size_t connected = 0;
  if (connect_) {
    LinkNearestBack(seeded, pool);
    connected = Connect();
  }
  if (stats != nullptr) {
    stats->insert_seconds = Seconds(start);
    stats->connect_seconds = Seconds(connect_start);
    stats->connected_nodes = connected;
  }

  uint64_t computed = 2 * n_;  // the medoid's two passes over the points
  for (const Scratch& s : scratch_) computed += s.distances;
  if (stats != nullptr) stats->distance_computations = computed;
  scratch_.clear();
  scratch_.shrink_to_fit();
  pruned_prefix_.clear();
  pruned_prefix_.shrink_to_fit();
}

void VamanaBuilder::SeedNode(uint32_t p, const SeedFn& seed, Scratch* s) {
  const size_t kept = seed(p, &s->neighbors);
  s->pool.clear();
  s->visited.Clear(n_);
  s->visited.TestAndSet(p);
  for (uint32_t v : s->neighbors) {
    if (!s->visited.TestAndSet(v)) s->pool.push_back({distance_(p, v), v});
  }
  s->distances += s->pool.size();
  const size_t own = std::min(kept, s->pool.size());
  // Nothing else touches the seeded lists yet: no lock needed.
  if (own == s->pool.size() || own > max_degree_) {
    // Nothing dropped (or more kept edges than R, from a seed built with a
    // larger R): the list as it was, pruned if longer than R.
    SortCandidates(p, &s->pool);
    if (s->pool.size() > max_degree_) {
      RobustPrune(p, s->pool, alpha_, max_degree_, distance_, &s->pruned, &s->distances);
      SetList(p, s->pruned, /*pruned=*/true);
    } else {
      SetList(p, s->pool, /*pruned=*/false);
    }
    return;
  }
  // Repair: the kept neighbours stay (pruning them again would drop the
  // back edges other nodes gave p, and with them paths to those nodes); the
  // freed places go to the dropped neighbours' kept neighbours, closest
  // first, each unless a neighbour already in the list occludes it
  // (RobustPrune's rule).
  s->pruned.assign(s->pool.begin(), s->pool.begin() + own);
  std::sort(s->pool.begin() + own, s->pool.end(), CloserCandidate);
  for (size_t i = own; i < s->pool.size() && s->pruned.size() < max_degree_; ++i) {
    const Candidate& c = s->pool[i];
    bool occluded = false;
    for (const Candidate& n : s->pruned) {
      ++s->distances;
      if (alpha_ * distance_(n.node, c.node) <= c.distance) {
        occluded = true;
        break;
      }
    }
    if (!occluded) s->pruned.push_back(c);
  }
  std::sort(s->pruned.begin(), s->pruned.end(), CloserCandidate);
  // Not RobustPrune's choice (the kept neighbours were not tested).
  SetList(p, s->pruned, /*pruned=*/false);
}

void VamanaBuilder::RunPass(const std::vector<uint32_t>& order, ThreadPool* pool) {
  std::atomic<size_t> next{0};
  const size_t n = order.size();
  OnEveryThread(pool, scratch_.size(), [&](size_t t) {
    Scratch* s = &scratch_[t];
    for (size_t begin; (begin = next.fetch_add(kChunk)) < n;) {
      const size_t end = std::min(n, begin + kChunk);
      for (size_t i = begin; i < end; ++i) Insert(order[i], s);
      if (placed_ != nullptr) placed_->fetch_add(end - begin, std::memory_order_relaxed);
    }
  });
}

void VamanaBuilder::Search(uint32_t p, Scratch* s) {
  if (!distance_.has_codes()) {
    Walk(p, FloatBuildQuery(distance_, p), /*codes=*/false, s);
    return;
  }
  s->coded.Reset(distance_, p);
  Walk(p, s->coded, /*codes=*/true, s);
  // The prune needs exact distances (its alpha rule compares them with
  // distances between candidates): the few nodes expanded get them.
  for (Candidate& c : s->expanded) c.distance = distance_(p, c.node);
  s->distances += s->expanded.size();
}

template <class DistanceToP>
void VamanaBuilder::Walk(uint32_t p, const DistanceToP& distance, bool codes, Scratch* s) {
  CandidateList& list = s->list;
  list.Reset(list_size_);
  s->visited.Clear(n_);
  s->expanded.clear();
  s->visited.TestAndSet(medoid_);
  list.Insert(distance(medoid_), medoid_);
  uint64_t computed = 1;
  auto prefetch = [&](uint32_t v) {
    if (codes) {
      distance_.PrefetchCode(v);
    } else {
      distance_.Prefetch(v);
    }
  };
  for (size_t i; (i = list.NextUnexpanded()) < list.size();) {
    const uint32_t u = list.node(i);
    s->expanded.push_back({list.distance(i), u});
    list.MarkExpanded(i);
    // The likely next node to expand: fetch its list while we work on u's.
    for (size_t j = i + 1; j < list.size(); ++j) {
      if (!list.expanded(j)) {
        PrefetchBytes(store_->list(list.node(j)), 128, 128);
        break;
      }
    }
    ReadIds(u, &s->neighbors);
    // The neighbours not seen yet, branch-free (as in segment search: a
    // mispredicted branch per neighbour cost more than the rest of the loop).
    s->todo.resize(s->neighbors.size());
    uint32_t* todo = s->todo.data();
    uint16_t* marks = s->visited.marks();
    const uint16_t epoch = s->visited.epoch();
    size_t m = 0;
    for (uint32_t v : s->neighbors) {
      todo[m] = v;
      m += marks[v] != epoch;
      marks[v] = epoch;
    }
    s->todo.resize(m);
    // Four distances a call (one pass over the query for four codes), the
    // next four prefetched meanwhile; inserted in the same order as one at
    // a time, so the same graph.
    for (size_t j = 0; j < std::min(m, kPrefetchAhead); ++j) prefetch(todo[j]);
    size_t j = 0;
    for (float d[4]; j + 4 <= m; j += 4) {
      for (size_t a = j + kPrefetchAhead; a < std::min(m, j + kPrefetchAhead + 4); ++a) {
        prefetch(todo[a]);
      }
      distance.Four(todo + j, d);
      for (size_t k = 0; k < 4; ++k) {
        if (list.Accepts(d[k])) list.Insert(d[k], todo[j + k]);
      }
    }
    for (; j < m; ++j) {
      if (j + kPrefetchAhead < m) prefetch(todo[j + kPrefetchAhead]);
      const float d = distance(todo[j]);
      if (list.Accepts(d)) list.Insert(d, todo[j]);
    }
    computed += m;
  }
  s->distances += computed;
}

void VamanaBuilder::Insert(uint32_t p, Scratch* s) {
  Search(p, s);
  // Candidates: the nodes the search expanded, plus p's current neighbours
  // (backward edges other insertions gave p), each once.
  s->pool.clear();
  s->visited.Clear(n_);
  for (const Candidate& c : s->expanded) {
    if (c.node != p && !s->visited.TestAndSet(c.node)) s->pool.push_back(c);
  }
  Lock(p);
  AddListToPool(p, s);
  Unlock(p);
  const uint32_t seen = store_->version(p).load(std::memory_order_relaxed);
  SortCandidates(p, &s->pool);
  RobustPrune(p, s->pool, alpha_, max_degree_, distance_, &s->pruned, &s->distances);

  Lock(p);
  // Other insertions may have given p backward edges since we read its
  // list; replacing the list would drop them (nearby points are often
  // inserted at the same time). Prune again with them included.
  if (store_->version(p).load(std::memory_order_relaxed) != seen + 1 && AddListToPool(p, s)) {
    SortCandidates(p, &s->pool);
    RobustPrune(p, s->pool, alpha_, max_degree_, distance_, &s->pruned, &s->distances);
  }
  SetList(p, s->pruned, /*pruned=*/true);
  Unlock(p);

  // s->pruned is reused by the prunes below (and p's list may change under
  // other threads): walk a copy.
  s->chosen.assign(s->pruned.begin(), s->pruned.end());
  for (const Candidate& c : s->chosen) AddBackEdge(c.node, p, c.distance, s);
}

bool VamanaBuilder::AddListToPool(uint32_t p, Scratch* s) {
  const uint32_t* ids = store_->ids(p);
  const float* distances = store_->distances(p);
  const size_t before = s->pool.size();
  for (uint32_t k = 0; k < store_->count(p); ++k) {
    if (!s->visited.TestAndSet(ids[k])) s->pool.push_back({distances[k], ids[k]});
  }
  return s->pool.size() > before;
}

void VamanaBuilder::AddBackEdge(uint32_t from, uint32_t to, float distance, Scratch* s) {
  Lock(from);
  const uint32_t count = store_->count(from);
  uint32_t* ids = store_->ids(from);
  if (std::find(ids, ids + count, to) == ids + count) {
    if (count < store_->capacity()) {
      std::atomic_ref<uint32_t>(ids[count]).store(to, std::memory_order_relaxed);
      store_->distances(from)[count] = distance;
      std::atomic_ref<uint32_t>(store_->count(from)).store(count + 1, std::memory_order_relaxed);
    } else {
      const Candidate extra{distance, to};
      PruneList(from, &extra, s);
    }
  }
  Unlock(from);
}

void VamanaBuilder::PruneList(uint32_t node, const Candidate* extra, Scratch* s) {
  s->pool.clear();
  const uint32_t* ids = store_->ids(node);
  const float* distances = store_->distances(node);
  for (uint32_t k = 0; k < store_->count(node); ++k) s->pool.push_back({distances[k], ids[k]});
  if (extra != nullptr) s->pool.push_back(*extra);
  SortCandidates(node, &s->pool);
  // The head a prune left, marked in s->visited (free here: every caller is
  // done with its search's marks), flagged in the sorted pool.
  const uint32_t head = use_kept_before_ ? pruned_prefix_[node] : 0;
  s->kept_before.clear();
  if (head > 0) {
    s->visited.Clear(n_);
    for (uint32_t k = 0; k < head; ++k) s->visited.TestAndSet(ids[k]);
    s->kept_before.resize(s->pool.size());
    for (size_t i = 0; i < s->pool.size(); ++i) {
      s->kept_before[i] = s->visited.Contains(s->pool[i].node) ? 1 : 0;
    }
  }
  RobustPrune(node, s->pool, alpha_, max_degree_, distance_, &s->pruned, &s->distances,
              s->kept_before);
  SetList(node, s->pruned, /*pruned=*/true);
}

void VamanaBuilder::SetList(uint32_t node, const std::vector<Candidate>& list, bool pruned) {
  pruned_prefix_[node] = pruned ? static_cast<uint32_t>(list.size()) : 0;
  uint32_t* ids = store_->ids(node);
  float* distances = store_->distances(node);
  // Atomic stores: ReadIds may be copying this list concurrently.
  for (size_t k = 0; k < list.size(); ++k) {
    std::atomic_ref<uint32_t>(ids[k]).store(list[k].node, std::memory_order_relaxed);
    distances[k] = list[k].distance;
  }
  std::atomic_ref<uint32_t>(store_->count(node))
      .store(static_cast<uint32_t>(list.size()), std::memory_order_relaxed);
}

void VamanaBuilder::FinalPrune(ThreadPool* pool) {
  std::atomic<size_t> next{0};
  OnEveryThread(pool, scratch_.size(), [&](size_t t) {
    Scratch* s = &scratch_[t];
    for (size_t begin; (begin = next.fetch_add(1024)) < n_;) {
      for (size_t i = begin; i < std::min(n_, begin + 1024); ++i) {
        // Each node is visited by one thread only; no lock needed.
        const uint32_t node = static_cast<uint32_t>(i);
        if (store_->count(node) > max_degree_) PruneList(node, nullptr, s);
      }
    }
  });
}

}  // namespace shoal::graph
