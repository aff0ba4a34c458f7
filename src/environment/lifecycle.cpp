// The process-life handlers behind the environment features (see lifecycle.hpp).
#include "lifecycle.hpp"

#include "hub.hpp"

#include "hookscope/callback_errors.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

constinit std::atomic<bool> exit_started{false};
constinit std::atomic<bool> flusher_running{false};
constinit std::atomic<bool> in_forked_child{false};

namespace {

constexpr std::size_t max_entries = 8;
constexpr int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM};

// Fixed arrays with a published count: a signal handler may read them at any moment, without a lock.
template <class T>
struct fixed_list {
  std::array<T, max_entries> items{};
  std::atomic<std::size_t> count{0};

  bool add(T item) noexcept {  // under the lifecycle mutex
    const std::size_t n = count.load(std::memory_order_relaxed);
    if (n == max_entries) return false;
    items[n] = item;
    count.store(n + 1, std::memory_order_release);
    return true;
  }
  template <class F>
  void for_each(F f) const noexcept {
    const std::size_t n = count.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < n; ++i) f(items[i]);
  }
};

struct fork_handlers {
  void (*prepare)() noexcept;
  void (*parent)() noexcept;
  void (*child)() noexcept;
};

// The lifecycle's lock, knowing whether this thread holds it: a fork() from a signal handler that interrupted this
// thread while it held the lock must not wait for it (the interrupted frame releases it, in the parent and the child).
class lifecycle_lock {
 public:
  // Marked before the lock is taken and until after it is released: a handler that lands in between finds it marked
  // and takes no lock for its fork, which is harmless; the other way round it would wait for its own thread.
  void lock() noexcept {
    held_here_ = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    mutex_.lock();
  }
  void unlock() noexcept {
    mutex_.unlock();
    std::atomic_signal_fence(std::memory_order_seq_cst);
    held_here_ = false;
  }
  [[nodiscard]] static bool held_by_this_thread() noexcept { return held_here_; }

 private:
  std::mutex mutex_;
  static constinit thread_local bool held_here_;
};
constinit thread_local bool lifecycle_lock::held_here_ = false;

constinit lifecycle_lock lifecycle_mutex;
// Per thread: two threads may fork at once (glibc runs their fork handlers side by side).
constinit thread_local bool fork_took_lifecycle_lock = false;
constinit fixed_list<exit_action> exit_actions;
constinit fixed_list<void (*)() noexcept> periodic;
constinit fixed_list<fork_handlers> forks;
constinit std::atomic<bool> fatal_signal_seen{false};  // the handlers said their last word: exit() must not repeat it
constinit std::atomic<std::uint32_t> wake_count{0};    // a futex word: the flusher sleeps on it
std::array<struct sigaction, std::size(fatal_signals)> previous_actions{};

constinit fixed_list<void (*)() noexcept> last_exit_actions;
constinit std::atomic<bool> last_exit_started{false};
constinit bool last_exit_handler_registered = false;
constinit thread_local bool runs_last_exit = false;

void run_exit_actions() noexcept {
  exit_started.store(true, std::memory_order_release);
  // A sanitizer's or another library's handler may still call exit() after a fatal signal: written already.
  if (fatal_signal_seen.load(std::memory_order_acquire)) return;
  exit_actions.for_each([](const exit_action& a) { a.at_exit(); });
}

// Other threads see the flag (writes_withheld) and leave the draining to this thread; each file is sealed under its
// own lock once the actions have written it (record_file::seal_all_at_exit).
void run_last_exit_actions() noexcept {
  runs_last_exit = true;
  last_exit_started.store(true);
  if (fatal_signal_seen.load(std::memory_order_acquire)) return;
  last_exit_actions.for_each([](void (*action)() noexcept) { action(); });
}

// The last word runs after every static destructor, whichever module or priority made its object: as a destructor
// function of this module (its .fini_array runs after the atexit handlers and the static destructors, which
// __cxa_atexit registered later than the handler that runs the fini arrays), and for quick_exit as the first
// at_quick_exit handler (registered by a priority-101 constructor, so run after the program's own). Only for
// HOOKSCOPE_RECORD, the one feature that needs it.
__attribute__((constructor(101))) void register_last_exit_actions() noexcept {
  if (std::getenv("HOOKSCOPE_RECORD") == nullptr) return;
  last_exit_handler_registered = std::at_quick_exit(&run_last_exit_actions) == 0;
}

__attribute__((destructor(101))) void last_exit_at_unload() noexcept {
  if (last_exit_handler_registered) run_last_exit_actions();
}

void on_fatal_signal(int sig) noexcept {
  if (!fatal_signal_seen.exchange(true)) exit_actions.for_each([](const exit_action& a) { a.on_fatal_signal(); });
  for (std::size_t i = 0; i < std::size(fatal_signals); ++i) {
    if (fatal_signals[i] == sig) sigaction(sig, &previous_actions[i], nullptr);
  }
  raise(sig);  // delivered once this handler returns, to the previous handler (by default: the core dump)
}

void install_process_handlers() noexcept {
  if (std::atexit(&run_exit_actions) != 0 || std::at_quick_exit(&run_exit_actions) != 0) {
    log_line("hookscope: could not register the exit handlers");
  }
  struct sigaction action {};
  action.sa_handler = &on_fatal_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (std::size_t i = 0; i < std::size(fatal_signals); ++i) {
    sigaction(fatal_signals[i], &action, &previous_actions[i]);
  }
}

// Sleeps 100 ms, or until wake_flusher() (futex: no lock, so that a caller never waits for the flusher).
void sleep_until_due() noexcept {
  const std::uint32_t seen = wake_count.load(std::memory_order_acquire);
  const timespec interval{0, 100'000'000};
  (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&wake_count), FUTEX_WAIT_PRIVATE, seen, &interval,
                  nullptr, 0);
}

void flush_loop() noexcept {
  for (;;) {
    sleep_until_due();
    periodic.for_each([](void (*flush)() noexcept) { flush(); });
  }
}

// The features' locks first, then the lifecycle's: a thread forking from a signal handler that interrupted the
// recording path takes none of the features' locks and needs the lifecycle's, which a thread forking meanwhile must
// not hold while it waits for the features' locks that the interrupted frame holds. (No path takes a feature's lock
// with the lifecycle's held.)
void fork_prepare() noexcept {
  forks.for_each([](const fork_handlers& h) { h.prepare(); });
  fork_took_lifecycle_lock = !lifecycle_lock::held_by_this_thread();
  if (fork_took_lifecycle_lock) lifecycle_mutex.lock();
}
void fork_parent() noexcept {
  forks.for_each([](const fork_handlers& h) { h.parent(); });
  if (fork_took_lifecycle_lock) lifecycle_mutex.unlock();
}
void fork_child() noexcept {
  flusher_running.store(false, std::memory_order_relaxed);  // threads do not survive fork()
  in_forked_child.store(true, std::memory_order_relaxed);
  forks.for_each([](const fork_handlers& h) { h.child(); });
  if (fork_took_lifecycle_lock) lifecycle_mutex.unlock();
}

}  // namespace

void add_exit_action(exit_action action) noexcept {
  pin_this_module();  // its handlers must outlive a dlclose() of the module
  const std::lock_guard lock(lifecycle_mutex);
  if (exit_actions.count.load(std::memory_order_relaxed) == 0) install_process_handlers();
  if (!exit_actions.add(action)) log_line("hookscope: more than 8 exit actions; one is not installed");
}

void add_last_exit_action(void (*action)() noexcept) noexcept {
  pin_this_module();
  const std::lock_guard lock(lifecycle_mutex);
  if (!last_exit_actions.add(action)) log_line("hookscope: more than 8 last exit actions; one is not installed");
}

bool last_exit_registered() noexcept { return last_exit_handler_registered; }

bool writes_withheld() noexcept { return last_exit_started.load() && !runs_last_exit; }

bool last_exit_runs_here() noexcept { return runs_last_exit; }

bool lifecycle_lock_held_here() noexcept { return lifecycle_lock::held_by_this_thread(); }

void add_periodic_flush(void (*flush)() noexcept) noexcept {
  pin_this_module();
  const std::lock_guard lock(lifecycle_mutex);
  if (!periodic.add(flush)) log_line("hookscope: more than 8 periodic flushes; one is not installed");
}

void wake_flusher() noexcept {
  wake_count.fetch_add(1, std::memory_order_release);
  (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&wake_count), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void start_flushing() noexcept {
  const std::lock_guard lock(lifecycle_mutex);
  if (flusher_running.load(std::memory_order_relaxed)) return;
  try {
    std::thread(&flush_loop).detach();  // runs until the process ends; touches only state that is never destroyed
    flusher_running.store(true, std::memory_order_relaxed);
  } catch (...) {
    log_line("hookscope: could not start the flushing thread; records are written when a buffer fills and at exit");
    flusher_running.store(true, std::memory_order_relaxed);  // do not try on every call
  }
}

void add_fork_handlers(void (*prepare)() noexcept, void (*parent)() noexcept, void (*child)() noexcept) noexcept {
  pin_this_module();
  const std::lock_guard lock(lifecycle_mutex);
  if (forks.count.load(std::memory_order_relaxed) == 0) pthread_atfork(&fork_prepare, &fork_parent, &fork_child);
  if (!forks.add({prepare, parent, child})) log_line("hookscope: more than 8 fork handlers; one is not installed");
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
