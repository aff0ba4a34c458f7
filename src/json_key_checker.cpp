// The scan for keys given twice (json_key_checker, json_reader.hpp), which Boost.JSON accepts, and its rule applied to
// value trees (first_repeated_name). Internal to the library.
#include "json_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

// Boost.JSON keeps one of two equal keys of an object silently. A linear scan of the (valid) text: keys compared as
// written (escapes not decoded), pairwise in small objects, sorted in large ones; the path of the object is built
// only when one repeats a key.
namespace {

void append_utf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out.push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (code >> 6)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3f)));
  } else if (code < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (code >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (code >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3f)));
  }
}

std::uint32_t hex4(std::string_view s, std::size_t at) {
  std::uint32_t code = 0;
  if (at + 4 <= s.size()) (void)std::from_chars(s.data() + at, s.data() + at + 4, code, 16);
  return code;
}

// The text of a JSON string's contents (valid JSON: the parser accepted it), its escapes decoded as a parser does.
std::string decode_json_escapes(std::string_view raw) {
  std::string out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\' || i + 1 >= raw.size()) {
      out.push_back(raw[i]);
      continue;
    }
    const char e = raw[++i];
    switch (e) {
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        std::uint32_t code = hex4(raw, i + 1);
        i += 4;
        if (code >= 0xd800 && code < 0xdc00 && i + 6 < raw.size() && raw[i + 1] == '\\' && raw[i + 2] == 'u') {
          const std::uint32_t low = hex4(raw, i + 3);
          if (low >= 0xdc00 && low < 0xe000) {
            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
            i += 6;
          }
        }
        append_utf8(out, code);
        break;
      }
      default: out.push_back(e);  // \" \\ \/
    }
  }
  return out;
}

}  // namespace

std::optional<repeated_json_key> json_key_checker::find(std::string_view text) {
  keys_.clear();
  decoded_.clear();
  frames_.clear();
  bool expect_key = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      frame f{keys_.size(), c == '{'};
      if (!frames_.empty()) {
        const frame& parent = frames_.back();
        if (parent.object) {
          f.key_in_parent = keys_.empty() ? std::string_view{} : keys_.back();
        } else {
          f.index_in_parent = parent.elements;
        }
      }
      frames_.push_back(f);
      expect_key = c == '{';
    } else if (c == '}' || c == ']') {
      if (frames_.empty()) return std::nullopt;
      const frame f = frames_.back();
      if (f.object) {
        if (auto repeated = repeated_key(f.first_key)) {
          // Appended, not `"\"" + std::string(...)`: GCC 12 at -O3 reports a false -Wrestrict for that form.
          std::string quoted(1, '"');
          quoted.append(*repeated).push_back('"');
          return repeated_json_key{std::move(quoted), path_of_top(), frames_.size(), i + 1};
        }
      }
      frames_.pop_back();
      keys_.resize(f.first_key);
      expect_key = false;
    } else if (c == ',') {
      if (!frames_.empty()) ++frames_.back().elements;
      expect_key = !frames_.empty() && frames_.back().object;
    } else if (c == '"') {
      const std::size_t start = ++i;
      while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
      if (expect_key) {
        const std::string_view key = text.substr(start, i - start);
        if (key.find('\\') == std::string_view::npos) {
          keys_.push_back(key);
        } else {
          keys_.push_back(decoded_.emplace_back(decode_json_escapes(key)));
        }
      }
      expect_key = false;
    }
  }
  return std::nullopt;
}

std::optional<std::string_view> repeated_key_among(std::span<const std::string_view> keys) {
  if (keys.size() <= 16) {
    for (std::size_t a = 1; a < keys.size(); ++a) {
      for (std::size_t b = 0; b < a; ++b) {
        if (keys[a] == keys[b]) return keys[a];
      }
    }
    return std::nullopt;
  }
  std::vector<std::string_view> sorted(keys.begin(), keys.end());
  std::sort(sorted.begin(), sorted.end());
  const auto it = std::adjacent_find(sorted.begin(), sorted.end());
  if (it != sorted.end()) return *it;
  return std::nullopt;
}

std::optional<std::string_view> json_key_checker::repeated_key(std::size_t first) const {
  return repeated_key_among(std::span(keys_).subspan(first));
}

std::string json_key_checker::path_of_top() const {
  std::string path = "$";
  for (std::size_t d = 1; d < frames_.size(); ++d) {
    if (frames_[d - 1].object) {
      path.push_back('.');
      path += frames_[d].key_in_parent;
    } else {
      path.push_back('[');
      path += std::to_string(frames_[d].index_in_parent);
      path.push_back(']');
    }
  }
  return path;
}

// The first entry that repeats an earlier entry's name. Few entries (the usual case) are compared pairwise, which
// allocates nothing; many are sorted (n log n: a record with 40,000 keyword arguments). Keyword arguments (the
// record reader), dicts and structs are all checked by it.
std::optional<std::size_t> first_repeated_name(const value_fields& fields) {
  constexpr std::size_t pairwise = 16;
  std::optional<std::size_t> repeat;
  if (fields.size() <= pairwise) {
    for (std::size_t i = 1; i < fields.size() && !repeat; ++i) {
      for (std::size_t k = 0; k < i; ++k) {
        if (fields[i].first == fields[k].first) repeat = i;
      }
    }
    return repeat;
  }
  std::vector<std::size_t> order(fields.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return fields[a].first != fields[b].first ? fields[a].first < fields[b].first : a < b;
  });
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (fields[order[i]].first == fields[order[i - 1]].first) repeat = std::min(repeat.value_or(order[i]), order[i]);
  }
  return repeat;
}
}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
