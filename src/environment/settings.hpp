// What the environment features share: reading a comma-separated list and matching a function name to a glob.
#pragma once

#include "hookscope/config.hpp"

#include <string>
#include <string_view>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// The comma-separated entries of `text`, trimmed, empty ones left out; nothing for a null text.
std::vector<std::string> split_list(const char* text);

/// Whether `name` matches the shell glob `glob` (`*`, `?`, `[...]`; `:` and `/` are ordinary characters).
bool glob_matches(const std::string& glob, std::string_view name);

/// Installs each environment feature's registration hook when its variable is set (once, at start-up).
void install_trace() noexcept;
void install_record() noexcept;
void install_stats() noexcept;
void install_timeline() noexcept;

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
