// Copyright 2026 The shoal Authors.

#include "util/debug_timing.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "util/mutex.h"

namespace shoal::timing {
namespace {

bool ReadEnabled() {
  const char* v = std::getenv("SHOAL_DEBUG_TIMING");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

}  // namespace

const bool kEnabled = ReadEnabled();

void Emit(std::string_view kind, std::string_view header, const std::string& fields) {
  static Mutex mu;
  static std::set<std::string, std::less<>>* printed = new std::set<std::string, std::less<>>();
  MutexLock lock(&mu);
  if (printed->insert(std::string(kind)).second) {
    std::fprintf(stderr, "shoal_timing,%.*s,%.*s\n", static_cast<int>(kind.size()), kind.data(),
                 static_cast<int>(header.size()), header.data());
  }
  std::fprintf(stderr, "shoal_timing,%.*s,%s\n", static_cast<int>(kind.size()), kind.data(),
               fields.c_str());
}

}  // namespace shoal::timing
