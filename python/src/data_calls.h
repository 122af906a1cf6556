// Copyright 2026 The shoal Authors.
//
// The calls on one collection's data (put, search, ...), bound both on
// Collection and, for the collection named "default", on DB itself.

#ifndef SHOAL_PYTHON_SRC_DATA_CALLS_H_
#define SHOAL_PYTHON_SRC_DATA_CALLS_H_

#include <string>

#include "arrays.h"
#include "collection_ref.h"
#include "nanobind/nanobind.h"
#include "shoal/options.h"

namespace shoal::python {

// Whether any of a batch's record parts is given (not None).
bool AnyParts(nanobind::handle labels, nanobind::handle attributes, nanobind::handle payloads);
// InvalidArgumentError unless ids and rows have the same length.
void CheckRows(const IdArray& ids, const RowArray& rows);
// DB::IngestSegments of the paths in `files` (segment_files.cc).
void IngestSegments(const CollectionRef& c, nanobind::handle files, const std::string& method,
                    bool verify_checksums);

void Put(const CollectionRef& c, nanobind::handle id, nanobind::handle vector,
         nanobind::handle labels, nanobind::handle attributes, nanobind::handle payload);
void PutBatch(const CollectionRef& c, nanobind::handle ids, nanobind::handle vectors,
              nanobind::handle labels, nanobind::handle attributes, nanobind::handle payloads);
void BulkLoad(const CollectionRef& c, nanobind::handle ids, nanobind::handle vectors,
              nanobind::handle labels, nanobind::handle attributes, nanobind::handle payloads,
              nanobind::handle progress);
void Delete(const CollectionRef& c, nanobind::handle id);
nanobind::object Get(const CollectionRef& c, nanobind::handle id);
nanobind::object GetRecord(const CollectionRef& c, nanobind::handle id, bool vector);
nanobind::list GetRecords(const CollectionRef& c, nanobind::handle ids, bool vector);
nanobind::tuple Search(const CollectionRef& c, nanobind::handle query, nanobind::handle k,
                       nanobind::handle list_size, nanobind::handle filter);
nanobind::object SearchBatch(const CollectionRef& c, nanobind::handle queries,
                             nanobind::handle k, nanobind::handle list_size,
                             nanobind::handle filter);

// Defines the calls above on `cls`, whose objects give their collection
// through `ref(self)`.
template <class Owner, class Ref>
void BindDataCalls(nanobind::class_<Owner>& cls, Ref ref) {
  namespace nb = nanobind;
  using namespace nanobind::literals;
  const uint32_t default_list_size = SearchOptions().list_size;
  cls.def("put",
          [ref](Owner& self, nb::handle id, nb::handle vector, nb::handle labels,
                nb::handle attributes, nb::handle payload) {
            Put(ref(self), id, vector, labels, attributes, payload);
          },
          "id"_a, "vector"_a, nb::kw_only(), "labels"_a = nb::none(),
          "attributes"_a = nb::none(), "payload"_a = nb::none(),
          "Inserts or replaces the record stored under `id` (an int in [0, 2**64)).\n\n"
          "vector: (dim,) numbers (float32 is used as is; others converted once).\n"
          "labels: an iterable of ints in [0, 2**32) (a tenant, a category, tags).\n"
          "attributes: a dict of attribute name -> int (names the collection declares).\n"
          "payload: bytes, or str (stored as UTF-8): the document kept with the vector.\n"
          "All parts are written atomically; parts not given are gone from the id's record.\n"
          "Raises InvalidArgumentError (a ValueError) on bad input, changing nothing.")
      .def("put_batch",
           [ref](Owner& self, nb::handle ids, nb::handle vectors, nb::handle labels,
                 nb::handle attributes, nb::handle payloads) {
             PutBatch(ref(self), ids, vectors, labels, attributes, payloads);
           },
           "ids"_a, "vectors"_a, nb::kw_only(), "labels"_a = nb::none(),
           "attributes"_a = nb::none(), "payloads"_a = nb::none(),
           "Puts many records. ids: (n,) uint64 (or non-negative ints); vectors: (n, dim) "
           "float32 C-contiguous, read without a copy (read-only arrays too; other dtypes and "
           "layouts are converted once).\n"
           "labels: n iterables of ints (or None); attributes: n dicts (or None), or a dict of "
           "name -> n ints (None: absent); payloads: n bytes/str (or None).\n"
           "The batch is checked as a whole first: on bad input nothing is written. Each "
           "shard's part is one log record (atomic across a crash). A later row of a repeated "
           "id wins.")
      .def("bulk_load",
           [ref](Owner& self, nb::handle ids, nb::handle vectors, nb::handle labels,
                 nb::handle attributes, nb::handle payloads, nb::handle progress) {
             BulkLoad(ref(self), ids, vectors, labels, attributes, payloads, progress);
           },
           "ids"_a, "vectors"_a, nb::kw_only(), "labels"_a = nb::none(),
           "attributes"_a = nb::none(), "payloads"_a = nb::none(), "progress"_a = nb::none(),
           "Loads many records straight into on-disk segments (graphs built on all cores), "
           "skipping the log: the fast way to load a large data set. Arguments as put_batch; "
           "all of it or none of it, also across a crash.\n"
           "progress: None, True (a progress line on stderr), or a callable "
           "progress(done, total) called from the loading threads with the GIL held, at most "
           "about 100 times; an exception it raises is raised once the load has finished.")
      .def("ingest_segments",
           [ref](Owner& self, nb::handle files, const std::string& method,
                 bool verify_checksums) {
             IngestSegments(ref(self), files, method, verify_checksums);
           },
           "files"_a, nb::kw_only(), "method"_a = "link", "verify_checksums"_a = true,
           "Takes in segment files a shoal.SegmentWriter built for this collection's shape, "
           "all or nothing (also across a crash). Each file is checked first (checksums, "
           "format version, dim, metric, code, shard count, attributes, every id's shard): a "
           "damaged or mismatched one raises DataLossError / InvalidArgumentError / "
           "FailedPreconditionError naming it, and nothing changes. The ingested records are "
           "newer than everything already stored (they replace earlier puts and undo earlier "
           "deletes); later writes win over them; a later file wins over an earlier one.\n"
           "method: 'link' (a hard link, else a copy; the file must then not be changed), "
           "'copy', or 'move' (link, then remove the file). verify_checksums: read every byte "
           "first (off: node blocks are checked only when read).")
      .def("delete", [ref](Owner& self, nb::handle id) { Delete(ref(self), id); }, "id"_a,
           "Deletes `id`. Deleting an absent id is not an error.")
      .def("get", [ref](Owner& self, nb::handle id) { return Get(ref(self), id); }, "id"_a,
           "The vector stored under `id`, (dim,) float32 (normalized under cosine). Raises "
           "NotFoundError (a KeyError) when absent.")
      .def("get_record",
           [ref](Owner& self, nb::handle id, bool vector) {
             return GetRecord(ref(self), id, vector);
           },
           "id"_a, nb::kw_only(), "vector"_a = true,
           "The record stored under `id`: shoal.Record(id, vector, labels, attributes, "
           "payload). Raises NotFoundError (a KeyError) when absent. vector=False leaves "
           "record.vector None and does not read it (on disk-resident segments, only the "
           "payload's bytes are read).")
      .def("get_records",
           [ref](Owner& self, nb::handle ids, bool vector) {
             return GetRecords(ref(self), ids, vector);
           },
           "ids"_a, nb::kw_only(), "vector"_a = true,
           "The records of `ids` (e.g. a search's results), in order: a shoal.Record, or None "
           "for an absent id. vector=False: as get_record.")
      .def("search",
           [ref](Owner& self, nb::handle query, nb::handle k, nb::handle list_size,
                 nb::handle filter) { return Search(ref(self), query, k, list_size, filter); },
           "query"_a, "k"_a = 10, nb::kw_only(), "list_size"_a = default_list_size,
           "filter"_a = nb::none(),
           "The k nearest records to `query` ((dim,) numbers), nearest first (ties by id).\n"
           "Returns (ids, distances): uint64 and float32 arrays of length m <= k (m < k only "
           "when fewer than k records, or matches of `filter`, exist). Distances: squared L2, "
           "1 - cosine, or minus the inner product: smaller is closer.\n"
           "list_size: the search's candidate list; larger is more accurate and slower (at "
           "least k is used). filter: a shoal.Filter, honoured exactly.")
      .def("search_batch",
           [ref](Owner& self, nb::handle queries, nb::handle k, nb::handle list_size,
                 nb::handle filter) {
             return SearchBatch(ref(self), queries, k, list_size, filter);
           },
           "queries"_a, "k"_a = 10, nb::kw_only(), "list_size"_a = default_list_size,
           "filter"_a = nb::none(),
           "search for each row of `queries` ((n, dim)), on all cores.\n"
           "Returns a SearchResults that unpacks as (ids, distances), both (n, k); row i "
           "belongs to query i. A row with fewer than k results is padded at its end with id "
           "shoal.NO_ID (2**64 - 1) and distance inf; `.counts` ((n,) int64) says how many "
           "entries of each row are results. A k above 65536 makes the arrays only as wide as "
           "the longest row.");
}

}  // namespace shoal::python

#endif  // SHOAL_PYTHON_SRC_DATA_CALLS_H_
