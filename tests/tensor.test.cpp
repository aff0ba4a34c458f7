#include "hookscope/tensor.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <string>

namespace user {
// A user's own tensor type, made known to hookscope by a tensor_traits specialisation.
struct image {
  int height = 0;
  int width = 0;
};
}  // namespace user

template <>
struct hookscope::tensor_traits<user::image> {
  static std::array<std::int64_t, 3> shape(const user::image& i) { return {3, i.height, i.width}; }
  static hookscope::dtype dtype(const user::image&) { return hookscope::dtype::uint8; }
};

TEST_CASE("dtype names are the record format's") {
  using hookscope::dtype;
  STATIC_REQUIRE(hookscope::to_string(dtype::float32) == "float32");
  STATIC_REQUIRE(hookscope::to_string(dtype::bfloat16) == "bfloat16");
  STATIC_REQUIRE(hookscope::to_string(dtype::boolean) == "bool");
  STATIC_REQUIRE(hookscope::parse_dtype("int64") == dtype::int64);
  STATIC_REQUIRE(hookscope::parse_dtype("bool") == dtype::boolean);
  STATIC_REQUIRE_FALSE(hookscope::parse_dtype("float128").has_value());
  STATIC_REQUIRE_FALSE(hookscope::parse_dtype("boolean").has_value());
  for (int i = 0; i <= static_cast<int>(dtype::boolean); ++i) {
    const auto t = static_cast<dtype>(i);
    CHECK(hookscope::parse_dtype(hookscope::to_string(t)) == t);
  }
}

TEST_CASE("dtype_of") {
  STATIC_REQUIRE(hookscope::dtype_of<float> == hookscope::dtype::float32);
  STATIC_REQUIRE(hookscope::dtype_of<std::int64_t> == hookscope::dtype::int64);
  STATIC_REQUIRE(hookscope::dtype_of<bool> == hookscope::dtype::boolean);
  STATIC_REQUIRE_FALSE(hookscope::dtype_of<std::string>.has_value());
}

TEST_CASE("tensor_spec") {
  const hookscope::tensor_spec t{{1, 7}, hookscope::dtype::int64};
  CHECK(t.numel() == 7);
  CHECK(hookscope::tensor_spec{{}, hookscope::dtype::float32}.numel() == 1);
  CHECK(hookscope::tensor_spec{{2, 0, 3}}.numel() == 0);
  CHECK(t == hookscope::tensor_spec{{1, 7}, hookscope::dtype::int64});
  CHECK_FALSE(t == hookscope::tensor_spec{{1, 7}, hookscope::dtype::int32});
  STATIC_REQUIRE(hookscope::tensor<hookscope::tensor_spec>);
  CHECK(hookscope::tensor_traits<hookscope::tensor_spec>::make_empty({0, 3}, hookscope::dtype::float16) ==
        hookscope::tensor_spec{{0, 3}, hookscope::dtype::float16});
}

TEST_CASE("tensor_traits makes a user type a tensor") {
  STATIC_REQUIRE(hookscope::tensor<user::image>);
  STATIC_REQUIRE(hookscope::tensor<const user::image&>);
  STATIC_REQUIRE_FALSE(hookscope::tensor<int>);
  STATIC_REQUIRE_FALSE(hookscope::tensor<std::string>);
  CHECK(hookscope::spec_of(user::image{480, 640}) == hookscope::tensor_spec{{3, 480, 640}, hookscope::dtype::uint8});
}
