// Copyright 2026 The shoal Authors.
//
// shoal.open, DB and Collection.

#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collection_ref.h"
#include "data_calls.h"
#include "export.h"
#include "progress.h"
#include "db/inspect.h"
#include "nanobind/stl/filesystem.h"
#include "nanobind/stl/string.h"
#include "nanobind/stl/vector.h"
#include "shoal/db.h"
#include "status.h"

namespace nb = nanobind;
using namespace nanobind::literals;

namespace shoal::python {

Metric ParseMetric(std::string_view name) {
  if (name == "l2") return Metric::kL2;
  if (name == "ip" || name == "inner_product") return Metric::kInnerProduct;
  if (name == "cosine") return Metric::kCosine;
  ThrowInvalid(absl::StrCat("metric must be 'l2', 'ip' or 'cosine', got '", std::string(name), "'"));
}

const char* MetricName(Metric metric) {
  switch (metric) {
    case Metric::kL2: return "l2";
    case Metric::kInnerProduct: return "ip";
    case Metric::kCosine: return "cosine";
  }
  return "unknown";
}

VectorCode ParseCode(std::string_view name) {
  if (name == "sq8") return VectorCode::kSq8;
  if (name == "none") return VectorCode::kNone;
  ThrowInvalid(absl::StrCat("code must be 'sq8' or 'none', got '", std::string(name), "'"));
}

namespace {

FsyncPolicy ParseFsync(std::string_view name) {
  if (name == "never") return FsyncPolicy::kNever;
  if (name == "interval") return FsyncPolicy::kInterval;
  if (name == "always") return FsyncPolicy::kAlways;
  ThrowInvalid(absl::StrCat("fsync must be 'never', 'interval' or 'always', got '", std::string(name), "'"));
}

SegmentStorage ParseStorage(std::string_view name) {
  if (name == "mapped") return SegmentStorage::kMapped;
  if (name == "disk") return SegmentStorage::kDisk;
  ThrowInvalid(absl::StrCat("segment_storage must be 'mapped' or 'disk', got '", std::string(name), "'"));
}

}  // namespace

CollectionOptions MakeCollectionOptions(uint32_t dim, std::string_view metric,
                                        uint32_t shard_count,
                                        std::vector<std::string> attributes,
                                        uint32_t max_degree, uint32_t build_list_size,
                                        float alpha, std::string_view code) {
  CollectionOptions o;
  o.dim = dim;
  o.metric = ParseMetric(metric);
  o.shard_count = shard_count;
  o.attributes = std::move(attributes);
  o.graph.max_degree = max_degree;
  o.graph.build_list_size = build_list_size;
  o.graph.alpha = alpha;
  o.code = ParseCode(code);
  return o;
}

namespace {

// A Python DB: the open database, and its default collection when it has one.
struct PyDB {
  std::shared_ptr<DbHandle> handle;
  std::optional<CollectionRef> default_collection;

  const CollectionRef& Default() const {
    if (!default_collection) {
      throw StatusError(absl::FailedPreconditionError(
          "shoal: this database has no default collection: open it with dim=... to make "
          "one, or use db.collection(name)"));
    }
    return *default_collection;
  }
};

CollectionRef Lookup(const std::shared_ptr<DbHandle>& handle, const std::string& name) {
  absl::StatusOr<CollectionOptions> options;
  {
    nb::gil_scoped_release release;
    DbHandle::Session session(*handle);
    options = session.db().GetCollectionOptions(name);
  }
  ThrowIfError(options.status());
  return CollectionRef{handle, name, *std::move(options)};
}

// Runs `call` on the open database with the GIL released.
template <class Call>
auto Run(PyDB& db, Call call) {
  nb::gil_scoped_release release;
  DbHandle::Session session(*db.handle);
  return call(session.db());
}

nb::dict Stats(PyDB& db) {
  absl::StatusOr<std::vector<CollectionReport>> reports =
      Run(db, [](DB& d) { return CollectStats(d); });
  ThrowIfError(reports.status());
  nb::dict out;
  for (const CollectionReport& r : *reports) {
    uint64_t live = 0, stored = 0, segments = 0, memtable = 0, wal_bytes = 0, deleted = 0,
             payload = 0;
    for (const ShardReport& s : r.shards) {
      live += s.live_vectors;
      stored += s.stored_vectors;
      segments += s.segments;
      memtable += s.memtable_bytes;
      wal_bytes += s.wal_bytes;
      deleted += s.deleted;
      payload += s.segment_payload_bytes;
    }
    nb::dict c;
    c["dim"] = r.options.dim;
    c["metric"] = MetricName(r.options.metric);
    c["shards"] = r.shards.size();
    c["live_vectors"] = live;
    c["stored_vectors"] = stored;
    c["deleted"] = deleted;
    c["segments"] = segments;
    c["memtable_bytes"] = memtable;
    c["wal_bytes"] = wal_bytes;
    c["segment_payload_bytes"] = payload;
    out[nb::str(r.name.c_str())] = c;
  }
  return out;
}

}  // namespace

void BindDb(nb::module_& m) {
  BindExportIterator(m);
  nb::class_<CollectionRef> collection(
      m, "Collection",
      "A named collection of records: its own dim, metric and shards. Get one from "
      "DB.create_collection or DB.collection; it stays usable until the DB is closed. Safe "
      "to use from many threads at once.");
  collection.def_prop_ro("name", [](const CollectionRef& c) { return c.name; })
      .def_prop_ro("dim", [](const CollectionRef& c) { return c.options.dim; })
      .def_prop_ro("metric", [](const CollectionRef& c) { return MetricName(c.options.metric); })
      .def_prop_ro("shard_count", [](const CollectionRef& c) { return c.options.shard_count; })
      .def_prop_ro("attributes",
                   [](const CollectionRef& c) {
                     nb::list names;
                     for (const std::string& a : c.options.attributes) names.append(a);
                     return nb::tuple(names);
                   },
                   "The int64 attributes its records may carry, by name.")
      .def_prop_ro(
          "writer_options",
          [](const CollectionRef& c) {
            const CollectionOptions& o = c.options;
            nb::list names;
            for (const std::string& a : o.attributes) names.append(a);
            nb::dict d;
            d["dim"] = o.dim;
            d["metric"] = MetricName(o.metric);
            d["shard_count"] = o.shard_count;
            d["attributes"] = names;
            d["max_degree"] = o.graph.max_degree;
            d["build_list_size"] = o.graph.build_list_size;
            d["alpha"] = o.graph.alpha;
            d["code"] = o.code == VectorCode::kSq8 ? "sq8" : "none";
            return d;
          },
          "Its shape as SegmentWriter's keywords (dim, metric, shard_count, attributes, "
          "max_degree, build_list_size, alpha, code): a plain dict, so that a writer can be "
          "made in another process (a Ray task) with SegmentWriter(path, **options).")
      .def("__repr__", [](const CollectionRef& c) {
        return absl::StrCat("shoal.Collection('", c.name, "', dim=", c.options.dim,
                            ", metric='", MetricName(c.options.metric), "')");
      });
  BindDataCalls(collection, [](CollectionRef& c) -> const CollectionRef& { return c; });
  BindExport(collection, [](CollectionRef& c) -> const CollectionRef& { return c; });

  nb::class_<PyDB> db(
      m, "DB",
      "An open shoal database: a directory of named collections. Use shoal.open(). A context "
      "manager (closed on exit). The calls put, search, ... on the DB itself act on its "
      "collection named 'default' (made when it is opened with dim=...). Safe to use from "
      "many threads at once; every call that does I/O or searches releases the GIL.");
  db.def("create_collection",
         [](PyDB& self, std::string name, uint32_t dim, std::string metric, uint32_t shard_count,
            std::vector<std::string> attributes, uint32_t max_degree, uint32_t build_list_size,
            float alpha, std::string code) {
           const CollectionOptions options =
               MakeCollectionOptions(dim, metric, shard_count, std::move(attributes),
                                     max_degree, build_list_size, alpha, code);
           ThrowIfError(Run(self, [&](DB& d) { return d.CreateCollection(name, options); }));
           return Lookup(self.handle, name);
         },
         "name"_a, "dim"_a, "metric"_a = "l2", nb::kw_only(), "shard_count"_a = 0,
         "attributes"_a = std::vector<std::string>(),
         "max_degree"_a = GraphOptions().max_degree,
         "build_list_size"_a = GraphOptions().build_list_size, "alpha"_a = GraphOptions().alpha,
         "code"_a = "sq8",
         "Creates an empty collection and returns it. name: 1-128 characters of "
         "[A-Za-z0-9_.-]; metric: 'l2' (squared L2), 'ip' (inner product) or 'cosine'; "
         "shard_count 0: one per core; attributes: the names of the int64 attributes its "
         "records may carry. Raises AlreadyExistsError when the name is taken.")
      .def("collection", [](PyDB& self, std::string name) { return Lookup(self.handle, name); },
           "name"_a, "The collection `name`. Raises NotFoundError (a KeyError) when absent.")
      .def("drop_collection",
           [](PyDB& self, std::string name) {
             // The DB's own calls keep addressing "default" (dropped, they raise
             // NotFoundError): resetting it here could free it under a call that
             // runs without the GIL.
             ThrowIfError(Run(self, [&](DB& d) { return d.DropCollection(name); }));
           },
           "name"_a, "Removes a collection and all of its data.")
      .def("list_collections",
           [](PyDB& self) { return Run(self, [](DB& d) { return d.ListCollections(); }); },
           "The names of all collections, sorted.")
      .def("flush", [](PyDB& self) { ThrowIfError(Run(self, [](DB& d) { return d.Flush(); })); },
           "Moves every memtable into on-disk segments; returns when they are durable.")
      .def("compact",
           [](PyDB& self, nb::handle progress) {
             std::exception_ptr callback_error;
             const ProgressFn fn = ToProgress(progress, "compact", "shards", &callback_error);
             ThrowIfError(Run(self, [&](DB& d) { return d.Compact(fn); }));
             if (callback_error) std::rethrow_exception(callback_error);
           },
           nb::kw_only(), "progress"_a = nb::none(),
           "Merges every collection's segments, dropping deleted and overwritten vectors.\n"
           "progress: None, True (a progress line on stderr) or a callable progress(done, "
           "total), called after each shard is compacted (total: the shards of all "
           "collections; a collection whose shards share one graph reports them at once).")
      .def("catch_up",
           [](PyDB& self) { ThrowIfError(Run(self, [](DB& d) { return d.CatchUp(); })); },
           "A reader (open(..., read_only=True)): moves to the database's present, seeing "
           "every write its writer acknowledged before the call (logged, flushed or merged) "
           "and collections created or dropped. Searches on other threads go on meanwhile. "
           "Raises StorageError (Unavailable) when the writer replaced the files it needed 64 times "
           "running (call again). On a writable DB it does nothing.")
      .def("wait_for_compact",
           [](PyDB& self) { ThrowIfError(Run(self, [](DB& d) { return d.WaitForCompact(); })); },
           "Returns once no flush or background merge is queued or running.")
      .def("close",
           [](PyDB& self) {
             absl::Status status;
             {
               nb::gil_scoped_release release;
               status = self.handle->Close();
             }
             ThrowIfError(status);
           },
           "Makes every write durable and releases the directory (waits for running calls). "
           "Later calls raise FailedPreconditionError. Calling it again does nothing.")
      .def("checkpoint",
           [](PyDB& self, std::filesystem::path dir, nb::handle progress) {
             std::exception_ptr callback_error;
             CheckpointOptions options;
             options.progress = ToProgress(progress, "checkpoint", "bytes", &callback_error);
             ThrowIfError(Run(self, [&](DB& d) { return d.Checkpoint(dir.string(), options); }));
             if (callback_error) std::rethrow_exception(callback_error);
           },
           "dir"_a, nb::kw_only(), "progress"_a = nb::none(),
           "Makes `dir` (which must not exist) a copy of the whole database as it was at one "
           "moment during the call, which shoal.open opens, while writes, flushes and merges "
           "go on (other threads may keep calling). Segments are hard-linked on the same "
           "file system and copied otherwise (e.g. from /dev/shm to a disk); the logs are "
           "copied up to that moment; everything is synced, the manifest last, so a crash "
           "or an error leaves nothing that opens as a database.\n"
           "progress: None, True (a progress line on stderr) or a callable progress(done, "
           "total) in bytes.\n"
           "Raises AlreadyExistsError when `dir` exists.")
      .def_prop_ro("closed", [](PyDB& self) { return self.handle->closed(); })
      .def("stats", &Stats,
           "Per collection: dim, metric, shards, live_vectors (what searches can return), "
           "stored_vectors (every version kept), deleted, segments, memtable_bytes, wal_bytes, "
           "segment_payload_bytes.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__",
           [](PyDB& self, nb::handle, nb::handle, nb::handle) {
             absl::Status status;
             {
               nb::gil_scoped_release release;
               status = self.handle->Close();
             }
             ThrowIfError(status);
           },
           nb::arg().none(), nb::arg().none(), nb::arg().none());
  BindDataCalls(db, [](PyDB& self) -> const CollectionRef& { return self.Default(); });
  BindExport(db, [](PyDB& self) -> const CollectionRef& { return self.Default(); });

  const Options defaults;
  m.def("open",
        [](std::filesystem::path path, uint32_t dim, std::string metric, uint32_t shard_count,
           std::vector<std::string> attributes, bool create_if_missing, bool error_if_exists,
           std::string fsync, uint32_t sync_interval_us, size_t memtable_bytes,
           std::string segment_storage, size_t memory_budget_bytes, size_t node_cache_bytes,
           uint32_t worker_threads, uint32_t max_degree, uint32_t build_list_size, float alpha,
           std::string code, bool salvage_corrupt_wal, bool automatic_compaction,
           bool read_only, uint32_t catch_up_interval_ms) {
          Options options;
          options.read_only = read_only;
          options.catch_up_interval_ms = catch_up_interval_ms;
          options.default_collection =
              MakeCollectionOptions(dim, metric, shard_count, std::move(attributes), max_degree,
                                    build_list_size, alpha, code);
          options.create_if_missing = create_if_missing;
          options.error_if_exists = error_if_exists;
          options.fsync = ParseFsync(fsync);
          options.sync_interval_us = sync_interval_us;
          options.memtable_bytes = memtable_bytes;
          options.segment_storage = ParseStorage(segment_storage);
          options.memory_budget_bytes = memory_budget_bytes;
          options.node_cache_bytes = node_cache_bytes;
          options.worker_threads = worker_threads;
          options.salvage_corrupt_wal = salvage_corrupt_wal;
          options.compaction.automatic = automatic_compaction;
          absl::StatusOr<std::unique_ptr<DB>> opened;
          {
            nb::gil_scoped_release release;
            opened = DB::Open(options, path.string());
          }
          ThrowIfError(opened.status());
          PyDB db{std::make_shared<DbHandle>(*std::move(opened)), std::nullopt};
          absl::StatusOr<CollectionOptions> d =
              Run(db, [](DB& x) { return x.GetCollectionOptions(kDefaultCollection); });
          if (d.ok()) {
            db.default_collection =
                CollectionRef{db.handle, std::string(kDefaultCollection), *std::move(d)};
          }
          return db;
        },
        "path"_a, nb::kw_only(), "dim"_a = 0, "metric"_a = "l2", "shard_count"_a = 0,
        "attributes"_a = std::vector<std::string>(),
        "create_if_missing"_a = defaults.create_if_missing,
        "error_if_exists"_a = defaults.error_if_exists, "fsync"_a = "never",
        "sync_interval_us"_a = defaults.sync_interval_us,
        "memtable_bytes"_a = defaults.memtable_bytes, "segment_storage"_a = "mapped",
        "memory_budget_bytes"_a = defaults.memory_budget_bytes,
        "node_cache_bytes"_a = defaults.node_cache_bytes,
        "worker_threads"_a = defaults.worker_threads,
        "max_degree"_a = GraphOptions().max_degree,
        "build_list_size"_a = GraphOptions().build_list_size, "alpha"_a = GraphOptions().alpha,
        "code"_a = "sq8", "salvage_corrupt_wal"_a = defaults.salvage_corrupt_wal,
        "automatic_compaction"_a = defaults.compaction.automatic,
        "read_only"_a = defaults.read_only,
        "catch_up_interval_ms"_a = defaults.catch_up_interval_ms,
        "Opens (or creates) the database at `path` and returns a DB.\n\n"
        "dim, metric, shard_count, attributes, max_degree, build_list_size, alpha, code: the "
        "collection named 'default' that the DB's own put/search use; made on first open "
        "when dim > 0 (dim 0 on a later open: as stored).\n"
        "fsync: 'never' (the OS writes back; a process crash loses nothing, a power loss "
        "may), 'interval' (synced every sync_interval_us) or 'always' (every write is "
        "durable when the call returns; concurrent writers share syncs).\n"
        "segment_storage: 'mapped' (segments memory-mapped) or 'disk' (read with direct I/O, "
        "for data larger than RAM; memory_budget_bytes bounds what stays in memory).\n"
        "worker_threads: threads for flushes, merges and search_batch (0: one per core).\n"
        "read_only: open as a reader, beside the process that writes it (or with none; any "
        "number of readers): no file is written, every write raises FailedPreconditionError, "
        "and the reader sees the database as it was at open until catch_up() (or every "
        "catch_up_interval_ms milliseconds, when > 0). A missing database raises "
        "NotFoundError.\n"
        "Raises FailedPreconditionError when another process has the database open for "
        "writing, "
        "DataLossError when a file is damaged (naming file and offset).");
}

}  // namespace shoal::python
