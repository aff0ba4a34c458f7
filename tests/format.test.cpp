// Values copied raw on the call and formatted later (hookscope/detail/format.hpp: text_kind_of, text_bits, text_of):
// the text written from the bits is format_value's text of the value, over many types and random values.
#include "hookscope/detail/format.hpp"

#include "hookscope/detail/value_ops.hpp"
#include "hookscope/tensor.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace hs = hookscope::detail;

namespace {

struct plain_struct {
  int a;
};
struct printed {
  int a;
};
[[maybe_unused]] std::ostream& operator<<(std::ostream& os, const printed& p) { return os << "printed " << p.a; }
enum class scoped_enum { one };
enum unscoped_enum { unscoped_one };
struct opted_in {
  int a;
};
int free_function(int x) { return x; }

}  // namespace

template <>
inline constexpr bool hookscope::capture_pointee<opted_in> = true;

namespace {

// text_of over text_bits, where format_value's text is expected.
template <class T>
std::string later_text(const T& value) {
  char buffer[hs::text_buffer_size];
  return std::string(hs::text_of(hs::text_kind_of<T>, hs::text_bits(value), buffer));
}

template <class T>
void check_later_text(const T& value) {
  INFO(hs::type_name<T>());
  CHECK(later_text(value) == hs::format_value(value));
#if HOOKSCOPE_ENABLED  // the library's tables exist in enabled builds only
  // The type's table (value_ops) carries the same kind, and its text_bits the same bits.
  const hs::value_ops& ops = hs::value_ops_for<T>;
  CHECK(ops.text == hs::text_kind_of<T>);
  REQUIRE(ops.text_bits != nullptr);
  CHECK(ops.text_bits(&value) == hs::text_bits(value));
#endif
}

// Random integers of T: every bit pattern equally likely, and the edges.
template <class T>
void check_integers(std::mt19937_64& rng) {
  check_later_text(std::numeric_limits<T>::min());
  check_later_text(std::numeric_limits<T>::max());
  check_later_text(T{0});
  for (int i = 0; i < 200; ++i) {
    const auto bits = rng();
    T value;
    std::memcpy(&value, &bits, sizeof value);
    check_later_text(value);
  }
}

template <class F>
void check_floats(std::mt19937_64& rng) {
  using limits = std::numeric_limits<F>;
  for (F value : {F{0}, -F{0}, F{1}, F{-1.5}, limits::infinity(), -limits::infinity(), limits::quiet_NaN(),
                  -limits::quiet_NaN(), limits::signaling_NaN(), limits::min(), limits::max(), limits::lowest(),
                  limits::denorm_min(), limits::epsilon(), F(0.1), F(1e-7), F(123456789)}) {
    check_later_text(value);
  }
  for (int i = 0; i < 500; ++i) {
    // Any bit pattern (NaNs with payloads, denormals), and values of everyday magnitudes.
    const auto bits = rng();
    F value;
    std::memcpy(&value, &bits, sizeof value);
    check_later_text(value);
    check_later_text(static_cast<F>(std::uniform_real_distribution<double>(-1e6, 1e6)(rng)));
  }
}

}  // namespace

TEST_CASE("text_kind_of") {
  STATIC_REQUIRE(hs::text_kind_of<int> == hs::text_kind::signed_integer);
  STATIC_REQUIRE(hs::text_kind_of<char> == hs::text_kind::signed_integer);  // written as an int
  STATIC_REQUIRE(hs::text_kind_of<unsigned char> == hs::text_kind::signed_integer);
  STATIC_REQUIRE(hs::text_kind_of<unsigned long> == hs::text_kind::unsigned_integer);
  STATIC_REQUIRE(hs::text_kind_of<bool> == hs::text_kind::boolean);
  STATIC_REQUIRE(hs::text_kind_of<float> == hs::text_kind::float32);
  STATIC_REQUIRE(hs::text_kind_of<double> == hs::text_kind::float64);
  STATIC_REQUIRE(hs::text_kind_of<int*> == hs::text_kind::address);
  STATIC_REQUIRE(hs::text_kind_of<const char*> == hs::text_kind::address);  // a char pointer is not read
  STATIC_REQUIRE(hs::text_kind_of<plain_struct> == hs::text_kind::type_name);
  STATIC_REQUIRE(hs::text_kind_of<scoped_enum> == hs::text_kind::type_name);
  STATIC_REQUIRE(hs::text_kind_of<hookscope::tensor_spec> == hs::text_kind::type_name);
  STATIC_REQUIRE(hs::text_kind_of<int plain_struct::*> == hs::text_kind::type_name);
  // Formatted only from the value itself.
  STATIC_REQUIRE(hs::text_kind_of<long double> == hs::text_kind::formatted);
  STATIC_REQUIRE(hs::text_kind_of<std::string> == hs::text_kind::formatted);
  STATIC_REQUIRE(hs::text_kind_of<std::string_view> == hs::text_kind::formatted);
  STATIC_REQUIRE(hs::text_kind_of<char[4]> == hs::text_kind::formatted);
  STATIC_REQUIRE(hs::text_kind_of<printed> == hs::text_kind::formatted);
  STATIC_REQUIRE(hs::text_kind_of<unscoped_enum> == hs::text_kind::formatted);  // streamed as its integer
  STATIC_REQUIRE(hs::text_kind_of<opted_in*> == hs::text_kind::formatted);      // its pointee is read
  STATIC_REQUIRE(hs::text_kind_of<std::vector<int>> == hs::text_kind::type_name);
#if HOOKSCOPE_ENABLED
  CHECK(hs::value_ops_for<std::string>.text_bits == nullptr);
  CHECK(hs::value_ops_for<printed>.text_bits == nullptr);
#endif
}

TEST_CASE("text_of") {
  std::mt19937_64 rng(GENERATE(1u, 2u, 3u));
  SECTION("integers of every width") {
    check_integers<signed char>(rng);
    check_integers<unsigned char>(rng);
    check_integers<char>(rng);
    check_integers<short>(rng);
    check_integers<unsigned short>(rng);
    check_integers<int>(rng);
    check_integers<unsigned>(rng);
    check_integers<long>(rng);
    check_integers<unsigned long>(rng);
    check_integers<long long>(rng);
    check_integers<unsigned long long>(rng);
    check_integers<wchar_t>(rng);
    check_integers<char16_t>(rng);
    check_integers<char32_t>(rng);
  }
  SECTION("floats: NaN, infinities, -0.0, denormals, any bit pattern") {
    check_floats<float>(rng);
    check_floats<double>(rng);
  }
  SECTION("bool") {
    check_later_text(true);
    check_later_text(false);
  }
  SECTION("pointers: addresses and null, never read") {
    int x = 0;
    check_later_text(&x);
    check_later_text(static_cast<int*>(nullptr));
    check_later_text(static_cast<const char*>("text"));
    check_later_text(static_cast<const char*>(nullptr));
    check_later_text(static_cast<const void*>(&x));
    check_later_text(&free_function);
    for (int i = 0; i < 200; ++i) check_later_text(reinterpret_cast<const double*>(rng() & ~std::uint64_t{7}));
  }
  SECTION("types shown by their name") {
    check_later_text(plain_struct{1});
    check_later_text(scoped_enum::one);
    check_later_text(hookscope::tensor_spec{{2, 3}, hookscope::dtype::float16});
    check_later_text(&plain_struct::a);
    check_later_text(std::vector<int>{1, 2});
  }
}
