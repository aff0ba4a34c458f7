// hookscope/detail/callback_errors.hpp — what the library's own code calls when a callback throws (log it or let it
// leave, by the mode set in hookscope/callback_errors.hpp) and how it writes its log lines, below the emission paths
// that call them; hookscope/callback_errors.hpp is the documented front door (the sink, the rethrow mode).
#pragma once

#include "hookscope/detail/config.hpp"

#include <exception>
#include <string>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

namespace detail {
/// Writes one line through the current sink; never throws.
void log_line(std::string_view line) noexcept;

/// An error's message as the clause of a longer one: without its leading "hookscope: ".
std::string_view message_clause(const std::exception& e) noexcept;

/// The exception's what(), or a sentence saying it is not a std::exception.
std::string describe_exception(const std::exception_ptr& e);

/// Called from inside a catch block around a callback: logs the exception, or rethrows it (rethrow mode, or a
/// forced unwind: pthread_exit, pthread_cancel).
void handle_callback_exception(std::string_view observer_name);

/// Called from inside a catch block around a callback: whether handle_callback_exception will rethrow it.
bool callback_exception_leaves() noexcept;
}  // namespace detail

HOOKSCOPE_DETAIL_END_NAMESPACE
