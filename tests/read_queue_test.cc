// Copyright 2026 The shoal Authors.
//
// ReadQueue (include/shoal/file_system.h): the POSIX file system's io_uring
// queue reads the same bytes, and fails the same way, as Read and the
// default (synchronous) queue; a queue destroyed with reads in flight waits
// for them; a second queue on one thread, and io_uring turned off, fall
// back to synchronous reads; queues on many threads at once.

#include "util/uring_read_queue.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "testutil/io_uring_setting.h"
#include "testutil/temp_dir.h"
#include "util/aligned_buffer.h"
#include "util/read_queue.h"

namespace shoal {
namespace {

using test::TempDir;

constexpr size_t kFileBytes = 1 << 20;

using test::IoUringSetting;

class ReadQueueTest : public ::testing::TestWithParam<TempDir::Storage> {
 protected:
  void SetUp() override {
    path_ = dir_.Sub("data");
    std::mt19937_64 rng(7);
    content_.resize(kFileBytes);
    for (char& c : content_) c = static_cast<char>(rng());
    std::ofstream(path_, std::ios::binary).write(content_.data(), content_.size());
    auto file = FileSystem::Default()->OpenRandomAccess(path_, /*direct=*/true);
    ASSERT_TRUE(file.ok()) << file.status();
    file_ = std::move(file).value();
  }

  // A read: aligned for direct I/O or not.
  struct Request {
    uint64_t offset;
    size_t n;
    size_t buffer_offset;  // into the buffer: 0 keeps it aligned
  };
  std::vector<Request> Requests(size_t count, uint64_t seed) const {
    std::mt19937_64 rng(seed);
    std::vector<Request> out;
    for (size_t i = 0; i < count; ++i) {
      if (i % 2 == 0) {
        out.push_back({(rng() % (kFileBytes / 4096)) * 4096, 4096, 0});
      } else {
        const uint64_t offset = rng() % (kFileBytes - 5000);
        out.push_back({offset, 1 + rng() % 4999, 1 + rng() % 64});
      }
    }
    return out;
  }

  // Runs `requests` through `queue` with at most its depth in flight;
  // returns each read's bytes (or its status's message when it failed).
  static std::vector<std::string> RunAll(ReadQueue& queue, const std::vector<Request>& requests) {
    constexpr size_t kSlotBytes = 3 * 4096;
    AlignedBuffer buffer;
    char* base = buffer.Reserve(requests.size() * kSlotBytes);
    std::vector<std::string> out(requests.size());
    std::vector<ReadQueue::Completion> done;
    size_t next = 0, completed = 0;
    while (completed < requests.size()) {
      for (; next < requests.size() && queue.in_flight() < queue.depth(); ++next) {
        const Request& r = requests[next];
        queue.Submit(r.offset, r.n, base + next * kSlotBytes + r.buffer_offset, next);
      }
      done.clear();
      queue.Wait(&done);
      EXPECT_FALSE(done.empty());
      for (const ReadQueue::Completion& c : done) {
        const Request& r = requests[c.tag];
        out[c.tag] = c.status.ok()
                         ? std::string(base + c.tag * kSlotBytes + r.buffer_offset, r.n)
                         : std::string(c.status.message());
        ++completed;
      }
    }
    EXPECT_EQ(queue.in_flight(), 0u);
    return out;
  }

  TempDir dir_{GetParam()};
  std::string path_;
  std::string content_;
  std::unique_ptr<RandomAccessFile> file_;
};

TEST_P(ReadQueueTest, IoUringQueueAndDefaultQueueReadTheSameBytes) {
  std::unique_ptr<ReadQueue> uring = file_->NewReadQueue(8);
  // Built with liburing, on a kernel that allows io_uring (CI's does).
  EXPECT_EQ(IsUringReadQueue(*uring), IoUringBuilt())
      << "no io_uring queue: SHOAL_DISABLE_IO_URING=1 set, or the kernel refused a ring";
  EXPECT_EQ(uring->depth(), 8u);
  SyncReadQueue sync(file_.get(), 8);
  const std::vector<Request> requests = Requests(200, 1);
  const std::vector<std::string> a = RunAll(*uring, requests);
  const std::vector<std::string> b = RunAll(sync, requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    const Request& r = requests[i];
    ASSERT_EQ(a[i], content_.substr(r.offset, r.n)) << i;
    ASSERT_EQ(b[i], a[i]) << i;
  }
}

TEST_P(ReadQueueTest, ReadPastTheEndFailsAsReadDoesNamingTheFile) {
  std::unique_ptr<ReadQueue> queue = file_->NewReadQueue(4);
  const std::vector<Request> requests = {{kFileBytes - 4096, 4096, 0},
                                         {kFileBytes - 100, 4096, 0},
                                         {kFileBytes + 4096, 4096, 0}};
  const std::vector<std::string> got = RunAll(*queue, requests);
  EXPECT_EQ(got[0], content_.substr(kFileBytes - 4096));
  AlignedBuffer buffer;
  for (size_t i = 1; i < requests.size(); ++i) {
    absl::Status want = file_->Read(requests[i].offset, requests[i].n, buffer.Reserve(4096));
    ASSERT_EQ(want.code(), absl::StatusCode::kOutOfRange);
    EXPECT_EQ(got[i], want.message());
    EXPECT_NE(got[i].find(path_), std::string::npos) << got[i];
  }
}

TEST_P(ReadQueueTest, DestroyingAQueueWaitsForItsReadsAndTheNextQueueSeesOnlyItsOwn) {
  AlignedBuffer buffer;
  char* base = buffer.Reserve(16 * 4096);
  {
    std::unique_ptr<ReadQueue> queue = file_->NewReadQueue(16);
    for (uint64_t i = 0; i < 16; ++i) queue->Submit(i * 8192, 4096, base + i * 4096, 1000 + i);
  }  // destroyed with all 16 in flight
  // Every read landed before the destructor returned.
  for (uint64_t i = 0; i < 16; ++i) {
    ASSERT_EQ(std::memcmp(base + i * 4096, content_.data() + i * 8192, 4096), 0) << i;
  }
  std::unique_ptr<ReadQueue> queue = file_->NewReadQueue(4);
  const std::vector<Request> requests = Requests(20, 2);
  const std::vector<std::string> got = RunAll(*queue, requests);  // tags < 20 only
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(got[i], content_.substr(requests[i].offset, requests[i].n)) << i;
  }
}

TEST_P(ReadQueueTest, SecondQueueOnOneThreadAndDisabledIoUringReadSynchronously) {
  std::unique_ptr<ReadQueue> first = file_->NewReadQueue(4);
  std::unique_ptr<ReadQueue> second = file_->NewReadQueue(4);
  EXPECT_EQ(IsUringReadQueue(*first), IoUringBuilt());
  EXPECT_FALSE(IsUringReadQueue(*second));  // the thread's ring is taken
  const std::vector<Request> requests = Requests(30, 3);
  const std::vector<std::string> a = RunAll(*first, requests);
  const std::vector<std::string> b = RunAll(*second, requests);
  EXPECT_EQ(a, b);
  first.reset();
  second.reset();
  {
    IoUringSetting off(false);
    std::unique_ptr<ReadQueue> q = file_->NewReadQueue(4);
    EXPECT_FALSE(IsUringReadQueue(*q));
    EXPECT_EQ(RunAll(*q, requests), a);
  }
  EXPECT_EQ(IsUringReadQueue(*file_->NewReadQueue(4)), IoUringBuilt());
}

TEST_P(ReadQueueTest, QueuesOnManyThreadsAtOnce) {
  const std::vector<Request> requests = Requests(64, 4);
  std::vector<std::string> want;
  for (const Request& r : requests) want.push_back(content_.substr(r.offset, r.n));
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        std::unique_ptr<ReadQueue> queue = file_->NewReadQueue(1 + (t + round) % 8);
        wrong[t] += RunAll(*queue, requests) != want;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

INSTANTIATE_TEST_SUITE_P(Storage, ReadQueueTest,
                         ::testing::Values(TempDir::Storage::kMemory, TempDir::Storage::kDisk),
                         [](const ::testing::TestParamInfo<TempDir::Storage>& info) {
                           return info.param == TempDir::Storage::kMemory ? "Memory" : "Disk";
                         });

}  // namespace
}  // namespace shoal
