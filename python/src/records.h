// Copyright 2026 The shoal Authors.
//
// Records from Python arguments: labels (an iterable of ints), attributes
// (a dict of name -> int, or for a batch a dict of name -> n ints), a
// payload (bytes or str, kept as UTF-8). RecordBatch holds what the
// engine's Record views point at (and references to the payload objects,
// which are immutable), so the GIL can be released while they are written.

#ifndef SHOAL_PYTHON_SRC_RECORDS_H_
#define SHOAL_PYTHON_SRC_RECORDS_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "collection_ref.h"
#include "nanobind/nanobind.h"
#include "shoal/record.h"

namespace shoal::python {

class RecordBatch {
 public:
  // n records with ids[i] and rows[i * dim ...]; labels, attributes and
  // payloads may each be None. Throws InvalidArgumentError / TypeError
  // naming the record's index on bad input.
  RecordBatch(const CollectionRef& c, std::span<const uint64_t> ids, const float* rows,
              nanobind::handle labels, nanobind::handle attributes, nanobind::handle payloads);
  std::span<const Record> records() const { return records_; }

 private:
  void SetLabels(size_t i, nanobind::handle labels);
  void SetPayload(size_t i, nanobind::handle payload);

  std::vector<Record> records_;
  std::vector<std::vector<uint32_t>> labels_;
  std::vector<std::vector<AttributeValue>> attributes_;
  std::vector<nanobind::object> keep_;  // payload objects the views point into
};

// The Python form of a read record (vector None unless `vector`).
nanobind::object RecordToPython(const CollectionRef& c, RecordData&& data, bool vector);

}  // namespace shoal::python

#endif  // SHOAL_PYTHON_SRC_RECORDS_H_
