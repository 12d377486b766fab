#include "server/write_dispatcher.h"

#include <algorithm>
#include <utility>

namespace tandem {

WriteDispatcher::WriteDispatcher(int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) {
    workers_.push_back(std::make_unique<Worker>());
    Worker* worker = workers_.back().get();
    worker->thread = std::thread([worker] { Run(worker); });
  }
}

WriteDispatcher::~WriteDispatcher() {
  for (auto& worker : workers_) {
    absl::MutexLock lock(&worker->mu);
    worker->stop = true;
  }
  for (auto& worker : workers_) worker->thread.join();
}

void WriteDispatcher::Post(size_t shard, std::function<void()> task) {
  Worker& worker = *workers_[shard % workers_.size()];
  {
    absl::MutexLock lock(&worker.mu);
    if (!worker.exited) {
      worker.tasks.push_back(std::move(task));
      return;
    }
  }
  task();  // shutting down, and that thread is gone
}

bool WriteDispatcher::HasWork(Worker* worker) {
  return worker->stop || !worker->tasks.empty();  // called with worker->mu held
}

void WriteDispatcher::Run(Worker* worker) {
  std::deque<std::function<void()>> batch;
  while (true) {
    {
      absl::MutexLock lock(&worker->mu);
      worker->mu.Await(absl::Condition(&HasWork, worker));
      if (worker->tasks.empty()) {  // stopped, and everything posted ran
        worker->exited = true;
        return;
      }
      batch.swap(worker->tasks);
    }
    for (auto& task : batch) task();
    batch.clear();
  }
}

}  // namespace tandem
