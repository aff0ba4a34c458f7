// hookscope/detail/site_list.hpp — the list of annotations a module (the program, or a shared library) links into
// the registry: one linker section of pointers, walked once per module.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/function_info.hpp"
#include "hookscope/detail/registry.hpp"

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

#if HOOKSCOPE_ENABLED

// An annotation at namespace scope lists its registry entry in the linker section `hookscope_sites` (a pointer per
// annotation and translation unit: HOOKSCOPE_DETAIL_LIST_SITE), and each module (the program, or a shared library)
// links the whole list once, from one static initialiser: no initialiser, unwind entry or call per annotation.
// GNU ld and LLVM's lld define __start_/__stop_ of a section whose name is an identifier; weak, so that a module
// without a listed annotation links; hidden, so that each module sees its own list.
extern "C" {
[[gnu::weak, gnu::visibility("hidden")]] extern function_info* const __start_hookscope_sites[];
[[gnu::weak, gnu::visibility("hidden")]] extern function_info* const __stop_hookscope_sites[];
}

/// The module's listed annotations, linked into the registry. An inline variable: initialised before anything
/// defined below this header in each translation unit that includes it, so before any of them can call an
/// annotation; hidden, so once per module.
[[gnu::visibility("hidden")]] inline const bool module_sites_linked =
    (registry_link::link_all(__start_hookscope_sites, __stop_hookscope_sites), true);

#endif

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
