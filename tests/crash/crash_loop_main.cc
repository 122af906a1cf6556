// Copyright 2026 The shoal Authors.
//
// crash_loop: kill -9 cycles and power-loss cycles against the oracle of
// crash/workload.h. Exit status 0 when no acknowledged write was lost and
// no invariant broke; the figures at the end are what docs/guarantees.md
// quotes.
//
//   crash_loop [--cycles N] [--power-cycles M] [--seed S] [--cycles-per-db K]
//              [--dir D] [--verbose]
//
// --cycles: kill cycles (default 200); --power-cycles: power-loss cycles
// (default N / 5); --seed: the master seed (default: from the clock; printed,
// so a failing run can be repeated as closely as timing allows); --dir: where
// the databases go (default /dev/shm; a disk directory exercises the direct-
// I/O kAlways log).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "crash/loops.h"

namespace {

void Print(const char* what, const shoal::crash::Figures& f, double seconds) {
  std::printf(
      "%s: %llu cycles (kNever %llu, kAlways %llu, kInterval %llu) in %.1f s; "
      "%llu operations acknowledged; %llu in flight at the crash (%llu found applied); "
      "%llu acknowledged operations required durable and checked; %llu faults injected",
      what, static_cast<unsigned long long>(f.cycles),
      static_cast<unsigned long long>(f.cycles_by_policy[0]),
      static_cast<unsigned long long>(f.cycles_by_policy[1]),
      static_cast<unsigned long long>(f.cycles_by_policy[2]), seconds,
      static_cast<unsigned long long>(f.ops_acked), static_cast<unsigned long long>(f.in_flight),
      static_cast<unsigned long long>(f.in_flight_applied),
      static_cast<unsigned long long>(f.required_checked),
      static_cast<unsigned long long>(f.faults));
  if (f.kills_before_first_write > 0) {
    std::printf("; %llu kills before the first write (during recovery)",
                static_cast<unsigned long long>(f.kills_before_first_write));
  }
  if (f.prefix_keeps > 0 || f.block_keeps > 0 || f.clean_closes > 0) {
    std::printf("; %llu cuts kept a random prefix of unsynced data, %llu random blocks of it; "
                "%llu after a clean Close; %llu Flush/Compact calls completed",
                static_cast<unsigned long long>(f.prefix_keeps),
                static_cast<unsigned long long>(f.block_keeps),
                static_cast<unsigned long long>(f.clean_closes),
                static_cast<unsigned long long>(f.flushes));
  }
  std::printf("; %llu crashes while a segment file (flush, merge, consolidation) was written",
              static_cast<unsigned long long>(f.cuts_mid_segment_write));
  std::printf("; %llu whole checkpoints found after the crash, opened and checked",
              static_cast<unsigned long long>(f.checkpoints));
  std::printf("; acknowledged writes lost: %llu\n", static_cast<unsigned long long>(f.lost));
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t kill_cycles = 200;
  long long power_cycles = -1;
  uint64_t seed = static_cast<uint64_t>(
      std::chrono::steady_clock::now().time_since_epoch().count());
  uint64_t per_db = 20;
  bool verbose = false;
  std::string root;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--cycles") {
      kill_cycles = std::strtoull(next(), nullptr, 10);
    } else if (arg == "--power-cycles") {
      power_cycles = std::strtoll(next(), nullptr, 10);
    } else if (arg == "--seed") {
      seed = std::strtoull(next(), nullptr, 10);
    } else if (arg == "--cycles-per-db") {
      per_db = std::max<uint64_t>(1, std::strtoull(next(), nullptr, 10));
    } else if (arg == "--dir") {
      root = next();
    } else if (arg == "--verbose") {
      verbose = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--cycles N] [--power-cycles M] [--seed S] [--cycles-per-db K] "
                   "[--dir D] [--verbose]\n",
                   argv[0]);
      return 2;
    }
  }
  if (power_cycles < 0) power_cycles = static_cast<long long>(kill_cycles / 5);
  std::printf("crash_loop: seed %llu\n", static_cast<unsigned long long>(seed));
  std::fflush(stdout);

  shoal::crash::LoopConfig config;
  config.seed = seed;
  config.cycles_per_db = per_db;
  config.verbose = verbose;
  config.root = root;

  shoal::crash::Figures kill;
  config.cycles = kill_cycles;
  auto start = std::chrono::steady_clock::now();
  const bool kill_ok = shoal::crash::RunKillLoop(config, &kill);
  Print("kill -9", kill,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (!kill_ok) return 1;

  shoal::crash::Figures power;
  config.cycles = static_cast<uint64_t>(power_cycles);
  config.seed = seed + 1;
  config.cycles_per_db = std::max<uint64_t>(1, per_db / 2);
  start = std::chrono::steady_clock::now();
  const bool power_ok = shoal::crash::RunPowerLossLoop(config, &power);
  Print("power loss", power,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return power_ok ? 0 : 1;
}
