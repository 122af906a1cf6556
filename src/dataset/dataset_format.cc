// Copyright 2026 The shoal Authors.

#include "dataset/dataset_format.h"

#include <cctype>
#include <string>

namespace shoal {

DatasetFormat DetectFormat(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const size_t dot = base.find_last_of('.');
  if (dot == std::string_view::npos) return DatasetFormat::kUnknown;
  std::string ext(base.substr(dot + 1));
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == "fvecs") return DatasetFormat::kFvecs;
  if (ext == "ivecs") return DatasetFormat::kIvecs;
  if (ext == "bvecs") return DatasetFormat::kBvecs;
  if (ext == "fbin") return DatasetFormat::kFbin;
  if (ext == "ibin") return DatasetFormat::kIbin;
  if (ext == "u8bin") return DatasetFormat::kU8bin;
  if (ext == "npy") return DatasetFormat::kNpy;
  return DatasetFormat::kUnknown;
}

std::string_view FormatName(DatasetFormat format) {
  switch (format) {
    case DatasetFormat::kFvecs: return "fvecs";
    case DatasetFormat::kIvecs: return "ivecs";
    case DatasetFormat::kBvecs: return "bvecs";
    case DatasetFormat::kFbin: return "fbin";
    case DatasetFormat::kIbin: return "ibin";
    case DatasetFormat::kU8bin: return "u8bin";
    case DatasetFormat::kNpy: return "npy";
    case DatasetFormat::kUnknown: break;
  }
  return "unknown";
}

bool IsNeighborFormat(DatasetFormat format) {
  return format == DatasetFormat::kIvecs || format == DatasetFormat::kIbin;
}

}  // namespace shoal
