// hookscope/callback_errors.hpp — what happens when a callback throws, and where hookscope's messages go (with
// exceptions.hpp, the library's exceptions, what errors.hpp includes).
//
// By default an exception escaping a callback is caught, logged as one line naming the observer, and
// the observed code goes on: instrumentation must never break the program it watches. Tests can ask
// for the exception to propagate instead.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/callback_errors.hpp"

#include <exception>
#include <string>
#include <string_view>

// std::function only (log_sink): every observer and annotation includes this header, and <functional> also
// brings the searchers, std::hash and more, ~0.07 s of GCC 12's time per translation unit. libstdc++ has the
// class in a header of its own; elsewhere the standard header.
#if __has_include(<bits/std_function.h>)
#include <bits/std_function.h>
#else
#include <functional>
#endif

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

//=== callback errors and the log ===//

/// Receives each line hookscope logs (no trailing newline); may be called from several threads at once.
using log_sink = std::function<void(std::string_view)>;

/// Replaces the log sink (default: one line to stderr); an empty function restores the default.
void set_log_sink(log_sink sink);

/// Makes exceptions escaping callbacks propagate to the code that fired the observer (default: false), in
/// every thread not inside a `rethrow_callback_exceptions_scope`.
void set_rethrow_callback_exceptions(bool rethrow) noexcept;

/// Whether exceptions escaping callbacks fired on the calling thread currently propagate.
[[nodiscard]] bool rethrow_callback_exceptions() noexcept;

namespace detail {
/// The calling thread's mode override: -1 none (the process-wide mode applies), 0 log, 1 rethrow.
signed char exchange_thread_rethrow(signed char mode) noexcept;
}  // namespace detail

/// Sets the rethrow mode of the calling thread for a scope and restores its previous mode on exit (meant for
/// tests). Scopes nest per thread: scopes on other threads, overlapping or not, neither see nor undo it.
class [[nodiscard]] rethrow_callback_exceptions_scope {
 public:
  explicit rethrow_callback_exceptions_scope(bool rethrow = true) noexcept
      : previous_(detail::exchange_thread_rethrow(rethrow ? 1 : 0)) {}
  rethrow_callback_exceptions_scope(const rethrow_callback_exceptions_scope&) = delete;
  rethrow_callback_exceptions_scope& operator=(const rethrow_callback_exceptions_scope&) = delete;
  ~rethrow_callback_exceptions_scope() { detail::exchange_thread_rethrow(previous_); }

 private:
  signed char previous_;
};

HOOKSCOPE_DETAIL_END_NAMESPACE
