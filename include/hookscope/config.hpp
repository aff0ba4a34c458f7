// hookscope/config.hpp — the one switch that turns every hook on or off (and the probes beside it), and the ABI
// namespace they select.
//
// The build sets HOOKSCOPE_ENABLED and HOOKSCOPE_USDT through the `hookscope` dependency (Meson options `hooks` and
// `usdt`), the pkg-config file or the CMake package; nobody edits this header to configure hookscope.
#pragma once

/// HOOKSCOPE_ENABLED — 1: observers, observables and recorders work. 0: they compile to nothing (plain calls).
/// Default: the mode of the installed library (hookscope/build_config.hpp), else 1.
///
/// HOOKSCOPE_USDT — 1: with hooks enabled, each annotation made by the macros is also a USDT probe site (an entry and
/// a return probe of provider `hookscope`, through <sys/sdt.h>) that bpftrace and gdb attach to from outside the
/// process. Default: the mode of the installed library, else 0. Disabled builds have no probes whatever it says.
///
/// Both are 0 or 1 (anything else is an #error); the mode is part of the ABI namespace (v0_hooks_on, v0_hooks_on_usdt,
/// v0_hooks_off), so translation units built in different modes do not link together. The macros themselves are
/// defined in detail/config.hpp, which every header of the library includes.
#include "hookscope/detail/config.hpp"

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
/// True when this translation unit was compiled with hooks enabled.
inline constexpr bool hooks_enabled = HOOKSCOPE_ENABLED != 0;
/// True when this translation unit's annotations are USDT probe sites (hooks enabled and HOOKSCOPE_USDT=1).
inline constexpr bool probes_enabled = HOOKSCOPE_DETAIL_PROBES != 0;
HOOKSCOPE_DETAIL_END_NAMESPACE
