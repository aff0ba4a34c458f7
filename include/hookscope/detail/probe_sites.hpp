// hookscope/detail/probe_sites.hpp — the USDT probes of an annotation (HOOKSCOPE_USDT=1 with hooks enabled): what
// the macros add to a site so that bpftrace and gdb attach to it from outside the process, through <sys/sdt.h>.
//
// An annotation `name` has two probes of provider `hookscope`, `name__entry` and `name__return` (docs/probes.md has
// the layout), and one semaphore each: tools raise a probe's semaphore while they are attached, and the call
// operator reads both as one 32-bit word beside its two observers' counters, so that nobody listening costs one
// load more. Operands are prepared only behind that test (detail/probed_call.hpp), and fired from two cold
// functions of the site's own.
#pragma once

#include "hookscope/detail/config.hpp"

#if HOOKSCOPE_DETAIL_PROBES

#if !defined(__x86_64__)
#error "hookscope: USDT probes (HOOKSCOPE_USDT=1) are implemented for x86-64 only; build with -Dusdt=disabled"
#endif
// <sys/sdt.h> names a probe's semaphore `provider_name_semaphore` in its note only when _SDT_HAS_SEMAPHORES is
// defined as it is included, as a `dtrace -h` header does; one included before without it would leave our probes
// without semaphores, which nothing would ever raise.
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
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// What a probe carries for a value of type T (references and cv removed): integers and enums up to 64 bits by
/// value, widened to 32 bits at least with their sign kept (gdb and bpftrace read every register width then);
/// pointers by value; everything else (floating-point values, classes, 128-bit integers and enums) by the address of
/// `value`, since gdb 13 and bpftrace 0.17 cannot read the `8f@` operands <sys/sdt.h> writes for a double.
template <class T>
[[gnu::always_inline]] inline auto probe_operand(const T& value) noexcept {
  if constexpr (std::is_enum_v<T> && sizeof(T) <= 8) {
    return probe_operand(static_cast<std::underlying_type_t<T>>(value));  // by value: no address of the temporary
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

/// The operands of an entry probe, before they are cut or padded to its 11 after the name: the object's address first
/// for a member function (Method), then one per argument.
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

/// The entry operands of the arguments at `addresses`, objects of types `A...` (the addresses a call context keeps).
template <bool Method, class... A, std::size_t... I>
[[gnu::always_inline]] inline entry_operands_t<Method, A...> entry_operands_at(
    void* object, [[maybe_unused]] const void* const* addresses, std::index_sequence<I...>) noexcept {
  return entry_operands<Method>(object, *static_cast<const std::remove_reference_t<A>*>(addresses[I])...);
}

/// The return probe's operand of the result at `result`, of type `R`: 0 for `void`, or when there is no result (the
/// call threw).
template <class R>
[[gnu::always_inline]] inline result_operand_t<R> result_operand_at([[maybe_unused]] const void* result) noexcept {
  if constexpr (std::is_void_v<R>) {
    return 0;
  } else {
    if (result == nullptr) return result_operand_t<R>{};
    return probe_operand(*static_cast<const std::remove_reference_t<R>*>(result));
  }
}

/// Operand `I` of a probe: the tuple's, or 0 past its end (a function of fewer parameters, or arguments left to their
/// defaults).
template <std::size_t I, class Operands>
[[gnu::always_inline]] inline auto operand_at(const Operands& operands) noexcept {
  if constexpr (I < std::tuple_size_v<Operands>) {
    return std::get<I>(operands);
  } else {
    return 0;
  }
}

/// Whether an annotation's name is ASCII: Clang's assembler takes no other byte in the symbols <sys/sdt.h> names
/// after it (GNU as does).
constexpr bool ascii_name(std::string_view name) noexcept {
  for (const char c : name) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}
#if defined(__clang__)
#define HOOKSCOPE_DETAIL_CHECK_PROBE_NAME(name)                                                                       \
  static_assert(::hookscope::detail::ascii_name(#name),                                                               \
                "hookscope: with USDT probes, an annotation's name must be ASCII under Clang (its assembler refuses " \
                "other bytes in the probes' symbols): rename it, build with GCC, or with -Dusdt=disabled")
#else
#define HOOKSCOPE_DETAIL_CHECK_PROBE_NAME(name) static_assert(true)
#endif

/// The site of an annotation without probes: a type written by hand (default_site).
struct no_probes {
  static constexpr bool exist = false;
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

// The entry probe's 12 operands, <sys/sdt.h>'s most: the registry name, then the first 11 operands of the tuple `ops`,
// 0 past its end. Every entry probe of a name has them all, whatever its function's arity: annotations named alike
// share the probe, and bpftrace refuses a script reading an operand that one of the probe's sites lacks.
#define HOOKSCOPE_DETAIL_GET(i, ops) ::hookscope::detail::operand_at<i>(ops)
#define HOOKSCOPE_DETAIL_STAP_ENTRY(probe, name, ops)                                                    \
  STAP_PROBE12(hookscope, probe, name, HOOKSCOPE_DETAIL_GET(0, ops), HOOKSCOPE_DETAIL_GET(1, ops),       \
               HOOKSCOPE_DETAIL_GET(2, ops), HOOKSCOPE_DETAIL_GET(3, ops), HOOKSCOPE_DETAIL_GET(4, ops), \
               HOOKSCOPE_DETAIL_GET(5, ops), HOOKSCOPE_DETAIL_GET(6, ops), HOOKSCOPE_DETAIL_GET(7, ops), \
               HOOKSCOPE_DETAIL_GET(8, ops), HOOKSCOPE_DETAIL_GET(9, ops), HOOKSCOPE_DETAIL_GET(10, ops))

// The semaphores of the probes `name__entry` and `name__return`, under the names <sys/sdt.h> gives them in its notes,
// with `hookscope_name__probes` naming both as one 32-bit word. They are defined and read in assembly: every
// annotation of that name (in any namespace or class) shares them, as it shares its probes' names; `.ifndef` defines
// them once per translation unit, weak and hidden, so once per module (the program, each shared library), in section
// `.probes`. (A C++ declaration with an assembler name would do for the reads, but GCC 12 ignores the name in a
// function of a template, and every annotation in a class template is one.)
#define HOOKSCOPE_DETAIL_SEMAPHORE(name, probe) "hookscope_" #name "__" probe "_semaphore"
// <sys/sdt.h> writes each operand's location in the compiler's assembler syntax, and gdb and bpftrace read AT&T
// only: with -masm=intel the notes would be unreadable, so the build stops there, at assembly, with this message.
#define HOOKSCOPE_DETAIL_ATT_ONLY                                                                                   \
  "{|.error \"hookscope: USDT probes need the AT&T assembler syntax (gdb and bpftrace read <sys/sdt.h>'s notes in " \
  "it): build without -masm=intel, or with -Dusdt=disabled (HOOKSCOPE_USDT=0)\"}\n"
#define HOOKSCOPE_DETAIL_DEFINE_SEMAPHORES(name) \
  HOOKSCOPE_DETAIL_ATT_ONLY                      \
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
/// The probes of the annotation `name` (a struct `probes` in its site): `semaphores()` reads both semaphores as one
/// word, the entry probe's in the low half (x86-64 is little-endian): nonzero while a tool is attached to either;
/// `enter<Method, A...>` fires `name__entry` with the operands of the arguments at the addresses it is given (objects
/// of types `A...`; the object's address first when `Method`), `leave<R>` fires `name__return` with the "threw" flag
/// and the operand of the result of type `R` at the address it is given (0 for `void` or no result): taking addresses,
/// both have one type for every signature (detail::probe_functions). The caller fires each only while its half of the
/// word is raised, so no operand is read for a probe nobody is attached to. `enter` and `leave` define the semaphores:
/// every call site that reads them takes their addresses (detail::probe_functions_of), and the one-instruction read
/// keeps GCC's estimate of the caller's size (which counts an asm statement's lines) where it was. The local variables
/// named after the semaphores are what <sys/sdt.h> marks as used; its notes name the symbols defined above. Hidden, as
/// the semaphores are: a shared library's call site reads its own module's semaphores, so it must fire its own module's
/// probes, not the program's copies of `enter` and `leave` that default visibility would interpose.
#define HOOKSCOPE_DETAIL_SITE_PROBES(name)                                                                             \
  struct [[gnu::visibility("hidden")]] probes {                                                                        \
    HOOKSCOPE_DETAIL_CHECK_PROBE_NAME(name);                                                                           \
    [[maybe_unused]] static constexpr bool exist = true;                                                               \
    [[gnu::always_inline]] static unsigned semaphores() noexcept {                                                     \
      unsigned hookscope_raised; /* volatile: a fresh load at every call, never hoisted out of a loop */               \
      __asm__ __volatile__("{movl hookscope_" #name "__probes(%%rip), %0|mov %0, DWORD PTR hookscope_" #name           \
                           "__probes[rip]}"                                                                            \
                           : "=r"(hookscope_raised));                                                                  \
      return hookscope_raised;                                                                                         \
    }                                                                                                                  \
    template <bool Method, class... A>                                                                                 \
    [[gnu::noinline, gnu::cold]] static void enter(const char* hookscope_name,                                         \
                                                   [[maybe_unused]] void* hookscope_object,                            \
                                                   [[maybe_unused]] const void* const* hookscope_addresses) noexcept { \
      __asm__ __volatile__(HOOKSCOPE_DETAIL_DEFINE_SEMAPHORES(name)::);                                                \
      unsigned short hookscope_##name##__entry_semaphore = 0;                                                          \
      [[maybe_unused]] const auto hookscope_operands = ::hookscope::detail::entry_operands_at<Method, A...>(           \
          hookscope_object, hookscope_addresses, ::std::index_sequence_for<A...>{});                                   \
      HOOKSCOPE_DETAIL_STAP_ENTRY(name##__entry, hookscope_name, hookscope_operands);                                  \
    }                                                                                                                  \
    template <class R>                                                                                                 \
    [[gnu::noinline, gnu::cold]] static void leave(const char* hookscope_name, int hookscope_threw,                    \
                                                   [[maybe_unused]] const void* hookscope_result) noexcept {           \
      __asm__ __volatile__(HOOKSCOPE_DETAIL_DEFINE_SEMAPHORES(name)::);                                                \
      unsigned short hookscope_##name##__return_semaphore = 0;                                                         \
      [[maybe_unused]] const auto hookscope_operand = ::hookscope::detail::result_operand_at<R>(hookscope_result);     \
      STAP_PROBE3(hookscope, name##__return, hookscope_name, hookscope_threw, hookscope_operand);                      \
    }                                                                                                                  \
  }

#else
#define HOOKSCOPE_DETAIL_SITE_PROBES(name) static_assert(true)
#endif
