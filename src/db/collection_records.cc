// Copyright 2026 The shoal Authors.
//
// Collection's record calls (shoal/record.h): a vector with its labels,
// attributes and payload. The checks and the routing are here; the writes
// take the shards' paths for vectors, with each row's parts beside it.

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "db/collection.h"
#include "db/route_by_shard.h"
#include "db/validate.h"
#include "distance/distance.h"
#include "util/debug_timing.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace shoal {
namespace {

// A PutBatch of at least this many records is written as a bulk load, as
// for vectors (collection.cc).
constexpr size_t kBulkPutBatchRecords = 1 << 20;

absl::Status Prefixed(const char* call, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(call, ": ", s.message()));
}

absl::Status CheckParts(uint32_t parts) {
  if ((parts & ~uint32_t{kAllParts}) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("parts 0x", absl::Hex(parts), " has bits RecordParts does not name"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Collection::PartitionRecords(std::span<const Record> records, bool dedupe,
                                          PartitionedRecords* out) const {
  std::unique_ptr<float[]>* normalized = &out->normalized;
  std::vector<record::NormalizeStore>* stores = &out->stores;
  std::vector<uint64_t>* part_ids = &out->ids;
  std::vector<const float*>* part_rows = &out->rows;
  std::vector<record::Extras>* part_extras = &out->extras;
  std::vector<size_t>* start = &out->start;
  if (records.empty()) return absl::InvalidArgumentError("an empty batch");
  const size_t n = records.size();
  const size_t dim = options_.dim;
  const bool cosine = options_.metric == Metric::kCosine;
  if (cosine) normalized->reset(new float[n * dim]);  // not zero-filled first
  std::vector<record::Extras> extras(n);
  std::vector<const float*> rows(n);
  // Checked in chunks of records, over the pool for a large batch (as
  // Partition checks vectors): the first pass over rows that usually come
  // cold from RAM. Each chunk keeps the copies it makes in its own store
  // and notes its first bad record; the batch reports the first of all.
  constexpr size_t kChunkFloats = size_t{1} << 16;
  const size_t per_chunk = std::max<size_t>(1, kChunkFloats / dim);
  const size_t chunks = (n + per_chunk - 1) / per_chunk;
  stores->resize(chunks);
  std::vector<absl::Status> bad(chunks);
  std::vector<uint8_t> any_in(chunks, 0);
  auto work = [&](size_t c) {
    const size_t end = std::min(n, (c + 1) * per_chunk);
    for (size_t i = c * per_chunk; i < end; ++i) {
      const Record& r = records[i];
      auto fail = [&](const absl::Status& s) {
        bad[c] = absl::Status(s.code(), absl::StrCat("record ", i, " (id ", r.id, "): ",
                                                     s.message()));
      };
      if (r.vector.size() != dim || dim > kMaxFastCheckDim ||
          !AllWellBelowDistanceRange(r.vector.data(), dim)) {
        absl::Status s = ValidateVectors(r.vector, 1, options_.dim, options_.metric, "vector");
        if (!s.ok()) return fail(s);
      }
      rows[i] = r.vector.data();
      if (cosine) {
        float* out = normalized->get() + i * dim;
        std::memcpy(out, r.vector.data(), dim * sizeof(float));
        if (!NormalizeInPlace(out, dim)) {
          return fail(absl::InvalidArgumentError("a zero vector has no direction under kCosine"));
        }
        rows[i] = out;
      }
      absl::Status s = record::NormalizeRecord(r, options_.attributes.size(), &(*stores)[c],
                                               &extras[i]);
      if (!s.ok()) return fail(s);
      any_in[c] |= !extras[i].empty();
    }
  };
  if (pool_ != nullptr && chunks > 1) {
    pool_->ParallelFor(chunks, work);
  } else {
    for (size_t c = 0; c < chunks; ++c) work(c);
  }
  for (const absl::Status& s : bad) SHOAL_RETURN_IF_ERROR(s);
  const bool any = std::find(any_in.begin(), any_in.end(), 1) != any_in.end();
  part_ids->resize(n);
  part_rows->resize(n);
  part_extras->resize(any ? n : 0);
  const size_t placed = RouteByShard(
      n, options_.shard_count, dedupe, [&](size_t i) { return records[i].id; },
      [&](size_t i, size_t at) {
        (*part_ids)[at] = records[i].id;
        (*part_rows)[at] = rows[i];
        if (any) (*part_extras)[at] = extras[i];
      },
      start);
  part_ids->resize(placed);
  part_rows->resize(placed);
  part_extras->resize(any ? placed : 0);
  return absl::OkStatus();
}

absl::Status Collection::Put(const Record& record) {
  const int64_t started = timing::kEnabled ? timing::NowMicros() : 0;
  PartitionedRecords p;
  absl::Status valid = PartitionRecords({&record, 1}, /*dedupe=*/false, &p);
  if (!valid.ok()) return Prefixed("Put", valid);
  Shard& shard = *shards_[ShardOf(record.id, options_.shard_count)];
  return shard.Put(p.ids, p.rows, p.extras, timing::kEnabled ? timing::NowMicros() - started : 0);
}

absl::Status Collection::PutBatch(std::span<const Record> records) {
  if (records.size() >= kBulkPutBatchRecords) return BulkLoad(records);
  const int64_t started = timing::kEnabled ? timing::NowMicros() : 0;
  PartitionedRecords p;
  absl::Status valid = PartitionRecords(records, /*dedupe=*/false, &p);
  if (!valid.ok()) return Prefixed("PutBatch", valid);
  std::vector<Shard::BatchPart> parts;  // in shard order
  for (uint32_t s = 0; s < options_.shard_count; ++s) {
    const size_t first = p.start[s], count = p.start[s + 1] - p.start[s];
    if (count == 0) continue;
    parts.push_back({shards_[s].get(), std::span<const uint64_t>(p.ids.data() + first, count),
                     std::span<const float* const>(p.rows.data() + first, count),
                     p.extras.empty()
                         ? std::span<const record::Extras>()
                         : std::span<const record::Extras>(p.extras.data() + first, count)});
  }
  if (parts.size() == 1) {
    const int64_t route_us = timing::kEnabled ? timing::NowMicros() - started : 0;
    const Shard::BatchPart& part = parts.front();
    return part.shard->Put(part.ids, part.rows, part.extras, route_us);
  }
  return Shard::PutAcross(parts, pool_);
}

absl::Status Collection::BulkLoad(std::span<const Record> records,
                                  const BulkLoadOptions& options) {
  if (records.empty()) return absl::OkStatus();
  timing::Scope timing("bulkload",
                       "collection,vectors,shards,partition_us,copy_us,graph_us,write_us,"
                       "publish_us,total_us");
  PartitionedRecords p;
  absl::Status valid = PartitionRecords(records, /*dedupe=*/true, &p);
  if (!valid.ok()) return Prefixed("BulkLoad", valid);
  // The segment writer takes each row's parts encoded.
  std::string encoded;
  std::vector<std::string_view> views;
  if (!p.extras.empty()) {
    size_t bytes = 0;
    for (const record::Extras& e : p.extras) bytes += record::EncodedSize(e);
    encoded.resize(bytes);
    views.reserve(p.extras.size());
    char* at = encoded.data();
    for (const record::Extras& e : p.extras) {
      char* end = record::Encode(e, at);
      views.emplace_back(at, static_cast<size_t>(end - at));
      at = end;
    }
  }
  return LoadPartitioned(records.size(), p.ids, p.rows, views, p.start, &timing, options);
}

absl::StatusOr<RecordData> Collection::GetRecord(uint64_t id, uint32_t parts) const {
  SHOAL_RETURN_IF_ERROR(CheckParts(parts));
  RecordData out;
  SHOAL_RETURN_IF_ERROR(shards_[ShardOf(id, options_.shard_count)]->GetRecord(id, parts, &out));
  return out;
}

absl::StatusOr<std::vector<std::optional<RecordData>>> Collection::GetRecords(
    std::span<const uint64_t> ids, uint32_t parts) const {
  SHOAL_RETURN_IF_ERROR(CheckParts(parts));
  std::vector<std::optional<RecordData>> out(ids.size());
  if (ids.size() == 1) {
    SHOAL_RETURN_IF_ERROR(
        shards_[ShardOf(ids[0], options_.shard_count)]->GetRecords(ids, parts, out.data()));
    return out;
  }
  // Each shard's ids together: one look at its sources for all of them.
  std::vector<std::vector<size_t>> at(options_.shard_count);
  for (size_t i = 0; i < ids.size(); ++i) at[ShardOf(ids[i], options_.shard_count)].push_back(i);
  std::vector<uint64_t> some;
  std::vector<std::optional<RecordData>> found;
  for (uint32_t s = 0; s < options_.shard_count; ++s) {
    if (at[s].empty()) continue;
    some.clear();
    for (size_t i : at[s]) some.push_back(ids[i]);
    found.assign(some.size(), std::nullopt);
    SHOAL_RETURN_IF_ERROR(shards_[s]->GetRecords(some, parts, found.data()));
    for (size_t j = 0; j < at[s].size(); ++j) out[at[s][j]] = std::move(found[j]);
  }
  return out;
}

}  // namespace shoal
