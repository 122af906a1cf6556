// Copyright 2026 The shoal Authors.
//
// Each call converts its arguments with the GIL held, then releases it for
// the engine (every one of these may do I/O or search), and builds its
// result once it has it back.

#include "data_calls.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nanobind/stl/string.h"
#include "arrays.h"
#include "filter.h"
#include "progress.h"
#include "records.h"
#include "shoal/db.h"
#include "status.h"

namespace nb = nanobind;

namespace shoal::python {

bool AnyParts(nb::handle labels, nb::handle attributes, nb::handle payloads) {
  return !labels.is_none() || !attributes.is_none() || !payloads.is_none();
}

void CheckRows(const IdArray& ids, const RowArray& rows) {
  if (ids.shape(0) != rows.shape(0)) {
    ThrowInvalid(absl::StrCat("ids has ", ids.shape(0), " entries but vectors has ",
                              rows.shape(0), " rows"));
  }
}

namespace {

// The widest k whose rows are padded to k (see SearchBatch).
constexpr size_t kMaxPaddedWidth = size_t{1} << 16;

uint32_t Parts(bool vector) { return vector ? kAllParts : kAllParts & ~kVectorPart; }

SearchOptions ToSearchOptions(nb::handle k, nb::handle list_size, nb::handle filter) {
  SearchOptions options;
  options.k = ToU32(k, "k");
  options.list_size = ToU32(list_size, "list_size");
  options.filter = FilterArg(filter);
  return options;
}

}  // namespace

void Put(const CollectionRef& c, nb::handle id, nb::handle vector, nb::handle labels,
         nb::handle attributes, nb::handle payload) {
  const uint64_t key = ToId(id, "id");
  VectorArray row = ToVector(vector, c.options.dim, "vector");
  absl::Status status;
  if (!AnyParts(labels, attributes, payload)) {
    nb::gil_scoped_release release;
    DbHandle::Session session(*c.handle);
    status = session.db().Put(c.name, key, Span(row));
  } else {
    // A batch of one: the same checks and conversions as put_batch.
    RecordBatch batch(c, std::span<const uint64_t>(&key, 1), row.data(),
                      labels.is_none() ? labels : nb::make_tuple(labels),
                      attributes.is_none() ? attributes : nb::make_tuple(attributes),
                      payload.is_none() ? payload : nb::make_tuple(payload));
    nb::gil_scoped_release release;
    DbHandle::Session session(*c.handle);
    status = session.db().Put(c.name, batch.records()[0]);
  }
  ThrowIfError(status);
}

void PutBatch(const CollectionRef& c, nb::handle ids, nb::handle vectors, nb::handle labels,
              nb::handle attributes, nb::handle payloads) {
  IdArray keys = ToIds(ids, "ids");
  RowArray rows = ToRows(vectors, c.options.dim, "vectors");
  CheckRows(keys, rows);
  absl::Status status;
  if (!AnyParts(labels, attributes, payloads)) {
    nb::gil_scoped_release release;
    DbHandle::Session session(*c.handle);
    status = session.db().PutBatch(c.name, Span(keys), Span(rows));
  } else {
    RecordBatch batch(c, Span(keys), rows.data(), labels, attributes, payloads);
    nb::gil_scoped_release release;
    DbHandle::Session session(*c.handle);
    status = session.db().PutBatch(c.name, batch.records());
  }
  ThrowIfError(status);
}

void BulkLoad(const CollectionRef& c, nb::handle ids, nb::handle vectors, nb::handle labels,
              nb::handle attributes, nb::handle payloads, nb::handle progress) {
  IdArray keys = ToIds(ids, "ids");
  RowArray rows = ToRows(vectors, c.options.dim, "vectors");
  CheckRows(keys, rows);
  std::exception_ptr callback_error;
  BulkLoadOptions options;
  options.progress = ToProgress(progress, "bulk_load", "vectors", &callback_error);
  std::optional<RecordBatch> batch;
  if (AnyParts(labels, attributes, payloads)) {
    batch.emplace(c, Span(keys), rows.data(), labels, attributes, payloads);
  }
  absl::Status status;
  {
    nb::gil_scoped_release release;
    DbHandle::Session session(*c.handle);
    status = batch ? session.db().BulkLoad(c.name, batch->records(), options)
                   : session.db().BulkLoad(c.name, Span(keys), Span(rows), options);
  }
  ThrowIfError(status);
  if (callback_error) std::rethrow_exception(callback_error);
}

void Delete(const CollectionRef& c, nb::handle id) {
  const uint64_t key = ToId(id, "id");
  absl::Status status;
  {
    nb::gil_scoped_release release;
    DbHandle::Session session(*c.handle);
    status = session.db().Delete(c.name, key);
  }
  ThrowIfError(status);
}

nb::object Get(const CollectionRef& c, nb::handle id) {
  const uint64_t key = ToId(id, "id");
  absl::StatusOr<std::vector<float>> vector;
  {
    nb::gil_scoped_release release;
    DbHandle::Session session(*c.handle);
    vector = session.db().Get(c.name, key);
  }
  ThrowIfError(vector.status());
  const size_t n = vector->size();
  return NewArray(std::move(*vector), n, 0);
}

nb::object GetRecord(const CollectionRef& c, nb::handle id, bool vector) {
  const uint64_t key = ToId(id, "id");
  absl::StatusOr<RecordData> record;
  {
    nb::gil_scoped_release release;
    DbHandle::Session session(*c.handle);
    record = session.db().GetRecord(c.name, key, Parts(vector));
  }
  ThrowIfError(record.status());
  return RecordToPython(c, std::move(*record), vector);
}

nb::list GetRecords(const CollectionRef& c, nb::handle ids, bool vector) {
  IdArray keys = ToIds(ids, "ids");
  absl::StatusOr<std::vector<std::optional<RecordData>>> records;
  {
    nb::gil_scoped_release release;
    DbHandle::Session session(*c.handle);
    records = session.db().GetRecords(c.name, Span(keys), Parts(vector));
  }
  ThrowIfError(records.status());
  nb::list out;
  for (std::optional<RecordData>& r : *records) {
    out.append(r ? RecordToPython(c, std::move(*r), vector) : nb::none());
  }
  return out;
}

nb::tuple Search(const CollectionRef& c, nb::handle query, nb::handle k, nb::handle list_size,
                 nb::handle filter) {
  VectorArray q = ToVector(query, c.options.dim, "query");
  const SearchOptions options = ToSearchOptions(k, list_size, filter);
  absl::StatusOr<std::vector<Neighbor>> found;
  {
    nb::gil_scoped_release release;
    DbHandle::Session session(*c.handle);
    found = session.db().Search(c.name, Span(q), options);
  }
  ThrowIfError(found.status());
  const size_t m = found->size();
  std::vector<uint64_t> ids(m);
  std::vector<float> distances(m);
  for (size_t i = 0; i < m; ++i) {
    ids[i] = (*found)[i].id;
    distances[i] = (*found)[i].distance;
  }
  return nb::make_tuple(NewArray(std::move(ids), m, 0), NewArray(std::move(distances), m, 0));
}

nb::object SearchBatch(const CollectionRef& c, nb::handle queries, nb::handle k,
                       nb::handle list_size, nb::handle filter) {
  RowArray rows = ToRows(queries, c.options.dim, "queries");
  const SearchOptions options = ToSearchOptions(k, list_size, filter);
  const size_t n = rows.shape(0);
  absl::StatusOr<std::vector<std::vector<Neighbor>>> found;
  std::vector<uint64_t> ids;
  std::vector<float> distances;
  std::vector<int64_t> counts(n);
  size_t result_width = 0;
  {
    nb::gil_scoped_release release;
    if (n > 0) {
      DbHandle::Session session(*c.handle);
      found = session.db().SearchBatch(c.name, Span(rows), options);
    } else {
      found = std::vector<std::vector<Neighbor>>();
    }
    if (found.ok()) {
      // (n, k), padded with shoal.NO_ID and inf after a row's results; a k
      // above kMaxPaddedWidth pads only to the longest row (k = 2**32 - 1
      // would otherwise fill n * 12 * 2**32 bytes with padding).
      size_t width = options.k;
      if (width > kMaxPaddedWidth) {
        width = 0;
        for (const std::vector<Neighbor>& row : *found) width = std::max(width, row.size());
      }
      result_width = width;
      ids.assign(n * width, std::numeric_limits<uint64_t>::max());
      distances.assign(n * width, std::numeric_limits<float>::infinity());
      for (size_t i = 0; i < n; ++i) {
        const std::vector<Neighbor>& row = (*found)[i];
        counts[i] = static_cast<int64_t>(row.size());
        for (size_t j = 0; j < row.size() && j < width; ++j) {
          ids[i * width + j] = row[j].id;
          distances[i * width + j] = row[j].distance;
        }
      }
    }
  }
  ThrowIfError(found.status());
  auto* owned_counts = new std::vector<int64_t>(std::move(counts));
  nb::capsule owner(owned_counts,
                    [](void* p) noexcept { delete static_cast<std::vector<int64_t>*>(p); });
  nb::object count_array =
      nb::ndarray<nb::numpy, int64_t, nb::ndim<1>>(owned_counts->data(), {n}, owner).cast();
  return nb::module_::import_("shoal").attr("SearchResults")(
      NewArray(std::move(ids), n, result_width), NewArray(std::move(distances), n, result_width),
      count_array);
}

}  // namespace shoal::python
