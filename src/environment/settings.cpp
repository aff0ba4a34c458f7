// The environment features' shared pieces, and the object that installs them (see environment.cpp's anchor).
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

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
