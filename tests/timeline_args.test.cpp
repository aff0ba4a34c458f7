// A timeline event's arguments copied raw on the call and formatted when the file is written
// (src/environment/timeline_args.hpp, pack_timeline_args and format_packed_args): the text is the one
// format_timeline_args writes on the call from format_value's text, whole or cut to fair shares, for random calls of
// many parameter types and for every slot capacity.
#include "../src/environment/timeline_args.hpp"

#include "hookscope/observable.hpp"
#include "hookscope/tensor.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>

namespace hs = hookscope::detail;

namespace impl {
struct widget {
  int a;
};
int scalars(signed char, unsigned char, short, unsigned short, int, unsigned, long, unsigned long, float, double, bool,
            char) {
  return 0;
}
int named_long(long, double, bool) { return 0; }
hookscope::tensor_spec forward(const hookscope::tensor_spec& input_ids, const hookscope::tensor_spec&,
                               const hookscope::tensor_spec&, const hookscope::tensor_spec&, int) {
  return input_ids;
}
int pointers(const int*, const char*, int (*)(int), widget, const void*) { return 0; }
int identity(int x) { return x; }
int nothing() { return 0; }
int text(const std::string&, int) { return 0; }
}  // namespace impl

namespace timeline {
HOOKSCOPE_OBSERVABLE(scalars, impl::scalars, a, b, c, d, e, f, g, h, i, j, k, l);
HOOKSCOPE_OBSERVABLE(named_long, impl::named_long, a_parameter_with_a_very_long_name_indeed_one,
                     a_parameter_with_a_very_long_name_indeed_two, a_parameter_with_a_very_long_name_indeed_three);
HOOKSCOPE_OBSERVABLE(forward, impl::forward, input_ids, attention_mask, key, value, step);
HOOKSCOPE_OBSERVABLE(pointers, impl::pointers, p, s, f, w, v);
HOOKSCOPE_OBSERVABLE(nothing, impl::nothing);
HOOKSCOPE_OBSERVABLE(text, impl::text, s, n);
}  // namespace timeline

namespace {

constexpr std::size_t slot_capacity = 160;  // an event's, in src/environment/timeline.cpp

// For each call of `f` while it lives: the packed arguments formatted, at every capacity up to `max_capacity`, are
// the text formatted on the call. Counts the calls checked.
struct packed_matches_formatted {
  std::size_t calls = 0;
  std::size_t max_capacity = slot_capacity;
  hookscope::subscription sub;

  explicit packed_matches_formatted(const hookscope::function_info& f) {
    sub = f.pre().add([this](const hookscope::erased_call& call) { check(call); });
  }

  void check(const hookscope::erased_call& call) {
    char packed[slot_capacity];
    const std::size_t size = hs::pack_timeline_args(call, packed, slot_capacity);
    CHECK(size == call.args_given() * hs::packed_arg_size);
    if (size == hs::not_packed) return;
    for (std::size_t capacity = 0; capacity <= max_capacity; ++capacity) {
      char on_call[slot_capacity + 40];
      char later[slot_capacity + 40];
      const std::size_t expected = hs::format_timeline_args(call, on_call, capacity);
      const std::size_t got =
          hs::format_packed_args(call.function().param_names, call.args_given(), packed, later, capacity);
      if (expected > capacity) {  // a slot too small for even the count of arguments left out: nothing written
        CHECK(got > capacity);
        continue;
      }
      if (std::string_view(later, got) != std::string_view(on_call, expected)) {
        FAIL_CHECK("capacity " << capacity << ": " << std::string_view(later, got)
                               << " != " << std::string_view(on_call, expected));
      }
    }
    ++calls;
  }
};

template <class T>
T random_of(std::mt19937_64& rng) {
  if constexpr (std::is_same_v<T, bool>) {
    return (rng() & 1) != 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    switch (rng() % 4) {
      case 0: {
        const auto bits = rng();
        T value;
        std::memcpy(&value, &bits, sizeof value);
        return value;  // any pattern: NaNs, infinities, denormals
      }
      case 1: return static_cast<T>(-0.0);
      case 2: return static_cast<T>(static_cast<double>(rng() % 1000) / 8);
      default: return std::numeric_limits<T>::quiet_NaN();
    }
  } else {
    const auto bits = rng() >> (rng() % 64);  // small numbers as often as large ones
    T value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }
}

}  // namespace

TEST_CASE("pack_timeline_args") {
  std::mt19937_64 rng(GENERATE(11u, 12u, 13u));
  SECTION("twelve scalars of every width") {
    packed_matches_formatted check(timeline::scalars.info);
    for (int n = 0; n < 40; ++n) {
      (void)timeline::scalars(random_of<signed char>(rng), random_of<unsigned char>(rng), random_of<short>(rng),
                              random_of<unsigned short>(rng), random_of<int>(rng), random_of<unsigned>(rng),
                              random_of<long>(rng), random_of<unsigned long>(rng), random_of<float>(rng),
                              random_of<double>(rng), random_of<bool>(rng), random_of<char>(rng));
    }
    CHECK(check.calls == 40);
  }
  SECTION("names longer than the slot: the arguments left out are counted") {
    packed_matches_formatted check(timeline::named_long.info);
    for (int n = 0; n < 20; ++n) {
      (void)timeline::named_long(random_of<long>(rng), random_of<double>(rng), random_of<bool>(rng));
    }
    CHECK(check.calls == 20);
  }
  SECTION("a decoder's forward: tensors by their type name, cut to fair shares") {
    packed_matches_formatted check(timeline::forward.info);
    const hookscope::tensor_spec t{{1, 32, 128}, hookscope::dtype::float16};
    for (int n = 0; n < 20; ++n) (void)timeline::forward(t, t, t, t, random_of<int>(rng));
    CHECK(check.calls == 20);
  }
  SECTION("pointers, null or not, function pointers, a type without operator<<") {
    packed_matches_formatted check(timeline::pointers.info);
    int x = 0;
    (void)timeline::pointers(&x, "text", &impl::identity, impl::widget{1}, nullptr);
    (void)timeline::pointers(nullptr, nullptr, nullptr, impl::widget{2}, &x);
    (void)timeline::pointers(reinterpret_cast<const int*>(std::uintptr_t{0xffffffffffffff00}), nullptr, nullptr,
                             impl::widget{3}, reinterpret_cast<const void*>(std::uintptr_t{1}));
    CHECK(check.calls == 3);
  }
  SECTION("no argument") {
    packed_matches_formatted check(timeline::nothing.info);
    (void)timeline::nothing();
    CHECK(check.calls == 1);
  }
}

TEST_CASE("pack_timeline_args refuses arguments formatted only from themselves") {
  std::size_t refused = 0;
  auto sub = timeline::text.info.pre().add([&](const hookscope::erased_call& call) {
    char packed[slot_capacity];
    if (hs::pack_timeline_args(call, packed, slot_capacity) == hs::not_packed) ++refused;
  });
  (void)timeline::text("a string", 1);
  CHECK(refused == 1);
}
