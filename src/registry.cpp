// The registry's compiled part: linking an observable in, reporting a name registered twice, and telling the
// registration hooks that features above the registry (src/environment/) install.
#include "hookscope/registry.hpp"

#include "hookscope/callback_errors.hpp"
#include "hookscope/exceptions.hpp"
#include "hookscope/value.hpp"

#include <cstddef>
#include <optional>
#include <string>

#if HOOKSCOPE_ENABLED

#include <array>
#include <cstddef>
#include <mutex>
#include <string>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

constinit const function_info* registry_head = nullptr;

namespace {

constexpr std::size_t max_hooks = 8;

// Constant-initialised, so usable from any static initialiser; never destroyed in practice (trivial destructors).
constinit std::mutex registry_mutex;
constinit std::array<registration_hook, max_hooks> hooks{};
constinit std::size_t hook_count = 0;

std::string place_of(const function_info& f) {
  if (f.file.empty()) return "an unknown place";
  return std::string(f.file) + ":" + std::to_string(f.line);
}

void report_twin(const function_info& twin, const function_info& info) noexcept {
  try {
    log_line("hookscope: two observables are registered as '" + std::string(info.name) + "' (" + place_of(twin) +
             " and " + place_of(info) +
             "); find_observable, HOOKSCOPE_TRACE and HOOKSCOPE_RECORD cannot tell them "
             "apart: give one of them another name");
  } catch (...) {
    log_line("hookscope: two observables are registered under one name (reporting which failed: out of memory)");
  }
}

}  // namespace

void registry_link::link(function_info& info) noexcept {
  const function_info* twin = nullptr;
  std::array<registration_hook, max_hooks> to_tell{};
  std::size_t n = 0;
  {
    const std::lock_guard lock(registry_mutex);
    if (info.linked_) return;
    info.linked_ = true;
    for (const function_info* f = registry_head; f != nullptr && twin == nullptr; f = f->next_) {
      if (f->name == info.name) twin = f;
    }
    info.next_ = registry_head;
    registry_head = &info;
    to_tell = hooks;
    n = hook_count;
  }
  if (twin != nullptr) report_twin(*twin, info);
  for (std::size_t i = 0; i < n; ++i) to_tell[i](info);
}

void registry_link::link_all(function_info* const* first, function_info* const* last) noexcept {
  for (; first != last; ++first) {
    if (*first != nullptr) link(**first);
  }
}

void add_registration_hook(registration_hook hook) noexcept {
  const function_info* registered = nullptr;
  {
    const std::lock_guard lock(registry_mutex);
    if (hook_count == max_hooks) {
      log_line("hookscope: add_registration_hook: more than 8 registration hooks; this one is not installed");
      return;
    }
    hooks[hook_count++] = hook;
    registered = registry_head;  // linked nodes never change: walk them without the lock
  }
  for (registry_range::iterator it(registered), end; it != end; ++it) hook(*it);
}

}  // namespace detail

// Declared `extern template` in registry.hpp: the one copy of erased observers' emission.
template class detail::static_observer<const erased_call&>;
HOOKSCOPE_DETAIL_END_NAMESPACE

#else  // !HOOKSCOPE_ENABLED

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
void registry_link::link(function_info&) noexcept {}
void registry_link::link_all(function_info* const*, function_info* const*) noexcept {}
void add_registration_hook(registration_hook) noexcept {}
}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE

#endif

// In both modes: disabled builds never make a call, but the declarations are the same.
HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

std::optional<value> erased_call::capture_return_value() const {
  if (!post_ || exception() || result_ == nullptr) return std::nullopt;
  return ops_->result->capture(result_, nullptr);
}

value_fields erased_call::capture_args() const { return capture_args_with(nullptr); }

value_fields erased_call::capture_args_with(const void* options) const {
  value_fields kwargs;
  kwargs.reserve(given_);
  for (std::size_t i = 0; i < given_; ++i) {  // an omitted argument is absent, as from a Python call's kwargs
    kwargs.emplace_back(std::string(function_->param_names[i]), ops_->args[i]->capture(args_[i], options));
  }
  return kwargs;
}

HOOKSCOPE_DETAIL_END_NAMESPACE
