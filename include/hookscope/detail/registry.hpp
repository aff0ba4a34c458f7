// hookscope/detail/registry.hpp — how an entry joins the registry (registry_link, the list's head) and the
// registration hooks that learn of each entry, below the annotations that link their entries;
// hookscope/registry.hpp is the documented front door (the registry walked, observables found by name).
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/function_info.hpp"

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace detail {
#if HOOKSCOPE_ENABLED
/// The most recently registered observable. Defined by the compiled library, not inline: GCC makes an inline
/// variable a unique symbol (STB_GNU_UNIQUE), which the dynamic linker binds across modules loaded with RTLD_LOCAL,
/// so dlopen()ed plugins that each hold a copy of the library would share one registry, and each copy's
/// environment features would attach to the other copies' functions as well (docs/environment.md, "Several copies
/// of the library").
extern constinit const function_info* registry_head;
#endif

/// Told of every observable: of those registered before the hook was installed when it is, then of each as it
/// registers. Features above the registry (HOOKSCOPE_TRACE, HOOKSCOPE_RECORD) attach themselves this way, so the
/// registry never calls them by name. Hooks may run during static initialisation: they must not throw.
using registration_hook = void (*)(const function_info&) noexcept;

/// Installs a hook (at most 8 in a program; beyond, the hook is not installed and a line is logged).
void add_registration_hook(registration_hook hook) noexcept;

/// Links an observable's info into the registry from a static initialiser (no allocation), reports a name
/// registered twice, and tells the installed hooks. Linking an info already linked does nothing.
struct registry_link {
  explicit registry_link(function_info& info) noexcept {
#if HOOKSCOPE_ENABLED
    link(info);
#else
    (void)info;
#endif
  }
  static void link(function_info& info) noexcept;
  /// Links every info of `[first, last)` (null entries skipped): the annotations a module lists.
  static void link_all(function_info* const* first, function_info* const* last) noexcept;
};
}  // namespace detail

HOOKSCOPE_DETAIL_END_NAMESPACE
