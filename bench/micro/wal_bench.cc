// Copyright 2026 The shoal Authors.
//
// WAL append (src/wal/): put records of 128-d vectors, one per record (a
// Put) or 100 per record (a PutBatch), appended to a WalWriter in /dev/shm
// the way Shard::AppendPut does: BeginRecord, copy the ids and rows, then
// FinishRecord (header and checksum). Never synced (FsyncPolicy::kNever).
//
// Arg `pages`, how log pages get faulted in (the main cost of an append on
// a VM, see docs/performance-history.md, "Write path"):
//   0  by the writer's own first store to each page
//   1  by a background thread ahead of the writer, as a DB does
//   2  up front, untimed (WalWriterOptions::populate, and rotations to a
//      new file paused): what is left is the copy and the checksum
// Closed files are removed as the writer rotates (every 64 MiB).
//
// Counters: bytes_per_second (whole records: header, payload, padding) and
// items_per_second (vectors).

#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <vector>

#include "common/bench_util.h"
#include "micro/micro_util.h"
#include "util/background_worker.h"
#include "util/file_system.h"
#include "wal/wal_format.h"
#include "version/filename.h"
#include "wal/wal_writer.h"

namespace shoal_bench {
namespace {

constexpr uint32_t kDim = 128;

// The payload of a put record of ids first_id, first_id + 1, ..., written as
// Shard::AppendPut does: the ids, then each row.
void WritePutPayload(char* payload, uint64_t first_id, const std::vector<const float*>& rows) {
  const size_t row_bytes = kDim * sizeof(float);
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint64_t id = first_id + i;
    std::memcpy(payload + i * sizeof(uint64_t), &id, sizeof(id));
  }
  char* out = payload + rows.size() * sizeof(uint64_t);
  for (size_t i = 0; i < rows.size(); ++i) std::memcpy(out + i * row_bytes, rows[i], row_bytes);
}

void BM_WalAppend(benchmark::State& state) {
  const size_t batch = static_cast<size_t>(state.range(0));
  const int pages = static_cast<int>(state.range(1));
  shoal::FileSystem* fs = shoal::FileSystem::Default();
  ScratchDir dir("wal");
  // Declared before the writer, so destroyed after it: the writer's pending
  // prefault tasks hold the file, which Close() has then released.
  std::unique_ptr<shoal::BackgroundWorker> prefaulter;
  if (pages == 1) prefaulter = std::make_unique<shoal::BackgroundWorker>();
  shoal::wal::WalWriterOptions options;
  options.prefaulter = prefaulter.get();
  options.populate = pages == 2;
  std::unique_ptr<shoal::wal::WalWriter> writer =
      ValueOrDie(shoal::wal::WalWriter::Open(fs, dir.path(), options, 1, 0), "open WAL");

  const std::vector<float> vectors = GaussianVectors(batch, kDim, 1);
  std::vector<const float*> rows(batch);
  for (size_t i = 0; i < batch; ++i) rows[i] = &vectors[i * kDim];
  const size_t payload = shoal::wal::PutPayloadSize(batch, kDim);
  const size_t record_bytes = shoal::wal::AlignRecord(shoal::wal::kRecordHeaderSize + payload);
  // Where the next record starts in the current file, to see a rotation
  // coming (BeginRecord rotates when the record does not fit).
  const size_t capacity = shoal::wal::AlignRecord(options.file_bytes);
  size_t offset = shoal::wal::kFileHeaderSize;
  uint64_t sequence = 1;

  for (auto _ : state) {
    const bool rotates = offset + record_bytes > capacity;
    const uint64_t old_file = writer->current_file_number();
    if (rotates && pages == 2) state.PauseTiming();
    absl::StatusOr<char*> begun = writer->BeginRecord(payload);
    if (!begun.ok()) {
      state.SkipWithError(begun.status().ToString().c_str());
      break;
    }
    if (rotates != (writer->current_file_number() != old_file)) {
      state.SkipWithError("the log rotated where this benchmark did not expect it");
      break;
    }
    if (rotates) {
      if (pages != 2) state.PauseTiming();
      CheckOk(fs->RemoveFile(shoal::JoinPath(dir.path(), shoal::WalFileName(old_file))),
              "remove WAL file");
      offset = shoal::wal::kFileHeaderSize;
      state.ResumeTiming();
    }
    WritePutPayload(*begun, sequence, rows);
    writer->FinishRecord(shoal::wal::RecordType::kPut, sequence, static_cast<uint32_t>(batch),
                         kDim);
    sequence += batch;
    offset += record_bytes;
  }
  state.SetBytesProcessed(state.iterations() * record_bytes);
  state.SetItemsProcessed(state.iterations() * batch);
  CheckOk(writer->Close(/*sync=*/false), "close WAL");
}

BENCHMARK(BM_WalAppend)
    ->ArgNames({"vectors", "pages"})
    ->ArgsProduct({{1, 100}, {0, 1}})
    ->UseRealTime();
// Each timed second of pages = 2 takes ~4 s of untimed faulting-in.
BENCHMARK(BM_WalAppend)
    ->ArgNames({"vectors", "pages"})
    ->ArgsProduct({{1, 100}, {2}})
    ->UseRealTime()
    ->MinTime(0.1);

}  // namespace
}  // namespace shoal_bench
