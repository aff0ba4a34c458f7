// The capture of pointers (hookscope/detail/capture_pointer_rules.hpp, detail/safe_read.hpp): raw pointers recorded
// by their address and never read, their pointee read without faulting where the user opts in (capture_pointee,
// capture_options::read_pointee, `*name` in an annotation), and the same rules when calls are formatted.
#include "hookscope/capture.hpp"

#include "hookscope/detail/format.hpp"
#include "hookscope/detail/safe_read.hpp"
#include "hookscope/erased_call.hpp"
#include "hookscope/observable.hpp"
#include "hookscope/registry.hpp"

#include <catch2/catch.hpp>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

using hookscope::value;

namespace {

std::size_t page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

// Pages of this process: readable ones, and ones it cannot read (PROT_NONE, or given back with munmap).
struct pages {
  char* base;
  std::size_t count;
  pages(std::size_t n, int protection) : count(n) {
    void* p = ::mmap(nullptr, n * page_size(), protection, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    base = static_cast<char*>(p);
  }
  pages(const pages&) = delete;
  pages& operator=(const pages&) = delete;
  ~pages() {
    if (base != nullptr) ::munmap(base, count * page_size());
  }
  char* page(std::size_t i) const { return base + i * page_size(); }
  char* end() const { return base + count * page_size(); }
  void protect(std::size_t i, int protection) const { REQUIRE(::mprotect(page(i), page_size(), protection) == 0); }
};

// An address that was mapped and no longer is.
char* unmapped_address() {
  void* p = ::mmap(nullptr, page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  REQUIRE(::munmap(p, page_size()) == 0);
  return static_cast<char*>(p);
}

std::uint64_t address_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// The opaque leaf a raw pointer of type T at `p` is recorded as.
template <class T>
value address_leaf(T p, bool unreadable = false, bool too_large = false) {
  return value::opaque(
      {std::string(hookscope::detail::type_name<T>()), false, address_of(p), unreadable, std::nullopt, too_large});
}

struct header {  // trivially copyable: copied without faulting, then captured from the copy
  int id;
  float scale;
};
struct named {  // not trivially copyable: checked readable, then captured in place
  std::string name;
  int id;
};
struct chain {
  int value;
  const chain* next;
};

}  // namespace

template <>  // the user's word: a `const header*` points to a header
inline constexpr bool hookscope::capture_pointee<header> = true;

TEST_CASE("raw pointers: recorded by their address, never read") {
  SECTION("device pointers: memory the process cannot read, never touched") {
    const pages device(2, PROT_NONE);
    const auto* d_in = reinterpret_cast<const float*>(device.page(0));
    CHECK(hookscope::capture_value(d_in) == address_leaf(d_in));
    const char* freed = unmapped_address();
    CHECK(hookscope::capture_value(freed) == address_leaf(freed));
  }
  SECTION("a char buffer with a length, ending at an unmapped page: its address, not a C string") {
    const pages buffer(2, PROT_READ | PROT_WRITE);
    buffer.protect(1, PROT_NONE);
    char* buf = buffer.page(1) - 4;
    std::memcpy(buf, "a\nb\n", 4);  // no NUL before the page it cannot read
    CHECK(hookscope::capture_value(buf) == address_leaf(buf));
    CHECK(hookscope::capture_value(static_cast<const char*>(buf)) == address_leaf(static_cast<const char*>(buf)));
  }
  SECTION("null: none; pointers inside values too; function and member pointers: no address") {
    CHECK(hookscope::capture_value(static_cast<const int*>(nullptr)) == value());
    const int x = 3;
    const chain tail{2, nullptr};
    const value captured = hookscope::capture_value(std::make_tuple(&x, chain{1, &tail}));
    CHECK(captured.items()[0] == address_leaf(&x));
    CHECK(captured.items()[1].fields()[1].second == address_leaf(&tail));
    void (*function)() = nullptr;
    CHECK(hookscope::capture_value(function) == value::opaque(std::string(hookscope::detail::type_name<void (*)()>())));
    CHECK_FALSE(hookscope::capture_value(&chain::value).as_opaque().address.has_value());
    STATIC_REQUIRE_FALSE(hookscope::capturable<const chain*>);
    STATIC_REQUIRE_FALSE(hookscope::capturable<char*>);
  }
}

TEST_CASE("capture_pointee: pointers to an opted-in type are captured as their pointee") {
  const header h{7, 0.5F};
  STATIC_REQUIRE(hookscope::capturable<const header*>);
  CHECK(hookscope::capture_value(&h) ==
        value::structure(std::string(hookscope::detail::type_name<header>()), {{"0", 7}, {"1", 0.5}}));
  SECTION("wherever they appear: in a vector, a struct field") {
    const std::vector<const header*> list{&h, nullptr};
    CHECK(hookscope::capture_value(list).items()[0].fields()[0].second == value(7));
    CHECK(hookscope::capture_value(list).items()[1] == value());
  }
  SECTION("read without faulting: unreadable memory is an opaque leaf with its address") {
    const pages device(1, PROT_NONE);
    const auto* p = reinterpret_cast<const header*>(device.page(0));
    CHECK(hookscope::capture_value(p) == address_leaf(p, true));
    const pages straddling(2, PROT_READ | PROT_WRITE);
    straddling.protect(1, PROT_NONE);
    const auto* across = reinterpret_cast<const header*>(straddling.page(1) - sizeof(int));  // half readable
    CHECK(hookscope::capture_value(across) == address_leaf(across, true));
  }
}

TEST_CASE("capture_options::read_pointee") {
  const int n = 42;
  SECTION("the captured value itself only: one level, not its parts") {
    CHECK(hookscope::capture_value(&n, {.read_pointee = true}) == value(42));
    const int* p = &n;
    CHECK(hookscope::capture_value(&p, {.read_pointee = true}) == address_leaf(p));  // the pointee is a pointer
    CHECK(hookscope::capture_value(std::optional<const int*>(&n), {.read_pointee = true}) == address_leaf(&n));
    const chain l{1, nullptr};
    CHECK(hookscope::capture_value(chain{0, &l}, {.read_pointee = true}).fields()[1].second == address_leaf(&l));
  }
  SECTION("PROT_NONE and unmapped memory: unreadable, the program goes on") {
    const pages device(1, PROT_NONE);
    const auto* d = reinterpret_cast<const double*>(device.page(0));
    CHECK(hookscope::capture_value(d, {.read_pointee = true}) == address_leaf(d, true));
    const auto* freed = reinterpret_cast<const int*>(unmapped_address());
    CHECK(hookscope::capture_value(freed, {.read_pointee = true}) == address_leaf(freed, true));
  }
  SECTION("a class that is not trivially copyable: checked readable, captured in place") {
    const named object{"conv", 3};
    CHECK(hookscope::capture_value(&object, {.read_pointee = true}) ==
          value::structure(std::string(hookscope::detail::type_name<named>()), {{"0", "conv"}, {"1", 3}}));
    const pages device(1, PROT_NONE);
    const auto* p = reinterpret_cast<const named*>(device.page(0));
    CHECK(hookscope::capture_value(p, {.read_pointee = true}) == address_leaf(p, true));
  }
}

TEST_CASE("capture_options::read_pointee: C strings") {
  const auto read = [](const char* p, std::size_t bound = hookscope::capture_options{}.max_bytes) {
    return hookscope::capture_value(p, {.read_pointee = true, .max_bytes = bound});
  };
  SECTION("read up to the NUL, bytes that are not UTF-8 too") {
    CHECK(read("conv1") == value("conv1"));
    CHECK(read("") == value(""));
    const char raw[] = {'\xff', '\xfe', 'a', '\0'};
    CHECK(read(raw) == value(std::string("\xff\xfe"
                                         "a")));
    CHECK(hookscope::value_from_json(hookscope::to_json(read(raw))) == read(raw));
  }
  SECTION("unreadable: PROT_NONE, unmapped") {
    const pages device(1, PROT_NONE);
    CHECK(read(device.page(0)) == address_leaf(static_cast<const char*>(device.page(0)), true));
    const char* freed = unmapped_address();
    CHECK(read(freed) == address_leaf(freed, true));
  }
  SECTION("a string that ends on the last byte of a page before one the process cannot read") {
    const pages two(2, PROT_READ | PROT_WRITE);
    two.protect(1, PROT_NONE);
    char* s = two.page(1) - 6;
    std::memcpy(s, "hello", 6);  // its NUL is the page's last byte
    CHECK(read(s) == value("hello"));
    s[5] = '!';  // unterminated before the page it cannot read: unreadable, nothing past the page read
    CHECK(read(s) == address_leaf(static_cast<const char*>(s), true));
  }
  SECTION("unterminated within the bound: too large; exactly at the bound: read") {
    std::string text(100, 'x');
    CHECK(read(text.c_str(), 100) == value(text));  // 100 bytes, then the NUL
    CHECK(read(text.c_str(), 99) == address_leaf(static_cast<const char*>(text.c_str()), false, true));
    const pages one(1, PROT_READ | PROT_WRITE);
    std::memset(one.page(0), 'y', page_size());  // no NUL in the whole mapping
    CHECK(read(one.page(0), 64) == address_leaf(static_cast<const char*>(one.page(0)), false, true));
  }
}

namespace {

// Six pages laid out so that what lies around the readable ones is known: a PROT_NONE page, three readable pages
// (bytes that differ), a PROT_NONE page, a page given back (munmap).
struct layout {
  pages all{6, PROT_NONE};
  layout() {
    for (std::size_t i = 1; i <= 3; ++i) all.protect(i, PROT_READ | PROT_WRITE);
    for (std::size_t i = 0; i < 3 * page_size(); ++i) readable_begin()[i] = static_cast<char>(i * 7 + 1);
    REQUIRE(::munmap(all.page(5), page_size()) == 0);
  }
  char* readable_begin() const { return all.page(1); }
  char* readable_end() const { return all.page(4); }
};

// Addresses to read at: in the readable pages (at their ends, misaligned), in the PROT_NONE and unmapped ones, in
// kernel space, non-canonical, near zero, and so near the end of the address space that a range wraps around.
std::vector<const char*> candidates(const layout& l, std::mt19937_64& rng) {
  const std::size_t page = page_size();
  std::vector<const char*> out;
  for (int i = 0; i < 8; ++i) out.push_back(l.readable_begin() + rng() % (3 * page));
  out.push_back(l.readable_end() - 1);
  out.push_back(l.readable_end() - 3);  // misaligned, a few bytes before the PROT_NONE page
  out.push_back(l.all.page(0) + rng() % page);
  out.push_back(l.all.page(4) + rng() % page);
  out.push_back(l.all.page(5) + rng() % page);
  out.push_back(reinterpret_cast<const char*>(std::uintptr_t{0xffff800000000000} + rng() % (1ULL << 40)));
  out.push_back(reinterpret_cast<const char*>(std::uintptr_t{0x0000800000000000} + rng() % (1ULL << 40)));
  out.push_back(reinterpret_cast<const char*>(rng() % 4096));
  out.push_back(reinterpret_cast<const char*>(std::uintptr_t{0} - 1 - rng() % 64));
  return out;
}

// Checks read_memory-like `read` at random addresses and lengths: true exactly when the whole range lies in the
// readable pages, and then the bytes as they are; never a fault. Returns how many reads were made.
template <class Read>
int check_reads(Read read, std::uint64_t seed) {
  const layout l;
  std::mt19937_64 rng(seed);
  int reads = 0;
  std::vector<char> out(3 * page_size());
  for (int round = 0; round < 60; ++round) {
    for (const char* p : candidates(l, rng)) {
      const std::size_t n = 1 + rng() % (2 * page_size());
      const auto at = reinterpret_cast<std::uintptr_t>(p);
      const auto begin = reinterpret_cast<std::uintptr_t>(l.readable_begin());
      const auto end = reinterpret_cast<std::uintptr_t>(l.readable_end());
      const bool inside = at >= begin && at < end && n <= end - at;
      const bool got = read(out.data(), p, n);
      ++reads;
      INFO("address " << static_cast<const void*>(p) << ", " << n << " bytes");
      REQUIRE(got == inside);
      if (inside) REQUIRE(std::memcmp(out.data(), p, n) == 0);
    }
  }
  return reads;
}

}  // namespace

TEST_CASE("read_memory: never faults, reads exactly what can be read (property)") {
  SECTION("process_vm_readv") { CHECK(check_reads(hookscope::detail::read_memory, 36) > 500); }
  SECTION("the pipe that replaces it where it is refused") {
    CHECK(check_reads(hookscope::detail::read_memory_through_pipe, 37) > 500);
  }
  SECTION("captured: always the value or the address, never a crash") {
    std::mt19937_64 rng(38);
    const layout l;
    for (const char* p : candidates(l, rng)) {
      const auto* as_int = reinterpret_cast<const int*>(p);
      for (const value& v : {hookscope::capture_value(p, {.read_pointee = true}),
                             hookscope::capture_value(as_int, {.read_pointee = true})}) {
        REQUIRE((v.type() != value::kind::opaque || v.as_opaque().address == address_of(p)));
      }
    }
  }
}

namespace {
// Installs a seccomp filter that refuses process_vm_readv with EPERM, as container runtimes' filters may.
bool refuse_process_vm_readv() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<std::uint32_t>(offsetof(seccomp_data, nr))),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(SYS_process_vm_readv), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}
}  // namespace

TEST_CASE("read_memory: falls back to the pipe where a seccomp filter refuses process_vm_readv") {
  const pages none(1, PROT_NONE);
  const ::pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Exit codes say what failed: 10 the filter, 11 the filter not refusing, 12 and up the reads.
    if (!refuse_process_vm_readv()) ::_exit(10);
    char byte = 0;
    ::iovec local{&byte, 1};
    ::iovec remote{&byte, 1};
    if (::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0) != -1 || errno != EPERM) ::_exit(11);
    const char text[] = "through a pipe";
    char copy[sizeof text] = {};
    if (!hookscope::detail::read_memory(copy, text, sizeof text) || std::strcmp(copy, text) != 0) ::_exit(12);
    if (hookscope::detail::read_memory(copy, none.base, 1)) ::_exit(13);
    if (hookscope::capture_value(static_cast<const char*>(text), {.read_pointee = true}) != value(text)) ::_exit(14);
    const value unreadable = hookscope::capture_value(static_cast<const char*>(none.base), {.read_pointee = true});
    if (unreadable.type() != value::kind::opaque || !unreadable.as_opaque().unreadable) ::_exit(15);
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

namespace sys {
namespace impl {
inline int open_file(const char* path, int flags) { return path != nullptr ? flags : -1; }
inline int sum(const int* values, const int* const& first, int n) { return n > 0 && values && first ? n : 0; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(open_file, impl::open_file, *path, flags);
HOOKSCOPE_OBSERVABLE(sum, impl::sum, values, *first, n);
}  // namespace sys

TEST_CASE("HOOKSCOPE_OBSERVABLE: *name captures the parameter's pointee") {
  SECTION("the names: a `*` before one, spaces around it or not; what is no name") {
    using hookscope::detail::check_names;
    using problem = hookscope::detail::names_problem;
    STATIC_REQUIRE(check_names("*path, flags", 2) == problem::none);
    STATIC_REQUIRE(check_names(" * path , flags = 2 * 3", 2) == problem::none);  // a `*` in a default is no mark
    STATIC_REQUIRE(check_names("**path", 1) == problem::not_identifier);
    STATIC_REQUIRE(check_names("pa*th", 1) == problem::not_identifier);
    STATIC_REQUIRE(check_names("path*", 1) == problem::not_identifier);
    STATIC_REQUIRE(check_names("*", 1) == problem::empty);
    STATIC_REQUIRE(check_names("*path, path", 2) == problem::duplicate);
    STATIC_REQUIRE(check_names("path, * path", 2) == problem::duplicate);
    STATIC_REQUIRE(hookscope::detail::split_names<2>("*path, flags")[0] == "path");
    STATIC_REQUIRE(hookscope::detail::split_pointee_marks<3>("a, * b, c = 2 * 3") == std::array{false, true, false});
    STATIC_REQUIRE_FALSE(hookscope::detail::has_pointee_mark("n = 2 * 3, m"));
  }
  if (!HOOKSCOPE_ENABLED) return;  // nothing observes a disabled build's calls
  std::vector<std::string> formatted;
  std::vector<value> captured;
  bool structural = false;
  const auto collect = [&](const hookscope::erased_call& call) {
    for (std::size_t i = 0; i < call.arg_count(); ++i) formatted.push_back(call.format_arg(i));
    for (auto& [name, v] : call.capture_args()) captured.push_back(std::move(v));
    structural = call.can_capture_args();
  };
  SECTION("a C string: read, quoted; unreadable: the address and why") {
    auto on_pre = sys::open_file.info.pre().add(collect);
    CHECK(sys::open_file("/etc/hosts", 2) == 2);
    CHECK(formatted == std::vector<std::string>{"\"/etc/hosts\"", "2"});
    CHECK(captured == std::vector<value>{value("/etc/hosts"), value(2)});
    CHECK(structural);
    CHECK(sys::open_file.info.param_names[0] == "path");
    const pages device(1, PROT_NONE);
    formatted.clear();
    captured.clear();
    CHECK(sys::open_file(device.base, 1) == 1);
    CHECK(formatted[0] == hookscope::detail::format_address(address_of(device.base)) + " (unreadable)");
    CHECK(captured[0] == address_leaf(static_cast<const char*>(device.base), true));
    formatted.clear();
    CHECK(sys::open_file(nullptr, 1) == -1);
    CHECK(formatted[0] == "nullptr");
  }
  SECTION("only the parameters marked: another pointer keeps its address; through a reference too") {
    auto on_pre = sys::sum.info.pre().add(collect);
    const int values[] = {5, 6};
    CHECK(sys::sum(values, values + 1, 2) == 2);
    CHECK(captured == std::vector<value>{address_leaf(static_cast<const int*>(values)), value(6), value(2)});
    CHECK(formatted == std::vector<std::string>{hookscope::detail::format_address(address_of(values)), "6", "2"});
    CHECK_FALSE(structural);  // `values` is an address
  }
}

namespace {
struct printable {
  int v;
  friend std::ostream& operator<<(std::ostream& os, const printable& p) { return os << "printable " << p.v; }
};
}  // namespace

TEST_CASE("format_value: raw pointers as addresses, the standard strings quoted") {
  using hookscope::detail::format_value;
  const int x = 1;
  CHECK(format_value(&x) == hookscope::detail::format_address(address_of(&x)));
  CHECK(format_value(&x).starts_with("0x"));
  CHECK(format_value(static_cast<const char*>("text")).starts_with("0x"));  // never read as a C string
  CHECK(format_value(static_cast<const int*>(nullptr)) == "nullptr");
  CHECK(format_value(&unmapped_address).starts_with("0x"));  // a function pointer: its address, not the bool 1
  CHECK(format_value(&header::id).starts_with("<"));         // a member pointer: its type
  const char buffer[4] = {'a', 'b', 'c', 'd'};               // no NUL: never read past its end
  CHECK(format_value(buffer) == "\"abcd\"");
  const char name[8] = "relu";
  CHECK(format_value(name) == "\"relu\"");
  CHECK(format_value(std::string("s")) == "\"s\"");
  CHECK(format_value(std::string_view("v")) == "\"v\"");
  CHECK(format_value(printable{3}) == "printable 3");  // the program's own printing code
  const header h{2, 1.5F};
  CHECK(format_value(&h).find("0x") == std::string::npos);  // opted in (capture_pointee<header>): its pointee
  const pages device(1, PROT_NONE);
  const auto* unreadable = reinterpret_cast<const header*>(device.base);
  CHECK(format_value(unreadable) == hookscope::detail::format_address(address_of(unreadable)) + " (unreadable)");
}

TEST_CASE("format_value: a long string is quoted up to max_quoted_bytes, then its size") {
  using hookscope::detail::format_value;
  using hookscope::detail::max_quoted_bytes;
  const std::string fits(max_quoted_bytes, 'a');
  CHECK(format_value(fits) == "\"" + fits + "\"");
  const std::string large(100u << 20, 'x');
  CHECK(format_value(large) == "\"" + std::string(max_quoted_bytes, 'x') + "\"\xe2\x80\xa6(104857600 bytes)");
  // A character across the bound is left out whole: never half a UTF-8 sequence.
  std::string euros(max_quoted_bytes - 1, 'e');
  for (int i = 0; i < 4; ++i) euros += "\xe2\x82\xac";
  CHECK(format_value(euros) ==
        "\"" + std::string(max_quoted_bytes - 1, 'e') + "\"\xe2\x80\xa6(" + std::to_string(euros.size()) + " bytes)");
}
