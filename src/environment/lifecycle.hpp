// What the environment features need from the process's life: a flush every 100 ms, a last word at exit and on
// fatal signals, and fork handlers. One place installs the handlers, whatever the features that use them; the first
// one keeps the module that holds this copy of the library loaded for good (hub.hpp: pin_this_module).
#pragma once

#include "hookscope/config.hpp"

#include <atomic>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// What a feature does when the process ends.
struct exit_action {
  void (*at_exit)() noexcept;          ///< at exit() and quick_exit(): may lock and allocate
  void (*on_fatal_signal)() noexcept;  ///< on SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM: async-signal-safe only
};

/// Adds an action (at most 8); the first one installs the atexit handler and the fatal signal handlers, which
/// run every action, then restore the previous handler and raise the signal again.
void add_exit_action(exit_action action) noexcept;

// The states the recording path reads on every call (inline: a call each would cost more than the load).
extern constinit std::atomic<bool> exit_started;
extern constinit std::atomic<bool> flusher_running;
extern constinit std::atomic<bool> in_forked_child;

/// True once exit() has started running the actions: features then write through instead of buffering, since
/// calls made by static destructors that run later have nobody left to flush them.
inline bool exiting() noexcept { return exit_started.load(std::memory_order_acquire); }

/// Adds an action (at most 8) for the very end of exit() and quick_exit(): after every static destructor (a
/// destructor function of this module, which runs after them), when HOOKSCOPE_RECORD is set at the program's start.
/// From then on only the exiting thread writes: see writes_withheld().
void add_last_exit_action(void (*action)() noexcept) noexcept;

/// Whether the last exit actions run (or will): false when the process started without HOOKSCOPE_RECORD, and then
/// the exit actions are the last word.
bool last_exit_registered() noexcept;

/// True on every thread but the exiting one once the last exit actions have started: such a thread leaves the
/// draining and writing to the exiting one, because the process's end (exit_group) can stop a write in the middle of
/// a page and leave a line cut. Before that moment (during exit()'s actions and the static destructors) every thread
/// writes as its calls end.
bool writes_withheld() noexcept;

/// Whether this thread runs the last exit actions.
bool last_exit_runs_here() noexcept;

/// Calls `flush` every 100 ms from a background thread (at most 8 such functions).
void add_periodic_flush(void (*flush)() noexcept) noexcept;

/// Runs the periodic flushes now rather than at the next 100 ms mark (a buffer is filling). Async-signal-safe; one
/// system call.
void wake_flusher() noexcept;

/// Makes sure the background thread runs: cheap when it does. Not in the child of a fork(): starting a thread
/// there is not safe (POSIX) and ThreadSanitizer forbids it; features then write as calls come, see flushing().
void start_flushing() noexcept;
inline void keep_flushing() noexcept {
  if (flusher_running.load(std::memory_order_relaxed) || in_forked_child.load(std::memory_order_relaxed)) return;
  start_flushing();
}

/// Whether the background thread flushes every 100 ms (false in a forked child).
inline bool flushing() noexcept { return flusher_running.load(std::memory_order_relaxed); }

/// pthread_atfork handlers (at most 8 sets): `prepare` holds what the child must find consistent, `parent`
/// and `child` release it; `child` also forgets what belongs to the parent.
/// Whether this thread holds the lifecycle's lock (a signal handler may have interrupted it there): a fork() it makes
/// then must not wait for locks that another forking thread holds while it waits for the lifecycle's.
bool lifecycle_lock_held_here() noexcept;
void add_fork_handlers(void (*prepare)() noexcept, void (*parent)() noexcept, void (*child)() noexcept) noexcept;

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
