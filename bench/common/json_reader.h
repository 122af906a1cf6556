// Copyright 2026 The shoal Authors.
//
// A minimal JSON reader for benchmark files: the disk phase's child process
// writes its figures with JsonWriter and the parent reads them back, and the
// DiskANN peer's results (bench/peers/diskann_disk_peer.py) are read the same way.
// RFC 8259 values; numbers are doubles; null reads as NaN where a number is
// asked for (JsonWriter writes non-finite doubles as null). Not for untrusted
// input at scale: nesting is limited to kMaxDepth, nothing else is.

#ifndef SHOAL_BENCH_COMMON_JSON_READER_H_
#define SHOAL_BENCH_COMMON_JSON_READER_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace shoal_bench {

class JsonValue {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  static constexpr int kMaxDepth = 64;

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  // The number; NaN for any other kind.
  double number() const;
  // The boolean; false for any other kind.
  bool boolean() const { return kind_ == Kind::kBool && bool_; }
  // The string; "" for any other kind.
  const std::string& string() const { return string_; }
  // Elements of an array; empty for any other kind.
  const std::vector<JsonValue>& elements() const { return elements_; }
  // Member `key` of an object (the first, if repeated); a null value when
  // absent or when this is not an object.
  const JsonValue& operator[](std::string_view key) const;
  bool Has(std::string_view key) const;

 private:
  friend class JsonParser;
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> elements_;  // array elements, or object member values
  std::vector<std::string> keys_;    // object member keys, parallel to elements_
};

// Parses one JSON document (surrounding whitespace allowed). InvalidArgument
// naming the byte offset when `text` is not one.
absl::StatusOr<JsonValue> ParseJson(std::string_view text);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMMON_JSON_READER_H_
