// Rendering of allocation explanations (see Allocator::Explain): the per-request funnel
// "devices on the node -> after class selectors -> after request selectors -> free -> after
// capacity and counters -> after taints -> after constraints", naming what removed the last
// candidates and quoting CEL errors.
//
// Thread-safe (pure functions).
#pragma once

#include <string>

#include "controller/allocator/allocator.h"
#include "controller/allocator/json_codec.h"

namespace draco::alloc {

// Human-readable, multi-line.
std::string ExplanationToText(const Explanation& e);
// Machine-readable JSON object.
void EncodeExplanation(const Explanation& e, JsonWriter& w);
std::string ExplanationToJson(const Explanation& e);

}  // namespace draco::alloc
