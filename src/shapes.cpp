#include "hookscope/shapes.hpp"
