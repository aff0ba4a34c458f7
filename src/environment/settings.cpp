// The environment features' shared pieces (see settings.hpp).
#include "settings.hpp"

#include "json_text.hpp"

#include "hookscope/detail/fixed_string.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

std::vector<std::string> split_entries(std::string_view text) {
  std::vector<std::string> entries;
  std::size_t start = 0;
  int depth = 0;  // inside [...]: options, whose commas are typos the entry's parser reports
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '[') ++depth;
    if (i < text.size() && text[i] == ']' && depth > 0) --depth;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      entries.emplace_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  return entries;
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
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == nullptr) return std::string(path);
  std::string out = cwd;
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
  const std::vector<std::string> entries = split_entries(text);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::string_view entry = entries[i];
    if (entry.empty()) {
      report_setting(variable, text, "an empty entry", expected, "the variable is ignored");
      out.ok = false;
      continue;
    }
    if (const std::size_t equal = entry.find('='); equal != std::string_view::npos) {
      if (i + 1 != entries.size()) {
        report_setting(variable, entry, "'=<path>' before another entry: the path follows the last glob", expected,
                       "the variable is ignored");
        out.ok = false;
        continue;
      }
      out.path = std::string(trim(entry.substr(equal + 1)));
      entry = trim(entry.substr(0, equal));
      if (out.path.empty()) {
        report_setting(variable, entries[i], "nothing after '='", expected, "the variable is ignored");
        out.ok = false;
      }
      if (entry.empty()) {
        report_setting(variable, entries[i], "no glob before '='", expected, "the variable is ignored");
        out.ok = false;
        continue;
      }
    }
    out.globs.emplace_back(entry);
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
