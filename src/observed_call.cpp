// What every observed call that threw shares: its post callbacks with the exception, then the exception goes on; what
// a call left without its post callbacks tells (left_calls.hpp); the error of a callback asking for an argument the
// caller omitted; and what every probed call shares (detail/probed_call.hpp).
//
// Compiled once here rather than inline in the header: an annotation's translation unit compiles none of it.
#include "hookscope/call_context.hpp"
#include "hookscope/detail/observed_call.hpp"
#include "hookscope/exceptions.hpp"

#include "left_calls.hpp"

#include <cstddef>
#include <exception>
#include <string>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

// In both modes, as call_pairing.cpp which reads it (a disabled build notes nothing).
constinit left_calls left_log;

// In both modes: a disabled build makes no call context, but its callbacks compile against the same declarations.
void throw_omitted_arg(const erased_call& call, std::size_t i, omitted_access access) {
  const std::string index = std::to_string(i);
  const std::string name(call.arg_name(i));
  std::string what = "call_context::";  // value_error puts the library's prefix before it
  switch (access) {
    case omitted_access::by_index: what += "arg<" + index + ">()"; break;
    case omitted_access::by_name: what += "arg<\"" + name + "\">()"; break;
    case omitted_access::all: what += "args()"; break;
  }
  what += ": the call of '";
  what += call.function().name;
  what += "' omitted argument " + index + " ('" + name +
          "'): it took the function's default, which only the function sees; test ctx.has_arg<" + index +
          ">() (or has_arg<\"" + name + "\">()) first, or use find_arg, null for an omitted argument";
  throw value_error(what);
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#if HOOKSCOPE_ENABLED  // a disabled build observes no call

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

void fail_observed(erased_call& call) {
  if (!std::current_exception()) {  // a forced unwind: the call ends with no post callback
    note_left_call(call.call_id());
    throw;
  }
  struct forget {  // the context's destructor is trivial: it must not be left holding the exception
    erased_call& call;
    ~forget() { call_access::exception(call) = nullptr; }
  } reset{call};
  call_access::fail(call, std::current_exception());
  call.function().post().observe(call);
  throw;
}

}  // namespace detail

#if HOOKSCOPE_DETAIL_PROBES
namespace detail {

const char* resident_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < name.size(); i += 4096) (void)*static_cast<const volatile char*>(name.data() + i);
  (void)*static_cast<const volatile char*>(name.data() + name.size());  // the terminating NUL
  return name.data();
}

void fire_threw_probe(const probe_functions& probes, const char* name) noexcept {
  if (std::current_exception()) probes.leave(name, 1, nullptr);
}

}  // namespace detail
#endif

void hookscope_detail_call_left(const erased_call& call) noexcept { detail::note_left_call(call.call_id()); }

HOOKSCOPE_DETAIL_END_NAMESPACE

#endif  // HOOKSCOPE_ENABLED
