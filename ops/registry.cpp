// The list of op names (OpDef::name of every op in ops/). Adding an op means adding it here,
// and tests/ops/test_registry.cpp then demands a gradcheck for it.
#include "ops/registry.h"

#include <algorithm>
#include <array>

namespace tapegrad {

namespace {
constexpr std::array<std::string_view, 38> kOps = {
    "add",        "sub",         "mul",         "div",        "scale",        "add_scalar",
    "neg",        "exp",         "log",         "sqrt",       "pow",          "matmul",
    "linear",     "transpose",   "reshape",     "select",     "narrow",       "cat",
    "split_heads", "merge_heads", "softmax",    "masked_fill", "causal_mask", "tril",
    "triu",       "dropout",     "sum",         "sum_dim",    "mean",         "mean_dim",
    "max_dim",    "mse_loss",    "cross_entropy", "layer_norm", "gelu",        "embedding",
    "causal_softmax", "causal_attention",
};
}  // namespace

std::span<const std::string_view> registered_ops() { return kOps; }

bool is_registered_op(std::string_view name) {
  return std::find(kOps.begin(), kOps.end(), name) != kOps.end();
}

}  // namespace tapegrad
