// Copyright 2026 The shoal Authors.
//
// The thread pool: every index runs once, nested calls finish, and an
// exception thrown by a task (std::bad_alloc) comes back to the caller of
// ParallelFor instead of ending the process on a worker thread.

#include "util/thread_pool.h"

#include <atomic>
#include <new>
#include <stdexcept>
#include <vector>

#include "gtest/gtest.h"
#include "util/background_worker.h"

namespace shoal {
namespace {

TEST(ThreadPoolTest, CreateStartsTheThreadsAskedFor) {
  absl::StatusOr<std::unique_ptr<ThreadPool>> pool = ThreadPool::Create(3);
  ASSERT_TRUE(pool.ok()) << pool.status();
  EXPECT_EQ((*pool)->size(), 3u);
  absl::StatusOr<std::unique_ptr<BackgroundWorker>> worker = BackgroundWorker::Create();
  ASSERT_TRUE(worker.ok()) << worker.status();
}

TEST(ThreadPoolTest, EveryIndexRunsExactlyOnceAlsoWhenNested) {
  ThreadPool pool(2);
  std::vector<std::atomic<int>> runs(1000);
  pool.ParallelFor(10, [&](size_t outer) {
    pool.ParallelFor(100, [&](size_t inner) { runs[outer * 100 + inner].fetch_add(1); });
  });
  for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << i;
}

TEST(ThreadPoolTest, AnExceptionInATaskIsRethrownToTheCaller) {
  ThreadPool pool(2);
  for (size_t bad : {size_t{0}, size_t{500}, size_t{999}}) {
    std::atomic<int> ran{0};
    EXPECT_THROW(pool.ParallelFor(1000,
                                  [&](size_t i) {
                                    if (i == bad) throw std::bad_alloc();
                                    ran.fetch_add(1);
                                  }),
                 std::bad_alloc)
        << "throwing at " << bad;
    EXPECT_LT(ran.load(), 1000);
  }
  // The pool still works afterwards.
  std::atomic<int> ran{0};
  pool.ParallelFor(100, [&](size_t) { ran.fetch_add(1); });
  EXPECT_EQ(ran.load(), 100);
}

}  // namespace
}  // namespace shoal
