// Calls the header's annotation from its own translation unit and from three others.
#include <cstdio>

#include "header_annotation.hpp"

int tu1(int);
int tu2(int);
int tu3(int);

int main(int argc, char**) {
  std::printf("%d\n", tu1(argc) + tu2(argc) + tu3(argc) + hdr::step(argc));
  return 0;
}
