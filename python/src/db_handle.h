// Copyright 2026 The shoal Authors.
//
// The open database behind a Python DB and its Collection objects. The
// engine's DB::Close must not race with other calls; Python code cannot be
// trusted with that (a thread may search while another closes, or a
// Collection may outlive its DB's close), so every call holds the handle
// shared and Close holds it alone. A call on a closed handle raises
// FailedPreconditionError.
//
// Lock order: the GIL is never held while waiting for the handle. Calls
// release the GIL first, then take the handle (see Session).

#ifndef SHOAL_PYTHON_SRC_DB_HANDLE_H_
#define SHOAL_PYTHON_SRC_DB_HANDLE_H_

#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <utility>

#include "absl/status/status.h"
#include "shoal/db.h"
#include "status.h"

namespace shoal::python {

class DbHandle {
 public:
  explicit DbHandle(std::unique_ptr<DB> db) : db_(std::move(db)) {}
  ~DbHandle() { (void)Close(); }

  // One call's use of the database: holds it open until destroyed.
  // Throws FailedPreconditionError when it is closed.
  class Session {
   public:
    explicit Session(DbHandle& h) : lock_(h.mu_), db_(h.db_.get()) {
      if (db_ == nullptr) {
        throw StatusError(absl::FailedPreconditionError("shoal: the database is closed"));
      }
    }
    DB& db() const { return *db_; }

   private:
    std::shared_lock<std::shared_mutex> lock_;
    DB* db_;
  };

  // What holds engine state that must go before the database closes (an
  // export's RecordIterator, which must not outlive its DB): Close calls
  // Release() on each one still registered, with the handle held alone (no
  // call of it runs), before it closes the database.
  class Dependent {
   public:
    virtual void Release() = 0;

   protected:
    ~Dependent() = default;
  };
  void Register(Dependent* d) {
    std::lock_guard lock(dependents_mu_);
    dependents_.insert(d);
  }
  void Unregister(Dependent* d) {
    std::lock_guard lock(dependents_mu_);
    dependents_.erase(d);
  }

  // Closes the database once every running call has returned (waits for
  // them); later calls raise. Idempotent: a second Close returns OK.
  absl::Status Close() {
    std::unique_lock lock(mu_);
    if (db_ == nullptr) return absl::OkStatus();
    {
      std::lock_guard dependents_lock(dependents_mu_);
      for (Dependent* d : dependents_) d->Release();
      dependents_.clear();
    }
    absl::Status status = db_->Close();
    db_.reset();
    return status;
  }
  bool closed() {
    std::shared_lock lock(mu_);
    return db_ == nullptr;
  }

 private:
  std::shared_mutex mu_;
  std::unique_ptr<DB> db_;
  std::mutex dependents_mu_;  // after mu_ when both are taken
  std::set<Dependent*> dependents_;
};

}  // namespace shoal::python

#endif  // SHOAL_PYTHON_SRC_DB_HANDLE_H_
