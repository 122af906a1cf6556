// Copyright 2026 The shoal Authors.
//
// A record's parts beside its vector (labels, attributes, payload;
// shoal/record.h) as one byte string, the "extras": the form the log, the
// memtables and merges carry them in (segments store them split by part,
// segment/record_regions.h). docs/format.md ("Record extras") gives the
// bytes:
//
//   label_count      u16   0..kMaxLabels
//   attribute_count  u16   0..kMaxAttributes
//   payload_bytes    u32   0..kMaxPayloadBytes
//   labels           u32[label_count], ascending, distinct
//   attributes       attribute_count x {index u32, value i64} (12 bytes),
//                    by ascending index, distinct, index < kMaxAttributes
//   payload          payload_bytes bytes
//
// Nothing is aligned (fields are read with memcpy). A record without any
// of the parts is the 8-byte header of zeros, or, where a length says so,
// no bytes at all (memtables and segments keep nothing for it).

#ifndef SHOAL_SRC_RECORD_RECORD_FORMAT_H_
#define SHOAL_SRC_RECORD_RECORD_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "shoal/record.h"

namespace shoal::record {

inline constexpr size_t kHeaderSize = 8;
inline constexpr size_t kAttributeSize = 12;

// The parts of one record, checked and in canonical order (labels
// ascending and distinct, attributes by ascending distinct index): what
// NormalizeRecord makes of a caller's Record. Views; empty spans: none.
struct Extras {
  std::span<const uint32_t> labels;
  std::span<const AttributeValue> attributes;
  std::string_view payload;

  bool empty() const { return labels.empty() && attributes.empty() && payload.empty(); }
};

// Bytes Encode writes for `e`.
inline size_t EncodedSize(const Extras& e) {
  return kHeaderSize + e.labels.size() * 4 + e.attributes.size() * kAttributeSize +
         e.payload.size();
}
// Writes `e` at `out` (EncodedSize(e) bytes); returns the end.
char* Encode(const Extras& e, char* out);
// Appends the encoding of `e` to *out.
void AppendEncoded(const Extras& e, std::string* out);

// A parsed extras string: views into its bytes.
class ExtrasView {
 public:
  ExtrasView() = default;

  size_t label_count() const { return label_count_; }
  uint32_t label(size_t i) const;
  size_t attribute_count() const { return attribute_count_; }
  AttributeValue attribute(size_t i) const;
  std::string_view payload() const { return payload_; }
  bool empty() const { return label_count_ == 0 && attribute_count_ == 0 && payload_.empty(); }

  // Copies the parts `parts` (RecordParts bits) names into *out (the
  // vector excepted); other parts are left as they are.
  void CopyTo(uint32_t parts, RecordData* out) const;
  // The parts again as an encoded string (what was parsed).
  std::string_view bytes() const { return bytes_; }

 private:
  friend absl::Status Parse(std::string_view in, ExtrasView* out, size_t* consumed);
  const char* labels_ = nullptr;
  const char* attributes_ = nullptr;
  size_t label_count_ = 0;
  size_t attribute_count_ = 0;
  std::string_view payload_;
  std::string_view bytes_;
};

// Parses the extras at the start of `in` and checks every rule above;
// *consumed (may be null) is set to their length. An empty `in` parses as a
// record without parts (consumed 0). InvalidArgumentError saying what is
// wrong (the caller names the file or record and turns it into the error
// its layer reports, e.g. DataLossError for a file).
absl::Status Parse(std::string_view in, ExtrasView* out, size_t* consumed = nullptr);

// Copies NormalizeRecord makes of parts not given in canonical order. Each
// copy stays where it is while the store lives (a batch's records refer to
// theirs).
struct NormalizeStore {
  std::deque<std::vector<uint32_t>> labels;
  std::deque<std::vector<AttributeValue>> attributes;
};

// Checks a caller's record's parts against the limits and the collection's
// `attribute_count` declared attributes, and gives them in canonical order:
// *out views `record`'s spans when they already are (no copy), else copies
// in *store. InvalidArgumentError saying what is wrong (the caller adds
// which record); the vector is not looked at.
absl::Status NormalizeRecord(const Record& record, size_t attribute_count,
                             NormalizeStore* store, Extras* out);

}  // namespace shoal::record

#endif  // SHOAL_SRC_RECORD_RECORD_FORMAT_H_
