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
#include <shared_mutex>
#include <utility>

#include "absl/status/status.h"
#include "shoal/db.h"
#include "status.h"

namespace shoal::python {

class DbHandle {
 public:
  explicit DbHandle(std::unique_ptr<DB> db) : db_(std::move(db)) {}
  ~DbHandle() {
    std::unique_lock lock(mu_);
    if (db_ != nullptr) (void)db_->Close();
  }

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

  // Closes the database once every running call has returned (waits for
  // them); later calls raise. Idempotent: a second Close returns OK.
  absl::Status Close() {
    std::unique_lock lock(mu_);
    if (db_ == nullptr) return absl::OkStatus();
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
};

}  // namespace shoal::python

#endif  // SHOAL_PYTHON_SRC_DB_HANDLE_H_
