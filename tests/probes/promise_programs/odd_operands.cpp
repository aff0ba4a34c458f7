// Annotations of odd parameter and return types, recursion and a thread ended by pthread_exit inside a probed call,
// for tests/probes/test_probe_promises.py: gdb reads each probe's operands (docs/probes.md, "Operands").
#include "hookscope/observable.hpp"
#include <cstdio>
#include <cstddef>
#include <memory>
#include <string>
#include <pthread.h>
struct incomplete;
__extension__ typedef __int128 i128;
struct empty {};
struct alignas(64) wide_aligned {
  double d[8];
};
enum class tiny : bool { no, yes };
enum class huge : i128 { big = (static_cast<i128>(1) << 100) + 7 };
enum plain_enum { pa = -5 };
struct S {
  int m;
  int f(int) const { return m; }
};
namespace impl {
[[gnu::noinline]] int by_incomplete(incomplete& r) {
  (void)r;
  return 1;
}
[[gnu::noinline]] int by_array(const int (&a)[3]) { return a[0] + a[1] + a[2]; }
[[gnu::noinline]] int by_i128(i128 v) { return static_cast<int>(v >> 64); }
[[gnu::noinline]] int by_ld(long double v) { return static_cast<int>(v); }
[[gnu::noinline]] int by_char8(char8_t c, char16_t c16, char32_t c32, wchar_t w) { return c + c16 + c32 + w; }
[[gnu::noinline]] int by_tiny(tiny t) { return t == tiny::yes; }
[[gnu::noinline]] int by_huge(huge h) { return static_cast<int>(static_cast<i128>(h) & 0xff); }
[[gnu::noinline]] huge ret_huge(int x) { return static_cast<huge>(static_cast<i128>(x) << 70); }
[[gnu::noinline]] int by_fnptr(int (*f)(int), int x) { return f(x); }
[[gnu::noinline]] int by_memptr(int S::*p, int (S::*q)(int) const, S s) { return s.*p + (s.*q)(0); }
[[gnu::noinline]] int by_null(std::nullptr_t) { return 1; }
[[gnu::noinline]] int by_empty(empty, wide_aligned w) { return static_cast<int>(w.d[0]); }
[[gnu::noinline]] int by_move(std::unique_ptr<int> p, std::string&& s) { return *p + static_cast<int>(s.size()); }
[[gnu::noinline]] int& ret_ref(int& x) { return x; }
[[gnu::noinline]] const std::string& ret_cref(const std::string& s) { return s; }
[[gnu::noinline]] int&& ret_rref(int& x) { return static_cast<int&&>(x); }
[[gnu::noinline]] wide_aligned ret_big(int x) {
  wide_aligned w{};
  w.d[0] = x;
  return w;
}
[[gnu::noinline]] long double ret_ld(int x) { return x; }
[[gnu::noinline]] int nx(int x) noexcept { return x; }
[[gnu::noinline]] int by_plain_enum(plain_enum e) { return e; }
[[gnu::noinline]] int twelve(int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9, int a10, int a11,
                             int a12) {
  return a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11 + a12;
}
int twice(int x) { return 2 * x; }
int rec(int n);
[[gnu::noinline]] int quit(int x) {
  if (x > 0) pthread_exit(nullptr);
  return x;
}
}  // namespace impl
HOOKSCOPE_OBSERVABLE(by_incomplete, impl::by_incomplete, r);
HOOKSCOPE_OBSERVABLE(by_array, impl::by_array, a);
HOOKSCOPE_OBSERVABLE(by_i128, impl::by_i128, v);
HOOKSCOPE_OBSERVABLE(by_ld, impl::by_ld, v);
HOOKSCOPE_OBSERVABLE(by_char8, impl::by_char8, c, c16, c32, w);
HOOKSCOPE_OBSERVABLE(by_tiny, impl::by_tiny, t);
HOOKSCOPE_OBSERVABLE(by_huge, impl::by_huge, h);
HOOKSCOPE_OBSERVABLE(ret_huge, impl::ret_huge, x);
HOOKSCOPE_OBSERVABLE(by_fnptr, impl::by_fnptr, f, x);
HOOKSCOPE_OBSERVABLE(by_memptr, impl::by_memptr, p, q, s);
HOOKSCOPE_OBSERVABLE(by_null, impl::by_null, n);
HOOKSCOPE_OBSERVABLE(by_empty, impl::by_empty, e, w);
HOOKSCOPE_OBSERVABLE(by_move, impl::by_move, p, s);
HOOKSCOPE_OBSERVABLE(ret_ref, impl::ret_ref, x);
HOOKSCOPE_OBSERVABLE(ret_cref, impl::ret_cref, s);
HOOKSCOPE_OBSERVABLE(ret_rref, impl::ret_rref, x);
HOOKSCOPE_OBSERVABLE(ret_big, impl::ret_big, x);
HOOKSCOPE_OBSERVABLE(ret_ld, impl::ret_ld, x);
HOOKSCOPE_OBSERVABLE(nx, impl::nx, x);
HOOKSCOPE_OBSERVABLE(by_plain_enum, impl::by_plain_enum, e);
HOOKSCOPE_OBSERVABLE(twelve, impl::twelve, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12);
HOOKSCOPE_OBSERVABLE(rec, impl::rec, n);
HOOKSCOPE_OBSERVABLE(quit, impl::quit, x);
namespace impl {
[[gnu::noinline]] int rec(int n) { return n == 0 ? 0 : 1 + ::rec(n - 1); }
}  // namespace impl
struct incomplete {};
int main(int argc, char**) {
  incomplete inc;
  int arr[3] = {1, 2, 3};
  int r = 0;
  r += by_incomplete(inc) + by_array(arr) + by_i128(static_cast<i128>(3) << 64);
  r += by_ld(2.5L) + by_char8(u8'a', u'b', U'c', L'd') + by_tiny(tiny::yes) + by_huge(huge::big);
  r += static_cast<int>(static_cast<i128>(ret_huge(argc)) >> 70);
  r += by_fnptr(&impl::twice, 4) + by_memptr(&S::m, &S::f, S{5}) + by_null(nullptr) +
       by_empty(empty{}, wide_aligned{{9}});
  r += by_move(std::make_unique<int>(6), std::string("abc"));
  int x = 11;
  r += ret_ref(x);
  std::string s = "hello";
  r += static_cast<int>(ret_cref(s).size());
  r += ret_rref(x);
  r += static_cast<int>(ret_big(12).d[0]) + static_cast<int>(ret_ld(13)) + nx(14) + by_plain_enum(pa);
  r += twelve(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
  pthread_t t;
  pthread_create(
      &t, nullptr,
      [](void*) -> void* {
        (void)quit(1);
        return nullptr;
      },
      nullptr);
  pthread_join(t, nullptr);
  r += rec(3) + quit(0);
  std::printf("%d\n", r);
}
