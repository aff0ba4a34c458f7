// Member functions that a tracer must call exactly as the program does (tests/unchanged/test_unchanged.py runs each
// case with and without hookscope's environment variables and compares): a class whose unary operator& is deleted,
// and methods with ref-qualifiers, called on lvalues, on moved objects and on temporaries, through
// HOOKSCOPE_OBSERVABLE_METHOD and HOOKSCOPE_OBSERVABLE_METHOD_OVERLOAD, with arguments given or left to their
// defaults. `methods_program CASE` prints which implementation ran and what it returned; nothing it prints depends on
// hookscope.
#include <hookscope/observable.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

namespace store {

// A handle whose address must not be taken with `&`.
class sealed {
 public:
  explicit sealed(int v) : value_(v) {}
  void operator&() const = delete;

  int scaled_impl(int factor, int offset = 0) const { return value_ * factor + offset; }
  HOOKSCOPE_OBSERVABLE_METHOD(sealed, scaled, scaled_impl, factor, offset = 0);

 private:
  int value_;
};

// Every ref-qualifier; a pair of overloads by ref-qualifier with defaults of their own (a copy from an lvalue, a move
// from an rvalue). Each implementation prints that it ran.
class buffer {
 public:
  explicit buffer(std::string text) : text_(std::move(text)) {}

  std::size_t size_impl() & {
    std::printf("size &\n");
    return text_.size();
  }
  char peek_impl(std::size_t at) const& {
    std::printf("peek const&\n");
    return at < text_.size() ? text_[at] : '-';
  }
  std::string release_impl(std::size_t keep) && {
    std::printf("release &&\n");
    text_.resize(std::min(keep, text_.size()));
    return std::move(text_);
  }
  std::size_t measure_impl() const&& noexcept {
    std::printf("measure const&&\n");
    return text_.size();
  }
  std::string slice_impl(std::size_t from, std::size_t count = 2) && {
    std::printf("slice &&\n");
    return text_.substr(from, count);
  }
  std::string take(std::size_t n = 3) const& {
    std::printf("take const&\n");
    return text_.substr(0, n);
  }
  std::string take(std::size_t n = 5) && {
    std::printf("take &&\n");
    text_.resize(std::min(n, text_.size()));
    return std::move(text_);
  }

  HOOKSCOPE_OBSERVABLE_METHOD(buffer, size, size_impl);
  HOOKSCOPE_OBSERVABLE_METHOD(buffer, peek, peek_impl, at);
  HOOKSCOPE_OBSERVABLE_METHOD(buffer, release, release_impl, keep);
  HOOKSCOPE_OBSERVABLE_METHOD(buffer, measure, measure_impl);
  HOOKSCOPE_OBSERVABLE_METHOD(buffer, slice, slice_impl, from, count = 2);
  HOOKSCOPE_OBSERVABLE_METHOD_OVERLOAD(buffer, take_copy, std::string(std::size_t) const&, take, n = 3);
  HOOKSCOPE_OBSERVABLE_METHOD_OVERLOAD(buffer, take_moved, std::string(std::size_t) &&, take, n = 5);

  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

buffer make_buffer(const char* text) { return buffer(text); }

}  // namespace store

namespace {

int deleted_address_of() {
  const store::sealed s(7);
  std::printf("scaled %d\n", s.scaled(3));
  std::printf("scaled %d\n", s.scaled(3, 1));
  return 0;
}

int ref_qualified_methods() {
  store::buffer b("abcdefgh");
  std::printf("-> %zu\n", b.size());
  std::printf("-> %c\n", std::as_const(b).peek(1));
  std::printf("-> %c\n", store::make_buffer("xyz").peek(2));  // a const& method on a temporary
  std::printf("-> %zu\n", std::move(std::as_const(b)).measure());
  std::printf("-> %s\n", std::move(b).release(3).c_str());
  std::printf("left %zu\n", b.text().size());  // moved from
  std::printf("-> %s\n", store::make_buffer("temporary").release(4).c_str());
  return 0;
}

int ref_qualified_overload() {
  store::buffer b("abcdefgh");
  std::printf("-> %s\n", b.take_copy(2).c_str());
  std::printf("-> %s\n", store::make_buffer("xyz").take_copy(1).c_str());  // the const& overload on a temporary
  std::printf("-> %s\n", std::move(b).take_moved(4).c_str());
  std::printf("left %zu\n", b.text().size());
  return 0;
}

int ref_qualified_defaults() {
  store::buffer b("abcdefgh");
  std::printf("-> %s\n", b.take_copy().c_str());              // take(3) const&
  std::printf("-> %s\n", std::move(b).take_moved().c_str());  // take(5) &&
  std::printf("left %zu\n", b.text().size());
  std::printf("-> %s\n", store::make_buffer("abcdefg").slice(1).c_str());
  std::printf("-> %s\n", store::make_buffer("abcdefg").slice(1, 4).c_str());
  return 0;
}

struct named_case {
  const char* name;
  int (*run)();
};
constexpr named_case cases[] = {
    {"deleted_address_of", deleted_address_of},
    {"ref_qualified_methods", ref_qualified_methods},
    {"ref_qualified_overload", ref_qualified_overload},
    {"ref_qualified_defaults", ref_qualified_defaults},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2) {
    for (const named_case& c : cases) {
      if (std::strcmp(argv[1], c.name) == 0) return c.run();
    }
  }
  std::fprintf(stderr, "usage: methods_program CASE\n");
  return 2;
}
