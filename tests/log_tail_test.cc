// Copyright 2026 The shoal Authors.
//
// wal::LogTail, a reader following a log another writer appends to: it
// hands out whole records only, treats a record being stored as not
// written yet and reads it once it is whole, goes on from where it stopped,
// follows rotations, keeps reading a file removed under it, and reads
// records larger than its chunk.

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testutil/temp_dir.h"
#include "util/coding.h"
#include "util/file_system.h"
#include "version/filename.h"
#include "wal/log_tail.h"
#include "wal/wal_writer.h"

namespace shoal::wal {
namespace {

constexpr uint32_t kDim = 4;

class LogTailTest : public ::testing::Test {
 protected:
  std::unique_ptr<WalWriter> NewWriter(size_t file_bytes = 1 << 16) {
    WalWriterOptions options;
    options.file_bytes = file_bytes;
    auto writer = WalWriter::Open(FileSystem::Default(), dir_.path(), options, 1, 0);
    EXPECT_TRUE(writer.ok()) << writer.status();
    return std::move(writer).value();
  }
  // Begins a put of `n` vectors (payload stored, header not yet).
  void BeginPut(WalWriter* w, uint64_t first_id, uint32_t n) {
    auto payload = w->BeginRecord(PutPayloadSize(n, kDim));
    ASSERT_TRUE(payload.ok()) << payload.status();
    for (uint32_t i = 0; i < n; ++i) EncodeFixed64(*payload + i * 8, first_id + i);
    std::memset(*payload + n * 8, 1, size_t{n} * kDim * 4);
  }
  void FinishPut(WalWriter* w, uint32_t n) {
    w->FinishRecord(RecordType::kPut, next_sequence_, n, kDim);
    next_sequence_ += n;
  }
  void AppendPut(WalWriter* w, uint64_t first_id, uint32_t n) {
    BeginPut(w, first_id, n);
    FinishPut(w, n);
  }
  // Polls and returns the sequences of the records handed out.
  std::vector<uint64_t> Poll(LogTail* tail) {
    std::vector<uint64_t> seen;
    absl::Status s = tail->Poll([&](const RecordView& r, uint64_t) {
      seen.push_back(r.sequence);
      return absl::OkStatus();
    });
    EXPECT_TRUE(s.ok()) << s;
    return seen;
  }

  test::TempDir dir_;
  uint64_t next_sequence_ = 1;
};

TEST_F(LogTailTest, ARecordBeingStoredIsNotYetWrittenAndIsReadOnceWhole) {
  auto w = NewWriter();
  LogTail tail(FileSystem::Default(), dir_.path(), 0, kDim);
  EXPECT_TRUE(Poll(&tail).empty());
  AppendPut(w.get(), 10, 2);
  AppendPut(w.get(), 20, 3);
  EXPECT_EQ(Poll(&tail), (std::vector<uint64_t>{1, 3}));
  BeginPut(w.get(), 30, 1);  // payload stored, checksum not yet
  EXPECT_TRUE(Poll(&tail).empty());
  FinishPut(w.get(), 1);
  EXPECT_EQ(Poll(&tail), (std::vector<uint64_t>{6}));
  EXPECT_TRUE(Poll(&tail).empty());
}

TEST_F(LogTailTest, FollowsRotationsIntoLaterFiles) {
  auto w = NewWriter();
  LogTail tail(FileSystem::Default(), dir_.path(), 0, kDim);
  AppendPut(w.get(), 1, 1);
  EXPECT_EQ(Poll(&tail), (std::vector<uint64_t>{1}));
  AppendPut(w.get(), 2, 1);  // read after the rotation, from the old file
  ASSERT_TRUE(w->Rotate().ok());
  AppendPut(w.get(), 3, 1);
  ASSERT_TRUE(w->Rotate().ok());
  AppendPut(w.get(), 4, 1);
  EXPECT_EQ(Poll(&tail), (std::vector<uint64_t>{2, 3, 4}));
  EXPECT_EQ(tail.file_number(), 3u);
}

TEST_F(LogTailTest, KeepsReadingTheCurrentFileAfterItIsRemoved) {
  auto w = NewWriter();
  LogTail tail(FileSystem::Default(), dir_.path(), 0, kDim);
  AppendPut(w.get(), 1, 1);
  EXPECT_EQ(Poll(&tail), (std::vector<uint64_t>{1}));
  AppendPut(w.get(), 2, 1);
  ASSERT_TRUE(w->Rotate().ok());
  AppendPut(w.get(), 3, 1);
  std::filesystem::remove(JoinPath(dir_.path(), WalFileName(1)));
  EXPECT_EQ(Poll(&tail), (std::vector<uint64_t>{2, 3}));
}

TEST_F(LogTailTest, ALaterFileRemovedBeforeItIsOpenedIsNotFound) {
  auto w = NewWriter();
  LogTail tail(FileSystem::Default(), dir_.path(), 0, kDim);
  AppendPut(w.get(), 1, 1);
  ASSERT_TRUE(w->Rotate().ok());
  AppendPut(w.get(), 2, 1);
  ASSERT_TRUE(w->Rotate().ok());
  AppendPut(w.get(), 3, 1);
  EXPECT_EQ(Poll(&tail), (std::vector<uint64_t>{1, 2, 3}));
  // Removed before the tail ever opened them: the tail starts at what is
  // there (the caller checks the sequences follow on).
  LogTail late(FileSystem::Default(), dir_.path(), 0, kDim);
  std::filesystem::remove(JoinPath(dir_.path(), WalFileName(1)));
  EXPECT_EQ(Poll(&late), (std::vector<uint64_t>{2, 3}));
}

TEST_F(LogTailTest, RecordsLargerThanTheChunkAreReadWhole) {
  auto w = NewWriter(size_t{8} << 20);
  LogTail tail(FileSystem::Default(), dir_.path(), 0, kDim);
  constexpr uint32_t kLarge = 70000;  // 70000 x 24 bytes: over 1 MiB
  AppendPut(w.get(), 1, 3);
  AppendPut(w.get(), 100, kLarge);
  AppendPut(w.get(), 1000000, 2);
  EXPECT_EQ(Poll(&tail), (std::vector<uint64_t>{1, 4, 4 + kLarge}));
}

TEST_F(LogTailTest, AnErrorFromTheCallbackLeavesThatRecordForTheNextPoll) {
  auto w = NewWriter();
  LogTail tail(FileSystem::Default(), dir_.path(), 0, kDim);
  AppendPut(w.get(), 1, 1);
  AppendPut(w.get(), 2, 1);
  int calls = 0;
  absl::Status s = tail.Poll([&](const RecordView&, uint64_t) {
    return ++calls == 2 ? absl::AbortedError("stop") : absl::OkStatus();
  });
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  EXPECT_EQ(Poll(&tail), (std::vector<uint64_t>{2}));
}

}  // namespace
}  // namespace shoal::wal
