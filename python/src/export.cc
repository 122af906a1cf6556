// Copyright 2026 The shoal Authors.

#include "export.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "arrays.h"
#include "progress.h"
#include "records.h"
#include "shoal/db.h"
#include "shoal/record_iterator.h"
#include "status.h"

namespace nb = nanobind;

namespace shoal::python {
namespace {

class ExportIterator final : public DbHandle::Dependent {
 public:
  ExportIterator(CollectionRef c, size_t batch_size, bool records)
      : c_(std::move(c)), batch_size_(batch_size), records_(records) {}
  ExportIterator(const ExportIterator&) = delete;
  ExportIterator& operator=(const ExportIterator&) = delete;
  // Collected with the GIL held (Close releases it while it waits).
  ~ExportIterator() { Close(); }

  // Starts the export. With the GIL held; releases it while the first
  // batch is read.
  void Start(nb::handle progress) {
    // ToProgress's callable must outlive the engine's iterator: held here.
    progress_keep_ = nb::borrow(progress);
    progress_ = ToProgress(progress_keep_, "export", "entries", &callback_error_);
    ExportOptions options;
    options.progress = progress_;
    absl::StatusOr<std::unique_ptr<RecordIterator>> it;
    {
      nb::gil_scoped_release release;
      DbHandle::Session session(*c_.handle);
      it = session.db().Export(c_.name, options);
      if (it.ok()) {
        std::lock_guard lock(mu_);
        it_ = *std::move(it);
        c_.handle->Register(this);
      }
    }
    RethrowCallbackError();
    ThrowIfError(it.status());
  }

  nb::object Next() {
    std::vector<RecordData> batch;
    absl::Status status;
    bool released = false;
    {
      nb::gil_scoped_release release;
      DbHandle::Session session(*c_.handle);  // raises once the DB is closed
      std::lock_guard lock(mu_);
      if (it_ == nullptr) {
        released = !done_;
      } else {
        // A batch_size far above the records (2**62) must not reserve it.
        batch.reserve(std::min<size_t>(batch_size_, 65536));
        for (; it_->Valid() && batch.size() < batch_size_; it_->Next()) {
          batch.push_back(it_->record());
        }
        if (!it_->Valid()) {
          status = it_->status();
          it_.reset();
          done_ = true;
          c_.handle->Unregister(this);
        }
      }
    }
    RethrowCallbackError();
    if (released) {
      throw StatusError(absl::FailedPreconditionError(
          "shoal: the export ended when its database was closed"));
    }
    ThrowIfError(status);
    if (batch.empty()) throw nb::stop_iteration();
    if (records_) {
      nb::list out;
      for (RecordData& r : batch) out.append(RecordToPython(c_, std::move(r), true));
      return out;
    }
    const size_t n = batch.size(), dim = c_.options.dim;
    std::vector<uint64_t> ids(n);
    std::vector<float> vectors(n * dim);
    for (size_t i = 0; i < n; ++i) {
      ids[i] = batch[i].id;
      std::copy(batch[i].vector.begin(), batch[i].vector.end(), vectors.begin() + i * dim);
    }
    return nb::make_tuple(NewArray(std::move(ids), n, 0), NewArray(std::move(vectors), n, dim));
  }

  // Ends the export early and lets go of its files. Idempotent. Holds the
  // database open (shared) while the engine's iterator goes, which must
  // happen before the database closes; waits for it without the GIL.
  void Close() {
    nb::gil_scoped_release release;
    std::unique_ptr<DbHandle::Session> session;
    try {
      session = std::make_unique<DbHandle::Session>(*c_.handle);
    } catch (const StatusError&) {
      // Closed: its close() released the iterator already.
    }
    std::lock_guard lock(mu_);
    if (it_ != nullptr) {
      it_.reset();
      c_.handle->Unregister(this);
    }
    done_ = true;
  }

  // DbHandle::Dependent: the database is closing (no call of it runs).
  void Release() override {
    std::lock_guard lock(mu_);
    it_.reset();
  }

 private:
  void RethrowCallbackError() {
    if (callback_error_) {
      std::exception_ptr e = std::exchange(callback_error_, nullptr);
      std::rethrow_exception(e);
    }
  }

  const CollectionRef c_;
  const size_t batch_size_;
  const bool records_;
  nb::object progress_keep_;
  ProgressFn progress_;
  std::exception_ptr callback_error_;
  std::mutex mu_;  // one Next at a time; Release from close()
  std::unique_ptr<RecordIterator> it_;
  bool done_ = false;  // exhausted or closed (not released by the DB's close)
};

}  // namespace

nb::object Export(const CollectionRef& c, size_t batch_size, bool records,
                  nb::handle progress) {
  if (batch_size == 0) ThrowInvalid("export: batch_size must be at least 1");
  nb::object it = nb::cast(new ExportIterator(c, batch_size, records), nb::rv_policy::take_ownership);
  nb::cast<ExportIterator&>(it).Start(progress);
  return it;
}

void BindExportIterator(nb::module_& m) {
  nb::class_<ExportIterator>(m, "ExportIterator",
                             "Batches of a collection's live records at one point in time "
                             "(Collection.export).")
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", &ExportIterator::Next)
      .def("close", &ExportIterator::Close,
           "Ends the export and lets go of the files it holds. Idempotent.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__",
           [](ExportIterator& self, nb::handle, nb::handle, nb::handle) { self.Close(); },
           nb::arg().none(), nb::arg().none(), nb::arg().none());
}

}  // namespace shoal::python
