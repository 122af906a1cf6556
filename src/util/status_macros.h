// Copyright 2026 The shoal Authors.
// Early-return helpers for absl::Status / absl::StatusOr.
#ifndef SHOAL_SRC_UTIL_STATUS_MACROS_H_
#define SHOAL_SRC_UTIL_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define SHOAL_CONCAT_INNER_(a, b) a##b
#define SHOAL_CONCAT_(a, b) SHOAL_CONCAT_INNER_(a, b)

// Returns from the current function when `expr` (an absl::Status) is not OK.
#define SHOAL_RETURN_IF_ERROR(expr)                 \
  do {                                              \
    ::absl::Status shoal_status_ = (expr);          \
    if (!shoal_status_.ok()) return shoal_status_;  \
  } while (0)

// `lhs = value of expr` when the StatusOr is OK, else returns its status.
#define SHOAL_ASSIGN_OR_RETURN(lhs, expr) \
  SHOAL_ASSIGN_OR_RETURN_IMPL_(SHOAL_CONCAT_(shoal_statusor_, __LINE__), lhs, expr)
#define SHOAL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return std::move(tmp).status();     \
  lhs = std::move(tmp).value()

#endif  // SHOAL_SRC_UTIL_STATUS_MACROS_H_
