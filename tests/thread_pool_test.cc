// Copyright 2026 The shoal Authors.
//
// The thread pool: every index runs once, nested calls finish, and an
// exception thrown by a task (std::bad_alloc) comes back to the caller of
// ParallelFor instead of ending the process on a worker thread.

#include "util/thread_pool.h"

#include <atomic>
#include <chrono>
#include <new>
#include <stdexcept>
#include <thread>
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

// Schedule returns before its task runs (the task waits for the caller
// here), and the destructor runs what is still queued.
TEST(ThreadPoolTest, ScheduleReturnsAtOnceAndTheDestructorRunsWhatIsQueued) {
  std::atomic<bool> go{false};
  std::atomic<int> ran{0};
  {
    ThreadPool pool(1);
    pool.Schedule([&] {
      while (!go.load()) std::this_thread::yield();
      ran.fetch_add(1);
    });
    for (int i = 0; i < 10; ++i) pool.Schedule([&] { ran.fetch_add(1); });
    EXPECT_EQ(ran.load(), 0);  // all still waiting behind the first
    go = true;
  }
  EXPECT_EQ(ran.load(), 11);
}

// A ParallelFor caller waiting for its last index runs other calls'
// queued work, never a scheduled task: those can take seconds (a label
// graph), and the caller may be a writer. Here the task is scheduled
// behind the call's helper, while the worker runs the helper's index.
TEST(ThreadPoolTest, AWaitingParallelForCallerNeverRunsAScheduledTask) {
  ThreadPool pool(1);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> worker_has_index{false};
  std::atomic<std::thread::id> task_ran_on{};
  pool.ParallelFor(2, [&](size_t) {
    if (std::this_thread::get_id() != caller) {
      worker_has_index = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return;
    }
    pool.Schedule([&] { task_ran_on = std::this_thread::get_id(); });
    while (!worker_has_index.load()) std::this_thread::yield();
  });
  while (task_ran_on.load() == std::thread::id()) std::this_thread::yield();
  EXPECT_NE(task_ran_on.load(), caller);
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

// While the last of its indices runs on a worker, ParallelForWithoutHelping
// only waits: another call's queued part stays queued for a worker, where
// ParallelFor's caller would run it (a search must not wait for a queued
// chunk of a graph build).
TEST(ThreadPoolTest, WithoutHelpingTheCallerNeverRunsOtherQueuedWork) {
  ThreadPool pool(1);
  std::atomic<bool> worker_started{false}, other_blocked{false}, release_other{false};
  std::atomic<std::thread::id> other_part_ran_on{};
  std::thread other;
  const std::thread::id caller = std::this_thread::get_id();
  // One index runs on each thread: the caller's waits for the worker's to
  // start, so the caller cannot take both.
  pool.ParallelForWithoutHelping(2, [&](size_t) {
    if (std::this_thread::get_id() != caller) {
      // The worker's index: busy while the caller waits for it.
      worker_started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return;
    }
    while (!worker_started) std::this_thread::yield();
    // Another call queues a part for the busy worker: its own thread takes
    // index 0 and blocks there, index 1 waits in the queue.
    other = std::thread([&] {
      pool.ParallelFor(2, [&](size_t j) {
        if (j == 0) {
          other_blocked = true;
          while (!release_other) std::this_thread::yield();
        } else {
          other_part_ran_on = std::this_thread::get_id();
        }
      });
    });
    while (!other_blocked) std::this_thread::yield();
  });
  // The worker, once free, ran the other call's index 1; this thread did
  // not, while it waited.
  release_other = true;
  other.join();
  EXPECT_NE(other_part_ran_on.load(), std::thread::id{});
  EXPECT_NE(other_part_ran_on.load(), caller);
}

}  // namespace
}  // namespace shoal
