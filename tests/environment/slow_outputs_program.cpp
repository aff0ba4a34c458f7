// HOOKSCOPE_RECORD against outputs that fight back: pipes and FIFOs whose readers stall or leave, sockets, files that
// fill up, and values chosen to trip the writer's memory of each parameter's last text
// (tests/environment/test_record_slow_outputs.py):
//   memo                  calls of shaped() and texted() whose values repeat, change at equal size, switch between
//                         ranks 0 and 64, escapes and bytes that are not UTF-8, through args and results; prints the
//                         call_recorder's lines (to_record_line, no latency), which the file's lines must equal
//   long_then_short L S   tagged(i, s) with s = 4000 bytes of \x01 (a line of ~24 KB) for L ms, then with s = "" for
//                         S ms (one a millisecond); prints the calls made
//   steps_for MS          step(i) without pause for MS ms; "made N" to stderr
//   fork_after MS         step(i) for MS ms, then fork(): the child makes 100 calls (1000000 + i) and exits; prints
//                         the calls made by both
//   step_and_other N      N calls of other(i), each followed by step(i); prints N
//   tree_calls MS P       texted(s) with a 5000-byte s (the value tree's path, its line appended on this thread) every
//                         P ms for MS ms; prints "<calls> <calls that took 500 ms or more>"
//   signalled_calls MS H [MOST]  listed(v) (the value tree's path) and step(i) (the binary path) without pause for MS
//                         ms (MOST times each at most),
//                         while a signal handler calls both, every 50 us: H = timer (SIGALRM of setitimer, which
//                         mostly lands on this thread, inside the recording path) or every_thread (SIGUSR1 sent to
//                         each thread of the process in turn, the library's writer included); prints
//                         "step N" and "listed N", the calls made; exit 1 if a call in the handler returned wrong
//   forking_handler MS    listed(v) and step(i) without pause for MS ms, while a SIGALRM handler (every 500 us, 400
//                         times at most) forks: each child calls step() 10 times and _exit()s. Waits for every child
//                         (10 s at most each); prints "forks N" and "step N", the parent's calls; exit 1 if a child did
//                         not end in time
//   fork_in_blocked_write N  forks a child that makes N calls of step(), whose lines it writes as they come (no
//                         writer thread in a child), blocking on a pipe read slowly; a SIGALRM handler (every 20 ms)
//                         forks once there, and the grandchild returns from the handler into the write it interrupted;
//                         prints "made N"
//   forks_exiting MS      step(i) without pause for MS ms; after 1.5 s a SIGALRM handler (every 2 ms, 400 times at
//                         most) forks, and each child calls exit(0) at once (its exit actions run); prints "forks N"
//                         and "step N"
#include "hookscope/detail/call_pairing.hpp"
#include "hookscope/observable.hpp"
#include "hookscope/recorder.hpp"
#include "hookscope/records.hpp"
#include "hookscope/tensor.hpp"

#include "../leak_check_in_forked_children.hpp"
#include "print_record_lines.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <vector>

using hookscope::dtype;
using hookscope::tensor_spec;

namespace impl {
[[gnu::noinline]] tensor_spec shaped(const tensor_spec& a, std::string s, int pick);
tensor_spec shaped(const tensor_spec& a, std::string s, int pick) {
  if (pick == 0) return a;
  return tensor_spec{std::vector<std::int64_t>(s.size() % 65, pick), static_cast<dtype>(pick % 10)};
}
[[gnu::noinline]] std::string texted(std::string s);
std::string texted(std::string s) { return s; }
[[gnu::noinline]] void tagged(int n, std::string s);
void tagged(int n, std::string s) {
  static std::atomic<std::size_t> sink{0};
  sink.store(s.size() + static_cast<std::size_t>(n), std::memory_order_relaxed);
}
[[gnu::noinline]] int step(int n);
int step(int n) { return n; }
[[gnu::noinline]] int other(int n);
int other(int n) { return n + 1; }
[[gnu::noinline]] int listed(const std::vector<int>& v);  // a container: the value tree's path
int listed(const std::vector<int>& v) { return static_cast<int>(v.size()); }
}  // namespace impl

HOOKSCOPE_OBSERVABLE(shaped, impl::shaped, a, s, pick);
HOOKSCOPE_OBSERVABLE(texted, impl::texted, s);
HOOKSCOPE_OBSERVABLE(tagged, impl::tagged, n, s);
HOOKSCOPE_OBSERVABLE(step, impl::step, n);
HOOKSCOPE_OBSERVABLE(other, impl::other, n);
HOOKSCOPE_OBSERVABLE(listed, impl::listed, v);

namespace {

using clock_type = std::chrono::steady_clock;

int memo() {
  const hookscope::call_recorder shaped_calls(shaped, {.store_n_calls = hookscope::unlimited, .global = true});
  const hookscope::call_recorder texted_calls(texted, {.store_n_calls = hookscope::unlimited, .global = true});
  std::vector<tensor_spec> tensors;
  for (int d = 0; d < 10; ++d) tensors.push_back(tensor_spec{{}, static_cast<dtype>(d)});  // rank 0: 3 bytes each
  tensors.push_back(tensor_spec{std::vector<std::int64_t>(64, 1), dtype::float32});        // rank 64
  tensors.push_back(tensor_spec{std::vector<std::int64_t>(64, 2), dtype::float32});
  tensors.push_back(tensor_spec{{1, 2, 3}, dtype::int8});
  tensors.push_back(tensor_spec{{1, 2, 4}, dtype::int8});  // same size, last dimension changed
  tensors.push_back(tensor_spec{{1 << 30, 0, 3}, dtype::int8});
  tensors.push_back(tensor_spec{{0}, dtype::boolean});
  std::vector<std::string> texts = {"",
                                    "a",
                                    "b",
                                    "\"",
                                    "\\",
                                    "\n",
                                    "\x01",
                                    "\x7f",
                                    "\xff",
                                    "\xfe",
                                    "\xc3\xa9",
                                    "\xc3\xa8",
                                    "\xe2\x80\xa8",
                                    std::string(1, '\0'),
                                    std::string(2, '\0'),
                                    std::string(4096, 'x'),
                                    std::string(4095, 'x') + "y",
                                    std::string(4097, 'x'),
                                    std::string(4096, '\x01'),
                                    std::string(4096, '\xff'),
                                    "tail\xc3",
                                    "tail\xc3\xa9"};
  std::uint64_t state = 88172645463325252ULL;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  // Every tensor and text after every other, twice in a row, and at random.
  for (const tensor_spec& a : tensors) {
    for (const tensor_spec& b : tensors) {
      (void)shaped(a, "", 0);
      (void)shaped(b, "", 0);
      (void)shaped(b, "", 0);
    }
  }
  for (const std::string& a : texts) {
    for (const std::string& b : texts) {
      (void)texted(a);
      (void)texted(b);
      (void)texted(b);
      (void)shaped(tensors[0], b, static_cast<int>(b.size() % 7));
    }
  }
  for (int i = 0; i < 3000; ++i) {
    const tensor_spec& t = tensors[next() % tensors.size()];
    const std::string& s = texts[next() % texts.size()];
    (void)shaped(t, s, static_cast<int>(next() % 4));
    (void)texted(texts[next() % texts.size()]);
  }
  print_record_lines(shaped_calls);
  print_record_lines(texted_calls);
  return 0;
}

// Calls f(0), f(1), ... for `ms` milliseconds, `most` times at most; returns how many times.
template <class F>
long for_ms(long ms, F f, long most = std::numeric_limits<long>::max()) {
  const auto end = clock_type::now() + std::chrono::milliseconds(ms);
  long calls = 0;
  while (calls < most && clock_type::now() < end) f(calls++);
  return calls;
}

int long_then_short(long long_ms, long short_ms) {
  const std::string long_text(4000, '\x01');
  long made = for_ms(long_ms, [&](long i) { tagged(static_cast<int>(i), long_text); });
  const long first_short = made;
  made += for_ms(short_ms, [&](long i) {
    tagged(static_cast<int>(first_short + i), "");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  std::printf("%ld\n", made);
  return 0;
}

int fork_after(long ms) {
  long made = for_ms(ms, [](long i) { (void)step(static_cast<int>(i)); });
  const pid_t child = fork();
  if (child == 0) {
    for (int i = 0; i < 100; ++i) (void)step(1000000 + i);
    std::exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  std::printf("%ld\n", made + 100);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int tree_calls(long ms, long pace_ms) {
  const std::string s(5000, 'a');
  long held = 0;
  const long made = for_ms(ms, [&](long) {
    const auto start = clock_type::now();
    (void)texted(s);
    if (clock_type::now() - start >= std::chrono::milliseconds(500)) ++held;
    std::this_thread::sleep_for(std::chrono::milliseconds(pace_ms));
  });
  std::printf("%ld %ld\n", made, held);
  return 0;
}

// The signal handler's side of signalled_calls: async-signal-safe but for the recorded calls, whose bodies allocate
// nothing (the vector is made before the handler is installed, and passed by reference).
const std::vector<int> handler_list{1, 2, 3};
std::atomic<long> handler_steps{0};
std::atomic<long> handler_lists{0};
std::atomic<bool> handler_saw_wrong_result{false};

// Runs `handler` on `signal`, system calls interrupted by it restarted.
void handle_signal(int signal, void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(signal, &action, nullptr);
}

void call_recorded_functions(int) {
  const int saved_errno = errno;
  const long k = handler_steps.fetch_add(1, std::memory_order_relaxed);
  if (step(static_cast<int>(k)) != static_cast<int>(k)) handler_saw_wrong_result.store(true);
  handler_lists.fetch_add(1, std::memory_order_relaxed);
  if (listed(handler_list) != 3) handler_saw_wrong_result.store(true);
  errno = saved_errno;
}

// Sends SIGUSR1 to every thread of the process but the calling one, round after round, until `stop`.
void signal_every_thread(const std::atomic<bool>& stop) {
  const pid_t self = static_cast<pid_t>(::syscall(SYS_gettid));
  while (!stop.load()) {
    if (DIR* tasks = ::opendir("/proc/self/task")) {
      while (const dirent* task = ::readdir(tasks)) {
        const pid_t tid = static_cast<pid_t>(std::atol(task->d_name));
        if (tid > 0 && tid != self) (void)::syscall(SYS_tgkill, ::getpid(), tid, SIGUSR1);
      }
      ::closedir(tasks);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

int signalled_calls(long ms, const std::string& how, long most) {
  const bool timer = how == "timer";
  if (!timer && how != "every_thread") return 2;
  // This thread's first calls before any signal: they start the writer's thread and make this thread's buffers.
  const std::vector<int> v{4, 5, 6};
  (void)listed(v);
  (void)step(-1);
  handle_signal(timer ? SIGALRM : SIGUSR1, &call_recorded_functions);
  std::atomic<bool> stop{false};
  std::thread sender;
  if (timer) {
    const itimerval every_50us{{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &every_50us, nullptr);
  } else {
    sender = std::thread(signal_every_thread, std::cref(stop));
  }
  long made = 1;  // the first calls above
  made += for_ms(
      ms,
      [&](long i) {
        (void)listed(v);
        (void)step(static_cast<int>(i));
      },
      most);
  if (timer) {
    const itimerval off{};
    setitimer(ITIMER_REAL, &off, nullptr);
  } else {
    stop.store(true);
    sender.join();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the last signals sent to other threads handled
  std::printf("step %ld\nlisted %ld\n", made + handler_steps.load(), made + handler_lists.load());
  return handler_saw_wrong_result.load() ? 1 : 0;
}

std::atomic<long> forks{0};

// At most this many forks a run, each child waited for: few enough processes at once for a sanitizer's (each child
// takes milliseconds to end), and none left for the init process to reap.
constexpr int max_children = 400;
std::array<std::atomic<pid_t>, max_children> children{};

void fork_from_handler(int) {
  const int saved_errno = errno;
  if (forks.load(std::memory_order_relaxed) >= max_children) return;
  const pid_t child = ::fork();
  if (child == 0) {
    for (int i = 0; i < 10; ++i) (void)step(2'000'000 + i);
    ::_exit(0);
  }
  if (child > 0) {
    const long k = forks.fetch_add(1, std::memory_order_relaxed);
    if (k < max_children) children[static_cast<std::size_t>(k)].store(child, std::memory_order_relaxed);
  }
  errno = saved_errno;
}

int forking_handler(long ms) {
  const std::vector<int> v{4, 5, 6};
  (void)listed(v);
  (void)step(-1);
  handle_signal(SIGALRM, &fork_from_handler);
  const itimerval every_500us{{0, 500}, {0, 500}};
  setitimer(ITIMER_REAL, &every_500us, nullptr);
  long made = 1;
  made += for_ms(ms, [&](long i) {
    (void)listed(v);
    (void)step(static_cast<int>(i));
  });
  const itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  bool all_ended = true;
  const long n = std::min<long>(forks.load(), max_children);
  for (long k = 0; k < n; ++k) {
    const pid_t child = children[static_cast<std::size_t>(k)].load();
    int status = 0;
    bool ended = false;
    for (int waited = 0; waited < 1000 && !ended; ++waited) {
      const pid_t got = ::waitpid(child, &status, WNOHANG);
      ended = got == child || (got < 0 && errno != EINTR);
      if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!ended) {
      std::fprintf(stderr, "child %d did not end within 10 s\n", static_cast<int>(child));
      ::kill(child, SIGKILL);
      (void)::waitpid(child, &status, 0);
      all_ended = false;
    }
  }
  std::printf("forks %ld\nstep %ld\n", n, made);
  return all_ended ? 0 : 1;
}

std::atomic<int> forked_once{0};
std::atomic<pid_t> grandchild{0};

void fork_once_from_handler(int) {
  const int saved_errno = errno;
  if (forked_once.exchange(1) == 0) {
    const pid_t child = ::fork();
    if (child == 0) {
      const itimerval off{};
      setitimer(ITIMER_REAL, &off, nullptr);  // the grandchild returns from the handler into the interrupted write
    } else if (child > 0) {
      grandchild.store(child);
    }
  }
  errno = saved_errno;
}

int fork_in_blocked_write(long n) {
  const pid_t child = ::fork();  // an ordinary fork: the child records its calls, writing them as they come
  if (child > 0) {
    int status = 0;
    (void)::waitpid(child, &status, 0);
    std::printf("made %ld\n", n);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  handle_signal(SIGALRM, &fork_once_from_handler);
  const itimerval every_20ms{{0, 20'000}, {0, 20'000}};
  setitimer(ITIMER_REAL, &every_20ms, nullptr);
  for (long i = 0; i < n; ++i) (void)step(static_cast<int>(i));
  const itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  if (const pid_t g = grandchild.load(); g > 0) (void)::waitpid(g, nullptr, 0);  // the grandchild's is 0
  return 0;  // the grandchild too: its exit writes nothing
}

void fork_and_exit_from_handler(int) {
  const int saved_errno = errno;
  if (forks.load(std::memory_order_relaxed) >= max_children) return;
  const pid_t child = ::fork();
  if (child == 0) std::exit(0);  // its exit actions run
  if (child > 0) forks.fetch_add(1, std::memory_order_relaxed);
  errno = saved_errno;
}

int forks_exiting(long ms) {
  const auto start = clock_type::now();
  bool armed = false;
  long made = 0;
  while (clock_type::now() - start < std::chrono::milliseconds(ms)) {
    (void)step(static_cast<int>(made++));
    if (!armed && clock_type::now() - start > std::chrono::milliseconds(1500)) {
      armed = true;
      handle_signal(SIGALRM, &fork_and_exit_from_handler);
      const itimerval every_2ms{{0, 2000}, {0, 2000}};
      setitimer(ITIMER_REAL, &every_2ms, nullptr);
    }
  }
  const itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  while (::waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
  }
  std::printf("forks %ld\nstep %ld\n", forks.load(), made);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const long n = argc > 2 ? std::atol(argv[2]) : 0;
  if (mode == "memo") return memo();
  if (mode == "long_then_short" && argc > 3) return long_then_short(n, std::atol(argv[3]));
  if (mode == "steps_for") {
    // To stderr: the test may give this process's stdout as the record's pipe, and leave it unread.
    std::fprintf(stderr, "made %ld\n", for_ms(n, [](long i) { (void)step(static_cast<int>(i)); }));
    return 0;
  }
  if (mode == "fork_after") return fork_after(n);
  if (mode == "step_and_other") {
    for (long i = 0; i < n; ++i) {
      (void)other(static_cast<int>(i));
      (void)step(static_cast<int>(i));
    }
    std::printf("%ld\n", n);
    return 0;
  }
  if (mode == "tree_calls" && argc > 3) return tree_calls(n, std::atol(argv[3]));
  if (mode == "signalled_calls" && argc > 3) {
    return signalled_calls(n, argv[3], argc > 4 ? std::atol(argv[4]) : std::numeric_limits<long>::max());
  }
  if (mode == "forking_handler") return forking_handler(n);
  if (mode == "fork_in_blocked_write") return fork_in_blocked_write(n);
  if (mode == "forks_exiting") return forks_exiting(n);
  std::fprintf(
      stderr,
      "usage: %s memo | long_then_short L S | steps_for MS | fork_after MS | step_and_other N | "
      "tree_calls MS P | signalled_calls MS timer|every_thread [MOST] | forking_handler MS | fork_in_blocked_write N "
      "| forks_exiting MS\n",
      argv[0]);
  return 2;
}
