// Copyright 2026 The shoal Authors.
//
// Memtable insert (src/memtable/): MemTable::Put of 128-d vectors with new
// ids into a fresh memtable, as a shard does after appending to its log.
// A memtable is replaced (untimed) after 64K puts (32 MiB of rows, half the
// default memtable_bytes), so the figures include the index growing and
// the arena taking new 4 MiB blocks from empty.
//
// Arg `mode`:
//   0  defaults of a shard without a DB: arena blocks are new pages, first
//      touched by Put. glibc would otherwise start recycling freed 4 MiB
//      blocks once one has been freed (its mmap threshold adapts), and the
//      figure would depend on what ran before; PinMallocToMmap fixes it.
//   1  with a background thread preparing the next arena block, as a DB does
//   2  preallocated (Options::preallocate): rows and index ready up front;
//      what is left is the copy and the hash insert
//
// Counters: items_per_second (puts) and bytes_per_second (vector bytes).

#include <benchmark/benchmark.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <memory>
#include <vector>

#include "memtable/memtable.h"
#include "micro/micro_util.h"
#include "util/background_worker.h"

namespace shoal_bench {
namespace {

constexpr uint32_t kDim = 128;
constexpr size_t kBlockBytes = size_t{4} << 20;  // Options::arena_block_bytes default
constexpr size_t kPutsPerTable = 65536;
constexpr size_t kSourceRows = 1024;  // 512 KiB of distinct source vectors

// Makes glibc serve every allocation of 1 MiB or more with a fresh mmap
// (and return it with munmap), as it does in a new process, for good: an
// explicit threshold turns its adaptation off. Other allocators: no-op.
void PinMallocToMmap() {
#if defined(__GLIBC__)
  static const bool pinned = mallopt(M_MMAP_THRESHOLD, 1 << 20) == 1;
  (void)pinned;
#endif
}

void BM_MemTablePut(benchmark::State& state) {
  PinMallocToMmap();
  const int mode = static_cast<int>(state.range(0));
  std::unique_ptr<shoal::BackgroundWorker> prefaulter;
  if (mode == 1) prefaulter = std::make_unique<shoal::BackgroundWorker>();
  const bool preallocate = mode == 2;
  auto fresh = [&] {
    return std::make_unique<shoal::MemTable>(kDim, kBlockBytes, preallocate,
                                             kPutsPerTable * kDim * sizeof(float),
                                             prefaulter.get());
  };
  const std::vector<float> vectors = GaussianVectors(kSourceRows, kDim, 1);
  std::unique_ptr<shoal::MemTable> table = fresh();
  size_t in_table = 0;
  uint64_t id = 0;
  for (auto _ : state) {
    if (in_table == kPutsPerTable) {
      state.PauseTiming();
      table.reset();
      table = fresh();
      in_table = 0;
      state.ResumeTiming();
    }
    table->Put(id, &vectors[(id % kSourceRows) * kDim]);
    ++id;
    ++in_table;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * kDim * sizeof(float));
}

BENCHMARK(BM_MemTablePut)->ArgName("mode")->DenseRange(0, 2)->UseRealTime();

}  // namespace
}  // namespace shoal_bench
