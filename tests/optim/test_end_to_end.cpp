// End to end: the golden attention model trained with tapegrad's own gradients follows torch's
// 20-step trajectories (the other optim tests replay torch's gradients instead).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/ops/ops.h>
#include "tests/compare.h"
#include "tests/optim/optim_golden.h"

using namespace tapegrad;

namespace {

struct ModelInputs {
  Shape shape;
  std::vector<double> x, target;
};

ModelInputs read_inputs() {
  const testing::GoldenFile& g = testing::golden_file("optim/model_inputs.txt");
  return {g["x"].shape, g["x"].values, g["target"].values};
}

// make_optim_goldens.py's CausalAttentionModel, from tapegrad's ops. LayerNorm is composed
// (mean and variance over the last dim as products with a column of 1/3), so its roundings
// differ from torch's fused kernel at the last bits: gradients agree to ~1e-15 in float64.
Tensor attention_loss(const std::vector<Parameter>& p, const ModelInputs& in) {
  const Parameter &w_query = p[0], &w_key = p[1], &w_value = p[2], &out_w = p[3], &out_b = p[4],
                  &norm_w = p[5], &norm_b = p[6];
  const Tensor x = from_values(in.shape, in.x, DType::Float64);
  const Tensor target = from_values(in.shape, in.target, DType::Float64);
  const Tensor q = matmul(x, w_query), k = matmul(x, w_key), v = matmul(x, w_value);
  const Tensor scores = causal_mask(matmul(q, transpose(k, 1, 2)));
  const Tensor weights = softmax(div_scalar(scores, 2.0), -1);  // sqrt(d_out = 4)
  const Tensor out = linear(matmul(weights, v), out_w, out_b);  // [2, 6, 3]
  const Tensor thirds =
      from_values({3, 1}, std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3}, DType::Float64);
  const Tensor centered = sub(out, matmul(out, thirds));
  const Tensor variance = matmul(mul(centered, centered), thirds);  // biased, as LayerNorm's
  const Tensor normed = div(centered, sqrt(add_scalar(variance, 1e-5)));
  const Tensor y = add(mul(normed, norm_w), norm_b);
  const Tensor error = sub(y, target);
  return div_scalar(sum(mul(error, error)), static_cast<double>(error.numel()));
}

}  // namespace

TEST_CASE("end to end: training the attention model on tapegrad's gradients follows torch",
          "[optim][end_to_end]") {
  const ModelInputs inputs = read_inputs();
  size_t runs = 0;
  for (const char* optimizer : {"SGD", "Adam", "AdamW"}) {
    for (const testing::GoldenRun& run : testing::golden_runs(optimizer)) {
      if (run.dtype != DType::Float64) continue;  // float32 gradients differ from torch's
      ++runs;
      INFO("golden " << run.file);
      std::vector<Parameter> params;
      for (const testing::GoldenParam& gp : run.params) {
        params.push_back(
            Parameter::from_values(gp.shape, run.init.at(gp.name), run.dtype, gp.name));
      }
      std::unique_ptr<Optimizer> opt = testing::make_optimizer(run, params);
      std::unique_ptr<LRScheduler> schedule = testing::make_schedule(run, *opt);
      Tape tape;
      TapeScope scope(tape);
      testing::MaxError max_grad_error, max_param_error;  // NaN-aware
      for (const testing::GoldenStep& step : run.steps) {
        tape.reset();
        opt->zero_grad();
        attention_loss(params, inputs).backward();
        for (size_t i = 0; i < params.size(); ++i) {
          const std::vector<double> ours = params[i].grad_values();
          const std::vector<double>& torch = step.grads.at(run.params[i].name);
          for (size_t k = 0; k < ours.size(); ++k) {
            max_grad_error.add(testing::relative_error(ours[k], torch[k]));
          }
        }
        if (run.clip.at(0) == "norm") {
          clip_grad_norm_(*opt, std::strtod(run.clip.at(1).c_str(), nullptr),
                          run.clip.at(2) == "inf" ? INFINITY : 2.0);
        } else if (run.clip.at(0) == "value") {
          clip_grad_value_(*opt, std::strtod(run.clip.at(1).c_str(), nullptr));
        }
        opt->step();
        if (schedule) schedule->step();
        for (size_t i = 0; i < params.size(); ++i) {
          const std::vector<double> ours = params[i].values();
          const std::vector<double>& torch = step.after.at(run.params[i].name);
          for (size_t k = 0; k < ours.size(); ++k) {
            max_param_error.add(testing::relative_error(ours[k], torch[k]));
          }
        }
      }
      INFO("max gradient error " << max_grad_error.value << ", max parameter error "
                                 << max_param_error.value);
      CHECK(max_grad_error.within(1e-11));  // ~4e-13 at the time of writing (composed LayerNorm)
      CHECK(max_param_error.within(1e-9));
    }
  }
  CHECK(runs == 16);
}
