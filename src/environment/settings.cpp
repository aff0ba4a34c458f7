// The environment features' shared pieces (see settings.hpp).
#include "settings.hpp"

#include "hookscope/detail/fixed_string.hpp"

#include <fnmatch.h>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

std::vector<std::string> split_list(const char* text) {
  std::vector<std::string> entries;
  if (text == nullptr) return entries;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view entry = trim(rest.substr(0, comma));
    if (!entry.empty()) entries.emplace_back(entry);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
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

globs_and_path split_globs_and_path(const char* text) {
  globs_and_path out{split_list(text), {}};
  if (out.globs.empty()) return out;
  std::string& last = out.globs.back();
  if (const std::size_t equal = last.find('='); equal != std::string::npos) {
    out.path = std::string(trim(std::string_view(last).substr(equal + 1)));
    last = std::string(trim(std::string_view(last).substr(0, equal)));
    if (last.empty()) out.globs.pop_back();
  }
  return out;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
