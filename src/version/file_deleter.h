// Copyright 2026 The shoal Authors.
//
// Removes a database's obsolete files (log files a flush replaced, segments
// a merge or fold replaced), or, while a checkpoint holds it, notes them and
// removes them when the last hold goes (RocksDB's DisableFileDeletions). A
// checkpoint takes a hold before its cut, so every file the cut names stays
// until it is copied: a removal that ran before the hold was decided after
// the in-memory change that made its file obsolete, i.e. before the cut.
//
// Thread-safe.

#ifndef SHOAL_SRC_VERSION_FILE_DELETER_H_
#define SHOAL_SRC_VERSION_FILE_DELETER_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "shoal/file_system.h"
#include "util/mutex.h"

namespace shoal {

class FileDeleter {
 public:
  explicit FileDeleter(FileSystem* fs) : fs_(fs) {}
  FileDeleter(const FileDeleter&) = delete;
  FileDeleter& operator=(const FileDeleter&) = delete;

  // Removes `path` now (best effort, as every removal of an obsolete file:
  // what stays behind is removed at the next open or flush), or once no hold
  // is left.
  void Remove(const std::string& path);

  // Holds every later Remove until the matching Release.
  void Hold();
  // Ends a hold; the last one removes the files noted meanwhile.
  void Release();
  // Blocks until no hold is left. For a removal that cannot wait as a note
  // does: DropCollection removes a whole directory, and a CreateCollection
  // of the same name waits for it, so the drop waits for the checkpoints
  // that may be copying the directory instead.
  void WaitUntilNoHold();

  // A hold for the life of the object.
  class Scoped {
   public:
    explicit Scoped(FileDeleter* deleter) : deleter_(deleter) { deleter_->Hold(); }
    ~Scoped() { deleter_->Release(); }
    Scoped(const Scoped&) = delete;
    Scoped& operator=(const Scoped&) = delete;

   private:
    FileDeleter* const deleter_;
  };

 private:
  FileSystem* const fs_;
  Mutex mu_;
  CondVar released_;  // signalled when holds_ reaches 0
  int holds_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> deferred_ ABSL_GUARDED_BY(mu_);
};

// `deleter`->Remove(path), or fs->RemoveFile(path) when `deleter` is null.
void RemoveObsoleteFile(FileSystem* fs, FileDeleter* deleter, const std::string& path);

}  // namespace shoal

#endif  // SHOAL_SRC_VERSION_FILE_DELETER_H_
