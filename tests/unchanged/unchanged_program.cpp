// Programs that engines and systems code write every day, each the same with and without hookscope's environment
// variables (tests/unchanged/test_unchanged.py runs each case both ways and compares). `unchanged_program CASE`
// prints what the annotated functions computed; nothing it prints depends on hookscope.
#include <hookscope/observable.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <ranges>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace kernels {
namespace impl {
// A kernel launcher: its pointers are device memory, which the CPU cannot read (here: a PROT_NONE mapping).
int launch(const float* d_in, float* d_out, int n) { return d_in != nullptr && d_out != nullptr ? 2 * n : -1; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(launch, impl::launch, d_in, d_out, n);
}  // namespace kernels

namespace text {
namespace impl {
// A buffer with a length: no NUL, and what follows it is none of the function's business.
std::size_t count_lines(const char* buf, std::size_t n) {
  return static_cast<std::size_t>(std::count(buf, buf + n, '\n'));
}
#if defined(__clang__)
// Clang 14 cannot compile libstdc++ 12's subrange: the same one-pass range of a stream's characters, by hand.
struct stream_chars {
  std::istreambuf_iterator<char> first;
  std::istreambuf_iterator<char> last;
  std::istreambuf_iterator<char> begin() const { return first; }
  std::istreambuf_iterator<char> end() const { return last; }
};
#else
using stream_chars = std::ranges::subrange<std::istreambuf_iterator<char>, std::istreambuf_iterator<char> >;
#endif
// A one-pass range: whoever iterates it first consumes it.
std::size_t count_chars(stream_chars chars) {
  std::size_t n = 0;
  for (auto it = chars.begin(); it != chars.end(); ++it) ++n;
  return n;
}
std::size_t total_size(const std::string& text, const std::vector<float>& values) {
  return text.size() + values.size();
}
void greet(const std::string& name, int times) { std::printf("greet %zu x%d\n", name.size(), times); }
using s = const std::string&;
// Many medium arguments: each small, together more than a record line may hold.
std::size_t sum_sizes(s a0, s a1, s a2, s a3, s a4, s a5, s a6, s a7, s a8, s a9, s a10, s a11, s a12, s a13, s a14,
                      s a15, s a16, s a17, s a18, s a19, s a20, s a21, s a22, s a23) {
  std::size_t n = 0;
  for (const std::string* a : {&a0,  &a1,  &a2,  &a3,  &a4,  &a5,  &a6,  &a7,  &a8,  &a9,  &a10, &a11,
                               &a12, &a13, &a14, &a15, &a16, &a17, &a18, &a19, &a20, &a21, &a22, &a23}) {
    n += a->size();
  }
  return n;
}
}  // namespace impl
HOOKSCOPE_OBSERVABLE(count_lines, impl::count_lines, buf, n);
HOOKSCOPE_OBSERVABLE(count_chars, impl::count_chars, chars);
HOOKSCOPE_OBSERVABLE(total_size, impl::total_size, text, values);
HOOKSCOPE_OBSERVABLE(greet, impl::greet, name, times);
HOOKSCOPE_OBSERVABLE(sum_sizes, impl::sum_sizes, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15,
                     a16, a17, a18, a19, a20, a21, a22, a23);
}  // namespace text

namespace sys {
namespace impl {
// A system call's wrapper: the kernel reads `path` (and returns EFAULT where it cannot); the wrapper only passes it.
int open_file(const char* path, int flags) { return path != nullptr ? flags + 1 : -1; }
}  // namespace impl
// The annotation asks for the C string `path` points to (`*path`): read without faulting.
HOOKSCOPE_OBSERVABLE(open_file, impl::open_file, *path, flags);
}  // namespace sys

namespace files {
namespace impl {
std::size_t count_entries(std::filesystem::directory_iterator entries) {
  std::size_t n = 0;
  for (const auto& entry : entries) n += entry.is_regular_file() ? 1 : 0;
  return n;
}
}  // namespace impl
HOOKSCOPE_OBSERVABLE(count_entries, impl::count_entries, entries);
}  // namespace files

namespace ns {
namespace impl {
int step(int n) { return n + 1; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(step, impl::step, n);
}  // namespace ns

// A smart pointer in the style of ATL's CComPtr: unary operator& gives the address of something else.
class com_ptr {
 public:
  explicit com_ptr(int v) : value_(v) {}
  int value_impl() const { return value_; }
  HOOKSCOPE_OBSERVABLE_METHOD(com_ptr, value, value_impl);
  com_ptr* operator&() { return std::addressof(decoy()); }
  const com_ptr* operator&() const { return std::addressof(decoy()); }

 private:
  static com_ptr& decoy() {
    static com_ptr d(-1);
    return d;
  }
  int value_;
};

namespace {

char* map_pages(std::size_t pages, int protection) {
  void* p = ::mmap(nullptr, pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)), protection,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(3);
  }
  return static_cast<char*>(p);
}

int device_pointers() {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  char* device = map_pages(2, PROT_NONE);  // reserved, never readable: as a GPU's memory is to the CPU
  char* freed = map_pages(1, PROT_READ | PROT_WRITE);
  ::munmap(freed, page);
  std::printf("launch %d\n",
              kernels::launch(reinterpret_cast<const float*>(device), reinterpret_cast<float*>(device + page), 256));
  std::printf("launch %d\n",
              kernels::launch(reinterpret_cast<const float*>(freed), reinterpret_cast<float*>(freed), 8));
  return 0;
}

int buffer_at_unmapped_page() {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  char* pages = map_pages(2, PROT_READ | PROT_WRITE);
  ::mprotect(pages + page, page, PROT_NONE);
  constexpr std::string_view lines = "one\ntwo\nthree\n";  // no NUL: the buffer ends where the page ends
  char* buf = pages + page - lines.size();
  std::memcpy(buf, lines.data(), lines.size());
  std::printf("lines %zu\n", text::count_lines(buf, lines.size()));
  return 0;
}

// The password after the name is the next field of the struct: memory the function was not given.
struct account {
  char name[16];
  char password[32];
};

int buffer_before_secret() {
  account a{};
  std::memcpy(a.name, "line one\nline 2\n", 16);  // 16 bytes, no NUL
  std::strcpy(a.password, "hunter2-SECRET-PASSWORD");
  std::printf("lines %zu\n", text::count_lines(a.name, sizeof a.name));
  return 0;
}

int one_pass_stream() {
  std::istringstream in("fourteen chars");
  std::printf("chars %zu\n", text::count_chars(text::impl::stream_chars{std::istreambuf_iterator<char>(in), {}}));
  return 0;
}

int one_pass_directory() {
  char dir[] = "/tmp/hookscope-unchanged-XXXXXX";
  if (::mkdtemp(dir) == nullptr) return 3;
  for (const char* name : {"a", "b", "c"}) std::ofstream(std::string(dir) + "/" + name) << name;
  const std::size_t n = files::count_entries(std::filesystem::directory_iterator(dir));
  std::filesystem::remove_all(dir);
  std::printf("entries %zu\n", n);
  return 0;
}

int opted_in_c_string() {
  std::printf("open %d\n", sys::open_file("/tmp/hookscope-opted-in", 2));
  const char* device = map_pages(1, PROT_NONE);  // an address the process cannot read
  std::printf("open %d\n", sys::open_file(device, 4));
  return 0;
}

int overloaded_address_of() {
  const com_ptr p(42);
  std::printf("value %d\n", p.value());
  return 0;
}

int large_argument() {
  const std::string text(100u << 20, 'x');  // 100 MiB
  const std::vector<float> values(2'500'000, 0.5f);
  std::printf("size %zu\n", text::total_size(text, values));
  return 0;
}

int many_medium_arguments() {
  std::vector<std::string> parts;
  for (char c = 'a'; c < 'a' + 24; ++c) parts.emplace_back(std::size_t{3} << 20, c);  // 24 x 3 MiB: 72 MiB
  for (int call = 0; call < 2; ++call) {
    const auto& p = parts;
    std::printf("sum %zu\n",
                text::sum_sizes(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13],
                                p[14], p[15], p[16], p[17], p[18], p[19], p[20], p[21], p[22], p[23]));
  }
  return 0;
}

int long_strings() {
  text::greet(std::string(300, 'n'), 2);
  text::greet("\xff" + std::string(200, 'a') + "\"\\\x01", 3);
  return 0;
}

int glob_brackets() {
  int n = 0;
  for (int i = 0; i < 3; ++i) n = ns::step(n);
  std::printf("step %d\n", n);
  return 0;
}

struct named_case {
  const char* name;
  int (*run)();
};
constexpr named_case cases[] = {
    {"device_pointers", device_pointers},
    {"buffer_at_unmapped_page", buffer_at_unmapped_page},
    {"buffer_before_secret", buffer_before_secret},
    {"one_pass_stream", one_pass_stream},
    {"one_pass_directory", one_pass_directory},
    {"opted_in_c_string", opted_in_c_string},
    {"overloaded_address_of", overloaded_address_of},
    {"large_argument", large_argument},
    {"many_medium_arguments", many_medium_arguments},
    {"long_strings", long_strings},
    {"glob_brackets", glob_brackets},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2) {
    for (const named_case& c : cases) {
      if (std::strcmp(argv[1], c.name) == 0) return c.run();
    }
  }
  std::fprintf(stderr, "usage: unchanged_program CASE\n");
  return 2;
}
