// Copyright 2026 The shoal Authors.
//
// Collection.export: every live record of a collection at one point in
// time (DB::Export), in batches of numpy arrays. The iterator holds engine
// state that must not outlive the database: it registers with the
// DbHandle, whose close() releases it first (the iterator then raises
// FailedPreconditionError).

#ifndef SHOAL_PYTHON_SRC_EXPORT_H_
#define SHOAL_PYTHON_SRC_EXPORT_H_

#include <cstddef>

#include "collection_ref.h"
#include "nanobind/nanobind.h"

namespace shoal::python {

// The Python ExportIterator over `c` (see BindExport for the arguments).
nanobind::object Export(const CollectionRef& c, size_t batch_size, bool records,
                        nanobind::handle progress);

// Registers the ExportIterator class on `m`.
void BindExportIterator(nanobind::module_& m);

// Defines `export` on `cls`, whose objects give their collection through
// `ref(self)`.
template <class Owner, class Ref>
void BindExport(nanobind::class_<Owner>& cls, Ref ref) {
  namespace nb = nanobind;
  using namespace nanobind::literals;
  cls.def("export",
          [ref](Owner& self, size_t batch_size, bool records, nb::handle progress) {
            return Export(ref(self), batch_size, records, progress);
          },
          nb::kw_only(), "batch_size"_a = 65536, "records"_a = false,
          "progress"_a = nb::none(),
          "Every live record of the collection at one point in time (when this call "
          "returns): the newest version of each id once, no deleted id; later writes, "
          "flushes and merges do not change what it yields.\n\n"
          "Returns an iterator of batches of at most batch_size records: (ids, vectors) "
          "numpy arrays, uint64 (n,) and float32 (n, dim); with records=True, lists of "
          "shoal.Record (labels, attributes, payload and vector). Order: by shard, not by "
          "id.\n"
          "progress: None, True (a progress line on stderr) or a callable "
          "progress(done, total) over the entries examined.\n"
          "The iterator holds the files of its point in time (disk space of segments merged "
          "away meanwhile) until it is exhausted, closed (close()) or collected. "
          "DB.close() ends it: it then raises FailedPreconditionError.");
}

}  // namespace shoal::python

#endif  // SHOAL_PYTHON_SRC_EXPORT_H_
