// Copyright 2026 The shoal Authors.

#include "version/filename.h"

#include <charconv>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace shoal {
namespace {

// Parses prefix + decimal digits + suffix.
bool ParseNumbered(std::string_view name, std::string_view prefix, std::string_view suffix,
                   uint64_t* number) {
  if (!name.starts_with(prefix) || !name.ends_with(suffix) ||
      name.size() <= prefix.size() + suffix.size()) {
    return false;
  }
  const std::string_view digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), *number);
  return error == std::errc() && end == digits.data() + digits.size();
}

}  // namespace

std::string WalFileName(uint64_t number) { return absl::StrFormat("wal-%06d.log", number); }

bool ParseWalFileName(std::string_view name, uint64_t* number) {
  return ParseNumbered(name, "wal-", ".log", number);
}

std::string SegmentFileName(uint64_t number) {
  return absl::StrFormat("seg-%06d.vamana", number);
}

bool ParseSegmentFileName(std::string_view name, uint64_t* number) {
  return ParseNumbered(name, "seg-", ".vamana", number);
}

std::string ShardDirName(uint32_t index) { return absl::StrCat("shard-", index); }

std::string TempFileName(std::string_view name) {
  return std::string(name) + std::string(kTempSuffix);
}

bool IsTempFileName(std::string_view name) { return name.ends_with(kTempSuffix); }

}  // namespace shoal
