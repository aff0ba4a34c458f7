// hookscope/errors.hpp — what happens when a callback throws, where hookscope's messages go, and the exceptions
// hookscope throws: one include for all of them.
//
// A convenience header for code outside the library. Each part is declared with its layer: the callback error
// policy and the log in callback_errors.hpp (core), value_error and format_error in value_errors.hpp (capture),
// record_error in record_error.hpp (records), inference_error in inference_error.hpp (shapes). Inside the library,
// include the part the file's layer needs: a core file includes callback_errors.hpp only, never this header.
#pragma once

#include "hookscope/callback_errors.hpp"
#include "hookscope/inference_error.hpp"
#include "hookscope/record_error.hpp"
#include "hookscope/value_errors.hpp"
