// hookscope/hookscope.hpp — every public header of hookscope (adapters excepted: they need their library);
// include only the ones you use to compile faster (observer.hpp alone pulls in no Boost).
#pragma once

#include "hookscope/call_context.hpp"
#include "hookscope/call_inputs.hpp"
#include "hookscope/capture.hpp"
#include "hookscope/config.hpp"
#include "hookscope/context.hpp"
#include "hookscope/errors.hpp"
#include "hookscope/input_observer.hpp"
#include "hookscope/observable.hpp"
#include "hookscope/observer.hpp"
#include "hookscope/recorder.hpp"
#include "hookscope/records.hpp"
#include "hookscope/registry.hpp"
#include "hookscope/shapes.hpp"
#include "hookscope/subscription.hpp"
#include "hookscope/tensor.hpp"
#include "hookscope/value.hpp"
