#include "hookscope/adapters/eigen.hpp"

#include "hookscope/capture.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <vector>

using hookscope::dtype;
using hookscope::tensor_spec;

TEST_CASE("Eigen matrices and arrays are tensors") {
  STATIC_REQUIRE(hookscope::tensor<Eigen::MatrixXf>);
  STATIC_REQUIRE(hookscope::tensor<Eigen::ArrayXXd>);
  STATIC_REQUIRE(hookscope::tensor<Eigen::Vector3i>);

  CHECK(hookscope::spec_of(Eigen::MatrixXf(2, 5)) == tensor_spec{{2, 5}, dtype::float32});
  CHECK(hookscope::spec_of(Eigen::Matrix<double, 3, 4>(Eigen::Matrix<double, 3, 4>::Zero())) ==
        tensor_spec{{3, 4}, dtype::float64});
  CHECK(hookscope::spec_of(Eigen::ArrayXXd(7, 1)) == tensor_spec{{7, 1}, dtype::float64});  // dynamic: a matrix

  SECTION("types that are vectors at compile time have rank 1") {
    CHECK(hookscope::spec_of(Eigen::VectorXf(6)) == tensor_spec{{6}, dtype::float32});
    CHECK(hookscope::spec_of(Eigen::RowVectorXd(4)) == tensor_spec{{4}, dtype::float64});
    CHECK(hookscope::spec_of(Eigen::Vector3i(Eigen::Vector3i::Zero())) == tensor_spec{{3}, dtype::int32});
    CHECK(hookscope::spec_of(Eigen::Array<std::int64_t, Eigen::Dynamic, 1>(5)) == tensor_spec{{5}, dtype::int64});
  }
  SECTION("captured like any tensor") {
    const std::vector<Eigen::MatrixXf> layers{Eigen::MatrixXf(2, 3), Eigen::MatrixXf(4, 3)};
    CHECK(hookscope::capture_value(layers) ==
          hookscope::value::list({tensor_spec{{2, 3}, dtype::float32}, tensor_spec{{4, 3}, dtype::float32}}));
  }
  SECTION("make_empty gives zeros of the shape") {
    const Eigen::MatrixXf zeros = hookscope::tensor_traits<Eigen::MatrixXf>::make_empty({0, 3}, dtype::float32);
    CHECK(zeros.rows() == 0);
    CHECK(zeros.cols() == 3);
    const Eigen::VectorXd v = hookscope::tensor_traits<Eigen::VectorXd>::make_empty({4}, dtype::float64);
    CHECK(v.size() == 4);
    CHECK(v.isZero());
  }
}

TEST_CASE("Eigen contents captured on request, in row-major order") {
  Eigen::Matrix<std::int32_t, 2, 3> m;  // column-major storage: 1 4 2 5 3 6
  m << 1, 2, 3, 4, 5, 6;
  CHECK(hookscope::capture(m).data.empty());  // shapes only unless asked
  const tensor_spec with_data = hookscope::capture(m, {.tensor_data = true});
  REQUIRE(with_data.data.size() == 6 * sizeof(std::int32_t));
  std::array<std::int32_t, 6> elements{};
  std::memcpy(elements.data(), with_data.data.data(), with_data.data.size());
  CHECK(elements == std::array<std::int32_t, 6>{1, 2, 3, 4, 5, 6});

  SECTION("bool matrices: one byte per element") {
    Eigen::Matrix<bool, 1, 3> mask;
    mask << true, false, true;
    const tensor_spec captured = hookscope::capture(mask, {.tensor_data = true});
    CHECK(captured.data == std::vector<std::byte>{std::byte{1}, std::byte{0}, std::byte{1}});
  }
}
