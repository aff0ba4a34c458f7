// hookscope/config.hpp — the one switch that turns every hook on or off, and the ABI namespace it selects.
//
// The build sets HOOKSCOPE_ENABLED through the `hookscope` dependency (Meson option `hooks`) or the
// pkg-config file; nobody edits this header to configure hookscope.
#pragma once

/// 1: observers, observables and recorders work. 0: they compile to nothing (plain calls). Default: the
/// mode of the installed library (hookscope/build_config.hpp), else 1.
#ifndef HOOKSCOPE_ENABLED
#if __has_include("hookscope/build_config.hpp")
#include "hookscope/build_config.hpp"
#define HOOKSCOPE_ENABLED HOOKSCOPE_BUILD_ENABLED
#else
#define HOOKSCOPE_ENABLED 1
#endif
#endif

#if HOOKSCOPE_ENABLED != 0 && HOOKSCOPE_ENABLED != 1
#error "hookscope: HOOKSCOPE_ENABLED must be 0 or 1 (set it with the Meson option -Dhooks=true|false)"
#endif

// The mode is part of every mangled name, so linking an enabled translation unit with a disabled one
// fails at link time instead of silently breaking the one-definition rule.
#if HOOKSCOPE_ENABLED
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

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
/// True when this translation unit was compiled with hooks enabled.
inline constexpr bool hooks_enabled = HOOKSCOPE_ENABLED != 0;
HOOKSCOPE_DETAIL_END_NAMESPACE
