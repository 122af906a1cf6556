// Copyright 2026 The shoal Authors.

#include "version/manifest_editor.h"

#include "absl/strings/cord.h"

namespace shoal {
namespace {
constexpr char kInDoubtPayload[] = "shoal/manifest-write-in-doubt";
}  // namespace

bool ManifestWriteInDoubt(const absl::Status& status) {
  return !status.ok() && status.GetPayload(kInDoubtPayload).has_value();
}

absl::Status MarkManifestWriteInDoubt(absl::Status status) {
  if (!status.ok()) status.SetPayload(kInDoubtPayload, absl::Cord("1"));
  return status;
}

}  // namespace shoal
