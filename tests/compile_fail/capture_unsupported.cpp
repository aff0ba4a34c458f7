// A type hookscope cannot see into is rejected with a message that names the fix.
// expect-error: hookscope: this parameter type cannot be captured
#include "hookscope/capture.hpp"

class opaque_handle {
 public:
  explicit opaque_handle(int fd) : fd_(fd) {}
  virtual ~opaque_handle() = default;

 private:
  int fd_;
};

void record(const opaque_handle& h) { (void)hookscope::capture(h); }
