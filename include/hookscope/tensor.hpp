// hookscope/tensor.hpp — what hookscope knows of a tensor: its shape and element type, through tensor_traits.
//
// Any type becomes a tensor by specialising `hookscope::tensor_traits<T>` with `shape(t)` and `dtype(t)`
// (and optionally `make_empty(shape, dtype)`); `tensor_spec` is the built-in one, and what captures hold.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/tensor.hpp"
