// linear_bf16: nn.Linear's y = x·Wᵀ + b with W held as bfloat16 bits, for inference only.
#include <tapegrad/kernels/gemm/linear_bf16.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct LinearBf16State {
  int64_t out_features;
  int64_t in_features;
};

const OpDef kLinearBf16{.name = "linear_bf16",
                        .backward = inference_only_backward,
                        .arguments = [](const Tape&, const Node& n) {
                          const auto& s = n.state_as<LinearBf16State>();
                          return "bfloat16 weight [" + std::to_string(s.out_features) + ", " +
                                 std::to_string(s.in_features) + "]";
                        }};
TAPEGRAD_REGISTER_OP(kLinearBf16);

[[noreturn]] void throw_linear_bf16_error(const Tensor& x, const Bf16Weight& w,
                                          const std::string& what) {
  throw Error("linear_bf16: " + describe("x", x) + " x bfloat16 weight [" +
              std::to_string(w.out_features) + ", " + std::to_string(w.in_features) + "]: " + what);
}

}  // namespace

Tensor linear_bf16(const Tensor& x, const Bf16Weight& weight, const Tensor& bias) {
  check_inference_only("linear_bf16", x);
  if (weight.bits == nullptr || weight.out_features <= 0 || weight.in_features <= 0) {
    throw_linear_bf16_error(x, weight, "the weight must hold bits and positive sizes");
  }
  if (x.dtype() != DType::Float32) {
    throw_linear_bf16_error(
        x, weight,
        std::string("x is ") + dtype_name(x.dtype()) + "; bfloat16 weights take float32 inputs");
  }
  if (x.rank() == 0 || x.size(-1) != weight.in_features) {
    throw_linear_bf16_error(x, weight,
                            "x must end in " + std::to_string(weight.in_features) + " features");
  }
  if (bias.defined() &&
      (bias.dtype() != DType::Float32 || bias.shape() != Shape{weight.out_features})) {
    throw_linear_bf16_error(x, weight,
                            describe("bias", bias) + " (" + dtype_name(bias.dtype()) +
                                ") must be float32 [" + std::to_string(weight.out_features) + "]");
  }
  Shape shape = x.shape();
  shape[shape.rank() - 1] = weight.out_features;
  const LinearBf16State state{weight.out_features, weight.in_features};
  Tensor y = bias.defined()
                 ? x.tape().record(kLinearBf16, shape, DType::Float32, {x, bias}, state)
                 : x.tape().record(kLinearBf16, shape, DType::Float32, {x}, state);  // [.., out]
  const float* b = bias.defined() ? bias.data<float>() : nullptr;
  const int64_t rows = x.numel() / weight.in_features;
  if (rows == 1) {
    // One row (a decode step): a matrix-vector product reads each weight once.
    gemv_bf16(weight.bits, x.data<float>(), b, output_data<float>(y), weight.out_features,
              weight.in_features);
  } else {
    linear_bf16(weight.bits, x.data<float>(), b, output_data<float>(y), rows, weight.out_features,
                weight.in_features);
  }
  return y;
}

}  // namespace tapegrad
