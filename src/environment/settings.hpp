// What the environment features share: reading their variables, matching function names to globs, attaching
// callbacks for good, and the lists that signal handlers walk.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/callback_errors.hpp"
#include "hookscope/registry.hpp"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// One entry of a variable, in the grammar every variable shares (docs/environment.md, "Grammar"):
/// `<glob>[=<path>[<options>]]`. The glob ends at the first `=` or `,` outside a bracket expression (`st[e]p`,
/// `[!=,]x`); the path runs to the entry's end, and options are the bracketed group that closes the entry, from the
/// path's last `[` (`[]` is no options: it lets a path end in `]`).
struct setting_entry {
  std::string text;                    ///< the entry as written, trimmed (for messages)
  std::string glob;                    ///< trimmed; may be empty (the variable's parser reports it)
  std::optional<std::string> path;     ///< after the `=`, trimmed, options left out; none without `=`
  std::optional<std::string> options;  ///< inside the closing brackets, trimmed; none without (or with `[]`)
  std::string_view problem;            ///< why the path and options cannot be read apart, or empty
};

/// The comma-separated entries of `text`, in order: commas inside bracket expressions of globs and inside the
/// brackets of paths and options belong to their entry. Empty entries are kept (the parsers report them).
std::vector<setting_entry> parse_entries(std::string_view text);

/// Whether `name` matches the shell glob `glob` (`*`, `?`, `[...]`; `:` and `/` are ordinary characters).
bool glob_matches(const std::string& glob, std::string_view name);

/// Whether `name` matches one of `globs`; a glob without `::` also matches the part after the name's last `::`
/// (`lower_*` matches `passes::lower_graph`).
bool matches_any(const std::vector<std::string>& globs, std::string_view name);

/// The one message about a malformed part of a variable: `hookscope: <variable>: '<entry>': <problem> (expected
/// <expected>); <consequence>`, the entry's bytes that are not UTF-8 shown as `\xNN`.
void report_setting(std::string_view variable, std::string_view entry, std::string_view problem,
                    std::string_view expected, std::string_view consequence);

/// `text` for a log line: bytes that are not UTF-8, and control characters, as `\xNN`.
std::string shown(std::string_view text);

/// `path` made absolute against the working directory at start-up (the program's, for every copy of the library:
/// hub.hpp), so that a later chdir() does not move it; the text as given when it is absolute (or the working
/// directory is unknown).
std::string absolute_path(std::string_view path);

/// Why `path` cannot be an output file, or nothing: a directory, a path whose directory does not exist. Output
/// files are opened without blocking (a FIFO without a reader is refused, not waited for).
std::optional<std::string> unusable_output(const std::string& path);

/// The largest output path, `%p` expanded.
inline constexpr std::size_t output_path_capacity = 4096;

/// `path` with each `%p` replaced by the process id, into a fixed buffer (async-signal-safe: exit, fatal signals,
/// fork handlers); false when it does not fit.
bool expand_pid(std::string_view path, char (&out)[output_path_capacity]) noexcept;

/// Opens an output file for writing (`flags` added to O_WRONLY | O_CREAT | O_CLOEXEC) without blocking on a FIFO
/// that has no reader; -1 and errno on failure.
int open_output_file(const char* path, int flags) noexcept;

/// `<glob>[,<glob>...][=<path>[<options>]]` (HOOKSCOPE_TRACE, HOOKSCOPE_STATS, HOOKSCOPE_TIMELINE): the globs, and
/// the path and options of the last entry (which alone may have them). Malformed entries are reported naming
/// `variable`; `ok` is false when the variable as a whole cannot be used.
struct globs_and_path {
  std::vector<std::string> globs;
  std::optional<std::string> path;
  std::optional<std::string> options;
  std::string last_entry;  // the entry holding the path, for messages
  bool ok = true;
};
globs_and_path parse_globs_and_path(std::string_view variable, const char* text, std::string_view expected);

/// A bounded positive integer setting: `text` as a number in [1, max], or nothing.
std::optional<std::uint64_t> bounded_number(std::string_view text, std::uint64_t max);

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

/// Installs every environment feature whose variable is set, once: from this copy's static initialiser, or earlier
/// when another copy of the library joins this one's files first (hub.hpp).
void install_environment() noexcept;

/// Installs each environment feature's registration hook when its variable is set (install_environment).
void install_trace() noexcept;
void install_record() noexcept;
void install_stats() noexcept;
void install_timeline() noexcept;

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
