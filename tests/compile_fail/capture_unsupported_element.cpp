// An uncapturable type inside a container is rejected the same way, at the container, naming the part at fault.
// expect-error: hookscope: this parameter type cannot be captured
// expect-error: checked_rule<std::vector<opaque_handle>
// expect-error: cannot_capture<opaque_handle>
#include "hookscope/capture.hpp"

#include <vector>

class opaque_handle {
 public:
  explicit opaque_handle(int fd) : fd_(fd) {}
  virtual ~opaque_handle() = default;

 private:
  int fd_;
};

void record(const std::vector<opaque_handle>& handles) { (void)hookscope::capture_value(handles); }
