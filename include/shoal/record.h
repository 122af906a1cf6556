// Copyright 2026 The shoal Authors.
//
// Records: a vector and, optionally, what an application keeps with it.
//
//   labels      a set of uint32 values (a tenant, a category, tags); at most
//               kMaxLabels a record. Stored sorted, each value once: the
//               order given and repeats do not matter.
//   attributes  int64 values of the attributes the collection declares
//               (CollectionOptions::attributes: a timestamp, a price in
//               cents), each at most once a record, any of them absent.
//   payload     opaque bytes (a document, a JSON object), at most
//               kMaxPayloadBytes. Searches never read it; DB::GetRecord and
//               DB::GetRecords do.
//
// A record is written as one: after a crash a reader sees all of its parts
// or none of them (docs/guarantees.md). A later put of the id replaces the
// whole record (parts it does not give are gone, not kept); a delete removes
// all of it. A vector written without the other parts (DB::Put with a span)
// is a record without labels, attributes or payload.
//
// Attributes are declared per collection, by name, when it is created, and
// addressed by their index in that list: the declaration keeps the checks
// exact (an unknown attribute is an error, not a new column) and the format
// simple (an index, no names in records). docs/architecture.md
// ("Records") gives the reasons.

#ifndef SHOAL_INCLUDE_SHOAL_RECORD_H_
#define SHOAL_INCLUDE_SHOAL_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace shoal {

// Limits, checked on every write (InvalidArgumentError naming the record).
inline constexpr size_t kMaxLabels = 64;             // labels per record
inline constexpr size_t kMaxAttributes = 32;         // attributes per collection
inline constexpr size_t kMaxAttributeNameLength = 64;
inline constexpr size_t kMaxPayloadBytes = 1 << 20;  // 1 MiB per record

// The value of one declared attribute: `attribute` is its index in
// CollectionOptions::attributes.
struct AttributeValue {
  uint32_t attribute = 0;
  int64_t value = 0;

  friend bool operator==(const AttributeValue&, const AttributeValue&) = default;
};

// A record to write. Views of the caller's memory, read during the call
// only. `vector` must have the collection's dim components (DB::Put's rules).
struct Record {
  uint64_t id = 0;
  std::span<const float> vector;
  std::span<const uint32_t> labels;            // any order; repeats count once
  std::span<const AttributeValue> attributes;  // each attribute at most once
  std::string_view payload;                    // empty: none
};

// The parts of a record a read returns (a bit set; kAll by default).
enum RecordParts : uint32_t {
  kVectorPart = 1,
  kLabelsPart = 2,
  kAttributesPart = 4,
  kPayloadPart = 8,
  kAllParts = 15,
};

// A record as read back. Parts not asked for are left empty.
struct RecordData {
  uint64_t id = 0;
  std::vector<float> vector;  // normalized, for kCosine
  std::vector<uint32_t> labels;            // ascending, each once
  std::vector<AttributeValue> attributes;  // by ascending attribute index
  std::string payload;

  friend bool operator==(const RecordData&, const RecordData&) = default;
};

}  // namespace shoal

#endif  // SHOAL_INCLUDE_SHOAL_RECORD_H_
