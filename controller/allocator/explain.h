// Rendering of allocation explanations (see Allocator::Explain): the per-request funnel
// "devices on the node -> after class selectors -> after request selectors -> free -> after
// capacity and counters -> after taints -> after constraints", naming what removed the last
// candidates with numbers (requested vs remaining capacity of the closest devices, the shared
// counter that ran out with what is left and which claims hold it), quoting CEL errors, and the
// conflicts between requests that fit alone but not together.
//
// Thread-safe (pure functions).
#pragma once

#include <string>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "controller/allocator/allocator.h"

namespace draco::alloc {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// Human-readable, multi-line.
std::string ExplanationToText(const Explanation& e);
// "counter set S, counter C: needs N, L of T left (held by ns/claim A, +K more)".
std::string CounterShortfallText(const CounterShortfall& s);
// `message` with a hint appended when it is a CEL "no such key" runtime error (an attribute or
// capacity the device does not have); unchanged otherwise, also when the hint is already there.
std::string AddCelKeyHint(std::string message);
// Machine-readable JSON object.
void EncodeExplanation(const Explanation& e, JsonWriter& w);
std::string ExplanationToJson(const Explanation& e);

}  // namespace draco::alloc
