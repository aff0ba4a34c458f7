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
//   repeat_edges SEED N T T threads of N calls whose arguments repeat the last call's in runs, and change as little
//                         as the binary form allows (see edge_calls); prints the call_recorders' lines
//   repeat_abort SEED N T the same, then abort() (the signal handler writes what the buffers hold)
//   repeat_fork SEED N    the same calls before and after a fork(), in both processes (see repeat_fork)
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
#include <bit>
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
#include <utility>
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
[[gnu::noinline]] int edges(const std::string& s, bool b, double d, const tensor_spec& t, const std::string& u,
                            long long i = 7, const std::string& w = "w");
int edges(const std::string&, bool, double, const tensor_spec&, const std::string&, long long i, const std::string&) {
  return static_cast<int>(i);
}
[[gnu::noinline]] bool tensor_first(const tensor_spec& t, const std::string& s, bool b, double d);
bool tensor_first(const tensor_spec&, const std::string&, bool b, double) { return b; }
// Strings all: `text` keeps the 64 and 65 parameters readable.
using text = const std::string&;
[[gnu::noinline]] int wide64(text, text, text, text, text, text, text, text, text, text, text, text, text, text, text,
                             text, text, text, text, text, text, text, text, text, text, text, text, text, text, text,
                             text, text, text, text, text, text, text, text, text, text, text, text, text, text, text,
                             text, text, text, text, text, text, text, text, text, text, text, text, text, text, text,
                             text, text, text, text);
int wide64(text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text,
           text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text,
           text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text,
           text, text, text, text, text, text, text, text, text, text) {
  return 64;
}
[[gnu::noinline]] int wide65(text, text, text, text, text, text, text, text, text, text, text, text, text, text, text,
                             text, text, text, text, text, text, text, text, text, text, text, text, text, text, text,
                             text, text, text, text, text, text, text, text, text, text, text, text, text, text, text,
                             text, text, text, text, text, text, text, text, text, text, text, text, text, text, text,
                             text, text, text, text, text);
int wide65(text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text,
           text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text,
           text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text, text,
           text, text, text, text, text, text, text, text, text, text, text) {
  return 65;
}
}  // namespace impl

HOOKSCOPE_OBSERVABLE(encodable, impl::encodable, s, v, d, f, i, u, b, l, k, t, c, byte);
HOOKSCOPE_OBSERVABLE(echo, impl::echo, s, times);
HOOKSCOPE_OBSERVABLE(nothing_back, impl::nothing_back, n);
HOOKSCOPE_OBSERVABLE(step, impl::step, n);
HOOKSCOPE_OBSERVABLE(repeating, impl::repeating, ids, name, cache, n, tag);
HOOKSCOPE_OBSERVABLE(edges, impl::edges, s, b, d, t, u, i = 7, w = "w");
HOOKSCOPE_OBSERVABLE(tensor_first, impl::tensor_first, t, s, b, d);
HOOKSCOPE_OBSERVABLE(wide64, impl::wide64, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16,
                     a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31, a32, a33, a34, a35, a36,
                     a37, a38, a39, a40, a41, a42, a43, a44, a45, a46, a47, a48, a49, a50, a51, a52, a53, a54, a55, a56,
                     a57, a58, a59, a60, a61, a62, a63);
HOOKSCOPE_OBSERVABLE(wide65, impl::wide65, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16,
                     a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31, a32, a33, a34, a35, a36,
                     a37, a38, a39, a40, a41, a42, a43, a44, a45, a46, a47, a48, a49, a50, a51, a52, a53, a54, a55, a56,
                     a57, a58, a59, a60, a61, a62, a63, a64);

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

// The arguments of edges(), tensor_first(), wide64() and wide65() for repeat_edges and repeat_fork: each keeps its
// last value 3 times in 4, else takes one of a few that differ from each other as little as the binary form allows
// (a string and its prefix, an empty string, the bound of 4096 bytes and past it, a rank-0 tensor, a rank that grows
// with the same leading dimensions, the bound of rank 64 and past it, NaNs of other payloads, -0.0, both booleans),
// and a call leaves 0, 1 or 2 arguments to their defaults.
struct edge_calls {
  std::mt19937_64 rng;
  std::vector<std::string> texts{"",
                                 "a",
                                 "ab",
                                 "abc",
                                 std::string(1, '\0'),
                                 "\xc3",
                                 "ab\"c",
                                 std::string(4096, '\x01'),
                                 std::string(4095, '\x01') + "a",
                                 std::string(4096, 'a'),
                                 std::string(4097, 'a'),
                                 std::string(5000, '\x01')};
  std::vector<double> doubles;
  std::vector<tensor_spec> tensors;
  std::string s, u, w;
  bool b = false;
  double d = 0.0;
  tensor_spec t;
  long long i = 0;
  std::vector<std::string> wide = std::vector<std::string>(65);

  explicit edge_calls(unsigned seed) : rng(seed) {
    for (std::uint64_t bits : {0x7ff8000000000000ull, 0x7ff8000000000001ull, 0xfff8000000000000ull,
                               0x7ff0000000000001ull, 0x0000000000000000ull, 0x8000000000000000ull,
                               0x7ff0000000000000ull, 0x3ff0000000000000ull, 0x0000000000000001ull})
      doubles.push_back(std::bit_cast<double>(bits));
    std::vector<std::int64_t> dims;
    for (int rank = 0; rank <= 4; ++rank, dims.push_back(3 + rank)) tensors.push_back({dims, dtype::int64});
    tensors.push_back({{3, 4}, dtype::float32});
    tensors.push_back({{0}, dtype::int64});
    tensors.push_back({std::vector<std::int64_t>(64, 2), dtype::int64});
    tensors.push_back({std::vector<std::int64_t>(65, 2), dtype::int64});  // past the binary form's rank
    tensors.push_back({{std::numeric_limits<std::int64_t>::max()}, dtype::boolean});
  }
  bool keep() { return rng() % 4 != 0; }
  template <class T>
  const T& any(const std::vector<T>& of) {
    return of[rng() % of.size()];
  }
  void edges_call() {
    if (!keep()) s = any(texts);
    if (!keep()) b = !b;
    if (!keep()) d = any(doubles);
    if (!keep()) t = any(tensors);
    if (!keep()) u = any(texts);
    if (!keep()) i = static_cast<long long>(rng() % 3);
    if (!keep()) w = any(texts);
    switch (rng() % 3) {
      case 0: (void)::edges(s, b, d, t, u); break;
      case 1: (void)::edges(s, b, d, t, u, i); break;
      default: (void)::edges(s, b, d, t, u, i, w); break;
    }
  }
  void tensor_first_call() {
    if (!keep()) t = any(tensors);
    if (!keep()) s = any(texts);
    if (!keep()) b = !b;
    if (!keep()) d = any(doubles);
    (void)::tensor_first(t, s, b, d);
  }
  void wide_call() {
    for (std::string& a : wide)
      if (!keep()) a = any(texts);
    const auto call = [&]<std::size_t... I>(const auto& function, std::index_sequence<I...>) {
      (void)function(wide[I]...);
    };
    call(::wide64, std::make_index_sequence<64>());
    call(::wide65, std::make_index_sequence<65>());
  }
};

// repeat_edges SEED N THREADS: THREADS threads (seeds SEED, SEED + 1, ...) of N calls of edges() and tensor_first()
// each, and N / 8 of wide64() and wide65() on the first; then the call_recorders' lines.
// (repeat_abort SEED N T: the same, then the lines flushed and abort(): the handler of SIGABRT writes what the
// buffers still hold.)
int repeat_edges(unsigned seed, int n, int threads, bool abort_at_end = false) {
  const hookscope::call_recorder edges_calls(edges, {.store_n_calls = hookscope::unlimited, .global = true});
  const hookscope::call_recorder tensor_calls(tensor_first, {.store_n_calls = hookscope::unlimited, .global = true});
  const hookscope::call_recorder wide64_calls(wide64, {.store_n_calls = hookscope::unlimited, .global = true});
  const hookscope::call_recorder wide65_calls(wide65, {.store_n_calls = hookscope::unlimited, .global = true});
  std::vector<std::thread> workers;
  for (int k = 0; k < threads; ++k) {
    workers.emplace_back([=] {
      edge_calls calls(seed + static_cast<unsigned>(k));
      for (int call = 0; call < n; ++call) {
        calls.edges_call();
        calls.tensor_first_call();
        if (k == 0 && call % 8 == 0) calls.wide_call();
      }
    });
  }
  for (std::thread& w : workers) w.join();
  print_record_lines(edges_calls);
  print_record_lines(tensor_calls);
  print_record_lines(wide64_calls);
  print_record_lines(wide65_calls);
  if (abort_at_end) {
    std::fflush(stdout);
    std::abort();
  }
  return 0;
}

// repeat_fork SEED N: N calls of edges(), then fork() with their lines maybe still in the buffers; the child makes N
// calls of its own (seed SEED + 1) and prints "child" and its call_recorder's lines (the N before the fork first),
// the parent N more, then "parent" and its lines once the child has exited.
int repeat_fork(unsigned seed, int n) {
  const hookscope::call_recorder edges_calls(edges, {.store_n_calls = hookscope::unlimited, .global = true});
  edge_calls calls(seed);
  for (int call = 0; call < n; ++call) calls.edges_call();
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    edge_calls own(seed + 1);
    for (int call = 0; call < n; ++call) own.edges_call();
    std::printf("child\n");
    print_record_lines(edges_calls);
    std::exit(0);
  }
  for (int call = 0; call < n; ++call) calls.edges_call();
  int status = 0;
  waitpid(child, &status, 0);
  std::printf("parent\n");
  print_record_lines(edges_calls);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
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
  if (mode == "repeat_edges" && argc > 4)
    return repeat_edges(static_cast<unsigned>(n), std::atoi(argv[3]), std::atoi(argv[4]));
  if (mode == "repeat_abort" && argc > 4)
    return repeat_edges(static_cast<unsigned>(n), std::atoi(argv[3]), std::atoi(argv[4]), true);
  if (mode == "repeat_fork" && argc > 3) return repeat_fork(static_cast<unsigned>(n), std::atoi(argv[3]));
  if (mode == "exit_from_thread") return exit_from_thread(n);
  if (mode == "forever") forever(n);
  std::fprintf(stderr,
               "usage: %s same_text SEED N | threads N T | calls N | fork N | exit_from_thread MS | forever T | "
               "repeat_edges SEED N T | repeat_abort SEED N T | repeat_fork SEED N\n",
               argv[0]);
  return 2;
}
