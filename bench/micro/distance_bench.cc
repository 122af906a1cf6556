// Copyright 2026 The shoal Authors.
//
// Distance kernels (src/distance/) per metric and dim, against the machine's
// peak and against a plain scalar loop. Three implementations:
//
//   dispatch  the kernels shoal runs (Kernels(): AVX-512, AVX2+FMA or scalar,
//             chosen for this CPU; the ISA is the benchmark's label)
//   fallback  shoal's portable kernels (ScalarKernels(): four accumulators,
//             which GCC packs into one SSE register, so one chain of
//             4-wide adds)
//   plain     a one-accumulator scalar loop (scalar_reference.h)
//
// and two working sets:
//
//   l1  one pair of vectors, reused: the kernel's own speed
//   l3  8 MiB of rows (past L2, within L3) through the batch kernel, as a
//       memtable scan reads them
//
// Metrics: kL2 is l2_squared; kInnerProduct and kCosine are both `dot`
// (the metric only negates or subtracts from 1), so `dot` stands for both.
//
// Counters: GFLOPs (GFLOP/s, counting 2*dim flops per dot product and 3*dim
// per squared L2: a subtract, a multiply and an add per dim) and pct_peak
// (that rate as a percentage of the core's peak, see CoreLimits).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/bench_util.h"
#include "distance/distance.h"
#include "micro/micro_util.h"
#include "micro/scalar_reference.h"

namespace shoal_bench {
namespace {

using shoal::BatchDistanceFn;
using shoal::DistanceFn;

enum class Op { kL2, kDot };
enum class Impl { kDispatch, kFallback, kPlain };

constexpr size_t kDims[] = {16, 97, 128, 256, 768, 1536};
constexpr size_t kL3Bytes = size_t{8} << 20;

// ---- The core's limits ----
//
// Peak = (SIMD width in floats) x 2 (an FMA is two flops) x 2 (FMA pipes)
// x clock, for one core. The width is that of the widest ISA the CPU has
// (16 for AVX-512, 8 for AVX2+FMA, 4 otherwise), assumed to have two FMA
// pipes of that width: true of Zen 2/3 and of Intel cores since Haswell (for
// AVX-512, of Xeons with two 512-bit units); on Zen 4, which splits 512-bit
// operations in two, and on one-unit Xeons the real AVX-512 peak is half.
//
// The clock is measured: the rate of a chain of dependent integer adds, one
// per cycle on every x86-64 core of the last fifteen years. That is the clock
// the benchmarks run at, turbo included; /proc/cpuinfo's "cpu MHz" (also
// printed) is often the nominal one, especially in a VM.
//
// No kernel that streams two vectors can reach this peak: each FMA needs two
// loads (a and b), and a core loads at most two vectors per cycle, so a dot
// product tops out at 50% of it. Squared L2, counted as 3 flops per element
// with its subtract on separate add pipes (Zen) or in the FMA's place
// (Intel), tops out at 75%.
struct CoreLimits {
  double clock_hz = 0;          // measured
  double cpuinfo_hz = 0;        // first "cpu MHz" of /proc/cpuinfo, 0 if none
  int simd_floats = 4;
  double peak_flops = 0;        // per second, one core
};

double CpuInfoHz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) return std::atof(line.c_str() + colon + 1) * 1e6;
  }
  return 0;
}

double MeasureClockHz() {
#if defined(__x86_64__)
  // 20M adds per trial (~6 ms); the best of five skips a slow first one
  // (clock ramping up, page faults).
  constexpr int kRounds = 200000, kAddsPerRound = 100;
  double best = 0;
  for (int trial = 0; trial < 5; ++trial) {
    uint64_t x = 0;
    Stopwatch watch;
    for (int i = 0; i < kRounds; ++i) {
      asm volatile(".rept 100\n\taddq $1, %0\n\t.endr" : "+r"(x));
    }
    best = std::max(best, kRounds * double{kAddsPerRound} / watch.Seconds());
  }
  return best;
#else
  return CpuInfoHz();
#endif
}

const CoreLimits& Limits() {
  static const CoreLimits limits = [] {
    CoreLimits l;
    l.clock_hz = MeasureClockHz();
    l.cpuinfo_hz = CpuInfoHz();
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
      l.simd_floats = 16;
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
      l.simd_floats = 8;
    }
#endif
    l.peak_flops = l.simd_floats * 2.0 * 2.0 * l.clock_hz;
    return l;
  }();
  return limits;
}

// ---- Kernels ----

const char* OpName(Op op) { return op == Op::kL2 ? "l2" : "dot"; }
const char* ImplName(Impl impl) {
  switch (impl) {
    case Impl::kDispatch:
      return "dispatch";
    case Impl::kFallback:
      return "fallback";
    case Impl::kPlain:
      break;
  }
  return "plain";
}

double FlopsPerDistance(Op op, size_t dim) {
  return (op == Op::kL2 ? 3.0 : 2.0) * static_cast<double>(dim);
}

DistanceFn KernelFor(Op op, Impl impl) {
  switch (impl) {
    case Impl::kDispatch:
      return op == Op::kL2 ? shoal::Kernels().l2_squared : shoal::Kernels().dot;
    case Impl::kFallback:
      return op == Op::kL2 ? shoal::ScalarKernels().l2_squared : shoal::ScalarKernels().dot;
    case Impl::kPlain:
      break;
  }
  return op == Op::kL2 ? &L2SquaredReference : &DotReference;
}

template <DistanceFn kFn>
void PlainBatch(const float* query, const float* base, size_t n, size_t dim, float* out) {
  for (size_t r = 0; r < n; ++r) out[r] = kFn(query, base + r * dim, dim);
}

BatchDistanceFn BatchKernelFor(Op op, Impl impl) {
  switch (impl) {
    case Impl::kDispatch:
      return op == Op::kL2 ? shoal::Kernels().l2_squared_batch : shoal::Kernels().dot_batch;
    case Impl::kFallback:
      return op == Op::kL2 ? shoal::ScalarKernels().l2_squared_batch
                           : shoal::ScalarKernels().dot_batch;
    case Impl::kPlain:
      break;
  }
  return op == Op::kL2 ? &PlainBatch<L2SquaredReference> : &PlainBatch<DotReference>;
}

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], FreeDeleter>;

// A copy of `v` starting on a cache line, as arena and segment rows of
// 128-d vectors do; otherwise half the 32-byte loads would split lines.
AlignedFloats AlignedCopy(const std::vector<float>& v) {
  const size_t bytes = (v.size() * sizeof(float) + 63) / 64 * 64;
  AlignedFloats out(static_cast<float*>(std::aligned_alloc(64, bytes)));
  std::copy(v.begin(), v.end(), out.get());
  return out;
}

void ReportFlops(benchmark::State& state, double flops, double seconds) {
  const double rate = flops / seconds;
  state.counters["GFLOPs"] = rate * 1e-9;
  state.counters["pct_peak"] = 100.0 * rate / Limits().peak_flops;
}

// ---- Benchmarks ----

void BM_DistanceL1(benchmark::State& state, Op op, Impl impl, size_t dim) {
  const DistanceFn fn = KernelFor(op, impl);
  const AlignedFloats a = AlignedCopy(GaussianVectors(1, dim, 1));
  const AlignedFloats b = AlignedCopy(GaussianVectors(1, dim, 2));
  const float* pa = a.get();
  const float* pb = b.get();
  Stopwatch watch;
  for (auto _ : state) {
    float d = fn(pa, pb, dim);
    benchmark::DoNotOptimize(d);
  }
  const double seconds = watch.Seconds();
  ReportFlops(state, FlopsPerDistance(op, dim) * state.iterations(), seconds);
  state.SetItemsProcessed(state.iterations());
  if (impl == Impl::kDispatch) state.SetLabel(shoal::Kernels().isa);
}

// kL3Bytes of rows of `dim` floats, made once per dim: the benchmark library
// calls each benchmark several times, and drawing 2M normal floats each time
// would cost more than the runs.
const float* L3Rows(size_t dim) {
  static auto* const rows = new std::map<size_t, AlignedFloats>;
  AlignedFloats& r = (*rows)[dim];
  if (r == nullptr) r = AlignedCopy(GaussianVectors(kL3Bytes / (dim * sizeof(float)), dim, 3));
  return r.get();
}

void BM_DistanceL3(benchmark::State& state, Op op, Impl impl, size_t dim) {
  const BatchDistanceFn fn = BatchKernelFor(op, impl);
  const size_t n = kL3Bytes / (dim * sizeof(float));
  const float* base = L3Rows(dim);
  const AlignedFloats query = AlignedCopy(GaussianVectors(1, dim, 4));
  std::vector<float> out(n);
  Stopwatch watch;
  for (auto _ : state) {
    fn(query.get(), base, n, dim, out.data());
    benchmark::ClobberMemory();
  }
  const double seconds = watch.Seconds();
  ReportFlops(state, FlopsPerDistance(op, dim) * n * state.iterations(), seconds);
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * dim * sizeof(float));
  if (impl == Impl::kDispatch) state.SetLabel(shoal::Kernels().isa);
}

// Registers every (working set, op, impl, dim) under a readable name, e.g.
// "distance/l1/dot/dispatch/dim:128", and records the core's limits in the
// run's context (printed above the table, and in --benchmark_format=json).
int RegisterAll() {
  const CoreLimits& limits = Limits();
  benchmark::AddCustomContext("shoal_isa", shoal::Kernels().isa);
  benchmark::AddCustomContext("core_clock_ghz_measured",
                              absl::StrFormat("%.2f", limits.clock_hz * 1e-9));
  benchmark::AddCustomContext("core_clock_ghz_cpuinfo",
                              absl::StrFormat("%.2f", limits.cpuinfo_hz * 1e-9));
  benchmark::AddCustomContext(
      "core_peak_gflops",
      absl::StrFormat("%.1f (%d floats x 2 flops/FMA x 2 FMA pipes x measured clock)",
                      limits.peak_flops * 1e-9, limits.simd_floats));
  for (const char* set : {"l1", "l3"}) {
    for (Op op : {Op::kL2, Op::kDot}) {
      for (Impl impl : {Impl::kDispatch, Impl::kFallback, Impl::kPlain}) {
        for (size_t dim : kDims) {
          const std::string name =
              absl::StrCat("distance/", set, "/", OpName(op), "/", ImplName(impl), "/dim:", dim);
          const bool l1 = set[1] == '1';
          benchmark::RegisterBenchmark(name.c_str(),
                                       [op, impl, dim, l1](benchmark::State& state) {
                                         if (l1) {
                                           BM_DistanceL1(state, op, impl, dim);
                                         } else {
                                           BM_DistanceL3(state, op, impl, dim);
                                         }
                                       })
              ->UseRealTime()
              ->MinTime(0.1);  // 72 cases: keeps the whole run near a minute
        }
      }
    }
  }
  return 0;
}

[[maybe_unused]] const int kRegistered = RegisterAll();

}  // namespace
}  // namespace shoal_bench
