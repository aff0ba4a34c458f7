// Marks the calling thread as inside one of the library's paths for a scope, and says whether it was inside already:
// a signal handler that interrupted the path on this thread, or code the path itself runs, calling back into it. The
// frame below may be between a load and a store, hold a lock or be inside malloc(), so the caller takes another way.
#pragma once

#include "hookscope/config.hpp"

#include <atomic>

HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {

/// `inside` is the path's `constinit thread_local bool`. The signal fences keep the compiler from moving the path's
/// own loads and stores across the mark, which a handler on this thread reads.
class reentry_scope {
 public:
  explicit reentry_scope(bool& inside) noexcept : inside_(inside), reentered_(inside) {
    inside = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  ~reentry_scope() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    inside_ = reentered_;
  }
  reentry_scope(const reentry_scope&) = delete;
  reentry_scope& operator=(const reentry_scope&) = delete;

  [[nodiscard]] bool reentered() const noexcept { return reentered_; }

 private:
  bool& inside_;
  bool reentered_;
};

}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
