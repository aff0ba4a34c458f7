// Contexts and thread pools: a callback belongs to the context (thread) that added it, and a pool that
// runs a task on behalf of a caller attaches the caller's context, so the caller's callbacks see the
// task's calls — and nobody else's callbacks do. The C++ form of Python's contextvars in executors.
#include <hookscope/context.hpp>
#include <hookscope/observable.hpp>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <future>
#include <latch>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

//=== the observed code ===//

namespace impl {
std::size_t compile_kernel(const std::string& name) { return name.size() * 64; }  // bytes of "machine code"
}  // namespace impl
HOOKSCOPE_OBSERVABLE(compile_kernel, impl::compile_kernel, name);

//=== a small thread pool ===//

class thread_pool {
 public:
  explicit thread_pool(int workers) {
    for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { work(); });
  }
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  /// Runs `task` on a worker in the caller's context: the caller's callbacks see what the task calls.
  std::future<void> submit(std::function<void()> task) {
    return enqueue([ctx = hookscope::context::current(), task = std::move(task)] {
      auto in_callers_context = ctx.attach();  // until the task ends; the worker's own context comes back after
      task();
    });
  }

  /// Runs `task` in the worker's own context: no caller's callback sees it.
  std::future<void> submit_detached(std::function<void()> task) { return enqueue(std::move(task)); }

 private:
  std::future<void> enqueue(std::function<void()> task) {
    std::packaged_task<void()> job(std::move(task));
    std::future<void> done = job.get_future();
    {
      const std::lock_guard lock(mutex_);
      queue_.push_back(std::move(job));
    }
    ready_.notify_one();
    return done;
  }

  void work() {
    for (;;) {
      std::packaged_task<void()> job;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::packaged_task<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

//=== the demonstration ===//

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  std::printf("  [%s] %s\n", ok ? "ok" : "FAILED", what);
  if (!ok) ++failures;
}

/// The kernel names one context's callback saw; pool workers add to it concurrently, hence the lock.
class seen_names {
 public:
  auto watch() {
    return compile_kernel.observers.pre.add([this](const auto& ctx) {
      const std::lock_guard lock(mutex_);
      names_.push_back(ctx.template arg<"name">());
    });
  }
  std::vector<std::string> sorted() const {
    const std::lock_guard lock(mutex_);
    std::vector<std::string> copy = names_;
    std::sort(copy.begin(), copy.end());
    return copy;
  }
  std::string text() const {
    std::string out;
    for (const std::string& n : sorted()) out += (out.empty() ? "" : " ") + n;
    return out.empty() ? "(none)" : out;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> names_;
};

using names = std::vector<std::string>;

void compile_all(const names& kernels) {
  for (const std::string& k : kernels) (void)compile_kernel(k);
}

void isolation() {
  std::puts("1. Isolation: thread A and thread B each add a callback, then compile at the same time");
  seen_names a, b;
  std::latch both_watching(2);
  std::thread thread_b([&] {
    auto sub = b.watch();
    both_watching.arrive_and_wait();
    compile_all({"b_conv", "b_gemm"});
  });
  auto sub = a.watch();
  both_watching.arrive_and_wait();
  compile_all({"a_softmax"});
  thread_b.join();
  std::printf("     A's callback saw: %s\n     B's callback saw: %s\n", a.text().c_str(), b.text().c_str());
  expect(a.sorted() == names{"a_softmax"}, "A's callback saw only A's calls");
  expect(b.sorted() == (names{"b_conv", "b_gemm"}), "B's callback saw only B's calls");
}

void propagation() {
  std::puts("2. Propagation: A and B submit work to one shared pool of 2 workers");
  seen_names a, b;
  thread_pool pool(2);
  auto sub = a.watch();
  std::vector<std::future<void>> done;
  for (const char* k : {"a_attention", "a_mlp", "a_norm"})
    done.push_back(pool.submit([k] { (void)compile_kernel(k); }));
  std::thread thread_b([&] {
    auto sub_b = b.watch();
    auto task = pool.submit([] { compile_all({"b_embed", "b_lm_head"}); });
    task.wait();  // B's callback must outlive its work: wait before it goes
  });
  done.push_back(pool.submit_detached([] { (void)compile_kernel("detached_kernel"); }));
  for (auto& f : done) f.wait();
  thread_b.join();
  std::printf("     A's callback saw: %s\n     B's callback saw: %s\n", a.text().c_str(), b.text().c_str());
  expect(a.sorted() == (names{"a_attention", "a_mlp", "a_norm"}),
         "the workers ran A's tasks in A's context: A's callback saw them, wherever they ran");
  expect(b.sorted() == (names{"b_embed", "b_lm_head"}), "the same workers ran B's task in B's context");
  const auto saw_detached = [](const seen_names& s) {
    const names all = s.sorted();
    return std::find(all.begin(), all.end(), "detached_kernel") != all.end();
  };
  expect(!saw_detached(a) && !saw_detached(b),
         "detached_kernel ran in a worker's own context: neither callback saw it");
}

}  // namespace

int main() {
  std::printf("thread_pool: callbacks follow contexts across threads (hooks %s)\n\n",
              hookscope::hooks_enabled ? "enabled" : "compiled out");
  if (!hookscope::hooks_enabled) {
    std::puts("This build compiles hooks out (-Dhooks=false): callbacks see no call, so there is nothing to show.");
    return 0;
  }
  isolation();
  propagation();
  std::printf("\n%s\n", failures == 0 ? "Isolation and propagation hold." : "Some behaviour was not as expected.");
  return failures == 0 ? 0 : 1;
}
