// Installs the environment features (HOOKSCOPE_TRACE, _RECORD, _STATS, _TIMELINE) from a static initialiser. Nothing in the
// library refers to this object — the registry below it must not know the features above it — so the dependency
// objects (meson's hookscope_dep, hookscope.pc) name its anchor to the linker (`-Wl,--undefined=...`), which pulls
// it out of the static library into every program.
#include "hub.hpp"
#include "settings.hpp"

#include <mutex>

extern "C" {
/// The symbol the linker is told to keep; its value is never read.
extern const char hookscope_environment_features;
const char hookscope_environment_features = 0;
}

#if HOOKSCOPE_ENABLED
HOOKSCOPE_DETAIL_BEGIN_NAMESPACE
namespace detail {
void install_environment() noexcept {
  static constinit std::once_flag once;
  std::call_once(once, [] {
    remember_start_directory();  // what relative paths are resolved against, by this copy and the ones joining it
    install_trace();
    install_record();
    install_stats();
    install_timeline();
  });
}
}  // namespace detail
HOOKSCOPE_DETAIL_END_NAMESPACE
#endif

namespace {
[[maybe_unused]] const bool installed = [] {
#if HOOKSCOPE_ENABLED
  hookscope::detail::install_environment();
#endif
  return true;
}();
}  // namespace
