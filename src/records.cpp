#include "hookscope/records.hpp"
