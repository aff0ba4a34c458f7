// The type zoo: parameter types from the standard library and from typical engine and compiler code, each taken by
// an annotated function (zoo::<entry>(v)). Shared by tests/type_zoo.test.cpp (the captures, in-process) and
// tests/type_zoo_program.cpp (every function called, built with both compilers in both modes, under
// HOOKSCOPE_RECORD: tests/zoo/test_type_zoo.py). What each capture must be is in tests/type_zoo_expected.txt,
// derived by hand; whether each type is structural (hookscope::capturable) is the third column below, asserted here.
#pragma once

#include "hookscope/capture.hpp"
#include "hookscope/observable.hpp"

#include <any>
#include <array>
#include <atomic>
#include <bitset>
#include <chrono>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <iterator>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace zoo {

struct engine;  // never defined: an opaque handle

struct ir_node {  // a compiler's IR: recursive through a vector
  std::string op;
  std::vector<ir_node> inputs;
};

struct list_item {  // recursive through a pointer
  int value;
  const list_item* next;
};

enum color { red, green };
enum class precision : std::uint8_t { fp32 = 1, fp16 = 2 };

struct config {
  int layers;
  double scale;
};

union number {
  int i;
  float f;
};

class account {  // private members: not an aggregate
 public:
  explicit account(int id) : id_(id) {}
  int id() const { return id_; }

 private:
  int id_;
};

struct view {  // reference members
  const std::string& name;
  int& count;
};

struct base {
  int id;
};
struct derived : base {  // an aggregate with a base class
  int extra;
};
struct layer : base {  // the same, given flatten_traits
  int width;
};

struct c_header {  // a C struct with array members
  int id;
  char name[16];
  float weights[3];
};

struct point {
  int x;
  int y;
};

struct tagged_value {  // a C tagged union: an anonymous union member, which no structured binding decomposes
  int kind;
  union {
    int i;
    float f;
  };
};

struct flags {  // bit-fields
  unsigned ready : 1;
  unsigned level : 3;
};

class shape {  // polymorphic and abstract
 public:
  virtual ~shape() = default;
  virtual double area() const = 0;
};
class square : public shape {
 public:
  double area() const override { return 4.0; }
};

struct wide {  // more fields than an aggregate may have
  int f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24,
      f25, f26, f27, f28, f29, f30, f31, f32;
};

struct secret {  // an aggregate its user opts out (capture_as_opaque)
  int key;
};

struct any_holder {  // a first member constructible from almost anything: still no base class
  std::any payload;
  int tag;
};

using string_map = std::map<std::string, int>;
using int_map = std::map<int, std::string>;
using string_unordered_map = std::unordered_map<std::string, double>;
using optional_config_ref = std::optional<std::reference_wrapper<const config>>;
using int_string_variant = std::variant<int, std::string>;
using monostate_variant = std::variant<std::monostate, int>;
using byte_array = std::array<std::byte, 2>;
using int_function = std::function<int(int)>;
inline const auto add_one = [](int x) { return x + 1; };
using closure = std::remove_cvref_t<decltype(add_one)>;
using unary_function_pointer = int (*)(int);
using config_member_pointer = int config::*;
using account_method_pointer = int (account::*)() const;
using int_string_monostate = std::tuple<int, std::string, std::monostate>;
using string_account_pair = std::pair<std::string, account>;
using nested = std::vector<std::map<std::string, std::vector<int>>>;
using point_array = std::array<point, 2>;
using grid = int[2][3];
using name_buffer = char[8];
// A single-pass range of a stream's characters, as std::ranges::subrange<std::istreambuf_iterator<char>> is one
// (written by hand: Clang 14 cannot compile libstdc++ 12's subrange).
struct stream_chars {
  std::istreambuf_iterator<char> first;
  std::istreambuf_iterator<char> last;
  std::istreambuf_iterator<char> begin() const { return first; }
  std::istreambuf_iterator<char> end() const { return last; }
};

struct name_ref {  // converts to std::string_view: captured as the aggregate it is, never through the conversion
  std::string_view text;
  int id;
  operator std::string_view() const { return text; }
};

// A view that runs a function of the program's on each element as it is iterated, as std::views::transform does
// (written by hand: Clang 14 cannot compile libstdc++ 12's view_interface).
struct transformed : std::ranges::view_base {
  std::span<const int> items;
  int (*f)(int) = nullptr;
  struct iterator {
    using value_type = int;
    using difference_type = std::ptrdiff_t;
    const int* at = nullptr;
    int (*f)(int) = nullptr;
    int operator*() const { return f(*at); }
    iterator& operator++() {
      ++at;
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      ++at;
      return before;
    }
    bool operator==(const iterator& o) const { return at == o.at; }
  };
  iterator begin() const { return {items.data(), f}; }
  iterator end() const { return {items.data() + items.size(), f}; }
};
inline int twice(int x) { return 2 * x; }
#ifdef __SIZEOF_INT128__
__extension__ typedef __int128 int128;
#endif

// Storage for the samples that are references to objects (non-copyable ones, pointers, views).
struct storage {
  std::string name = "weights";
  int count = 3;
  config cfg{2, 0.5};
  list_item second{2, nullptr};
  list_item first{1, &second};
  std::vector<float> floats{1.5f, 2.5f};
  std::atomic<int> atomic_int{4};
  std::mutex mutex;
  square sq;
  std::shared_ptr<int> shared = std::make_shared<int>(5);
  char buffer[4] = {'a', 'b', 'c', 'd'};  // no NUL: a buffer with a length, never read as a C string
  std::vector<int> numbers{1, 2};
};
inline storage& stored() {
  static storage s;
  return s;
}

inline c_header make_c_header(const char* name, std::size_t n) {
  c_header h{7, {}, {1.0f, 2.0f, 3.0f}};
  for (std::size_t i = 0; i < n; ++i) h.name[i] = name[i];
  return h;
}

inline list_item make_cycle() {
  static list_item a{1, nullptr};
  static list_item b{2, &a};
  a.next = &b;
  return a;
}

}  // namespace zoo

template <>
struct hookscope::flatten_traits<zoo::layer> {
  static constexpr std::string_view name = "layer";
  static std::vector<std::pair<std::string, int>> flatten(const zoo::layer& l) {
    return {{"id", l.id}, {"width", l.width}};
  }
};

template <>
inline constexpr bool hookscope::capture_as_opaque<zoo::secret> = true;
// Pointers to them are captured as their pointee (read without faulting): a list's successor, a configuration.
template <>
inline constexpr bool hookscope::capture_pointee<zoo::list_item> = true;
template <>
inline constexpr bool hookscope::capture_pointee<zoo::config> = true;

// X(entry, parameter type, structural (capturable), sample argument...): every entry of the zoo.
#define ZOO_COMMON_ENTRIES(X)                                                                                   \
  X(ir_node_tree, zoo::ir_node, true, zoo::ir_node{"add", {zoo::ir_node{"x", {}}, zoo::ir_node{"y", {}}}})      \
  X(linked_list, zoo::list_item, true, zoo::stored().first)                                                     \
  X(cyclic_list, zoo::list_item, true, zoo::make_cycle())                                                       \
  X(handle, zoo::engine*, false, reinterpret_cast<zoo::engine*>(&zoo::stored().count))                          \
  X(plain_enum, zoo::color, true, zoo::green)                                                                   \
  X(enum_class, zoo::precision, true, zoo::precision::fp16)                                                     \
  X(duration, std::chrono::milliseconds, false, std::chrono::milliseconds(5))                                   \
  X(time_point, std::chrono::system_clock::time_point, false, std::chrono::system_clock::time_point{})          \
  X(float_span, std::span<const float>, true, std::span<const float>(zoo::stored().floats))                     \
  X(string_keyed_map, zoo::string_map, true, zoo::string_map{{"a", 1}, {"b", 2}})                               \
  X(int_keyed_map, zoo::int_map, true, zoo::int_map{{1, "one"}})                                                \
  X(unordered_map, zoo::string_unordered_map, true, zoo::string_unordered_map{{"k", 0.5}})                      \
  X(set, std::set<int>, true, std::set<int>{3, 1})                                                              \
  X(optional_reference, zoo::optional_config_ref, true, zoo::optional_config_ref(std::cref(zoo::stored().cfg))) \
  X(optional_reference_empty, zoo::optional_config_ref, true, zoo::optional_config_ref())                       \
  X(reference_wrapper, std::reference_wrapper<int>, true, std::ref(zoo::stored().count))                        \
  X(union_type, zoo::number, false, zoo::number{3})                                                             \
  X(private_members, zoo::account, false, zoo::account(11))                                                     \
  X(reference_members, zoo::view, true, zoo::view{zoo::stored().name, zoo::stored().count})                     \
  X(base_class, zoo::derived, false, zoo::derived{{1}, 2})                                                      \
  X(base_class_flattened, zoo::layer, true, zoo::layer{{1}, 64})                                                \
  X(c_struct, zoo::c_header, true, zoo::make_c_header("conv1", 5))                                              \
  X(c_struct_full_name, zoo::c_header, true, zoo::make_c_header("abcdefghijklmnop", 16))                        \
  X(bitset, std::bitset<8>, false, std::bitset<8>(5))                                                           \
  X(path, std::filesystem::path, true, std::filesystem::path("/models/x.onnx"))                                 \
  X(byte_vector, std::vector<std::byte>, true,                                                                  \
    std::vector<std::byte>{std::byte{0x00}, std::byte{0xff}, std::byte{0x10}})                                  \
  X(byte_std_array, zoo::byte_array, true, zoo::byte_array{std::byte{1}, std::byte{2}})                         \
  X(bool_vector, std::vector<bool>, true, std::vector<bool>{true, false, true})                                 \
  X(variant, zoo::int_string_variant, true, zoo::int_string_variant(std::string("x")))                          \
  X(variant_monostate, zoo::monostate_variant, true, zoo::monostate_variant())                                  \
  X(monostate, std::monostate, true, std::monostate{})                                                          \
  X(any, std::any, false, std::any(3))                                                                          \
  X(function, zoo::int_function, false, zoo::int_function(zoo::add_one))                                        \
  X(lambda, zoo::closure, false, zoo::add_one)                                                                  \
  X(atomic, std::atomic<int>, false, zoo::stored().atomic_int)                                                  \
  X(mutex, std::mutex, false, zoo::stored().mutex)                                                              \
  X(unique_ptr, std::unique_ptr<int>, true, std::make_unique<int>(9))                                           \
  X(shared_ptr, std::shared_ptr<int>, true, zoo::stored().shared)                                               \
  X(weak_ptr, std::weak_ptr<int>, false, std::weak_ptr<int>(zoo::stored().shared))                              \
  X(string_view, std::string_view, true, std::string_view("sv"))                                                \
  X(u8string, std::u8string, true, std::u8string(u8"\u00e9"))                                                   \
  X(wstring, std::wstring, true, std::wstring(L"hi"))                                                           \
  X(wchar_pointer, const wchar_t*, false, L"hi")                                                                \
  X(complex, std::complex<double>, false, std::complex<double>(1.0, 2.0))                                       \
  X(long_double, long double, true, 0.25L)                                                                      \
  X(plain_char, char, true, 'A')                                                                                \
  X(signed_char, signed char, true, static_cast<signed char>(-1))                                               \
  X(unsigned_char, unsigned char, true, static_cast<unsigned char>(255))                                        \
  X(                                                                                                            \
      function_pointer, zoo::unary_function_pointer, false, +[](int x) { return x; })                           \
  X(member_pointer, zoo::config_member_pointer, false, &zoo::config::layers)                                    \
  X(method_pointer, zoo::account_method_pointer, false, &zoo::account::id)                                      \
  X(void_pointer, void*, false, static_cast<void*>(&zoo::stored().count))                                       \
  X(null_pointer, std::nullptr_t, true, nullptr)                                                                \
  X(tuple, zoo::int_string_monostate, true, zoo::int_string_monostate{1, "a", {}})                              \
  X(pair_with_opaque, zoo::string_account_pair, false, zoo::string_account_pair{"h", zoo::account(1)})          \
  X(nested_containers, zoo::nested, true, zoo::nested{{{"a", {1, 2}}}})                                         \
  X(struct_array, zoo::point_array, true, zoo::point_array{zoo::point{1, 2}, zoo::point{3, 4}})                 \
  X(deque, std::deque<int>, true, std::deque<int>{1, 2})                                                        \
  X(list, std::list<std::string>, true, std::list<std::string>{"a"})                                            \
  X(queue, std::queue<int>, false, std::queue<int>())                                                           \
  X(optional_empty, std::optional<int>, true, std::optional<int>())                                             \
  X(abstract_class, zoo::shape, false, zoo::stored().sq)                                                        \
  X(too_many_fields, zoo::wide, false, zoo::wide{})                                                             \
  X(opted_out, zoo::secret, false, zoo::secret{42})                                                             \
  X(any_member, zoo::any_holder, false, zoo::any_holder{std::any(1), 2})                                        \
  X(two_dimensional_array, zoo::grid, true, zoo::grid{{1, 2, 3}, {4, 5, 6}})                                    \
  X(char_buffer, zoo::name_buffer, true, zoo::name_buffer{'r', 'e', 'l', 'u', '\0', 'x', 'x', 'x'})             \
  X(non_utf8_string, std::string, true, std::string("\xff\xfe"))                                                \
  X(anonymous_union_member, zoo::tagged_value, false, zoo::tagged_value{1, {2}})                                \
  X(bit_fields, zoo::flags, true, zoo::flags{1, 5})                                                             \
  X(infinity, double, true, std::numeric_limits<double>::infinity())                                            \
  X(char_pointer, const char*, false, "hi")                                                                     \
  X(char_buffer_pointer, char*, false, zoo::stored().buffer)                                                    \
  X(float_pointer, const float*, false, zoo::stored().floats.data())                                            \
  X(config_pointer, const zoo::config*, true, &zoo::stored().cfg)                                               \
  X(stream_range, zoo::stream_chars, false, zoo::stream_chars())                                                \
  X(directory, std::filesystem::directory_iterator, false, std::filesystem::directory_iterator())               \
  X(transform_view, zoo::transformed, false, zoo::transformed{{}, zoo::stored().numbers, zoo::twice})           \
  X(string_convertible, zoo::name_ref, true, zoo::name_ref{"relu", 4})                                          \
  X(large_vector, std::vector<int>, true, std::vector<int>(300'000))

// X(entry, parameter type, structural, sample...): entries annotated with a `*` before the parameter's name, whose
// pointee is captured (read without faulting) whatever its type's rule. "Structural" is then the call's
// (erased_call::can_capture_args).
#define ZOO_POINTEE_ENTRIES(X)                                                           \
  X(c_string_parameter, const char*, true, "hi")                                         \
  X(unreadable_c_string_parameter, const char*, true, reinterpret_cast<const char*>(16)) \
  X(int_pointer_parameter, const int*, true, &zoo::stored().count)

#ifdef __SIZEOF_INT128__
#define ZOO_PLAIN_ENTRIES(X) \
  ZOO_COMMON_ENTRIES(X) X(int128_value, zoo::int128, false, static_cast<zoo::int128>(1) << 100)
#else
#define ZOO_PLAIN_ENTRIES(X) ZOO_COMMON_ENTRIES(X)
#endif
#define ZOO_ENTRIES(X) ZOO_PLAIN_ENTRIES(X) ZOO_POINTEE_ENTRIES(X)

namespace zoo {
template <class T>
using cref = const T&;
}  // namespace zoo

// One annotated function per entry, taking the entry's type by const reference.
#define ZOO_FUNCTION_NAMED(entry, type, parameter)                       \
  namespace zoo::impl {                                                  \
  inline int entry(cref<type> v) { return static_cast<int>(sizeof(v)); } \
  }                                                                      \
  namespace zoo {                                                        \
  HOOKSCOPE_OBSERVABLE(entry, impl::entry, parameter);                   \
  }
#define ZOO_FUNCTION(entry, type, structural, ...) ZOO_FUNCTION_NAMED(entry, type, v)
#define ZOO_POINTEE_FUNCTION(entry, type, structural, ...) ZOO_FUNCTION_NAMED(entry, type, *v)
ZOO_PLAIN_ENTRIES(ZOO_FUNCTION)
ZOO_POINTEE_ENTRIES(ZOO_POINTEE_FUNCTION)
#undef ZOO_FUNCTION
#undef ZOO_POINTEE_FUNCTION
#undef ZOO_FUNCTION_NAMED

// What is structural, decided for each entry (the zoo's third column); a `*v` entry's type alone is not (a raw
// pointer is an address), its call's is (tests/type_zoo.test.cpp).
#define ZOO_STRUCTURAL(entry, type, structural, ...)                                      \
  static_assert(hookscope::capturable<type> == structural, "zoo: capturable<" #type ">"); \
  static_assert(hookscope::capturable<zoo::cref<type>> == structural, "zoo: capturable<const " #type "&>");
#define ZOO_POINTEE_STRUCTURAL(entry, type, structural, ...) \
  static_assert(!hookscope::capturable<type>, "zoo: a raw pointer is structural only when read");
ZOO_PLAIN_ENTRIES(ZOO_STRUCTURAL)
ZOO_POINTEE_ENTRIES(ZOO_POINTEE_STRUCTURAL)
#undef ZOO_STRUCTURAL
#undef ZOO_POINTEE_STRUCTURAL

namespace zoo {
/// Calls every function of the zoo once, with its sample; returns how many were called.
inline int call_every_function() {
  int calls = 0;
#define ZOO_CALL(entry, type, structural, ...) \
  (void)zoo::entry(__VA_ARGS__);               \
  ++calls;
  ZOO_ENTRIES(ZOO_CALL)
#undef ZOO_CALL
  return calls;
}
}  // namespace zoo
