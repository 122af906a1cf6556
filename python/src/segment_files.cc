// Copyright 2026 The shoal Authors.
//
// Segment files built outside a database: shoal.SegmentWriter (the engine's
// SegmentWriter, shoal/segment_writer.h) and ingest_segments on a DB or a
// Collection (DB::IngestSegments).

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "arrays.h"
#include "collection_ref.h"
#include "data_calls.h"
#include "nanobind/nanobind.h"
#include "nanobind/stl/optional.h"
#include "nanobind/stl/string.h"
#include "nanobind/stl/vector.h"
#include "records.h"
#include "shoal/db.h"
#include "shoal/segment_writer.h"
#include "status.h"

namespace nb = nanobind;
using namespace nanobind::literals;

namespace shoal::python {
namespace {

// os.fspath of each item: str or os.PathLike.
std::vector<std::string> Paths(nb::handle files) {
  nb::object fspath = nb::module_::import_("os").attr("fspath");
  std::vector<std::string> out;
  if (nb::isinstance<nb::str>(files) || nb::hasattr(files, "__fspath__")) {
    ThrowInvalid("files must be a list of paths, not one path");
  }
  for (nb::handle f : files) out.push_back(nb::cast<std::string>(fspath(f)));
  return out;
}

IngestMethod ParseMethod(std::string_view name) {
  if (name == "link") return IngestMethod::kLinkOrCopy;
  if (name == "copy") return IngestMethod::kCopy;
  if (name == "move") return IngestMethod::kMove;
  ThrowInvalid(absl::StrCat("method must be 'link', 'copy' or 'move', got '", std::string(name),
                            "'"));
}

// A Python SegmentWriter: the engine's, and the shape that checks input.
struct PyWriter {
  std::unique_ptr<SegmentWriter> writer;
  CollectionRef shape;  // no handle: only options (attributes by name)
  std::optional<std::vector<std::string>> files;

  SegmentWriter& Open() {
    if (files) {
      ThrowIfError(absl::FailedPreconditionError("SegmentWriter: finish() was called"));
    }
    return *writer;
  }
};

PyWriter MakeWriter(const std::string& path, const CollectionOptions& options, bool one_graph,
                    std::string prefix, uint32_t threads) {
  SegmentWriterOptions o;
  o.collection = options;
  o.one_graph = one_graph;
  o.file_prefix = std::move(prefix);
  o.threads = threads;
  absl::StatusOr<std::unique_ptr<SegmentWriter>> writer;
  {
    nb::gil_scoped_release release;
    writer = SegmentWriter::Create(path, o);
  }
  ThrowIfError(writer.status());
  return PyWriter{*std::move(writer), CollectionRef{nullptr, "", options}, std::nullopt};
}

void Add(PyWriter& w, nb::handle ids, nb::handle vectors, nb::handle labels,
         nb::handle attributes, nb::handle payloads) {
  SegmentWriter& writer = w.Open();
  IdArray keys = ToIds(ids, "ids");
  RowArray rows = ToRows(vectors, w.shape.options.dim, "vectors");
  CheckRows(keys, rows);
  absl::Status status;
  if (!AnyParts(labels, attributes, payloads)) {
    nb::gil_scoped_release release;
    status = writer.Add(Span(keys), Span(rows));
  } else {
    RecordBatch batch(w.shape, Span(keys), rows.data(), labels, attributes, payloads);
    nb::gil_scoped_release release;
    status = writer.Add(batch.records());
  }
  ThrowIfError(status);
}

std::vector<std::string> Finish(PyWriter& w) {
  SegmentWriter& writer = w.Open();
  absl::StatusOr<std::vector<std::string>> files;
  {
    nb::gil_scoped_release release;
    files = writer.Finish();
  }
  ThrowIfError(files.status());
  w.files = *files;
  return *std::move(files);
}

}  // namespace

void IngestSegments(const CollectionRef& c, nb::handle files, const std::string& method,
                    bool verify_checksums) {
  IngestOptions options;
  options.method = ParseMethod(method);
  options.verify_checksums = verify_checksums;
  const std::vector<std::string> paths = Paths(files);
  absl::Status status;
  {
    nb::gil_scoped_release release;
    DbHandle::Session session(*c.handle);
    status = session.db().IngestSegments(c.name, paths, options);
  }
  ThrowIfError(status);
}

void BindSegmentWriter(nb::module_& m) {
  nb::class_<PyWriter> writer(
      m, "SegmentWriter",
      "Builds a collection's segment files outside any database (another process or "
      "machine), for DB.ingest_segments / Collection.ingest_segments to take in, all or "
      "nothing. The files are what a bulk_load of the same rows builds. Rows are routed by "
      "id as the database routes them: one file a shard (or with one_graph=True one file "
      "holding every shard's rows in one graph). A context manager: a with-block that ends "
      "without an exception calls finish(). One thread at a time.");
  writer
      .def("__init__",
           [](PyWriter* self, nb::handle path, uint32_t dim, std::string metric,
              uint32_t shard_count, std::vector<std::string> attributes, uint32_t max_degree,
              uint32_t build_list_size, float alpha, std::string code, bool one_graph,
              std::string prefix, uint32_t threads) {
             const CollectionOptions options =
                 MakeCollectionOptions(dim, metric, shard_count, std::move(attributes),
                                       max_degree, build_list_size, alpha, code);
             const std::string dir =
                 nb::cast<std::string>(nb::module_::import_("os").attr("fspath")(path));
             new (self) PyWriter(MakeWriter(dir, options, one_graph, std::move(prefix), threads));
           },
           "path"_a, nb::kw_only(), "dim"_a, "metric"_a = "l2", "shard_count"_a,
           "attributes"_a = std::vector<std::string>(),
           "max_degree"_a = GraphOptions().max_degree,
           "build_list_size"_a = GraphOptions().build_list_size,
           "alpha"_a = GraphOptions().alpha, "code"_a = "sq8", "one_graph"_a = false,
           "prefix"_a = "segment", "threads"_a = 0,
           "A writer of files in the directory `path` (created when missing), for a collection "
           "of this shape: every argument as the collection was created (shard_count as "
           "stored, not 0: Collection.shard_count). Files are named "
           "'<prefix>-shard-<s>.vamana' ('<prefix>-all.vamana' with one_graph): writers "
           "sharing a directory need different prefixes. threads: graph builders (0: one per "
           "core). Raises AlreadyExistsError when a file it would write exists.")
      .def_static(
          "for_collection",
          [](nb::handle path, const CollectionRef& c, bool one_graph, std::string prefix,
             uint32_t threads) {
            const std::string dir =
                nb::cast<std::string>(nb::module_::import_("os").attr("fspath")(path));
            return MakeWriter(dir, c.options, one_graph, std::move(prefix), threads);
          },
          "path"_a, "collection"_a, nb::kw_only(), "one_graph"_a = false,
          "prefix"_a = "segment", "threads"_a = 0,
          "A writer for the shape of `collection` (an open one: its dim, metric, shard count, "
          "graph options, code and attributes).")
      .def("add",
           [](PyWriter& self, nb::handle ids, nb::handle vectors, nb::handle labels,
              nb::handle attributes, nb::handle payloads) {
             Add(self, ids, vectors, labels, attributes, payloads);
           },
           "ids"_a, "vectors"_a, nb::kw_only(), "labels"_a = nb::none(),
           "attributes"_a = nb::none(), "payloads"_a = nb::none(),
           "Adds rows, as Collection.put_batch takes them (checked whole first: on bad input "
           "nothing is added). The rows are copied (kept until finish()). A later row of a "
           "repeated id wins.")
      .def("finish", &Finish,
           "Builds each file's graph and writes it (durable when this returns); returns the "
           "files' paths, [] when no row was added. Later calls raise "
           "FailedPreconditionError.")
      .def_prop_ro("rows", [](PyWriter& self) { return self.writer->rows(); },
                   "Rows added so far.")
      .def_prop_ro("files", [](PyWriter& self) { return self.files; },
                   "The files finish() wrote (None before).")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__",
           [](PyWriter& self, nb::handle type, nb::handle, nb::handle) {
             if (type.is_none() && !self.files) Finish(self);
           },
           nb::arg().none(), nb::arg().none(), nb::arg().none());
}

}  // namespace shoal::python
