// HOOKSCOPE_RECORD's buffered path against the value tree's, and against programs that make its writer fall behind
// (tests/environment/test_record_buffers.py):
//   same_text SEED N      N random calls of functions whose values have a binary form (strings up to past the binary
//                         form's bound, numbers of every kind, enumerations, tensors, results that throw, arguments
//                         that repeat the last call's), recorded by
//                         HOOKSCOPE_RECORD and by a call_recorder (the value tree); prints the call_recorder's lines
//                         (to_record_line, no latency), which the file's lines must equal byte for byte
//   threads N T           T threads of N calls each, each thread ending at once, then exit()
//   calls N               N calls on this thread, then a normal return
//   fork N                N calls, then fork(): the child makes 100 calls of its own (1000000 + i) and exits
//   exit_from_thread MS   a thread calls exit() after MS milliseconds while this one records without pause
//   forever T             T threads calling step(thread * 10^9 + i) without pause until a signal ends the process
#include "hookscope/detail/call_pairing.hpp"
#include "hookscope/observable.hpp"
#include "hookscope/recorder.hpp"
#include "hookscope/records.hpp"
#include "hookscope/tensor.hpp"

#include "../leak_check_in_forked_children.hpp"
#include "print_record_lines.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using hookscope::dtype;
using hookscope::tensor_spec;

enum class level : short { low = -3, high = 7 };
enum unscoped_kind : unsigned char { first_kind, last_kind = 255 };

namespace impl {
[[gnu::noinline]] tensor_spec encodable(std::string s, std::string_view v, double d, float f, long long i,
                                        unsigned long long u, bool b, level l, unscoped_kind k, const tensor_spec& t,
                                        char c, std::uint8_t byte);
tensor_spec encodable(std::string s, std::string_view, double, float, long long, unsigned long long, bool b, level,
                      unscoped_kind, const tensor_spec& t, char, std::uint8_t) {
  if (b && s.size() % 5 == 0) throw std::runtime_error("refused");
  return t;
}
[[gnu::noinline]] std::string echo(const std::string& s, int times);
std::string echo(const std::string& s, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += s;
  return out;
}
[[gnu::noinline]] void nothing_back(int n);
void nothing_back(int n) {
  static std::atomic<int> sink{0};
  sink.store(n, std::memory_order_relaxed);
}
[[gnu::noinline]] int step(int n);
int step(int n) { return n; }
[[gnu::noinline]] int repeating(const tensor_spec& ids, const std::string& name, const tensor_spec& cache, int n,
                                const std::string& tag);
int repeating(const tensor_spec&, const std::string&, const tensor_spec&, int n, const std::string&) { return n; }
}  // namespace impl

HOOKSCOPE_OBSERVABLE(encodable, impl::encodable, s, v, d, f, i, u, b, l, k, t, c, byte);
HOOKSCOPE_OBSERVABLE(echo, impl::echo, s, times);
HOOKSCOPE_OBSERVABLE(nothing_back, impl::nothing_back, n);
HOOKSCOPE_OBSERVABLE(step, impl::step, n);
HOOKSCOPE_OBSERVABLE(repeating, impl::repeating, ids, name, cache, n, tag);

namespace {

int same_text(unsigned seed, int n) {
  std::mt19937_64 rng(seed);
  // Half the strings and tensors are one of the last few: the writer remembers each parameter's last text
  // (line_memo), which must follow every change, back to an earlier value too.
  std::vector<std::string> recent_texts(3);
  auto text = [&] {
    if (rng() % 2 == 0) return recent_texts[rng() % recent_texts.size()];
    // Mostly short; some past the binary form's 4096 bytes (the value tree's path), bytes of every value.
    const std::size_t size = rng() % 8 == 0 ? 4000 + rng() % 200 : rng() % 12;
    std::string s(size, '\0');
    for (char& ch : s) ch = static_cast<char>(rng() % 3 == 0 ? 0xc3 : rng() % 256);
    recent_texts[rng() % recent_texts.size()] = s;
    return s;
  };
  std::vector<tensor_spec> recent_tensors(3);
  const double specials[] = {HUGE_VAL, -HUGE_VAL, std::nan(""), 0.0, -0.0, 5e-324, 1.7976931348623157e308, 0.1};
  const hookscope::call_recorder encodable_calls(encodable, {.store_n_calls = hookscope::unlimited, .global = true});
  const hookscope::call_recorder echo_calls(echo, {.store_n_calls = hookscope::unlimited, .global = true});
  const hookscope::call_recorder nothing_calls(nothing_back, {.store_n_calls = hookscope::unlimited, .global = true});
  const hookscope::call_recorder repeating_calls(repeating, {.store_n_calls = hookscope::unlimited, .global = true});
  // repeating(): each argument keeps the last call's value 3 times in 4, so that every number of leading arguments
  // repeats the last call's (the writer copies their text), none and all included; a new name may extend the last.
  tensor_spec ids, cache;
  std::string name, tag;
  int repeated_n = 0;
  auto keep = [&] { return rng() % 4 != 0; };
  for (int call = 0; call < n; ++call) {
    if (!keep())
      ids = tensor_spec{std::vector<std::int64_t>(rng() % 4, static_cast<std::int64_t>(rng() % 3)), dtype::int64};
    if (!keep()) name = rng() % 2 ? name + "x" : std::string(rng() % 3, 'n');
    if (!keep())
      cache = tensor_spec{std::vector<std::int64_t>(rng() % 5, static_cast<std::int64_t>(rng() % 40)), dtype::float16};
    if (!keep()) repeated_n = static_cast<int>(rng() % 3);
    if (!keep()) tag = text();
    (void)repeating(ids, name, cache, repeated_n, tag);
  }
  for (int call = 0; call < n; ++call) {
    const double d = rng() % 2 ? specials[rng() % std::size(specials)]
                               : std::ldexp(static_cast<double>(rng()), -static_cast<int>(rng() % 200));
    std::vector<std::int64_t> shape(rng() % 6);
    for (auto& dim : shape) dim = static_cast<std::int64_t>(rng() % 3 == 0 ? rng() >> 1 : rng() % 9);
    tensor_spec t{shape, static_cast<dtype>(rng() % 10)};
    if (rng() % 2 == 0) {
      t = recent_tensors[rng() % recent_tensors.size()];
    } else {
      recent_tensors[rng() % recent_tensors.size()] = t;
    }
    const std::string s = text(), v = text();
    try {
      (void)encodable(s, v, d, static_cast<float>(d), static_cast<long long>(rng()), rng(), rng() % 2 == 0,
                      rng() % 2 ? level::low : level::high, static_cast<unscoped_kind>(rng() % 256), t,
                      static_cast<char>(rng()), static_cast<std::uint8_t>(rng()));
    } catch (const std::runtime_error&) {
    }
    (void)echo(text(), static_cast<int>(rng() % 3));
    nothing_back(static_cast<int>(rng()));
  }
  print_record_lines(encodable_calls);
  print_record_lines(echo_calls);
  print_record_lines(nothing_calls);
  print_record_lines(repeating_calls);
  return 0;
}

int threads_then_exit(int n, int threads) {
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([n, t] {
      for (int i = 0; i < n; ++i) (void)step(t * n + i);
    });
  }
  for (std::thread& w : workers) w.join();
  std::exit(0);
}

int fork_then_record(int n) {
  for (int i = 0; i < n; ++i) (void)step(i);
  const pid_t child = fork();
  if (child == 0) {
    for (int i = 0; i < 100; ++i) (void)step(1000000 + i);
    std::exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int exit_from_thread(int n) {
  std::thread([n] {
    std::this_thread::sleep_for(std::chrono::milliseconds(n));
    std::exit(0);
  }).detach();
  for (int i = 0;; ++i) (void)step(i);
}

[[noreturn]] void forever(int threads) {
  for (int t = 1; t < threads; ++t) {
    std::thread([t] {
      for (int i = 0;; ++i) (void)step(t * 1'000'000'000 + i);
    }).detach();
  }
  std::printf("recording\n");
  std::fflush(stdout);
  for (int i = 0;; ++i) (void)step(i);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const int n = argc > 2 ? std::atoi(argv[2]) : 0;
  if (mode == "same_text" && argc > 3) return same_text(static_cast<unsigned>(n), std::atoi(argv[3]));
  if (mode == "threads" && argc > 3) return threads_then_exit(n, std::atoi(argv[3]));
  if (mode == "calls") {
    for (int i = 0; i < n; ++i) (void)step(i);
    return 0;
  }
  if (mode == "fork") return fork_then_record(n);
  if (mode == "exit_from_thread") return exit_from_thread(n);
  if (mode == "forever") forever(n);
  std::fprintf(stderr,
               "usage: %s same_text SEED N | threads N T | calls N | fork N | exit_from_thread MS | forever T\n",
               argv[0]);
  return 2;
}
