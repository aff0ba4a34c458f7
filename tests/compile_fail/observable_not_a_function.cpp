// Only functions and member functions can be observable.
// expect-error: hookscope: observable<&fn, \.\.\.>: fn is neither a function nor a member function
#include "hookscope/observable.hpp"

inline int not_a_function = 3;
HOOKSCOPE_OBSERVABLE(observed_variable, not_a_function, x);
