// The environment features' shared pieces (see settings.hpp).
#include "settings.hpp"
#include "../cancellation.hpp"

#include "hub.hpp"
#include "json_text.hpp"

#include "hookscope/detail/fixed_string.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

namespace {

constexpr std::size_t npos = std::string_view::npos;

// The index of the `]` that closes the bracket expression opened at text[open], as fnmatch() reads one: `!` or `^`
// first negates, a `]` first (after them) is a member, `[:alpha:]`, `[=e=]` and `[.x.]` are members, a backslash
// escapes the next character. npos when it is not closed: fnmatch() then reads the `[` as itself.
std::size_t bracket_expression_end(std::string_view text, std::size_t open) {
  std::size_t i = open + 1;
  if (i < text.size() && (text[i] == '!' || text[i] == '^')) ++i;
  if (i < text.size() && text[i] == ']') ++i;
  while (i < text.size() && text[i] != ']') {
    if (text[i] == '\\') {
      i += 2;
    } else if (text[i] == '[' && i + 1 < text.size() &&
               (text[i + 1] == ':' || text[i + 1] == '=' || text[i + 1] == '.')) {
      const char closing[] = {text[i + 1], ']'};
      const std::size_t end = text.find(std::string_view(closing, 2), i + 2);
      if (end == npos) return npos;
      i = end + 2;
    } else {
      ++i;
    }
  }
  return i < text.size() ? i : npos;
}

// The path part of an entry (after its `=`) into the path and the options that close it.
void read_path_and_options(std::string_view part, setting_entry& entry) {
  if (part.ends_with(']')) {
    const std::size_t open = part.rfind('[');
    if (open == npos) {
      entry.problem = "a ']' without '['";
      entry.path = std::string(part);
      return;
    }
    const std::string_view options = trim(part.substr(open + 1, part.size() - open - 2));
    if (!options.empty()) entry.options = std::string(options);
    part = trim(part.substr(0, open));
  }
  // Brackets may be part of a path (`/data/run[3]/r.jsonl`), but a group holding a `=` is options that do not close
  // the entry (`r[every=2]x`, `r[max_calls=3`): a typo, not a file name.
  for (std::size_t open = part.find('['); open != npos; open = part.find('[', open + 1)) {
    const std::size_t close = part.find(']', open + 1);
    if (part.substr(open + 1, close == npos ? npos : close - open - 1).find('=') != npos) {
      entry.problem = "options must close the entry, in one pair of brackets";
      break;
    }
  }
  entry.path = std::string(part);
}

}  // namespace

std::vector<setting_entry> parse_entries(std::string_view text) {
  std::vector<setting_entry> entries;
  std::size_t i = 0;
  for (;;) {
    const std::size_t start = i;
    // The glob, to the first `=` or `,` outside bracket expressions.
    while (i < text.size() && text[i] != '=' && text[i] != ',') {
      if (text[i] == '\\') {
        i += 2;
        continue;
      }
      const std::size_t close = text[i] == '[' ? bracket_expression_end(text, i) : npos;
      i = close != npos ? close + 1 : i + 1;
    }
    i = std::min(i, text.size());
    setting_entry entry;
    entry.glob = std::string(trim(text.substr(start, i - start)));
    if (i < text.size() && text[i] == '=') {
      // The path and its options, to the first `,` outside brackets (a ',' between options is reported by the
      // options' parser, not read as the next entry).
      const std::size_t path_start = ++i;
      while (i < text.size() && text[i] != ',') {
        const std::size_t close = text[i] == '[' ? text.find(']', i + 1) : npos;
        i = close != npos ? close + 1 : i + 1;
      }
      read_path_and_options(trim(text.substr(path_start, i - path_start)), entry);
    }
    entry.text = std::string(trim(text.substr(start, i - start)));
    entries.push_back(std::move(entry));
    if (i >= text.size()) return entries;
    ++i;  // the `,`
  }
}

bool glob_matches(const std::string& glob, std::string_view name) {
  return fnmatch(glob.c_str(), std::string(name).c_str(), 0) == 0;
}

bool matches_any(const std::vector<std::string>& globs, std::string_view name) {
  const std::size_t scope_end = name.rfind("::");
  const std::string_view last = scope_end == std::string_view::npos ? name : name.substr(scope_end + 2);
  for (const std::string& glob : globs) {
    if (glob_matches(glob, name)) return true;
    // Names are qualified by their scope (passes::lower): a glob without a scope also matches the last part.
    if (glob.find("::") == std::string::npos && glob_matches(glob, last)) return true;
  }
  return false;
}

std::string shown(std::string_view text) {
  std::string out;
  escape_text(text, escape_for::log, [&out](char c) { out.push_back(c); });
  return out;
}

void report_setting(std::string_view variable, std::string_view entry, std::string_view problem,
                    std::string_view expected, std::string_view consequence) {
  std::string line = "hookscope: ";
  line.append(variable).append(": '");
  line.append(shown(entry));
  line.append("': ").append(problem).append(" (expected ").append(expected).append("); ").append(consequence);
  log_line(line);
}

std::string absolute_path(std::string_view path) {
  if (path.empty() || path.front() == '/') return std::string(path);
  std::string out = start_directory();
  if (out.empty()) return std::string(path);
  if (out.back() != '/') out.push_back('/');
  return out.append(path);
}

std::optional<std::string> unusable_output(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return "it is a directory";
    return std::nullopt;
  }
  if (errno != ENOENT) return std::string(std::strerror(errno));
  // Missing (or a dangling symbolic link, whose target open() creates): its directory must exist.
  const std::size_t slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat dir {};
  if (::stat(directory.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode)) return "its directory does not exist";
  return std::nullopt;
}

bool expand_pid(std::string_view path, char (&out)[output_path_capacity]) noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 1 < path.size() && path[i + 1] == 'p') {
      const auto [end, ec] = std::to_chars(out + n, out + sizeof out - 1, static_cast<long>(getpid()));
      if (ec != std::errc()) return false;
      n = static_cast<std::size_t>(end - out);
      ++i;
    } else {
      if (n + 1 >= sizeof out) return false;
      out[n++] = path[i];
    }
  }
  out[n] = '\0';
  return true;
}

int open_output_file(const char* path, int flags) noexcept {
  const cancellation_deferred no_cancellation;  // system calls: see cancellation.hpp
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK | flags, 0644);
  if (fd >= 0) {
    const int status = ::fcntl(fd, F_GETFL);
    if (status >= 0) (void)::fcntl(fd, F_SETFL, status & ~O_NONBLOCK);
  }
  return fd;
}

globs_and_path parse_globs_and_path(std::string_view variable, const char* text, std::string_view expected) {
  globs_and_path out;
  if (text == nullptr || trim(text).empty()) return out;  // unset, or set to nothing: off
  const std::vector<setting_entry> entries = parse_entries(text);
  auto refuse = [&](std::string_view entry, std::string_view problem) {  // the first problem only: one line
    if (out.ok) report_setting(variable, entry, problem, expected, "the variable is ignored");
    out.ok = false;
  };
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const setting_entry& entry = entries[i];
    if (entry.text.empty()) {
      refuse(text, "an empty entry");
      continue;
    }
    if (entry.path) {
      if (i + 1 != entries.size()) {
        refuse(entry.text, "'=<path>' before another entry: the path follows the last glob");
        continue;
      }
      if (!entry.problem.empty()) refuse(entry.text, entry.problem);
      if (entry.path->empty() && !entry.options) refuse(entry.text, "nothing after '='");
      out.path = entry.path;
      out.options = entry.options;
      out.last_entry = entry.text;
    }
    if (entry.glob.empty()) {
      refuse(entry.text, "no glob before '='");
      continue;
    }
    out.globs.push_back(entry.glob);
  }
  if (!out.ok) out.globs.clear();
  return out;
}

std::optional<std::uint64_t> bounded_number(std::string_view text, std::uint64_t max) {
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n == 0 || n > max) return std::nullopt;
  return n;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
