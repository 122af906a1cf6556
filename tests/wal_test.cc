// Copyright 2026 The shoal Authors.
//
// The write-ahead log on its own: what the writer lays down, and where the
// reader decides the log ends or is damaged.

#include <sys/stat.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testutil/fault_injection_fs.h"
#include "testutil/temp_dir.h"
#include "util/coding.h"
#include "version/filename.h"
#include "util/file_system.h"
#include "util/hash.h"
#include "wal/wal_reader.h"
#include "wal/wal_writer.h"

namespace shoal::wal {
namespace {

constexpr uint32_t kDim = 4;
constexpr size_t kMarkBytes = AlignRecord(kRecordHeaderSize + kSyncMarkPayload);

struct Op {
  RecordType type;
  uint64_t sequence;
  std::vector<uint64_t> ids;
  std::vector<float> vectors;
};

class WalTest : public ::testing::Test {
 protected:
  FileSystem* fs() { return FileSystem::Default(); }
  std::string FilePath(uint64_t number) { return JoinPath(dir_.path(), WalFileName(number)); }

  // On `on` (default: the real file system).
  std::unique_ptr<WalWriter> NewWriter(size_t file_bytes = 1 << 16, FileSystem* on = nullptr) {
    WalWriterOptions options;
    options.file_bytes = file_bytes;
    options.keep_view = true;
    auto writer = WalWriter::Open(on != nullptr ? on : fs(), dir_.path(), options, 1, 0);
    EXPECT_TRUE(writer.ok()) << writer.status();
    return std::move(writer).value();
  }

  // Appends a put of `n` vectors with ids first_id.., returns its end offset
  // in the current file.
  void AppendPut(WalWriter* w, uint64_t first_id, uint32_t n) {
    auto payload = w->BeginRecord(PutPayloadSize(n, kDim));
    ASSERT_TRUE(payload.ok()) << payload.status();
    for (uint32_t i = 0; i < n; ++i) EncodeFixed64(*payload + i * 8, first_id + i);
    float* v = reinterpret_cast<float*>(*payload + n * 8);
    for (uint32_t i = 0; i < n * kDim; ++i) v[i] = static_cast<float>(first_id * 10 + i);
    w->FinishRecord(RecordType::kPut, next_sequence_, n, kDim);
    next_sequence_ += n;
  }

  // Appends one-vector puts until BeginRecord fails (at most 100), and
  // returns that failure; *first_lsn is the end of the first put.
  absl::Status AppendUntilFailure(WalWriter* w, uint64_t* first_lsn) {
    for (int i = 0; i < 100; ++i) {
      absl::StatusOr<char*> payload = w->BeginRecord(PutPayloadSize(1, kDim));
      if (!payload.ok()) return payload.status();
      std::memset(*payload, 0, PutPayloadSize(1, kDim));
      const uint64_t lsn = w->FinishRecord(RecordType::kPut, next_sequence_++, 1, kDim);
      if (i == 0) *first_lsn = lsn;
    }
    return absl::OkStatus();
  }

  void AppendDelete(WalWriter* w, uint64_t id) {
    auto payload = w->BeginRecord(8);
    ASSERT_TRUE(payload.ok()) << payload.status();
    EncodeFixed64(*payload, id);
    w->FinishRecord(RecordType::kDelete, next_sequence_++, 1, 0);
  }

  absl::StatusOr<ReadResult> Read(const std::string& contents, std::vector<Op>* ops,
                                  uint64_t number = 1) {
    return ReadWalFile(contents, FilePath(number), 0, number, kDim,
                       [&](const RecordView& r) {
                         Op op{r.type, r.sequence, {}, {}};
                         for (uint32_t i = 0; i < r.count; ++i) {
                           op.ids.push_back(DecodeFixed64(r.ids + i * 8));
                         }
                         if (r.vectors != nullptr) {
                           op.vectors.resize(size_t{r.count} * r.dim);
                           std::memcpy(op.vectors.data(), r.vectors, op.vectors.size() * 4);
                         }
                         ops->push_back(std::move(op));
                         return absl::OkStatus();
                       });
  }

  std::string Contents(uint64_t number = 1) {
    auto contents = fs()->ReadFile(FilePath(number));
    EXPECT_TRUE(contents.ok()) << contents.status();
    return contents.value_or("");
  }

  test::TempDir dir_;
  uint64_t next_sequence_ = 1;
};

TEST_F(WalTest, RecordsReadBackInOrder) {
  auto w = NewWriter();
  AppendPut(w.get(), 100, 3);
  AppendDelete(w.get(), 101);
  AppendPut(w.get(), 200, 1);
  ASSERT_TRUE(w->Close(true).ok());

  std::vector<Op> ops;
  auto result = Read(Contents(), &ops);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].type, RecordType::kPut);
  EXPECT_EQ(ops[0].ids, (std::vector<uint64_t>{100, 101, 102}));
  EXPECT_EQ(ops[0].sequence, 1u);
  EXPECT_EQ(ops[0].vectors[5], 100 * 10 + 5);
  EXPECT_EQ(ops[1].type, RecordType::kDelete);
  EXPECT_EQ(ops[1].ids, (std::vector<uint64_t>{101}));
  EXPECT_EQ(ops[1].sequence, 4u);
  EXPECT_EQ(ops[2].sequence, 5u);
  EXPECT_FALSE(result->torn_tail);
  EXPECT_FALSE(result->corrupted);
}

TEST_F(WalTest, RecordsAreVisibleInTheFileBeforeClose) {
  // kill -9 loses nothing: the bytes are in the page cache once appended.
  auto w = NewWriter();
  AppendPut(w.get(), 1, 2);
  std::vector<Op> ops;
  auto result = Read(Contents(), &ops);  // read while the writer is open
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(ops.size(), 1u);
  EXPECT_FALSE(result->torn_tail);  // the reserved space is zeros
}

TEST_F(WalTest, TruncatedTrailingRecordIsIgnoredAtEveryOffset) {
  auto w = NewWriter();
  AppendPut(w.get(), 1, 2);
  ASSERT_TRUE(w->Close(true).ok());
  const size_t first_end = Contents().size();  // the put, then the closing sync mark
  w = nullptr;
  WalWriterOptions options;
  auto resumed = WalWriter::Open(fs(), dir_.path(), options, 1, first_end);
  ASSERT_TRUE(resumed.ok());
  AppendPut(resumed->get(), 50, 3);  // after a sync mark: the resumed bytes are durable
  const size_t mark_end = first_end + kMarkBytes;
  ASSERT_TRUE((*resumed)->Close(true).ok());
  const std::string full = Contents();
  ASSERT_GT(full.size(), mark_end);

  // Cut anywhere in the resumed part before the end of the second put.
  for (size_t cut = first_end; cut < full.size() - kMarkBytes; ++cut) {
    std::vector<Op> ops;
    auto result = Read(full.substr(0, cut), &ops);
    ASSERT_TRUE(result.ok()) << "cut at " << cut << ": " << result.status();
    ASSERT_EQ(ops.size(), 1u) << "cut at " << cut;
    EXPECT_EQ(result->valid_end, cut < mark_end ? first_end : mark_end) << "cut at " << cut;
    EXPECT_FALSE(result->corrupted) << "cut at " << cut;
    EXPECT_EQ(result->torn_tail, cut > first_end && cut != mark_end) << "cut at " << cut;
  }
}

// What a crash leaves of a log (no closing sync mark): a damaged last record
// is a torn write.
TEST_F(WalTest, FlippedByteInLastRecordIsATornTail) {
  auto w = NewWriter();
  AppendPut(w.get(), 1, 2);
  AppendPut(w.get(), 10, 2);
  std::string contents = Contents();  // while open: records are in the file at once
  const size_t end = w->end_lsn() + kFileHeaderSize;
  contents.resize(end);
  contents[end - 9] ^= 0x40;
  std::vector<Op> ops;
  auto result = Read(contents, &ops);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(ops.size(), 1u);
  EXPECT_TRUE(result->torn_tail);
  EXPECT_FALSE(result->corrupted);
}

// A crash during a sync can leave any subset of its blocks on the disk: a
// damaged record with valid records after it that no sync mark proves
// durable is a sync cut short (a torn tail), not damage.
TEST_F(WalTest, DamageNoSyncMarkProvesDurableIsATornTailDespiteValidRecordsAfterIt) {
  auto w = NewWriter();
  AppendPut(w.get(), 1, 1);
  AppendPut(w.get(), 2, 1);
  ASSERT_TRUE(w->SyncTo(w->end_lsn()).ok());
  const size_t synced_end = w->end_lsn() + kFileHeaderSize;
  AppendPut(w.get(), 3, 1);  // after a sync mark claiming synced_end
  const size_t third_end = w->end_lsn() + kFileHeaderSize;
  AppendPut(w.get(), 4, 1);
  AppendPut(w.get(), 5, 1);
  std::string contents = Contents().substr(0, w->end_lsn() + kFileHeaderSize);
  EXPECT_EQ(static_cast<uint8_t>(contents[synced_end + 12]), kSyncMarkType);
  contents[third_end + kRecordHeaderSize + 3] ^= 0x40;  // the 4th put; the 5th stays valid
  std::vector<Op> ops;
  auto result = Read(contents, &ops);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->corrupted);
  EXPECT_TRUE(result->torn_tail);
  EXPECT_EQ(result->valid_end, third_end);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[2].ids[0], 3u);

  // Damage before what that mark proves durable is damage.
  contents[kFileHeaderSize + kRecordHeaderSize + 3] ^= 0x40;  // the 1st put
  ops.clear();
  result = Read(contents, &ops);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->corrupted);
  EXPECT_EQ(result->corrupt_offset, kFileHeaderSize);
}

TEST_F(WalTest, ChecksumMismatchBeforeTheTailIsCorruption) {
  auto w = NewWriter();
  AppendPut(w.get(), 1, 2);
  AppendPut(w.get(), 10, 2);
  AppendPut(w.get(), 20, 2);
  ASSERT_TRUE(w->Close(true).ok());
  std::string contents = Contents();
  const size_t record = AlignRecord(kRecordHeaderSize + PutPayloadSize(2, kDim));
  const size_t second = kFileHeaderSize + record;
  contents[second + kRecordHeaderSize + 20] ^= 0x01;  // inside the second payload
  std::vector<Op> ops;
  auto result = Read(contents, &ops);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->corrupted);
  EXPECT_EQ(result->corrupt_offset, second);
  EXPECT_EQ(ops.size(), 1u);  // nothing past the damage was handed out
}

TEST_F(WalTest, ZeroedHeaderBeforeTheTailIsCorruption) {
  auto w = NewWriter();
  AppendPut(w.get(), 1, 1);
  AppendPut(w.get(), 2, 1);
  AppendPut(w.get(), 3, 1);
  ASSERT_TRUE(w->Close(true).ok());
  std::string contents = Contents();
  std::memset(contents.data() + kFileHeaderSize, 0, kRecordHeaderSize);
  std::vector<Op> ops;
  auto result = Read(contents, &ops);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->corrupted);
  EXPECT_EQ(result->corrupt_offset, kFileHeaderSize);
  EXPECT_TRUE(ops.empty());
}

TEST_F(WalTest, DamagedFileHeaderIsDataLoss) {
  auto w = NewWriter();
  AppendPut(w.get(), 1, 1);
  ASSERT_TRUE(w->Close(true).ok());
  std::string contents = Contents();
  contents[3] ^= 0xff;
  std::vector<Op> ops;
  auto result = Read(contents, &ops);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(result.status().message().find(WalFileName(1)), absl::string_view::npos);
}

// kill -9 while a new file's header was being stored: part of the header
// in a file of zeros holds no records; part of one before records is damage.
TEST_F(WalTest, FileWhoseHeaderWasTornByAKillHoldsNoRecords) {
  auto w = NewWriter();
  AppendPut(w.get(), 1, 1);
  ASSERT_TRUE(w->Close(true).ok());
  const std::string whole = Contents();
  for (size_t stored : {size_t{1}, size_t{8}, size_t{20}, kFileHeaderSize - 1}) {
    std::string torn(4096, '\0');
    std::memcpy(torn.data(), whole.data(), stored);
    std::vector<Op> ops;
    auto result = Read(torn, &ops);
    ASSERT_TRUE(result.ok()) << stored << ": " << result.status();
    EXPECT_TRUE(result->torn_tail);
    EXPECT_EQ(result->valid_end, 0u);
    EXPECT_TRUE(ops.empty());
  }
  std::string damaged = whole;
  damaged[20] ^= 0x01;  // the header's file number, records after it
  std::vector<Op> ops;
  EXPECT_EQ(Read(damaged, &ops).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(WalTest, FileWhoseHeaderNeverReachedDiskHoldsNoRecords) {
  std::vector<Op> ops;
  for (const std::string& contents : {std::string(), std::string(10, '\0'),
                                      std::string(4096, '\0')}) {
    auto result = Read(contents, &ops);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->records, 0u);
    EXPECT_FALSE(result->corrupted);
  }
}

TEST_F(WalTest, HeaderOfAnotherFileIsDataLoss) {
  auto w = NewWriter();
  AppendPut(w.get(), 1, 1);
  ASSERT_TRUE(w->Close(true).ok());
  std::vector<Op> ops;
  auto result = Read(Contents(), &ops, /*number=*/7);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(WalTest, UnknownRecordTypeWithSafeToIgnoreBitIsSkipped) {
  auto w = NewWriter();
  AppendPut(w.get(), 1, 1);
  // A future record type the reader does not know, marked safe to ignore.
  auto payload = w->BeginRecord(16);
  ASSERT_TRUE(payload.ok());
  std::memset(*payload, 7, 16);
  w->FinishRecord(static_cast<RecordType>(kSafeToIgnoreBit | 0x11), next_sequence_, 1, 0);
  AppendPut(w.get(), 2, 1);
  ASSERT_TRUE(w->Close(true).ok());
  std::vector<Op> ops;
  auto result = Read(Contents(), &ops);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(ops.size(), 2u);
  EXPECT_EQ(result->records, 4u);  // and the closing sync mark
  EXPECT_FALSE(result->corrupted);
}

TEST_F(WalTest, UnknownRecordTypeWithoutSafeToIgnoreBitStopsTheLog) {
  auto w = NewWriter();
  AppendPut(w.get(), 1, 1);
  auto payload = w->BeginRecord(16);
  ASSERT_TRUE(payload.ok());
  w->FinishRecord(static_cast<RecordType>(0x11), next_sequence_, 1, 0);
  AppendPut(w.get(), 2, 1);
  ASSERT_TRUE(w->Close(true).ok());
  std::vector<Op> ops;
  auto result = Read(Contents(), &ops);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->corrupted);  // a valid record follows one it cannot read
  EXPECT_EQ(ops.size(), 1u);
}

TEST_F(WalTest, FullFileRotatesToTheNextNumber) {
  auto w = NewWriter(/*file_bytes=*/256);
  for (uint64_t i = 0; i < 20; ++i) AppendPut(w.get(), i, 1);
  const uint64_t last = w->current_file_number();
  ASSERT_TRUE(w->Close(true).ok());
  ASSERT_GT(last, 1u);
  std::vector<Op> ops;
  for (uint64_t n = 1; n <= last; ++n) {
    auto result = Read(Contents(n), &ops, n);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_FALSE(result->torn_tail);
  }
  ASSERT_EQ(ops.size(), 20u);
  for (uint64_t i = 0; i < 20; ++i) EXPECT_EQ(ops[i].ids[0], i);
}

TEST_F(WalTest, RecordLargerThanAFileGetsAFileOfItsOwn) {
  auto w = NewWriter(/*file_bytes=*/256);
  AppendPut(w.get(), 1, 1);
  AppendPut(w.get(), 100, 64);  // 64 * (8 + 16) bytes > 256
  ASSERT_TRUE(w->Close(true).ok());
  std::vector<Op> ops;
  ASSERT_TRUE(Read(Contents(1), &ops, 1).ok());
  ASSERT_TRUE(Read(Contents(2), &ops, 2).ok());
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[1].ids.size(), 64u);
}

TEST_F(WalTest, ConcurrentSyncersCoverEveryAppend) {
  auto w = NewWriter();
  uint64_t lsn = 0;
  for (int i = 0; i < 10; ++i) {
    AppendPut(w.get(), i, 1);
    lsn = w->end_lsn();
  }
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] { ok += w->SyncTo(lsn).ok(); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 8);
  ASSERT_TRUE(w->Close(true).ok());
}

// A rotation whose close of the old file fails (it is closed all the same)
// fails the write, sticks, and nothing touches the closed file again: not a
// later sync, not Close.
TEST_F(WalTest, FailedCloseOfTheRotatedFileSticksAndIsNotRepeated) {
  test::FaultInjectionFileSystem fault_fs;
  std::unique_ptr<WalWriter> writer = NewWriter(/*file_bytes=*/256, &fault_fs);
  ASSERT_NE(writer, nullptr);
  WalWriter& w = *writer;
  fault_fs.FailNth(test::FsOp::kTruncate, 1, /*persistent=*/false);
  uint64_t first_lsn = 0;
  const absl::Status failed = AppendUntilFailure(&w, &first_lsn);
  ASSERT_FALSE(failed.ok()) << "no rotation in 100 records of a 256-byte file";
  EXPECT_EQ(fault_fs.faults_injected(), 1u);
  EXPECT_EQ(fault_fs.op_count(test::FsOp::kTruncate), 1u);
  EXPECT_EQ(w.BeginRecord(8).status(), failed);  // sticky
  EXPECT_FALSE(w.SyncFile().ok());
  (void)w.Close(/*sync=*/false);
  EXPECT_EQ(fault_fs.op_count(test::FsOp::kTruncate), 1u) << "the closed file was closed again";
}

// A rotation syncs the old file before the new one gets records. When that
// sync fails, the records of the old file that still await their SyncTo must
// get the failure: a retried fdatasync can report success after the kernel
// dropped the pages that did not reach the disk.
TEST_F(WalTest, FailedSyncOfTheRotatedFileFailsEveryLaterSyncTo) {
  test::FaultInjectionFileSystem fault_fs;
  std::unique_ptr<WalWriter> writer = NewWriter(/*file_bytes=*/256, &fault_fs);
  ASSERT_NE(writer, nullptr);
  WalWriter& w = *writer;
  // The rotation's syncs: the new file's header, its directory, then the
  // old file.
  fault_fs.FailNth(test::FsOp::kSync, 3, /*persistent=*/false);
  uint64_t first_lsn = 0;
  ASSERT_FALSE(AppendUntilFailure(&w, &first_lsn).ok())
      << "no rotation in 100 records of a 256-byte file";
  ASSERT_EQ(fault_fs.faults_injected(), 1u);
  EXPECT_FALSE(w.SyncTo(first_lsn).ok()) << "a record of the old file was acknowledged";
  EXPECT_FALSE(w.SyncTo(w.end_lsn()).ok());
  EXPECT_FALSE(w.Close(/*sync=*/true).ok());
}

// The rows of a put, as BeginRecordWrite takes them: the ids, then each
// vector in its own piece.
struct PutPieces {
  PutPieces(uint64_t first_id, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) ids.push_back(first_id + i);
    for (uint32_t i = 0; i < n * kDim; ++i) rows.push_back(static_cast<float>(first_id * 10 + i));
    pieces.emplace_back(reinterpret_cast<const char*>(ids.data()), ids.size() * 8);
    for (uint32_t i = 0; i < n; ++i) {
      pieces.emplace_back(reinterpret_cast<const char*>(rows.data() + i * kDim), kDim * 4);
    }
  }
  std::vector<uint64_t> ids;
  std::vector<float> rows;
  std::vector<std::string_view> pieces;
};

// A record written through the file is the record BeginRecord + stores
// would have made, byte for byte; also one written in several runs (12,001
// puts of 24 bytes: two 128 KiB runs and a short one).
TEST_F(WalTest, RecordWrittenThroughTheFileEqualsOneStoredThroughTheMapping) {
  for (uint32_t n : {1u, 3u, 50u, 12001u}) {
    auto stored = NewWriter(1 << 20);
    AppendPut(stored.get(), 100, n);
    ASSERT_TRUE(stored->Close(true).ok());
    const std::string expected = Contents();
    ASSERT_TRUE(fs()->RemoveFile(FilePath(1)).ok());

    auto written = NewWriter(1 << 20);
    PutPieces put(100, n);
    ASSERT_TRUE(written->BeginRecordWrite(RecordType::kPut, 1, n, kDim, put.pieces).ok());
    written->FinishRecord(RecordType::kPut, 1, n, kDim);
    EXPECT_EQ(written->last_record(), std::string_view(expected).substr(kFileHeaderSize,
                                                                        written->last_record().size()));
    ASSERT_TRUE(written->Close(true).ok());
    EXPECT_EQ(Contents(), expected) << n << " vectors";
    ASSERT_TRUE(fs()->RemoveFile(FilePath(1)).ok());
    next_sequence_ = 1;
  }
}

// A write that fails (or is torn) leaves no record: the next one starts at
// the same offset, and the file reads back as if the failed one never was.
// Also when the write that fails is a large record's second run, after its
// first run was stored.
TEST_F(WalTest, FailedWriteThroughTheFileLeavesNoRecord) {
  struct Case {
    uint32_t puts;
    int failing_write;
  };
  for (const Case c : {Case{20, 1}, Case{12001, 2}}) {
    for (bool tear : {false, true}) {
      test::FaultInjectionFileSystem fault_fs;
      std::unique_ptr<WalWriter> w = NewWriter(1 << 20, &fault_fs);
      AppendPut(w.get(), 1, 2);
      const uint64_t before = w->end_lsn();
      if (tear) {
        fault_fs.TearNthWrite(c.failing_write, /*keep_bytes=*/40);
      } else {
        fault_fs.FailNth(test::FsOp::kWrite, c.failing_write);
      }
      PutPieces failed(500, c.puts);
      EXPECT_FALSE(
          w->BeginRecordWrite(RecordType::kPut, next_sequence_, c.puts, kDim, failed.pieces).ok());
      EXPECT_EQ(fault_fs.faults_injected(), 1u);
      EXPECT_EQ(w->end_lsn(), before);
      // A shorter record then: the failed one's bytes after it must not pass
      // for anything.
      AppendPut(w.get(), 900, 1);
      ASSERT_TRUE(w->Close(true).ok());
      std::vector<Op> ops;
      auto result = Read(Contents(), &ops);
      ASSERT_TRUE(result.ok()) << result.status();
      ASSERT_EQ(ops.size(), 2u) << (tear ? "torn" : "failed");
      EXPECT_EQ(ops[0].ids, (std::vector<uint64_t>{1, 2}));
      EXPECT_EQ(ops[1].ids, (std::vector<uint64_t>{900}));
      EXPECT_FALSE(result->corrupted);
      ASSERT_TRUE(fs()->RemoveFile(FilePath(1)).ok());
      next_sequence_ = 1;
    }
  }
}

// The view of a log file keeps its records readable after the file is
// closed (rotated away) and removed: a memtable reads its rows there.
TEST_F(WalTest, ViewKeepsRecordsReadableAfterRotationAndRemoval) {
  test::FaultInjectionFileSystem fault_fs;  // keeps views on any file system
  std::unique_ptr<WalWriter> w = NewWriter(/*file_bytes=*/4096, &fault_fs);
  ASSERT_NE(w->view(), nullptr);
  PutPieces put(7, 10);
  ASSERT_TRUE(w->BeginRecordWrite(RecordType::kPut, 1, 10, kDim, put.pieces).ok());
  w->FinishRecord(RecordType::kPut, 1, 10, kDim);
  std::shared_ptr<const char> view = w->view();
  const float* rows =
      reinterpret_cast<const float*>(w->last_record_in_view() + kRecordHeaderSize + 10 * 8);
  ASSERT_TRUE(w->Rotate().ok());
  EXPECT_NE(w->view(), view);
  ASSERT_TRUE(w->Close(true).ok());
  w.reset();
  ASSERT_TRUE(fs()->RemoveFile(FilePath(1)).ok());
  EXPECT_EQ(std::memcmp(rows, put.rows.data(), put.rows.size() * 4), 0);
}

TEST(WalFileNameTest, RoundTripsAndRejectsOtherNames) {
  uint64_t n = 0;
  EXPECT_TRUE(ParseWalFileName(WalFileName(42), &n));
  EXPECT_EQ(n, 42u);
  EXPECT_TRUE(ParseWalFileName(WalFileName(12345678), &n));
  EXPECT_EQ(n, 12345678u);
  EXPECT_FALSE(ParseWalFileName("wal-.log", &n));
  EXPECT_FALSE(ParseWalFileName("wal-12x.log", &n));
  EXPECT_FALSE(ParseWalFileName("wal-000001.log.dropped", &n));
  EXPECT_FALSE(ParseWalFileName("seg-000001.vamana", &n));
}

// The log's files reserve storage before any byte is stored through the
// mapping (a store into a hole of a full file system is a SIGBUS).
TEST(MappedFileTest, ReserveAllocatesStorageAndRejectsPastTheEnd) {
  test::TempDir dir;
  const std::string path = dir.Sub("m");
  const size_t capacity = size_t{3} << 20;
  absl::StatusOr<std::unique_ptr<MappedFile>> file =
      FileSystem::Default()->OpenMapped(path, capacity, /*populate=*/false);
  ASSERT_TRUE(file.ok()) << file.status();
  auto allocated = [&] {
    struct stat st;
    EXPECT_EQ(::stat(path.c_str(), &st), 0);
    return static_cast<size_t>(st.st_blocks) * 512;
  };
  EXPECT_LT(allocated(), capacity);  // sparse until reserved
  EXPECT_TRUE(absl::IsOutOfRange((*file)->Reserve(capacity + 1)));
  ASSERT_TRUE((*file)->Reserve(capacity).ok());
  EXPECT_GE(allocated(), capacity);
  std::memset((*file)->data(), 7, capacity);
  EXPECT_TRUE((*file)->CloseAndTruncate(capacity).ok());
}

// Write takes more pieces than one pwritev can (IOV_MAX, 1024 on Linux),
// some of them empty, and stores them one after the other, as data() and
// the file then show them; after the close it is FailedPrecondition.
TEST(MappedFileTest, WriteStoresManyPiecesInOrder) {
  test::TempDir dir;
  const size_t capacity = size_t{1} << 20;
  absl::StatusOr<std::unique_ptr<MappedFile>> file =
      FileSystem::Default()->OpenMapped(dir.Sub("m"), capacity, /*populate=*/false);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE((*file)->Reserve(capacity).ok());
  std::string expected;
  std::vector<std::string> owned;
  for (size_t i = 0; i < 3000; ++i) {
    owned.push_back(i % 7 == 0 ? std::string()
                               : std::string(1 + i % 13, static_cast<char>('a' + i % 26)));
    expected += owned.back();
  }
  std::vector<std::string_view> pieces(owned.begin(), owned.end());
  ASSERT_TRUE((*file)->Write(100, pieces).ok());
  EXPECT_EQ(std::string_view((*file)->data() + 100, expected.size()), expected);
  EXPECT_EQ((*file)->data()[99], 0);
  EXPECT_EQ((*file)->data()[100 + expected.size()], 0);
  EXPECT_TRUE((*file)->CloseAndTruncate(100 + expected.size()).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition((*file)->Write(0, pieces)));
  auto contents = FileSystem::Default()->ReadFile(dir.Sub("m"));
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->substr(100), expected);
}

}  // namespace
}  // namespace shoal::wal
