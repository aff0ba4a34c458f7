// hookscope/adapters/eigen.hpp — Eigen matrices and arrays as tensors: shape {rows, cols}, or {n} for types that are
// vectors at compile time; dtype from the scalar type. Optional: needs Eigen 3.4 (Debian libeigen3-dev).
#pragma once

#include "hookscope/tensor.hpp"

#include <Eigen/Core>

#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

template <class M>
struct eigen_tensor_traits {
  using scalar = typename M::Scalar;
  static constexpr bool is_vector = M::RowsAtCompileTime == 1 || M::ColsAtCompileTime == 1;

  static auto shape(const M& m) {
    if constexpr (is_vector) {
      return std::array<std::int64_t, 1>{static_cast<std::int64_t>(m.size())};
    } else {
      return std::array<std::int64_t, 2>{static_cast<std::int64_t>(m.rows()), static_cast<std::int64_t>(m.cols())};
    }
  }
  static hookscope::dtype dtype(const M&) noexcept {
    static_assert(dtype_of<scalar>.has_value(),
                  "hookscope: Eigen adapter: the scalar type has no dtype (use float, double, a fixed-width "
                  "integer or bool)");
    return *dtype_of<scalar>;
  }
  /// The elements in row-major order (Eigen stores column-major by default), for the opt-in capture of contents.
  static auto data(const M& m) {
    std::vector<std::conditional_t<std::is_same_v<scalar, bool>, std::uint8_t, scalar>> elements;  // no vector<bool>
    elements.reserve(static_cast<std::size_t>(m.size()));
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      for (Eigen::Index j = 0; j < m.cols(); ++j) elements.push_back(m(i, j));
    }
    return elements;
  }
  /// A zero-filled matrix of `shape` (for placeholders); the dtype must be the scalar's.
  static M make_empty(const std::vector<std::int64_t>& shape, hookscope::dtype) {
    if constexpr (is_vector) {
      return M::Zero(static_cast<Eigen::Index>(shape.empty() ? 0 : shape[0]));
    } else {
      return M::Zero(static_cast<Eigen::Index>(shape.at(0)), static_cast<Eigen::Index>(shape.at(1)));
    }
  }
};

}  // namespace detail

template <class S, int R, int C, int O, int MR, int MC>
struct tensor_traits<Eigen::Matrix<S, R, C, O, MR, MC>>
    : detail::eigen_tensor_traits<Eigen::Matrix<S, R, C, O, MR, MC>> {};

template <class S, int R, int C, int O, int MR, int MC>
struct tensor_traits<Eigen::Array<S, R, C, O, MR, MC>> : detail::eigen_tensor_traits<Eigen::Array<S, R, C, O, MR, MC>> {
};

HOOKSCOPE_DETAIL_END_NAMESPACE
