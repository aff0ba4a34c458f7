// hookscope/detail/config.hpp — the mode macros every hookscope header is written with: HOOKSCOPE_ENABLED and
// HOOKSCOPE_USDT (defaulted and checked here, documented in hookscope/config.hpp), whether annotations are probe
// sites, the ABI namespace the mode selects and the macros that open and close it, and the ThreadSanitizer switch.
// Below every other header (it reads only the generated hookscope/build_config.hpp, the installed library's mode),
// so that any internal header includes it.
#pragma once

// The master switch, HOOKSCOPE_ENABLED, documented in config.hpp: the build's, else the installed library's, else 1.
#if !defined(HOOKSCOPE_ENABLED) || !defined(HOOKSCOPE_USDT)
#if __has_include("hookscope/build_config.hpp")
#include "hookscope/build_config.hpp"
#endif
#endif
#ifndef HOOKSCOPE_ENABLED
#ifdef HOOKSCOPE_BUILD_ENABLED
#define HOOKSCOPE_ENABLED HOOKSCOPE_BUILD_ENABLED
#else
#define HOOKSCOPE_ENABLED 1
#endif
#endif

#if HOOKSCOPE_ENABLED != 0 && HOOKSCOPE_ENABLED != 1
#error "hookscope: HOOKSCOPE_ENABLED must be 0 or 1 (set it with the Meson option -Dhooks=true|false)"
#endif

// The probes' switch, HOOKSCOPE_USDT, documented in config.hpp: the build's, else the installed library's, else 0.
#ifndef HOOKSCOPE_USDT
#ifdef HOOKSCOPE_BUILD_USDT
#define HOOKSCOPE_USDT HOOKSCOPE_BUILD_USDT
#else
#define HOOKSCOPE_USDT 0
#endif
#endif

#if HOOKSCOPE_USDT != 0 && HOOKSCOPE_USDT != 1
#error "hookscope: HOOKSCOPE_USDT must be 0 or 1 (set it with the Meson option -Dusdt=enabled|disabled|auto)"
#endif
// Only a translation unit with hooks enabled has probes: a disabled one compiles without <sys/sdt.h> whatever the
// installed library's HOOKSCOPE_USDT says.
#if HOOKSCOPE_ENABLED && HOOKSCOPE_USDT && !__has_include(<sys/sdt.h>)
#error \
    "hookscope: HOOKSCOPE_USDT=1 needs <sys/sdt.h> (Debian: apt install systemtap-sdt-dev), or build with -Dusdt=disabled"
#endif

/// Whether this translation unit's annotations are probe sites.
#define HOOKSCOPE_DETAIL_PROBES (HOOKSCOPE_ENABLED && HOOKSCOPE_USDT)

// The mode is part of every mangled name, so linking translation units built in different modes (hooks enabled or
// disabled, probes or none) fails at link time instead of silently breaking the one-definition rule.
#if HOOKSCOPE_ENABLED && HOOKSCOPE_USDT
#define HOOKSCOPE_DETAIL_ABI_NAMESPACE v0_hooks_on_usdt
#elif HOOKSCOPE_ENABLED
#define HOOKSCOPE_DETAIL_ABI_NAMESPACE v0_hooks_on
#else
#define HOOKSCOPE_DETAIL_ABI_NAMESPACE v0_hooks_off
#endif

#define HOOKSCOPE_DETAIL_STRINGIZE_IMPL(x) #x
#define HOOKSCOPE_DETAIL_STRINGIZE(x) HOOKSCOPE_DETAIL_STRINGIZE_IMPL(x)

#define HOOKSCOPE_DETAIL_BEGIN_NAMESPACE \
  namespace hookscope {                  \
  inline namespace HOOKSCOPE_DETAIL_ABI_NAMESPACE {
#define HOOKSCOPE_DETAIL_END_NAMESPACE \
  }                                    \
  }

// ThreadSanitizer does not model the asymmetric (membarrier) fences of the emission path; under it
// hookscope uses sequentially consistent atomics instead, which TSan understands.
#if defined(__SANITIZE_THREAD__)
#define HOOKSCOPE_DETAIL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HOOKSCOPE_DETAIL_TSAN 1
#endif
#endif
#ifndef HOOKSCOPE_DETAIL_TSAN
#define HOOKSCOPE_DETAIL_TSAN 0
#endif
