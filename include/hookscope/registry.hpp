// hookscope/registry.hpp — every observable function of the program, found by name, hooked without its types.
//
// ```cpp
// for (const hookscope::function_info& f : hookscope::registry()) std::cout << f.name << f.signature << '\n';
// if (const auto* f = hookscope::find_observable("lower"))
//   auto sub = f->pre().add([](const hookscope::erased_call& c) { log(c.function().name, c.format_arg(0)); });
// ```
//
// Registration happens during static initialisation, allocates nothing and does not depend on the order of
// translation units. In disabled builds the registry is empty.
#pragma once

#include "hookscope/config.hpp"
#include "hookscope/detail/registry.hpp"
#include "hookscope/erased_call.hpp"
#include "hookscope/function_info.hpp"

#include <cstddef>
// std::forward_iterator_tag only: <iterator> also brings the stream iterators (<streambuf>, locales), which every
// annotating translation unit would parse, also in disabled builds (~0.025 s, GCC 12).
#if __has_include(<bits/stl_iterator_base_types.h>)
#include <bits/stl_iterator_base_types.h>
#else
#include <iterator>
#endif
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// A forward range over every registered observable (most recently registered first).
class registry_range {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = function_info;
    using difference_type = std::ptrdiff_t;
    using pointer = const function_info*;
    using reference = const function_info&;
    iterator() noexcept = default;
    explicit iterator(const function_info* at) noexcept : at_(at) {}
    reference operator*() const noexcept { return *at_; }
    pointer operator->() const noexcept { return at_; }
    iterator& operator++() noexcept {
      at_ = at_->next_;
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(iterator a, iterator b) noexcept { return a.at_ == b.at_; }

   private:
    const function_info* at_ = nullptr;
  };

  iterator begin() const noexcept {
#if HOOKSCOPE_ENABLED
    return iterator(detail::registry_head);
#else
    return iterator();
#endif
  }
  iterator end() const noexcept { return iterator(); }
  std::size_t size() const noexcept {
    std::size_t n = 0;
    for (auto it = begin(); it != end(); ++it) ++n;
    return n;
  }
};

/// Every observable of the program (empty in disabled builds).
inline registry_range registry() noexcept { return {}; }

/// The observable registered under `name`, or null.
inline const function_info* find_observable(std::string_view name) noexcept {
  for (const function_info& f : registry()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

HOOKSCOPE_DETAIL_END_NAMESPACE
