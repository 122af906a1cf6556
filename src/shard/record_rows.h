// Copyright 2026 The shoal Authors.
//
// The record parts (encoded extras, record/record_format.h) of the rows a
// flush or merge collects for a segment, kept apart from the vectors: rows
// are numbered as they are collected, and a row's parts may be set later
// (a merge reads the graph it extends node by node first, and its parts
// in a second pass). Disabled (no input has any parts), it keeps nothing
// and the segment gets none.

#ifndef SHOAL_SRC_SHARD_RECORD_ROWS_H_
#define SHOAL_SRC_SHARD_RECORD_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shoal {

class RecordRows {
 public:
  explicit RecordRows(bool enabled) : enabled_(enabled) {}

  bool enabled() const { return enabled_; }

  // Row `row`'s parts (copied; empty: none). Nothing when disabled.
  void Set(size_t row, std::string_view extras) {
    if (!enabled_ || extras.empty()) return;
    if (at_.size() <= row) at_.resize(row + 1, {0, 0});
    at_[row] = {buffer_.size(), extras.size()};
    buffer_.append(extras);
  }

  // SegmentContents::extras for `rows` rows (rows never set: none); empty
  // when disabled or no row has any. Valid while this object is unchanged.
  std::vector<std::string_view> Views(size_t rows) const {
    std::vector<std::string_view> out;
    if (!enabled_ || buffer_.empty()) return out;
    out.resize(rows);
    for (size_t r = 0; r < rows && r < at_.size(); ++r) {
      out[r] = std::string_view(buffer_.data() + at_[r].first, at_[r].second);
    }
    return out;
  }

 private:
  const bool enabled_;
  std::string buffer_;
  std::vector<std::pair<uint64_t, uint64_t>> at_;  // row -> (offset, length) in buffer_
};

}  // namespace shoal

#endif  // SHOAL_SRC_SHARD_RECORD_ROWS_H_
