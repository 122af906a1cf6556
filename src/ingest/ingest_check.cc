// Copyright 2026 The shoal Authors.

#include "ingest/ingest_check.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "segment/segment.h"
#include "util/hash.h"
#include "util/status_macros.h"
#include "util/string_view.h"

namespace shoal::ingest {
namespace {

const char* MetricName(Metric m) {
  switch (m) {
    case Metric::kL2:
      return "L2";
    case Metric::kInnerProduct:
      return "inner product";
    case Metric::kCosine:
      return "cosine";
  }
  return "unknown";
}

// InvalidArgument "segment <path>: <what> <file's>, the collection's <its>".
template <typename A, typename B>
absl::Status Differs(const std::string& path, std::string_view what, const A& file,
                     const B& collection) {
  return absl::InvalidArgumentError(absl::StrCat("segment ", path, ": ", AsAbsl(what), " ", file,
                                                 ", the collection's ", collection));
}

// The header, read and checked (magic, checksum, version, fields).
absl::StatusOr<segment::Header> ReadHeader(FileSystem* fs, const std::string& path) {
  SHOAL_ASSIGN_OR_RETURN(std::unique_ptr<ReadOnlyMappedFile> file, fs->OpenReadOnlyMapped(path));
  if (file->size() < segment::kHeaderSize) {
    return segment::Corruption(path, absl::StrCat("truncated: ", file->size(),
                                                  " bytes, shorter than a header"));
  }
  segment::Header header;
  SHOAL_RETURN_IF_ERROR(segment::DecodeHeader(
      std::string_view(file->data(), segment::kHeaderSize), path, &header));
  return header;
}

// The settings a SegmentWriter records, against the collection's.
absl::Status CheckShape(const std::string& path, const segment::Header& h,
                        const CollectionOptions& c) {
  const segment::SegmentOrigin& o = h.origin;
  if (!o.present()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "segment ", path, ": not written by a SegmentWriter (no shard recorded in its header)"));
  }
  if (h.dim != c.dim) return Differs(path, "dim", h.dim, c.dim);
  if (h.metric != c.metric) return Differs(path, "metric", MetricName(h.metric), MetricName(c.metric));
  if (h.code != c.code) {
    return Differs(path, "vector code", static_cast<int>(h.code), static_cast<int>(c.code));
  }
  if (h.max_degree != c.graph.max_degree) {
    return Differs(path, "graph max_degree (R)", h.max_degree, c.graph.max_degree);
  }
  if (o.shard_count != c.shard_count) return Differs(path, "shard count", o.shard_count, c.shard_count);
  if (o.attribute_count != c.attributes.size() ||
      o.attributes_fingerprint != segment::AttributesFingerprint(c.attributes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "segment ", path, ": written for ", o.attribute_count,
        " attributes other than the collection's ", c.attributes.size()));
  }
  if (h.tombstone_count != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("segment ", path, ": holds tombstones (a SegmentWriter writes none)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CheckedFile> CheckFile(FileSystem* fs, const std::string& path,
                                      const CollectionOptions& collection, bool verify) {
  CheckedFile out;
  out.path = path;
  SHOAL_ASSIGN_OR_RETURN(out.header, ReadHeader(fs, path));
  SHOAL_RETURN_IF_ERROR(CheckShape(path, out.header, collection));
  // Footer, id table, codes and record regions (mapped: nothing is read
  // into RAM but what those checks read).
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Segment> segment,
                         Segment::Open(fs, path, collection.dim, collection.metric));
  if (verify) SHOAL_RETURN_IF_ERROR(segment->VerifyAll());
  out.per_shard.assign(collection.shard_count, 0);
  const uint32_t shard = out.header.origin.shard;
  uint64_t wrong_id = 0;
  uint32_t wrong_shard = 0;
  bool wrong = false;
  segment->ForEachEntry([&](uint64_t id, uint64_t, bool) {
    const uint32_t s = ShardOf(id, collection.shard_count);
    ++out.per_shard[s];
    if (!wrong && shard != segment::SegmentOrigin::kAllShards && s != shard) {
      wrong = true;
      wrong_id = id;
      wrong_shard = s;
    }
  });
  if (wrong) {
    return absl::InvalidArgumentError(absl::StrCat("segment ", path, ": id ", wrong_id,
                                                   " belongs in shard ", wrong_shard,
                                                   ", but the file holds shard ", shard));
  }
  return out;
}

}  // namespace shoal::ingest
