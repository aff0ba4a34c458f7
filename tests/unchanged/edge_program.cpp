// Programs at the edges of the promise "a tracer never changes the program it traces"
// (tests/unchanged/test_edge_programs.py): odd methods (virtual ref-qualified, templates, overloaded operator, and
// operator&, references returned, classes that can be neither copied nor moved), calls that suspend in fibers that
// never resume, are resumed in a forked child or on a replacement thread, thousands of interleaved fibers, recursion
// inside fibers, longjmp and pthread_cancel mid-call, and timeline arguments under very long names.
// `edge_program CASE [N]` prints what the program computed; nothing it prints depends on hookscope.
#include <hookscope/observable.hpp>

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csetjmp>
#include <map>
#include <unordered_map>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../fiber.hpp"

#include "../leak_check_in_forked_children.hpp"

// ---- methods ----
namespace shapes {

// A value type that refuses operator, and operator&: as argument, result and object.
struct evil {
  int v = 0;
  template <class T>
  void operator,(T&&) const = delete;
  void operator&() const = delete;
  friend std::ostream& operator<<(std::ostream& os, const evil& e) { return os << "evil " << e.v; }
};

class base {
 public:
  virtual ~base() = default;
  virtual int area_impl(int scale = 1) const& { return 1 * scale; }
  virtual int area_impl(int scale = 1) && { return -1 * scale; }
  virtual evil combine_impl(evil a, const evil& b) const noexcept { return evil{a.v + b.v}; }
  HOOKSCOPE_OBSERVABLE_METHOD_OVERLOAD(base, area_lv, int(int) const&, area_impl, scale = 1);
  HOOKSCOPE_OBSERVABLE_METHOD_OVERLOAD(base, area_rv, int(int) &&, area_impl, scale = 1);
  HOOKSCOPE_OBSERVABLE_METHOD(base, combine, combine_impl, a, b);
};

class square final : public base {
 public:
  int area_impl(int scale) const& override { return 4 * scale; }
  int area_impl(int scale) && override { return -4 * scale; }
  evil combine_impl(evil a, const evil& b) const noexcept override { return evil{a.v * b.v}; }
};

// Neither copied nor moved; methods returning references into it.
class pinned {
 public:
  explicit pinned(int n) : values_(n, 0) {}
  pinned(const pinned&) = delete;
  pinned(pinned&&) = delete;
  pinned& operator=(const pinned&) = delete;
  pinned& operator=(pinned&&) = delete;
  void operator&() = delete;

  int& at_impl(std::size_t i) & { return values_[i]; }
  const int& at_impl(std::size_t i) const& { return values_[i]; }
  pinned& self_impl() & noexcept { return *this; }
  std::vector<int>&& steal_impl() && { return std::move(values_); }
  HOOKSCOPE_OBSERVABLE_METHOD_OVERLOAD(pinned, at, int&(std::size_t) &, at_impl, i);
  HOOKSCOPE_OBSERVABLE_METHOD_OVERLOAD(pinned, cat, const int&(std::size_t) const&, at_impl, i);
  HOOKSCOPE_OBSERVABLE_METHOD(pinned, self, self_impl);
  HOOKSCOPE_OBSERVABLE_METHOD(pinned, steal, steal_impl);
  std::size_t size() const { return values_.size(); }

 private:
  std::vector<int> values_;
};

template <class T>
class box {
 public:
  explicit box(T v) : v_(std::move(v)) {}
  T get_impl(int times = 2) const& { return v_ * times; }
  T get_impl(int times = 3) && { return std::move(v_) * -times; }
  HOOKSCOPE_OBSERVABLE_METHOD_OVERLOAD(box, get_lv, T(int) const&, get_impl, times = 2);
  HOOKSCOPE_OBSERVABLE_METHOD_OVERLOAD(box, get_rv, T(int) &&, get_impl, times = 3);

 private:
  T v_;
};

}  // namespace shapes

namespace {

int methods_case() {
  shapes::square sq;
  const shapes::base& b = sq;
  std::printf("area_lv %d\n", b.area_lv(2));
  std::printf("area_lv %d\n", b.area_lv());
  std::printf("area_rv %d\n", std::move(sq).area_rv(3));
  std::printf("area_rv %d\n", shapes::square{}.area_rv());
  std::printf("area_rv base %d\n", shapes::base{}.area_rv(5));
  const shapes::evil x{6}, y{7};
  std::printf("combine %d\n", b.combine(x, y).v);

  shapes::pinned p(4);
  int& r = p.at(2);
  r = 42;
  std::printf("at same %d value %d\n", &r == &p.at_impl(2), p.at(2));
  const shapes::pinned& cp = p;
  std::printf("cat same %d\n", &cp.cat(2) == &p.at_impl(2));
  std::printf("self same %d\n", __builtin_addressof(p.self()) == __builtin_addressof(p));
  std::vector<int> stolen = std::move(p).steal();
  std::printf("stolen %zu left %zu\n", stolen.size(), p.size());

  shapes::box<int> bi(5);
  std::printf("box %d %d %d\n", bi.get_lv(), bi.get_lv(4), shapes::box<int>(5).get_rv());
  shapes::box<double> bd(1.5);
  std::printf("boxd %.1f %.1f\n", bd.get_lv(), std::move(bd).get_rv(2));
  return 0;
}

}  // namespace

// ---- fibers ----
namespace impl {
int suspending(int n);
int recurse(int n);
int leaf(int n) { return n + 1; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(suspending, impl::suspending, n);
HOOKSCOPE_OBSERVABLE(recurse, impl::recurse, n);
HOOKSCOPE_OBSERVABLE(leaf, impl::leaf, n);

namespace {
thread_local hookscope_test::fiber* running = nullptr;
void resume(hookscope_test::fiber& f) {
  hookscope_test::fiber* was = running;
  running = &f;
  f.resume();
  running = was;
}
}  // namespace

int impl::suspending(int n) {
  hookscope_test::fiber* self = running;
  self->suspend();
  return n * 10;
}
// Recursion whose every level suspends before it recurses and after.
int impl::recurse(int n) {
  hookscope_test::fiber* self = running;
  self->suspend();
  const int below = n == 0 ? ::leaf(0) : ::recurse(n - 1);
  self->suspend();
  return below + 1;
}

namespace {

// Fibers that suspend mid-call and are never resumed: the program ends with their calls in flight.
int never_resumed(int n) {
  std::vector<std::unique_ptr<hookscope_test::fiber>> fibers;
  int done = 0;
  for (int i = 0; i < n; ++i) {
    fibers.push_back(std::make_unique<hookscope_test::fiber>(
        [i, &done](hookscope_test::fiber&) { done += suspending(i) > 0; }, 64 * 1024));
    resume(*fibers.back());
    done += leaf(i) > 0;
  }
  std::printf("done %d\n", done);
  std::fflush(stdout);
  // Their stacks are freed while the calls are still in flight: then more calls, which may take those addresses.
  fibers.clear();
  for (int i = 0; i < n; ++i) done += leaf(i) > 0;
  std::printf("done %d\n", done);
  return 0;
}

// n fibers, each in a call that suspends, resumed in reverse order, twice over.
int many_fibers(int n) {
  std::vector<std::unique_ptr<hookscope_test::fiber>> fibers;
  long sum = 0;
  for (int i = 0; i < n; ++i) {
    fibers.push_back(std::make_unique<hookscope_test::fiber>(
        [i, &sum](hookscope_test::fiber&) {
          sum += suspending(i);
          sum += leaf(i);
          sum += suspending(-i);
        },
        32 * 1024));
  }
  for (auto& f : fibers) resume(*f);
  for (int i = n - 1; i >= 0; --i) resume(*fibers[i]);
  for (int i = 0; i < n; i += 2) resume(*fibers[i]);
  for (int i = 1; i < n; i += 2) resume(*fibers[i]);
  for (auto& f : fibers) {
    if (!f->done()) return 3;
  }
  std::printf("sum %ld\n", sum);
  return 0;
}

// Two fibers recurse n levels each, suspending at every level, resumed alternately (their calls interleave).
int fiber_recursion(int n) {
  int ra = 0, rb = 0;
  hookscope_test::fiber a([&](hookscope_test::fiber&) { ra = recurse(n); });
  hookscope_test::fiber b([&](hookscope_test::fiber&) { rb = recurse(n); });
  while (!a.done() || !b.done()) {
    if (!a.done()) resume(a);
    if (!b.done()) resume(b);
    if (!a.done()) resume(a);
  }
  std::printf("recurse %d %d\n", ra, rb);
  return 0;
}

// fork() while a fiber is suspended mid-call: the child resumes it and ends the call, then the parent does.
int fork_suspended(int) {
  int result = 0;
  hookscope_test::fiber a([&](hookscope_test::fiber&) { result = suspending(7); });
  resume(a);
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    resume(a);
    std::printf("child %d leaf %d\n", result, leaf(1));
    std::fflush(stdout);
    std::exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  resume(a);
  std::printf("parent %d leaf %d status %d\n", result, leaf(2), status);
  return 0;
}

// A call suspended on a thread that then exits; a new thread (maybe on the same stack) resumes it.
int replaced_thread(int n) {
  int total = 0;
  for (int round = 0; round < n; ++round) {
    hookscope_test::fiber a([&](hookscope_test::fiber&) { total += suspending(round); });
    std::thread([&] {
      resume(a);
      total += leaf(round);
    }).join();
    std::thread([&] {
      total += leaf(round);
      resume(a);
    }).join();
    if (!a.done()) return 3;
  }
  std::printf("total %d\n", total);
  return 0;
}

// ---- longjmp and pthread_cancel ----
std::jmp_buf jump;
}  // namespace

namespace impl {
int jumping(int n) {
  if (n % 2 == 0) std::longjmp(jump, n + 1);
  return n;
}
int blocking(int n) {
  for (;;) {
    pthread_testcancel();
    usleep(1000);
  }
  return n;
}
}  // namespace impl
HOOKSCOPE_OBSERVABLE(jumping, impl::jumping, n);
HOOKSCOPE_OBSERVABLE(blocking, impl::blocking, n);

namespace impl {
std::size_t measure_text(const std::string& text) { return text.size(); }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(measure_text, impl::measure_text, text);

namespace {

[[gnu::noinline]] int jump_once(int i) {
  if (int r = setjmp(jump); r != 0) return -r;
  return jumping(i);
}

int longjmp_case(int n) {
  long sum = 0;
  for (int i = 0; i < n; ++i) sum += jump_once(i) + leaf(i);
  std::printf("sum %ld\n", sum);
  return 0;
}

int cancel_case(int n) {
  int total = 0;
  for (int i = 0; i < n; ++i) {
    std::atomic<bool> started{false};
    pthread_t t;
    struct arg_t {
      std::atomic<bool>* started;
      int i;
    } arg{&started, i};
    pthread_create(
        &t, nullptr,
        [](void* p) -> void* {
          auto* a = static_cast<arg_t*>(p);
          (void)leaf(a->i);
          a->started->store(true);
          (void)blocking(a->i);
          return nullptr;
        },
        &arg);
    while (!started.load()) usleep(100);
    usleep(2000);
    pthread_cancel(t);
    void* ret = nullptr;
    pthread_join(t, &ret);
    total += ret == PTHREAD_CANCELED;
    total += leaf(i) > 0;
  }
  std::printf("cancelled %d\n", total);
  return 0;
}

}  // namespace

// ---- a parameter name longer than a timeline event's slot, and many empty arguments ----
namespace impl {
using text_arg = const std::string&;
std::size_t long_name(
    text_arg
        a_parameter_whose_name_alone_is_longer_than_the_one_hundred_and_sixty_bytes_of_a_timeline_slot_so_that_not_even_the_name_fits_anywhere_in_the_event_not_even_once_xxxxxxxxx,
    text_arg b) {
  return a_parameter_whose_name_alone_is_longer_than_the_one_hundred_and_sixty_bytes_of_a_timeline_slot_so_that_not_even_the_name_fits_anywhere_in_the_event_not_even_once_xxxxxxxxx
             .size() +
         b.size();
}
std::size_t empties(text_arg a, text_arg b, text_arg c, text_arg d, text_arg e, text_arg f, text_arg g, text_arg h,
                    text_arg i, text_arg j, text_arg k, text_arg l, text_arg m, text_arg n, text_arg o, text_arg p,
                    text_arg q, text_arg r, text_arg s, text_arg t, text_arg u, text_arg v, text_arg w, text_arg x) {
  return a.size() + b.size() + c.size() + d.size() + e.size() + f.size() + g.size() + h.size() + i.size() + j.size() +
         k.size() + l.size() + m.size() + n.size() + o.size() + p.size() + q.size() + r.size() + s.size() + t.size() +
         u.size() + v.size() + w.size() + x.size();
}
}  // namespace impl
HOOKSCOPE_OBSERVABLE(
    long_name, impl::long_name,
    a_parameter_whose_name_alone_is_longer_than_the_one_hundred_and_sixty_bytes_of_a_timeline_slot_so_that_not_even_the_name_fits_anywhere_in_the_event_not_even_once_xxxxxxxxx,
    b);
HOOKSCOPE_OBSERVABLE(empties, impl::empties, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u, v, w, x);

// ---- a multimap of strings: a range with key_type and mapped_type, captured as a dict, whose keys repeat ----
namespace impl {
std::size_t tally(const std::multimap<std::string, int>& votes) { return votes.size(); }
std::size_t tally_unordered(const std::unordered_multimap<std::string, int>& votes) { return votes.size(); }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(tally, impl::tally, votes);
HOOKSCOPE_OBSERVABLE(tally_unordered, impl::tally_unordered, votes);

namespace {
int multimap_case(int) {
  const std::multimap<std::string, int> votes{{"yes", 1}, {"yes", 2}, {"no", 3}};
  const std::unordered_multimap<std::string, int> unordered{{"yes", 1}, {"yes", 2}};
  std::printf("votes %zu %zu\n", tally(votes), tally_unordered(unordered));
  return 0;
}

int names_case(int) {
  std::size_t total = long_name("x", "y") + long_name(std::string(300, 'z'), "");
  const std::string e;
  total += empties(e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e);
  total += empties(e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, e, "\"\\");
  std::printf("total %zu\n", total);
  return 0;
}

// Calls made while a cancellation request is pending: the functions themselves have no cancellation point, so the
// request acts at the program's pthread_testcancel() after them, whatever hookscope writes during the calls (a trace
// line; a record line longer than the record file's buffer, written at once).
// In a function of its own, which returns before the cancellation acts: the frame that pthread_cancel unwinds holds
// no object whose address is taken, or AddressSanitizer, which does not follow a forced unwind, would leave the
// object's red zones marked and report the thread's exit handlers that reuse that stack (with or without hookscope).
[[gnu::noinline]] bool calls_with_cancellation_pending(int i) {
  pthread_cancel(pthread_self());
  (void)leaf(i);
  (void)measure_text(std::string(300 * 1024, 'c'));
  return true;
}

int cancel_pending_case(int n) {
  int total = 0;
  for (int i = 0; i < n; ++i) {
    struct arg_t {
      int i;
      bool reached = false;
    } arg{i};
    pthread_t t;
    pthread_create(
        &t, nullptr,
        [](void* p) -> void* {
          auto* a = static_cast<arg_t*>(p);
          a->reached = calls_with_cancellation_pending(a->i);
          pthread_testcancel();
          return nullptr;
        },
        &arg);
    void* ret = nullptr;
    pthread_join(t, &ret);
    total += ret == PTHREAD_CANCELED && arg.reached;
  }
  std::printf("cancelled after the calls %d\n", total);
  return 0;
}

struct named_case {
  const char* name;
  int (*run)(int);
};
constexpr named_case cases[] = {
    {"methods", [](int) { return methods_case(); }},
    {"never_resumed", never_resumed},
    {"many_fibers", many_fibers},
    {"fiber_recursion", fiber_recursion},
    {"fork_suspended", fork_suspended},
    {"replaced_thread", replaced_thread},
    {"longjmp", longjmp_case},
    {"cancel", cancel_case},
    {"cancel_pending", cancel_pending_case},
    {"names", names_case},
    {"multimap", multimap_case},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2) {
    const int n = argc >= 3 ? std::atoi(argv[2]) : 1;
    for (const named_case& c : cases) {
      if (std::strcmp(argv[1], c.name) == 0) return c.run(n);
    }
  }
  std::fprintf(stderr, "usage: edge_program CASE [N]\n");
  return 2;
}
