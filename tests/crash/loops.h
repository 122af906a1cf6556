// Copyright 2026 The shoal Authors.
//
// The two crash loops of crash_loop (see crash_loop_main.cc).

#ifndef SHOAL_TESTS_CRASH_LOOPS_H_
#define SHOAL_TESTS_CRASH_LOOPS_H_

#include <cstdint>
#include <string>

#include "crash/workload.h"

namespace shoal::crash {

struct LoopConfig {
  uint64_t cycles = 0;
  uint64_t seed = 1;
  std::string root;            // where database directories are made ("": /dev/shm)
  uint64_t cycles_per_db = 20; // a fresh directory (and shape) after this many
  bool verbose = false;
};

// kill -9: a child process writes with several threads and reports each
// operation before and after it to the parent over a pipe; the parent kills
// it at a random moment, reopens the database and checks it. Returns false
// (after printing why, keeping the directory) on the first violation.
bool RunKillLoop(const LoopConfig& config, Figures* figures);

// Power loss: writers run in this process on the fault-injecting file
// system; at a random moment the power goes off, unsynced data is dropped
// (or a random prefix of it kept) and the database reopened and checked:
// kAlways keeps every acknowledged write, kInterval every one acknowledged
// well before the crash, and every policy keeps a prefix of each shard's
// order. Some cycles close the DB cleanly first: then nothing may be lost.
bool RunPowerLossLoop(const LoopConfig& config, Figures* figures);

}  // namespace shoal::crash

#endif  // SHOAL_TESTS_CRASH_LOOPS_H_
