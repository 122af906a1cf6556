// Copyright 2026 The shoal Authors.
//
// MappedFile's defaults (include/shoal/file_system.h).

#include <cstring>

#include "shoal/file_system.h"

namespace shoal {

absl::Status MappedFile::Write(size_t offset, std::span<const std::string_view> pieces) {
  char* out = data() + offset;
  for (std::string_view piece : pieces) {
    std::memcpy(out, piece.data(), piece.size());
    out += piece.size();
  }
  return absl::OkStatus();
}

}  // namespace shoal
