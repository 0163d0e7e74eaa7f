// in_module_scope: how a parameterless module runs its op, inside the module's drawing cluster
// and with the module named first in the op's errors (nn/activations.cpp, nn/pooling.cpp).
#pragma once

#include <string>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/module.h>

namespace tapegrad::nn {

// op() recorded inside NameScope(m.name()); an Error from the op is rethrown naming the module
// first: `Flatten "flat": flatten: x [3]: ...`.
template <class Op>
Tensor in_module_scope(const char* kind, const Module& m, const Tensor& x, Op op) {
  NameScope scope(m.name(), x.tape());
  try {
    return op();
  } catch (const Error& e) {
    throw Error(std::string(kind) + " \"" + m.name() + "\": " + e.what());
  }
}

}  // namespace tapegrad::nn
