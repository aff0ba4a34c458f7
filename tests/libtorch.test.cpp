#include "hookscope/adapters/libtorch.hpp"

#include "hookscope/capture.hpp"

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <array>
#include <cstring>
#include <vector>

using hookscope::dtype;
using hookscope::tensor_spec;

namespace {
template <class T, std::size_t N>
std::array<T, N> elements_of(const tensor_spec& spec) {
  std::array<T, N> elements{};
  REQUIRE(spec.data.size() == N * sizeof(T));
  std::memcpy(elements.data(), spec.data.data(), spec.data.size());
  return elements;
}
}  // namespace

TEST_CASE("LibTorch tensors are tensors: shape from sizes()") {
  STATIC_REQUIRE(hookscope::tensor<at::Tensor>);
  CHECK(hookscope::spec_of(at::zeros({2, 8, 7, 64})) == tensor_spec{{2, 8, 7, 64}, dtype::float32});
  CHECK(hookscope::spec_of(at::zeros({0, 3})) == tensor_spec{{0, 3}, dtype::float32});
  CHECK(hookscope::spec_of(at::scalar_tensor(1.5)) == tensor_spec{{}, dtype::float32});  // rank 0
  CHECK(hookscope::spec_of(at::zeros({4, 6}).transpose(0, 1)) == tensor_spec{{6, 4}, dtype::float32});
}

TEST_CASE("LibTorch dtypes map to the record dtypes") {
  const std::vector<std::pair<at::ScalarType, dtype>> mapped = {
      {at::kDouble, dtype::float64},    {at::kFloat, dtype::float32}, {at::kHalf, dtype::float16},
      {at::kBFloat16, dtype::bfloat16}, {at::kLong, dtype::int64},    {at::kInt, dtype::int32},
      {at::kShort, dtype::int16},       {at::kChar, dtype::int8},     {at::kByte, dtype::uint8},
      {at::kBool, dtype::boolean}};
  for (const auto& [torch_type, expected] : mapped) {
    CAPTURE(c10::toString(torch_type));
    CHECK(hookscope::tensor_traits<at::Tensor>::dtype(at::zeros({2}, at::TensorOptions().dtype(torch_type))) ==
          expected);
  }

  SECTION("any other dtype is an error that names it") {
    const at::Tensor complex = at::zeros({2, 2}, at::TensorOptions().dtype(at::kComplexFloat));
    CHECK_THROWS_AS(hookscope::capture_value(complex), hookscope::value_error);
    CHECK_THROWS_WITH(hookscope::capture_value(complex),
                      Catch::Matchers::Contains("LibTorch adapter: dtype ComplexFloat has no record dtype"));
    CHECK_THROWS_AS(hookscope::spec_of(at::zeros({1}, at::TensorOptions().dtype(at::kComplexDouble))),
                    hookscope::value_error);
  }
  SECTION("an undefined tensor is an error") {
    CHECK_THROWS_AS(hookscope::spec_of(at::Tensor{}), hookscope::value_error);
    CHECK_THROWS_WITH(hookscope::spec_of(at::Tensor{}), Catch::Matchers::Contains("undefined"));
  }
}

TEST_CASE("LibTorch contents captured on request, in row-major order") {
  const at::Tensor m = at::arange(6, at::TensorOptions().dtype(at::kInt)).reshape({2, 3});  // 0 1 2 / 3 4 5
  CHECK(hookscope::capture(m).data.empty());                                                // shapes only unless asked

  SECTION("a contiguous CPU tensor: its bytes, read in place") {
    const tensor_spec captured = hookscope::capture(m, {.tensor_data = true});
    CHECK(captured.shape == std::vector<std::int64_t>{2, 3});
    CHECK(elements_of<std::int32_t, 6>(captured) == std::array<std::int32_t, 6>{0, 1, 2, 3, 4, 5});
    const auto bytes = hookscope::tensor_traits<at::Tensor>::data(m);
    CHECK(static_cast<const void*>(bytes.data()) == m.data_ptr());  // no copy
  }
  SECTION("a non-contiguous tensor: copied in row-major order of its own shape") {
    const at::Tensor t = m.transpose(0, 1);  // 3x2: 0 3 / 1 4 / 2 5
    REQUIRE_FALSE(t.is_contiguous());
    const tensor_spec captured = hookscope::capture(t, {.tensor_data = true});
    CHECK(captured.shape == std::vector<std::int64_t>{3, 2});
    CHECK(elements_of<std::int32_t, 6>(captured) == std::array<std::int32_t, 6>{0, 3, 1, 4, 2, 5});
  }
  SECTION("a slice with a storage offset") {
    const at::Tensor row = m.select(0, 1);  // 3 4 5, contiguous, offset 3
    CHECK(elements_of<std::int32_t, 3>(hookscope::capture(row, {.tensor_data = true})) ==
          std::array<std::int32_t, 3>{3, 4, 5});
    const at::Tensor column = m.select(1, 2);  // 2 5, strided
    CHECK(elements_of<std::int32_t, 2>(hookscope::capture(column, {.tensor_data = true})) ==
          std::array<std::int32_t, 2>{2, 5});
  }
  SECTION("bool and half tensors: their element sizes") {
    const at::Tensor mask = at::tensor({1, 0, 1}, at::TensorOptions().dtype(at::kInt)).to(at::kBool);
    // (extra parentheses: glog's operator<< for std::vector, pulled in by LibTorch, cannot print std::byte)
    CHECK((hookscope::capture(mask, {.tensor_data = true}).data ==
           std::vector<std::byte>{std::byte{1}, std::byte{0}, std::byte{1}}));
    CHECK(
        hookscope::capture(at::ones({2, 2}, at::TensorOptions().dtype(at::kHalf)), {.tensor_data = true}).data.size() ==
        8);
  }
}

TEST_CASE("LibTorch make_empty gives zeros of the shape and dtype, on the CPU") {
  const at::Tensor zeros = hookscope::tensor_traits<at::Tensor>::make_empty({2, 0, 5}, dtype::float16);
  CHECK(zeros.sizes() == c10::IntArrayRef({2, 0, 5}));
  CHECK(zeros.scalar_type() == at::kHalf);
  CHECK(zeros.device().is_cpu());
  const at::Tensor ids = hookscope::tensor_traits<at::Tensor>::make_empty({3}, dtype::int64);
  CHECK(ids.scalar_type() == at::kLong);
  CHECK(ids.eq(0).all().item<bool>());
  for (dtype t :
       {dtype::float64, dtype::bfloat16, dtype::int32, dtype::int16, dtype::int8, dtype::uint8, dtype::boolean}) {
    CHECK(hookscope::tensor_traits<at::Tensor>::dtype(hookscope::tensor_traits<at::Tensor>::make_empty({1}, t)) == t);
  }
}

TEST_CASE("a KV cache of LibTorch tensors is captured as a list of tensors") {
  const std::vector<at::Tensor> cache = {at::zeros({2, 4, 7, 16}), at::zeros({2, 4, 7, 16}),
                                         at::zeros({2, 4, 7, 16}, at::TensorOptions().dtype(at::kHalf))};
  CHECK(hookscope::capture_value(cache) ==
        hookscope::value::list({tensor_spec{{2, 4, 7, 16}, dtype::float32}, tensor_spec{{2, 4, 7, 16}, dtype::float32},
                                tensor_spec{{2, 4, 7, 16}, dtype::float16}}));
  CHECK(hookscope::to_json(hookscope::capture_value(std::vector<at::Tensor>{at::zeros({1, 2}, at::kLong)})) ==
        R"({"list":[{"shape":[1,2],"dtype":"int64"}]})");
  CHECK(hookscope::capture_value(std::vector<at::Tensor>{}) == hookscope::value::list({}));
}
