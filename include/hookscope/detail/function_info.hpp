// hookscope/detail/function_info.hpp — function_info and erased_observer, below the registry, the erased call and the
// annotation machinery that fill and read them; hookscope/function_info.hpp is their documented front door.
#pragma once

#include "hookscope/detail/config.hpp"
#include "hookscope/detail/observer.hpp"

#include <span>
#include <string_view>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

class erased_call;
class registry_range;
namespace detail {
struct registry_link;
}

/// Callbacks that see any observable's calls without knowing its types: observer<const erased_call&>'s API,
/// trivially destructible (an annotation's pair lives in static storage and is never destroyed).
using erased_observer = detail::static_observer<const erased_call&>;

/// What the registry knows of one observable function.
class function_info {
 public:
  std::string_view name;                          ///< as given to the annotation
  std::span<const std::string_view> param_names;  ///< one per parameter, as given to the annotation
  std::string_view signature;                     ///< readable function type, e.g. "int (*)(int, double)"
  std::string_view file;                          ///< where the annotation is
  unsigned line = 0;

 private:
  // Here, in the padding after `line`: the entry of every annotation stays 96 bytes.
  bool linked_ = false;  // an annotation in a header is listed once per translation unit: it registers once

 public:
  constexpr function_info(std::string_view name_, std::span<const std::string_view> params, std::string_view signature_,
                          std::string_view file_, unsigned line_, erased_observer* pre, erased_observer* post) noexcept
      : name(name_), param_names(params), signature(signature_), file(file_), line(line_), pre_(pre), post_(post) {}
  function_info(const function_info&) = delete;
  function_info& operator=(const function_info&) = delete;

  /// Type-erased callbacks run before every call (argument values formatted on demand).
  erased_observer& pre() const noexcept { return *pre_; }
  /// Type-erased callbacks run after every call, also when it threw.
  erased_observer& post() const noexcept { return *post_; }

 private:
  friend class registry_range;
  friend struct detail::registry_link;
  erased_observer* pre_;
  erased_observer* post_;
  const function_info* next_ = nullptr;
};

HOOKSCOPE_DETAIL_END_NAMESPACE
