// Copyright 2026 The shoal Authors.
//
// A Python Collection: the database it belongs to and what it needs to
// check input before the engine does (its dim, for the shapes in error
// messages; its attribute names, which Python code gives by name).

#ifndef SHOAL_PYTHON_SRC_COLLECTION_REF_H_
#define SHOAL_PYTHON_SRC_COLLECTION_REF_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db_handle.h"
#include "shoal/options.h"

namespace shoal::python {

struct CollectionRef {
  std::shared_ptr<DbHandle> handle;
  std::string name;
  CollectionOptions options;

  // The index of attribute `name`, or nullopt when not declared.
  std::optional<uint32_t> AttributeIndex(std::string_view attribute) const {
    for (size_t i = 0; i < options.attributes.size(); ++i) {
      if (options.attributes[i] == attribute) return static_cast<uint32_t>(i);
    }
    return std::nullopt;
  }
};

// "l2", "ip", "cosine" (and back).
Metric ParseMetric(std::string_view name);
const char* MetricName(Metric metric);
// "sq8", "none".
VectorCode ParseCode(std::string_view name);
// A collection's options from the keyword arguments of create_collection.
CollectionOptions MakeCollectionOptions(uint32_t dim, std::string_view metric,
                                        uint32_t shard_count,
                                        std::vector<std::string> attributes,
                                        uint32_t max_degree, uint32_t build_list_size,
                                        float alpha, std::string_view code);

}  // namespace shoal::python

#endif  // SHOAL_PYTHON_SRC_COLLECTION_REF_H_
