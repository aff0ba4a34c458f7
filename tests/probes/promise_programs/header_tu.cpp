// One of three translation units calling the header's annotation (TU = 1, 2, 3 names its function).
#include "header_annotation.hpp"

#define HEADER_TU_NAME_I(n) tu##n
#define HEADER_TU_NAME(n) HEADER_TU_NAME_I(n)

int HEADER_TU_NAME(TU)(int x) { return hdr::step(x); }
