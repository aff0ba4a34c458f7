// What the environment features share: reading their variables, matching function names to globs, attaching
// callbacks for good, and the lists that signal handlers walk.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/callback_errors.hpp"
#include "hookscope/registry.hpp"

#include <atomic>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// The comma-separated entries of `text`, trimmed, empty ones left out; nothing for a null text.
std::vector<std::string> split_list(const char* text);

/// Whether `name` matches the shell glob `glob` (`*`, `?`, `[...]`; `:` and `/` are ordinary characters).
bool glob_matches(const std::string& glob, std::string_view name);

/// Whether `name` matches one of `globs`; a glob without `::` also matches the part after the name's last `::`
/// (`lower_*` matches `passes::lower_graph`).
bool matches_any(const std::vector<std::string>& globs, std::string_view name);

/// `<glob>[,<glob>...][=<path>]` (HOOKSCOPE_STATS, HOOKSCOPE_TIMELINE): the globs, and what follows the last
/// entry's `=` (empty when there is none), trimmed.
struct globs_and_path {
  std::vector<std::string> globs;
  std::string path;
};
globs_and_path split_globs_and_path(const char* text);

/// Attaches `pre` and `post` as global callbacks of `info` for the rest of the process (for registration hooks:
/// never throws; running out of memory is logged naming `variable`).
template <class Pre, class Post>
void attach_for_good(const function_info& info, std::string_view variable, Pre pre, Post post) noexcept {
  try {
    (void)info.pre().add_global(std::move(pre)).release();
    (void)info.post().add_global(std::move(post)).release();
  } catch (...) {
    log_line(std::string("hookscope: ")
                 .append(variable)
                 .append(": could not attach to '")
                 .append(info.name)
                 .append("' (out of memory)"));
  }
}

/// Pushes `node` at the front of a list that readers (a signal handler, exit) walk without a lock; `node->next`
/// is an atomic pointer. Nodes are never removed.
template <class Node>
void push_front(std::atomic<Node*>& head, Node* node) noexcept {
  Node* first = head.load(std::memory_order_relaxed);
  do {
    node->next.store(first, std::memory_order_relaxed);
  } while (!head.compare_exchange_weak(first, node, std::memory_order_release, std::memory_order_relaxed));
}

/// Installs each environment feature's registration hook when its variable is set (once, at start-up).
void install_trace() noexcept;
void install_record() noexcept;
void install_stats() noexcept;
void install_timeline() noexcept;

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
