// hookscope/detail/probe_sites.hpp — the USDT probes of an annotation (HOOKSCOPE_USDT=1 with hooks enabled): what
// the macros add to a site so that bpftrace, perf and gdb attach to it from outside the process, through <sys/sdt.h>.
//
// An annotation `name` has two probes of provider `hookscope`, `name__entry` and `name__return` (docs/probes.md has
// the layout), and one semaphore each: tools raise a probe's semaphore while they are attached, and the call
// operator reads both as one 32-bit word beside its two observers' counters, so that nobody listening costs one
// load more. Operands are prepared only behind that test (detail/probed_call.hpp), and fired from two cold
// functions of the site's own.
#pragma once

#include "hookscope/config.hpp"

#if HOOKSCOPE_DETAIL_PROBES

// <sys/sdt.h> names a probe's semaphore `provider_name_semaphore` in its note only when _SDT_HAS_SEMAPHORES is
// defined as it is included, as a `dtrace -h` header does; one included before without it would leave our probes
// without semaphores, which nothing would ever raise.
#if !defined(__x86_64__)
#error "hookscope: USDT probes (HOOKSCOPE_USDT=1) are implemented for x86-64 only; build with -Dusdt=disabled"
#endif
#if defined(_SYS_SDT_H) && !defined(_SDT_HAS_SEMAPHORES)
#error \
    "hookscope: <sys/sdt.h> was included before hookscope without _SDT_HAS_SEMAPHORES; hookscope's probes need \
semaphores: include hookscope's headers first, or define _SDT_HAS_SEMAPHORES 1 before including <sys/sdt.h>"
#endif
#ifndef _SDT_HAS_SEMAPHORES
#define _SDT_HAS_SEMAPHORES 1
#endif
#include <sys/sdt.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// <sys/sdt.h>'s limit of operands per probe, the registry name included.
inline constexpr std::size_t max_probe_operands = 12;

/// What a probe carries for a value of type T (references and cv removed): integers and enums by value, widened to
/// 32 bits at least with their sign kept (gdb and bpftrace read every register width then); pointers by value;
/// everything else (floating-point values, classes, 128-bit integers) by address, since gdb 13 and bpftrace 0.17
/// cannot read the `8f@` operands <sys/sdt.h> writes for a double.
template <class T>
[[gnu::always_inline]] inline auto probe_operand(const T& value) noexcept {
  if constexpr (std::is_enum_v<T>) {
    return probe_operand(static_cast<std::underlying_type_t<T>>(value));
  } else if constexpr (std::is_integral_v<T> && sizeof(T) <= 8) {
    if constexpr (std::is_signed_v<T>) {
      return static_cast<std::conditional_t<(sizeof(T) <= 4), int, long long>>(value);
    } else {
      return static_cast<std::conditional_t<(sizeof(T) <= 4), unsigned, unsigned long long>>(value);
    }
  } else if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<std::uintptr_t>(value);
  } else if constexpr (std::is_null_pointer_v<T>) {
    return std::uintptr_t{0};
  } else {
    return reinterpret_cast<std::uintptr_t>(std::addressof(value));
  }
}

/// What a probe carries for a value of type T (any cv and reference), and for the result of a `void` function (0).
template <class T>
using operand_t = decltype(probe_operand(std::declval<const std::remove_cvref_t<T>&>()));
template <class R>
struct result_operand {
  using type = operand_t<R>;
};
template <>
struct result_operand<void> {
  using type = int;
};
template <class R>
using result_operand_t = typename result_operand<R>::type;

/// The operands of an entry probe, before they are cut or padded to the count the annotation's names give: the
/// object's address first for a member function (Method), then one per argument.
template <bool Method, class... A>
using entry_operands_t =
    std::conditional_t<Method, std::tuple<std::uintptr_t, operand_t<A>...>, std::tuple<operand_t<A>...>>;

template <bool Method, class... A>
[[gnu::always_inline]] inline entry_operands_t<Method, A...> entry_operands([[maybe_unused]] void* object,
                                                                            const A&... args) noexcept {
  if constexpr (Method) {
    return {reinterpret_cast<std::uintptr_t>(object), probe_operand(args)...};
  } else {
    return {probe_operand(args)...};
  }
}

/// Operand `I` of a probe: the tuple's, or 0 past its end (arguments left to their defaults, or a parameter list
/// whose defaults hold commas).
template <std::size_t I, class Operands>
[[gnu::always_inline]] inline auto operand_at(const Operands& operands) noexcept {
  if constexpr (I < std::tuple_size_v<Operands>) {
    return std::get<I>(operands);
  } else {
    return 0;
  }
}

/// The site of an annotation without probes: a type written by hand (default_site).
struct no_probes {
  static constexpr bool exist = false;
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

// How many operands follow the registry name in the entry probe of an annotation whose parameter names are `...`
// (a member function's passes `this` first): one per macro argument, at most 11. A default whose comma is outside
// parentheses (`b = std::pair<int, int>{1, 2}`) counts twice: its probe then ends with operands of value 0.
#define HOOKSCOPE_DETAIL_PROBE_OPERANDS(...)                                                                          \
  HOOKSCOPE_DETAIL_PROBE_OPERANDS_PICK(                                                                               \
      __VA_ARGS__ __VA_OPT__(, ) 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11,  \
      11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, \
      11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, \
      11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, \
      11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define HOOKSCOPE_DETAIL_PROBE_OPERANDS_PICK(                                                                          \
    _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24,     \
    _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, _35, _36, _37, _38, _39, _40, _41, _42, _43, _44, _45, _46, _47, \
    _48, _49, _50, _51, _52, _53, _54, _55, _56, _57, _58, _59, _60, _61, _62, _63, _64, _65, _66, _67, _68, _69, _70, \
    _71, _72, _73, _74, _75, _76, _77, _78, _79, _80, _81, _82, _83, _84, _85, _86, _87, _88, _89, _90, _91, _92, _93, \
    _94, _95, _96, _97, _98, _99, _100, _101, _102, _103, _104, _105, _106, _107, _108, _109, _110, _111, _112, _113,  \
    _114, _115, _116, _117, _118, _119, _120, _121, _122, _123, _124, _125, _126, _127, count, ...)                    \
  count

// STAP_PROBE<n+1>(hookscope, probe, name, the n operands of the tuple `ops`).
#define HOOKSCOPE_DETAIL_GET(i, ops) ::hookscope::detail::operand_at<i>(ops)
#define HOOKSCOPE_DETAIL_STAP_0(probe, name, ops) STAP_PROBE1(hookscope, probe, name)
#define HOOKSCOPE_DETAIL_STAP_1(probe, name, ops) STAP_PROBE2(hookscope, probe, name, HOOKSCOPE_DETAIL_GET(0, ops))
#define HOOKSCOPE_DETAIL_STAP_2(probe, name, ops) \
  STAP_PROBE3(hookscope, probe, name, HOOKSCOPE_DETAIL_GET(0, ops), HOOKSCOPE_DETAIL_GET(1, ops))
#define HOOKSCOPE_DETAIL_STAP_3(probe, name, ops)                                                 \
  STAP_PROBE4(hookscope, probe, name, HOOKSCOPE_DETAIL_GET(0, ops), HOOKSCOPE_DETAIL_GET(1, ops), \
              HOOKSCOPE_DETAIL_GET(2, ops))
#define HOOKSCOPE_DETAIL_STAP_4(probe, name, ops)                                                 \
  STAP_PROBE5(hookscope, probe, name, HOOKSCOPE_DETAIL_GET(0, ops), HOOKSCOPE_DETAIL_GET(1, ops), \
              HOOKSCOPE_DETAIL_GET(2, ops), HOOKSCOPE_DETAIL_GET(3, ops))
#define HOOKSCOPE_DETAIL_STAP_5(probe, name, ops)                                                 \
  STAP_PROBE6(hookscope, probe, name, HOOKSCOPE_DETAIL_GET(0, ops), HOOKSCOPE_DETAIL_GET(1, ops), \
              HOOKSCOPE_DETAIL_GET(2, ops), HOOKSCOPE_DETAIL_GET(3, ops), HOOKSCOPE_DETAIL_GET(4, ops))
#define HOOKSCOPE_DETAIL_STAP_6(probe, name, ops)                                                       \
  STAP_PROBE7(hookscope, probe, name, HOOKSCOPE_DETAIL_GET(0, ops), HOOKSCOPE_DETAIL_GET(1, ops),       \
              HOOKSCOPE_DETAIL_GET(2, ops), HOOKSCOPE_DETAIL_GET(3, ops), HOOKSCOPE_DETAIL_GET(4, ops), \
              HOOKSCOPE_DETAIL_GET(5, ops))
#define HOOKSCOPE_DETAIL_STAP_7(probe, name, ops)                                                       \
  STAP_PROBE8(hookscope, probe, name, HOOKSCOPE_DETAIL_GET(0, ops), HOOKSCOPE_DETAIL_GET(1, ops),       \
              HOOKSCOPE_DETAIL_GET(2, ops), HOOKSCOPE_DETAIL_GET(3, ops), HOOKSCOPE_DETAIL_GET(4, ops), \
              HOOKSCOPE_DETAIL_GET(5, ops), HOOKSCOPE_DETAIL_GET(6, ops))
#define HOOKSCOPE_DETAIL_STAP_8(probe, name, ops)                                                       \
  STAP_PROBE9(hookscope, probe, name, HOOKSCOPE_DETAIL_GET(0, ops), HOOKSCOPE_DETAIL_GET(1, ops),       \
              HOOKSCOPE_DETAIL_GET(2, ops), HOOKSCOPE_DETAIL_GET(3, ops), HOOKSCOPE_DETAIL_GET(4, ops), \
              HOOKSCOPE_DETAIL_GET(5, ops), HOOKSCOPE_DETAIL_GET(6, ops), HOOKSCOPE_DETAIL_GET(7, ops))
#define HOOKSCOPE_DETAIL_STAP_9(probe, name, ops)                                                        \
  STAP_PROBE10(hookscope, probe, name, HOOKSCOPE_DETAIL_GET(0, ops), HOOKSCOPE_DETAIL_GET(1, ops),       \
               HOOKSCOPE_DETAIL_GET(2, ops), HOOKSCOPE_DETAIL_GET(3, ops), HOOKSCOPE_DETAIL_GET(4, ops), \
               HOOKSCOPE_DETAIL_GET(5, ops), HOOKSCOPE_DETAIL_GET(6, ops), HOOKSCOPE_DETAIL_GET(7, ops), \
               HOOKSCOPE_DETAIL_GET(8, ops))
#define HOOKSCOPE_DETAIL_STAP_10(probe, name, ops)                                                       \
  STAP_PROBE11(hookscope, probe, name, HOOKSCOPE_DETAIL_GET(0, ops), HOOKSCOPE_DETAIL_GET(1, ops),       \
               HOOKSCOPE_DETAIL_GET(2, ops), HOOKSCOPE_DETAIL_GET(3, ops), HOOKSCOPE_DETAIL_GET(4, ops), \
               HOOKSCOPE_DETAIL_GET(5, ops), HOOKSCOPE_DETAIL_GET(6, ops), HOOKSCOPE_DETAIL_GET(7, ops), \
               HOOKSCOPE_DETAIL_GET(8, ops), HOOKSCOPE_DETAIL_GET(9, ops))
#define HOOKSCOPE_DETAIL_STAP_11(probe, name, ops)                                                       \
  STAP_PROBE12(hookscope, probe, name, HOOKSCOPE_DETAIL_GET(0, ops), HOOKSCOPE_DETAIL_GET(1, ops),       \
               HOOKSCOPE_DETAIL_GET(2, ops), HOOKSCOPE_DETAIL_GET(3, ops), HOOKSCOPE_DETAIL_GET(4, ops), \
               HOOKSCOPE_DETAIL_GET(5, ops), HOOKSCOPE_DETAIL_GET(6, ops), HOOKSCOPE_DETAIL_GET(7, ops), \
               HOOKSCOPE_DETAIL_GET(8, ops), HOOKSCOPE_DETAIL_GET(9, ops), HOOKSCOPE_DETAIL_GET(10, ops))
#define HOOKSCOPE_DETAIL_STAP_N(count, probe, name, ops) HOOKSCOPE_DETAIL_STAP_N_I(count, probe, name, ops)
#define HOOKSCOPE_DETAIL_STAP_N_I(count, probe, name, ops) HOOKSCOPE_DETAIL_STAP_##count(probe, name, ops)

// The semaphores of the probes `name__entry` and `name__return`, under the names <sys/sdt.h> gives them in its notes,
// with `hookscope_name__probes` naming both as one 32-bit word. They are defined and read in assembly: every
// annotation of that name (in any namespace or class) shares them, as it shares its probes' names; `.ifndef` defines
// them once per translation unit, weak and hidden, so once per module (the program, each shared library), in section
// `.probes`. (A C++ declaration with an assembler name would do for the reads, but GCC 12 ignores the name in a
// function of a template, and every annotation in a class template is one.)
#define HOOKSCOPE_DETAIL_SEMAPHORE(name, probe) "hookscope_" #name "__" probe "_semaphore"
#define HOOKSCOPE_DETAIL_DEFINE_SEMAPHORES(name) \
  ".ifndef hookscope_" #name "__probes\n"                                           \
  ".pushsection .probes,\"awG\",@progbits,hookscope_" #name "__probes,comdat\n"      \
  ".balign 4\n"                                                                     \
  ".weak hookscope_" #name "__probes\n.hidden hookscope_" #name "__probes\n"         \
  ".weak " HOOKSCOPE_DETAIL_SEMAPHORE(name, "entry") "\n"                             \
  ".hidden " HOOKSCOPE_DETAIL_SEMAPHORE(name, "entry") "\n"                           \
  ".weak " HOOKSCOPE_DETAIL_SEMAPHORE(name, "return") "\n"                            \
  ".hidden " HOOKSCOPE_DETAIL_SEMAPHORE(name, "return") "\n"                          \
  "hookscope_" #name "__probes:\n"                                                  \
  HOOKSCOPE_DETAIL_SEMAPHORE(name, "entry") ": .2byte 0\n"                            \
  HOOKSCOPE_DETAIL_SEMAPHORE(name, "return") ": .2byte 0\n"                           \
  ".size hookscope_" #name "__probes, 4\n"                                          \
  ".popsection\n"                                                                   \
  ".endif\n"
/// The probes of the annotation `name` whose entry probe carries `count` operands after its registry name (a struct
/// `probes` in its site): `semaphores()` reads both semaphores as one word, the entry probe's in the low half
/// (x86-64 is little-endian): nonzero while a tool is attached to either; `enter` fires `name__entry`
/// with a tuple of operands (detail::entry_operands), `leave` fires `name__return` with the "threw" flag and the
/// result's operand. The caller fires each only while its half of the word is raised, so no operand is prepared for
/// a probe nobody is attached to. `enter` and `leave` define the semaphores: every call site that reads them takes
/// their addresses (detail::probe_functions_of), and the one-instruction read keeps GCC's estimate of the caller's
/// size (which counts an asm statement's lines) where it was. The local variables named after the semaphores are
/// what <sys/sdt.h> marks as used; its notes name the symbols defined above.
#define HOOKSCOPE_DETAIL_SITE_PROBES(name, count)                                                                  \
  struct probes {                                                                                                  \
    [[maybe_unused]] static constexpr bool exist = true;                                                           \
    [[maybe_unused]] static constexpr ::std::size_t operands = count;                                              \
    [[gnu::always_inline]] static unsigned semaphores() noexcept {                                                 \
      unsigned hookscope_raised; /* volatile: a fresh load at every call, never hoisted out of a loop */           \
      __asm__ __volatile__("movl hookscope_" #name "__probes(%%rip), %0" : "=r"(hookscope_raised));                \
      return hookscope_raised;                                                                                     \
    }                                                                                                              \
    template <class Operands>                                                                                      \
    [[gnu::noinline, gnu::cold]] static void enter(const char* hookscope_name,                                     \
                                                   [[maybe_unused]] const Operands& hookscope_operands) noexcept { \
      __asm__(HOOKSCOPE_DETAIL_DEFINE_SEMAPHORES(name));                                                           \
      unsigned short hookscope_##name##__entry_semaphore = 0;                                                      \
      HOOKSCOPE_DETAIL_STAP_N(count, name##__entry, hookscope_name, hookscope_operands);                           \
    }                                                                                                              \
    template <class Result>                                                                                        \
    [[gnu::noinline, gnu::cold]] static void leave(const char* hookscope_name, int hookscope_threw,                \
                                                   Result hookscope_result) noexcept {                             \
      __asm__(HOOKSCOPE_DETAIL_DEFINE_SEMAPHORES(name));                                                           \
      unsigned short hookscope_##name##__return_semaphore = 0;                                                     \
      STAP_PROBE3(hookscope, name##__return, hookscope_name, hookscope_threw, hookscope_result);                   \
    }                                                                                                              \
  }

#else
#define HOOKSCOPE_DETAIL_PROBE_OPERANDS(...) 0
#define HOOKSCOPE_DETAIL_SITE_PROBES(name, count) static_assert(true)
#endif
