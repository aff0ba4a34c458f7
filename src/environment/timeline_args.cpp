// Timeline arguments in a fixed slot (see timeline_args.hpp).
#include "timeline_args.hpp"

#include "json_text.hpp"

#include "hookscope/detail/format.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
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
  std::string_view value;
  std::size_t name_length = 0;   // of its JSON string body
  std::size_t value_length = 0;  // of its JSON string body, up to the slot's capacity + 1
  std::size_t marker_length = 0;
  std::size_t floor = 0;      // the least room it gets: whole when shorter than its marker, else its marker
  std::size_t allowance = 0;  // the room it gets
};

// Every argument whole, when they all fit (the common case: one pass, nothing kept); else a size over the capacity.
// A value is measured before it is written, so that a huge one costs no more than the slot's worth of it.
// `value_of(i)`: argument i's text (a string or a view).
template <class ValueOf>
std::size_t write_whole(std::span<const std::string_view> names, std::size_t count, ValueOf&& value_of,
                        slot_writer& w) {
  for (std::size_t i = 0; i < count; ++i) {
    if (i != 0) w.put(',');
    w.put('"');
    json_string_body(i < names.size() ? names[i] : std::string_view{}, [&w](char c) { w.put(c); });
    w.text("\":\"");
    const auto& value = value_of(i);
    const std::string_view text(value);
    if (w.size + json_body_length(text, w.capacity) + 1 > w.capacity) return w.capacity + 1;
    json_string_body(text, [&w](char c) { w.put(c); });
    w.put('"');
  }
  return w.size;
}

// The arguments (names and values set) sharing the slot fairly, written over `w` from its start; `order` is room
// for one index per argument. Allocates nothing.
std::size_t write_shared(std::span<argument> args, std::span<std::size_t> order, slot_writer& w) noexcept {
  const std::size_t count = args.size();
  const std::size_t capacity = w.capacity;
  for (argument& a : args) {
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
  const std::span<std::size_t> kept_order = order.first(kept);
  std::iota(kept_order.begin(), kept_order.end(), std::size_t{0});
  auto extra = [&](std::size_t i) { return args[i].value_length - args[i].floor; };
  std::sort(kept_order.begin(), kept_order.end(), [&](std::size_t a, std::size_t b) { return extra(a) < extra(b); });
  for (std::size_t k = 0; k < kept; ++k) {
    argument& a = args[kept_order[k]];
    const std::size_t share = std::min(extra(kept_order[k]), room / (kept - k));
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

// The most arguments a packed event holds (an event's slot of 160 bytes holds 17).
constexpr std::size_t max_packed_args = 24;

}  // namespace

std::size_t format_timeline_args(const erased_call& call, char* out, std::size_t capacity) {
  slot_writer w{out, capacity};
  const std::size_t count = call.args_given();
  const std::span<const std::string_view> names = call.function().param_names;
  const auto formatted = [&call](std::size_t i) { return call.format_arg(i); };
  if (write_whole(names, count, formatted, w) <= capacity) return w.size;

  std::vector<std::string> values(count);
  std::vector<argument> args(count);
  for (std::size_t i = 0; i < count; ++i) {
    values[i] = call.format_arg(i);
    args[i].name = call.arg_name(i);
    args[i].value = values[i];
  }
  std::vector<std::size_t> order(count);
  return write_shared(args, order, w);
}

std::size_t pack_timeline_args(const erased_call& call, char* out, std::size_t capacity) noexcept {
  const std::size_t count = call.args_given();
  if (count > max_packed_args || count * packed_arg_size > capacity) return not_packed;
  const call_ops& ops = call_access::ops(call);
  const void* const* objects = call_access::args(call);
  for (std::size_t i = 0; i < count; ++i) {
    const value_ops& v = *ops.args[i];
    if (v.text_bits == nullptr) return not_packed;
    out[i] = static_cast<char>(v.text);
    const std::uint64_t bits = v.text_bits(objects[i]);
    std::memcpy(out + count + i * 8, &bits, 8);
  }
  return count * packed_arg_size;
}

std::size_t format_packed_args(std::span<const std::string_view> names, std::size_t count, const char* packed,
                               char* out, std::size_t capacity) noexcept {
  if (count > max_packed_args) return 0;
  char buffers[max_packed_args][text_buffer_size];
  std::string_view values[max_packed_args];
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t bits;
    std::memcpy(&bits, packed + count + i * 8, 8);
    values[i] = text_of(static_cast<text_kind>(packed[i]), bits, buffers[i]);
  }
  slot_writer w{out, capacity};
  const auto value_of = [&values](std::size_t i) { return values[i]; };
  if (write_whole(names, count, value_of, w) <= capacity) return w.size;
  argument args[max_packed_args];
  std::size_t order[max_packed_args];
  for (std::size_t i = 0; i < count; ++i) {
    args[i].name = i < names.size() ? names[i] : std::string_view{};
    args[i].value = values[i];
  }
  return write_shared(std::span(args, count), std::span(order, count), w);
}

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
