// Uses an observer of another translation unit from a dynamic initialiser (see static_init.test.cpp).
#include "hookscope/observer.hpp"

#include <thread>

extern hookscope::observer<int> on_startup;

namespace {

struct early_user {
  int context_sum = 0;
  int global_sum = 0;
  early_user() {
    (void)on_startup.add([this](int v) { context_sum += v; }).release();
    (void)on_startup.add_global([this](int v) { global_sum += v; }).release();
    on_startup.observe(5);
  }
};

early_user early;

}  // namespace

int early_context_sum() { return early.context_sum; }
int early_global_sum() { return early.global_sum; }
