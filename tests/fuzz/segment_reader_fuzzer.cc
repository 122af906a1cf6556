// Copyright 2026 The shoal Authors.
// libFuzzer entry point; the target and what it checks: fuzz_targets.h.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return shoal::fuzz::FuzzSegmentReader(data, size);
}
