// Timeline arguments in a fixed slot (see timeline_args.hpp).
#include "timeline_args.hpp"

#include "json_text.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
namespace {

constexpr std::string_view more_key = "\"\u2026\":\"";  // `"…":"`, then `3 more"`
constexpr std::string_view more_text = " more\"";

std::size_t digits(std::size_t n) noexcept {
  std::size_t count = 1;
  while (n >= 10) {
    n /= 10;
    ++count;
  }
  return count;
}

// Writes into the slot; never past its capacity (the sizes are computed so that nothing is cut).
struct slot_writer {
  char* out;
  std::size_t capacity;
  std::size_t size = 0;

  void put(char c) noexcept {
    if (size < capacity) out[size] = c;
    ++size;
  }
  void text(std::string_view s) noexcept {
    for (char c : s) put(c);
  }
  void number(std::size_t n) noexcept {
    char buffer[20];
    std::size_t count = 0;
    do {
      buffer[count++] = static_cast<char>('0' + n % 10);
      n /= 10;
    } while (n != 0);
    while (count > 0) put(buffer[--count]);
  }
};

struct argument {
  std::string_view name;
  std::string value;
  std::size_t name_length = 0;   // of its JSON string body
  std::size_t value_length = 0;  // of its JSON string body, up to the slot's capacity + 1
  std::size_t marker_length = 0;
  std::size_t floor = 0;      // the least room it gets: whole when shorter than its marker, else its marker
  std::size_t allowance = 0;  // the room it gets
};

// Every argument whole, when they all fit (the common case: one pass, nothing kept); else a size over the capacity.
// A value is measured before it is written, so that a huge one costs no more than the slot's worth of it.
std::size_t write_whole(const erased_call& call, slot_writer& w) {
  for (std::size_t i = 0; i < call.args_given(); ++i) {
    if (i != 0) w.put(',');
    w.put('"');
    json_string_body(call.arg_name(i), [&w](char c) { w.put(c); });
    w.text("\":\"");
    const std::string value = call.format_arg(i);
    if (w.size + json_body_length(value, w.capacity) + 1 > w.capacity) return w.capacity + 1;
    json_string_body(value, [&w](char c) { w.put(c); });
    w.put('"');
  }
  return w.size;
}

}  // namespace

std::size_t format_timeline_args(const erased_call& call, char* out, std::size_t capacity) {
  slot_writer w{out, capacity};
  if (write_whole(call, w) <= capacity) return w.size;

  const std::size_t count = call.args_given();
  std::vector<argument> args(count);
  for (std::size_t i = 0; i < count; ++i) {
    argument& a = args[i];
    a.name = call.arg_name(i);
    a.value = call.format_arg(i);
    a.name_length = json_body_length(a.name, capacity);
    a.value_length = json_body_length(a.value, capacity);
    a.marker_length = cut_marker.size() + digits(a.value.size()) + 1;
    a.floor = std::min(a.value_length, a.marker_length);
  }
  // `"name":"` + value + `"`, a comma before all but the first; the more key after the kept ones.
  auto fixed = [&](std::size_t i) { return std::size_t{i != 0} + args[i].name_length + 5 + args[i].floor; };
  auto more = [&](std::size_t kept) {
    return kept == count ? 0 : std::size_t{kept != 0} + more_key.size() + digits(count - kept) + more_text.size();
  };
  std::size_t kept = 0, used = 0;
  while (kept < count && used + fixed(kept) + more(kept + 1) <= capacity) used += fixed(kept++);
  used += more(kept);

  // The room left, shared fairly: the shortest extra demands are met whole, the rest split evenly.
  std::size_t room = capacity > used ? capacity - used : 0;
  std::vector<std::size_t> order(kept);
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto extra = [&](std::size_t i) { return args[i].value_length - args[i].floor; };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return extra(a) < extra(b); });
  for (std::size_t k = 0; k < kept; ++k) {
    argument& a = args[order[k]];
    const std::size_t share = std::min(extra(order[k]), room / (kept - k));
    a.allowance = a.floor + share;
    room -= share;
  }

  w.size = 0;
  for (std::size_t i = 0; i < kept; ++i) {
    const argument& a = args[i];
    if (i != 0) w.put(',');
    w.put('"');
    json_string_body(a.name, [&w](char c) { w.put(c); });
    w.text("\":\"");
    if (a.value_length <= a.allowance) {
      json_string_body(a.value, [&w](char c) { w.put(c); });
    } else {
      (void)json_body_prefix(a.value, a.allowance - a.marker_length, [&w](char c) { w.put(c); });
      w.text(cut_marker);
      w.number(a.value.size());
      w.put(')');
    }
    w.put('"');
  }
  if (kept < count) {
    if (kept != 0) w.put(',');
    w.text(more_key);
    w.number(count - kept);
    w.text(more_text);
  }
  return w.size;
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
