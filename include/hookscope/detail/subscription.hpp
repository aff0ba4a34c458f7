// hookscope/detail/subscription.hpp — subscription and callback_id, below the observer machinery that returns them;
// hookscope/subscription.hpp is their documented front door.
#pragma once

#include "hookscope/detail/callbacks.hpp"
#include "hookscope/detail/config.hpp"

#include <cstdint>
#include <utility>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE

/// Names a registration whose subscription was released; pass it to `observer::remove`.
struct callback_id {
  std::uint64_t value = 0;  ///< 0 never names a registration
  friend constexpr bool operator==(callback_id, callback_id) noexcept = default;
};

/// Move-only RAII handle of one registered callback: destroying or resetting it unregisters the callback.
///
/// When `reset()` (or the destructor) returns, the callback is not running on any other thread and will
/// never start again. A subscription may outlive its observer, its context and its thread, and may be
/// destroyed on any thread.
class [[nodiscard]] subscription {
#if HOOKSCOPE_ENABLED
 public:
  subscription() noexcept = default;
  subscription(subscription&& other) noexcept : node_(std::exchange(other.node_, nullptr)) {}
  subscription& operator=(subscription&& other) noexcept {
    if (this != &other) {
      reset();
      node_ = std::exchange(other.node_, nullptr);
    }
    return *this;
  }
  subscription(const subscription&) = delete;
  subscription& operator=(const subscription&) = delete;
  ~subscription() { reset(); }

  /// Unregisters the callback now (waiting for runs on other threads to end); idempotent.
  void reset() noexcept {
    if (node_ != nullptr) detail::release_node(std::exchange(node_, nullptr), true);
  }

  /// Leaves the callback registered and returns its id; the subscription becomes empty.
  [[nodiscard]] callback_id release() noexcept {
    if (node_ == nullptr) return {};
    return callback_id{detail::keep_node(std::exchange(node_, nullptr))};
  }

  /// True while the callback is registered (false once reset, released, or its observer or context is gone).
  [[nodiscard]] bool active() const noexcept { return node_ != nullptr && detail::node_active(node_); }

  /// Internal: adopts a registration made by an observer.
  explicit subscription(detail::callback_node* node) noexcept : node_(node) {}

 private:
  detail::callback_node* node_ = nullptr;
#else
  // Disabled build: nothing is ever registered, so the handle is empty and every operation is free.
 public:
  subscription() noexcept = default;
  subscription(subscription&&) noexcept = default;
  subscription& operator=(subscription&&) noexcept = default;
  subscription(const subscription&) = delete;
  subscription& operator=(const subscription&) = delete;
  // Provided, though empty: a scope's `auto sub = obs.add(...)` is used for its end, as in enabled builds, and
  // compilers do not call a variable whose type has a provided destructor unused (Clang does for a trivial one).
  ~subscription() {}  // not `= default`: that would make Clang's -Wunused-variable fire
  void reset() noexcept {}
  [[nodiscard]] callback_id release() noexcept { return {}; }
  [[nodiscard]] bool active() const noexcept { return false; }
#endif
};

HOOKSCOPE_DETAIL_END_NAMESPACE
