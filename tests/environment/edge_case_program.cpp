// Run by tests/environment/test_program_edge_cases.py under HOOKSCOPE_RECORD, HOOKSCOPE_STATS and HOOKSCOPE_TIMELINE: the
// ways a call can end without its post callback, deep recursion, bytes that are not UTF-8, a tensor that cannot be
// captured, threads still tracing at exit, chdir(), arguments too long for a timeline event (timeline_args), a
// function in a namespace (ns_step, for globs with brackets), the statistics of threads that end and of a fork.
// `edge_case_program MODE N` runs MODE with N and prints what the test checks against ("calls K": the calls that
// returned).
#include "hookscope/callback_errors.hpp"
#include "hookscope/observable.hpp"
#include "hookscope/tensor.hpp"

#include "../leak_check_in_forked_children.hpp"
#include "hookscope/value_errors.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// A tensor whose traits refuse a negative dimension, as the capture rules do for any tensor.
struct odd_tensor {
  std::vector<std::int64_t> dims;
};
template <>
struct hookscope::tensor_traits<odd_tensor> {
  static const std::vector<std::int64_t>& shape(const odd_tensor& t) {
    for (std::size_t i = 0; i < t.dims.size(); ++i) {
      if (t.dims[i] < 0) throw hookscope::value_error("dimension " + std::to_string(i) + " is negative");
    }
    return t.dims;
  }
  static hookscope::dtype dtype(const odd_tensor&) noexcept { return hookscope::dtype::float32; }
};

namespace impl {
int work(int n) {
  if (n < 0) pthread_exit(nullptr);                               // a forced unwind through the observed call
  return n <= std::numeric_limits<int>::max() / 10 ? n * 10 : n;  // no overflow for any count given
}
int depth(int n);
std::size_t text(const std::string& s) { return s.size(); }
std::int64_t odd(const odd_tensor& t) { return t.dims.empty() ? 0 : t.dims[0]; }
std::string bytes_back(const std::string& s) { return s; }
double mixed(const std::string& s, double f, std::int64_t i, const std::vector<std::string>& words) {
  (void)s, (void)i, (void)words;
  return f;
}
}  // namespace impl

HOOKSCOPE_OBSERVABLE(work, impl::work, n);
HOOKSCOPE_OBSERVABLE(depth, impl::depth, n);
HOOKSCOPE_OBSERVABLE(text, impl::text, s);
HOOKSCOPE_OBSERVABLE(odd, impl::odd, t);
HOOKSCOPE_OBSERVABLE(bytes_back, impl::bytes_back, s);
HOOKSCOPE_OBSERVABLE(mixed, impl::mixed, s, f, i, words);

int impl::depth(int n) { return n == 0 ? 0 : 1 + ::depth(n - 1); }

// Timeline arguments that do not fit an event's slot (test_timeline_args.py): one string, eight, and six under names
// too long for the slot.
namespace impl {
using text_arg = const std::string&;
std::size_t args_one(text_arg s) { return s.size(); }
std::size_t args_many(text_arg a, text_arg bb, text_arg ccc, text_arg dddd, text_arg e, text_arg ff, text_arg ggg,
                      text_arg hhhh) {
  return a.size() + bb.size() + ccc.size() + dddd.size() + e.size() + ff.size() + ggg.size() + hhhh.size();
}
std::size_t args_wide(text_arg first_parameter_of_a_long_name, text_arg second_parameter_of_a_long_name,
                      text_arg third_parameter_of_a_long_name, text_arg fourth_parameter_of_a_long_name,
                      text_arg fifth_parameter_of_a_long_name, text_arg sixth_parameter_of_a_long_name) {
  return first_parameter_of_a_long_name.size() + second_parameter_of_a_long_name.size() +
         third_parameter_of_a_long_name.size() + fourth_parameter_of_a_long_name.size() +
         fifth_parameter_of_a_long_name.size() + sixth_parameter_of_a_long_name.size();
}
}  // namespace impl
HOOKSCOPE_OBSERVABLE(args_one, impl::args_one, s);
HOOKSCOPE_OBSERVABLE(args_many, impl::args_many, a, bb, ccc, dddd, e, ff, ggg, hhhh);
HOOKSCOPE_OBSERVABLE(args_wide, impl::args_wide, first_parameter_of_a_long_name, second_parameter_of_a_long_name,
                     third_parameter_of_a_long_name, fourth_parameter_of_a_long_name, fifth_parameter_of_a_long_name,
                     sixth_parameter_of_a_long_name);

// A function in a namespace, for the globs with brackets of every variable (`ns::st[e]p`).
namespace ns {
namespace impl {
int step(int n) { return n + 1; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(step, impl::step, n);
}  // namespace ns

namespace {

// Threads ended by pthread_exit inside a recorded call, then calls on new threads (which reuse the dead threads'
// stacks, so their calls' contexts take the abandoned addresses) and on the main thread.
// The same frames on each thread: a new thread's call takes the abandoned context's address.
[[gnu::noinline]] int work_from(int first, int n) {
  int calls = 0;
  for (int i = 0; i < n; ++i) calls += work(first < 0 ? -1 : first + i) >= 0;
  return calls;
}

std::atomic<int> calls_on_threads{0};
void work_on_thread(int first, int n) { calls_on_threads += work_from(first, n); }

int unwind(int n) {
  for (int round = 0; round < 3; ++round) {  // both threads start the same way (glibc reuses the ended one's stack)
    std::thread(&work_on_thread, -1, 1).join();
    std::thread(&work_on_thread, round * 1000, n).join();
  }
  return calls_on_threads + work_from(5000, n);
}

// In rethrow mode, a pre callback that refuses every third call: those calls never run, and have no post callback.
int refused(int n) {
  const hookscope::rethrow_callback_exceptions_scope rethrow;
  auto refuse = work.observers.pre.add([](const auto& ctx) {
    if (ctx.template arg<"n">() % 3 == 0) throw std::runtime_error("refused");
  });
  int calls = 0;
  for (int i = 0; i < n; ++i) {
    try {
      calls += work(i) >= 0;
    } catch (const std::runtime_error&) {
    }
  }
  return calls;
}

// Bytes that are not UTF-8 in arguments and in the thread's name (the kernel keeps 15 bytes: the name below is cut
// inside the euro sign).
int non_utf8() {
  prctl(PR_SET_NAME, "abcdefghijklmn\xe2\x82\xac", 0, 0, 0);
  const std::string samples[] = {"\xff\xfe",
                                 "caf\xc3\xa9",
                                 "cut \xe2\x82",
                                 "\xed\xa0\x80 surrogate",
                                 "quote \" back \\ nul",
                                 std::string("a\0b", 3),
                                 "\xc0\xaf overlong"};
  int calls = 0;
  for (const std::string& s : samples) {
    calls += text(s) == s.size();
    calls += bytes_back(s) == s;
  }
  return calls;
}

// Threads that never stop making traced calls (arguments that need escaping) while the main thread exits.
[[noreturn]] void exit_while_tracing(int threads) {
  std::atomic<int> started{0};
  for (int t = 0; t < threads; ++t) {
    std::thread([&started, t] {
      const std::string s = "\"\\\xe2\x82\xac" + std::to_string(t);  // valid UTF-8: only tearing can spoil it
      (void)text(s);                                                 // the thread's ring exists from here on
      started.fetch_add(1);
      for (int i = 0;; ++i) {
        (void)text(s);
        (void)work(i);
      }
    }).detach();
  }
  while (started.load() < threads) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  std::exit(0);
}

// A tensor with a negative dimension among well-formed ones: as argument, n times.
int odd_tensors(int n) {
  int calls = 0;
  for (int i = 0; i < n; ++i) {
    calls += odd(odd_tensor{{i, 2}}) == i;
    calls += odd(odd_tensor{{-1, 2}}) == -1;
  }
  return calls;
}

std::string hex(const std::string& s) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out = "x";  // never empty: the line splits on spaces
  for (const char c : s) {
    out.push_back(digits[static_cast<unsigned char>(c) >> 4]);
    out.push_back(digits[static_cast<unsigned char>(c) & 15]);
  }
  return out;
}

// Random arguments (seeded by `seed`): strings of arbitrary bytes, inf/nan/-0 and extreme numbers; each call's
// arguments printed on a line, `s f i words...` (bytes in hex, the double's bits in hex), for the test to compare
// with what was recorded.
int random_calls(int seed) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
  auto bytes = [&] {
    std::string s(rng() % 7, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 4 == 0 ? 0xe2 : rng() % 256);
    return s;
  };
  const double specials[] = {HUGE_VAL, -HUGE_VAL, std::nan(""), 0.0, -0.0, 5e-324, 1.7976931348623157e308};
  const std::int64_t extremes[] = {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
                                   0, -1};
  for (int call = 0; call < 300; ++call) {
    const std::string s = bytes();
    const double f = rng() % 2 ? specials[rng() % std::size(specials)]
                               : std::ldexp(static_cast<double>(rng()), -static_cast<int>(rng() % 120));
    const std::int64_t i = rng() % 2 ? extremes[rng() % 4] : static_cast<std::int64_t>(rng());
    std::vector<std::string> words(rng() % 3);
    for (auto& w : words) w = bytes();
    (void)mixed(s, f, i, words);
    std::uint64_t bits = 0;
    std::memcpy(&bits, &f, sizeof bits);
    std::printf("%s %016llx %lld", hex(s).c_str(), static_cast<unsigned long long>(bits), static_cast<long long>(i));
    for (const std::string& w : words) std::printf(" %s", hex(w).c_str());
    std::printf("\n");
  }
  return 300;
}

// Calls, a chdir(), calls: relative output paths were resolved at start-up.
int change_directory(const char* to, int n) {
  int calls = 0;
  for (int i = 0; i < n; ++i) calls += work(i) >= 0;
  if (chdir(to) != 0) {
    std::perror("chdir");
    std::exit(3);
  }
  for (int i = 0; i < n; ++i) calls += work(100 + i) >= 0;
  return calls;
}

// Calls made by a static destructor: the object is constructed before the library's own start-up (this file is
// linked before the library), so it is destroyed after the library's exit actions were registered.
std::atomic<int> destructor_calls{0};
struct calls_at_destruction {
  calls_at_destruction() { destructor_calls = 0; }
  ~calls_at_destruction() {
    for (int i = 0; i < destructor_calls; ++i) (void)work(i);
  }
};
calls_at_destruction at_destruction;

// N calls, then the program ends another way than by returning from main.
int calls_then(int n) {
  int calls = 0;
  for (int i = 0; i < n; ++i) calls += work(i) >= 0;
  return calls;
}

// A thread calls std::exit while the main thread keeps making recorded and traced calls.
// std::exit from a thread once the main thread has made n calls (however slowly a loaded machine runs it), while
// the main thread goes on calling.
// With `line_bytes` > 0 the main thread records text() of that many bytes instead, each line many pages, and the exit
// lasts 30 ms more after the library's exit actions (slow_end, as a static destructor would): the main thread writes
// meanwhile, and a process ending while it still wrote would stop a write in the middle of a line.
std::atomic<int> main_calls{0};
std::atomic<bool> slow_end_wanted{false};
void slow_end() {
  if (slow_end_wanted.load()) std::this_thread::sleep_for(std::chrono::milliseconds(30));
}
// Registered before the library's static initialisers register its exit actions, so that it runs after them (atexit:
// last registered, first run) and before the library's last word (a destructor function, after every atexit handler).
__attribute__((constructor(102))) void register_slow_end() { std::atexit(&slow_end); }

[[noreturn]] void exit_from_thread(int n, std::size_t line_bytes = 0) {
  slow_end_wanted.store(line_bytes > 0);
  std::thread([n] {
    while (main_calls.load() < n) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::exit(0);
  }).detach();
  const std::string long_text(line_bytes, 'x');
  for (int i = 0;; ++i) {
    if (line_bytes > 0) {
      (void)text(long_text);
    } else {
      (void)work(i);
    }
    main_calls.fetch_add(1);
  }
}

// Threads making calls while the process receives SIGTERM.
[[noreturn]] void sigterm_while_calling(int threads) {
  for (int t = 0; t < threads; ++t) {
    std::thread([t] {
      for (int i = 0;; ++i) (void)work(t * 100000000 + i % 100000000);
    }).detach();
  }
  // Long enough for every thread to be recording; short enough that the files stay small to check.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  kill(getpid(), SIGTERM);
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

// A thread name of five euro signs: 15 bytes, whole characters, set with pthread_setname_np.
int multibyte_thread_name() {
  int calls = 0;
  std::thread([&calls] {
    if (pthread_setname_np(pthread_self(), "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac") != 0) {
      std::exit(4);
    }
    calls = work(1) == 10;
  }).join();
  return calls;
}

// Forks from the main thread while two threads record, trace and count without pause; each child makes 5 calls of
// work(1000000 + child) and exits. Prints the children that did not finish within 10 s (then killed).
int fork_while_threads_call(int children) {
  for (int t = 0; t < 2; ++t) {
    std::thread([t] {
      for (int i = 0;; ++i) (void)work(t * 100000 + i % 100000);
    }).detach();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  int hung = 0;
  for (int c = 0; c < children; ++c) {
    const pid_t child = fork();
    if (child == 0) {
      for (int i = 0; i < 5; ++i) (void)work(1000000 + c);
      std::exit(0);
    }
    int status = 0;
    bool done = false;
    for (int wait = 0; wait < 1000 && !done; ++wait) {
      done = waitpid(child, &status, WNOHANG) == child;
      if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!done) {
      ++hung;
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
    }
  }
  std::printf("hung %d\n", hung);
  std::fflush(stdout);
  std::_Exit(0);
}

// HOOKSCOPE_STATS keeps a histogram per thread (test_stats_threads.py): waves of threads that each make n calls and
// end, their histograms taken over by the next wave's threads, and n calls of the main thread. Returns every call.
int stats_threads(int n) {
  constexpr int waves = 4, threads_per_wave = 3;
  for (int wave = 0; wave < waves; ++wave) {
    std::vector<std::thread> threads;
    for (int t = 0; t < threads_per_wave; ++t) {
      threads.emplace_back([n] {
        for (int i = 0; i < n; ++i) (void)work(i);
      });
    }
    for (std::thread& t : threads) t.join();
  }
  for (int i = 0; i < n; ++i) (void)work(i);
  return (waves * threads_per_wave + 1) * n;
}

// A fork while another thread holds its histogram: the child counts its own 10 calls only, from zero, and writes its
// table first; the parent counts its 3n (n before the fork on each of
// its two threads, n after it).
int stats_fork(int n) {
  std::atomic<bool> forked{false};
  std::atomic<int> counted{0};
  std::thread other([&] {
    for (int i = 0; i < n; ++i) (void)work(i);
    counted.store(1);
    while (!forked.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  for (int i = 0; i < n; ++i) (void)work(i);
  while (counted.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    for (int i = 0; i < 10; ++i) (void)work(i);  // no thread: not safe after a multi-threaded fork (TSan refuses)
    std::exit(0);                                // writes the child's table
  }
  int status = 0;
  waitpid(child, &status, 0);
  forked.store(true);
  other.join();
  for (int i = 0; i < n; ++i) (void)work(i);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 3 * n : -1;
}

// In rethrow mode, a pre callback refuses depth(n / 2) inside depth(n): the levels above it end by the exception;
// then depth(n / 2 - 1) recurses to 0 and returns. Calls that returned: n / 2 (levels n / 2 - 1 .. 0).
int refused_in_recursion(int n) {
  const hookscope::rethrow_callback_exceptions_scope rethrow;
  auto refuse = depth.observers.pre.add([n](const auto& ctx) {
    if (ctx.template arg<"n">() == n / 2) throw std::runtime_error("refused");
  });
  try {
    (void)depth(n);
  } catch (const std::runtime_error&) {
  }
  return depth(n / 2 - 1) == n / 2 - 1 ? n / 2 : -1;
}

// One call per line of stdin: `one|many|wide` then each argument's bytes in hex (`-` for none); returns the calls.
int timeline_args() {
  int calls = 0;
  std::string line;
  for (int c; (c = std::getchar()) != EOF;) {
    if (c != '\n') {
      line.push_back(static_cast<char>(c));
      continue;
    }
    std::vector<std::string> words;
    for (std::size_t start = 0; start <= line.size();) {
      const std::size_t end = std::min(line.find(' ', start), line.size());
      words.push_back(line.substr(start, end - start));
      start = end + 1;
    }
    line.clear();
    std::vector<std::string> args;
    for (std::size_t w = 1; w < words.size(); ++w) {
      std::string bytes;
      for (std::size_t i = 0; words[w] != "-" && i + 1 < words[w].size(); i += 2) {
        bytes.push_back(static_cast<char>(std::stoi(words[w].substr(i, 2), nullptr, 16)));
      }
      args.push_back(bytes);
    }
    args.resize(8);
    if (words[0] == "one") (void)args_one(args[0]);
    if (words[0] == "many") (void)args_many(args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
    if (words[0] == "wide") (void)args_wide(args[0], args[1], args[2], args[3], args[4], args[5]);
    ++calls;
  }
  return calls;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: edge_case_program MODE N [DIR]\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int n = std::atoi(argv[2]);
  int calls = -1;
  if (mode == "unwind") calls = unwind(n);
  if (mode == "refused") calls = refused(n);
  if (mode == "recursion") calls = depth(n) == n ? n + 1 : -1;
  if (mode == "timeline_args") calls = timeline_args();
  if (mode == "ns_step") {
    calls = 0;
    for (int i = 0; i < n; ++i) calls += ns::step(i) == i + 1;
  }
  if (mode == "non_utf8") calls = non_utf8();
  if (mode == "exit_while_tracing") exit_while_tracing(n);
  if (mode == "odd_tensors") calls = odd_tensors(n);
  if (mode == "random") calls = random_calls(n);
  if (mode == "chdir" && argc == 4) calls = change_directory(argv[3], n);
  if (mode == "static_destructor") calls = destructor_calls = n;
  if (mode == "quick_exit") {
    std::printf("calls %d\n", calls_then(n));
    std::fflush(stdout);
    std::quick_exit(0);
  }
  if (mode == "escape") {
    std::printf("calls %d\n", calls_then(n));
    std::fflush(stdout);
    throw std::runtime_error("escaping main");
  }
  if (mode == "exit_from_thread") exit_from_thread(n);
  if (mode == "exit_from_thread_long_lines") exit_from_thread(n, 100'000);
  if (mode == "sigterm") sigterm_while_calling(n);
  if (mode == "fork_while_threads_call") calls = fork_while_threads_call(n);
  if (mode == "refused_in_recursion") calls = refused_in_recursion(n);
  if (mode == "multibyte_thread_name") calls = multibyte_thread_name();
  if (mode == "stats_threads") calls = stats_threads(n);
  if (mode == "stats_fork") calls = stats_fork(n);
  if (calls < 0) {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  std::printf("calls %d\n", calls);
  return 0;
}
