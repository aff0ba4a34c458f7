// A visitor of the value tree that does not handle every kind of node: hookscope::visit names the kind it misses,
// so that a kind added to the tree fails to compile wherever it is not handled.
#include "hookscope/value.hpp"

int main() {
  const hookscope::value v(1);
  // expect-error: hookscope: visit\(value, f\): f handles no value_node::variant
  return hookscope::visit(
      v, hookscope::value_handlers{
             [](hookscope::value_node::none) { return 0; }, [](hookscope::value_node::tensor) { return 1; },
             [](hookscope::value_node::integer) { return 2; }, [](hookscope::value_node::floating) { return 3; },
             [](hookscope::value_node::boolean) { return 4; }, [](hookscope::value_node::string) { return 5; },
             [](hookscope::value_node::tuple) { return 6; }, [](hookscope::value_node::list) { return 7; },
             [](hookscope::value_node::dict) { return 8; }, [](hookscope::value_node::structure) { return 9; },
             [](hookscope::value_node::bytes) { return 10; }, [](hookscope::value_node::opaque) { return 11; }});
}
