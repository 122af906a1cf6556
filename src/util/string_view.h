// Copyright 2026 The shoal Authors.
//
// Debian's abseil is built with its own absl::string_view (not an alias of
// std::string_view), so std::string_view must be converted before it is
// passed to absl::StrCat and friends.
#ifndef SHOAL_SRC_UTIL_STRING_VIEW_H_
#define SHOAL_SRC_UTIL_STRING_VIEW_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace shoal {

inline absl::string_view AsAbsl(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_STRING_VIEW_H_
