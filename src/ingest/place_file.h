// Copyright 2026 The shoal Authors.
//
// How DB::IngestSegments brings a file into a database's directory: a hard
// link (then the file's bytes are fdatasync'ed: another process wrote
// them), or a copy written to a temporary, fdatasync'ed and renamed. Either
// way the new name is durable only after the caller's SyncDir of its
// directory, which the caller does once for all the files it placed.

#ifndef SHOAL_SRC_INGEST_PLACE_FILE_H_
#define SHOAL_SRC_INGEST_PLACE_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "shoal/file_system.h"
#include "shoal/options.h"

namespace shoal::ingest {

// Makes `to` (which must not exist) hold the bytes of `from`, as `method`
// says (kMove links as kLinkOrCopy does; the caller removes `from` once the
// ingest succeeded). A link that fails (another file system, a file system
// without links) falls back to a copy. *linked: whether `to` is a link. On
// error nothing is left at `to` or its temporary.
absl::Status PlaceFile(FileSystem* fs, const std::string& from, const std::string& to,
                       IngestMethod method, bool* linked);

}  // namespace shoal::ingest

#endif  // SHOAL_SRC_INGEST_PLACE_FILE_H_
