// The library's formatting and capture tables of the common parameter types (detail/value_ops.hpp): compiled once
// here instead of in every translation unit that annotates a function taking one of them.
#include "hookscope/detail/value_ops.hpp"

#include "hookscope/tensor.hpp"

#include <string>
#include <string_view>

#if HOOKSCOPE_ENABLED

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

// Constant-initialised (function pointers only): usable from any static initialiser, like the tables they replace.
constinit const value_ops common_value_ops::boolean = make_value_ops<bool>();
constinit const value_ops common_value_ops::char_ = make_value_ops<char>();
constinit const value_ops common_value_ops::signed_char = make_value_ops<signed char>();
constinit const value_ops common_value_ops::unsigned_char = make_value_ops<unsigned char>();
constinit const value_ops common_value_ops::short_ = make_value_ops<short>();
constinit const value_ops common_value_ops::unsigned_short = make_value_ops<unsigned short>();
constinit const value_ops common_value_ops::int_ = make_value_ops<int>();
constinit const value_ops common_value_ops::unsigned_int = make_value_ops<unsigned>();
constinit const value_ops common_value_ops::long_ = make_value_ops<long>();
constinit const value_ops common_value_ops::unsigned_long = make_value_ops<unsigned long>();
constinit const value_ops common_value_ops::long_long = make_value_ops<long long>();
constinit const value_ops common_value_ops::unsigned_long_long = make_value_ops<unsigned long long>();
constinit const value_ops common_value_ops::float_ = make_value_ops<float>();
constinit const value_ops common_value_ops::double_ = make_value_ops<double>();
constinit const value_ops common_value_ops::long_double = make_value_ops<long double>();
constinit const value_ops common_value_ops::string = make_value_ops<std::string>();
constinit const value_ops common_value_ops::string_view = make_value_ops<std::string_view>();
constinit const value_ops common_value_ops::tensor = make_value_ops<tensor_spec>();

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif
