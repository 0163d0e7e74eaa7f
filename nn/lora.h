// Appendix E's LoRA: LoRALayer, LinearWithLoRA, replace_linear_with_lora, merging for export.
//
// The book's classes (appendix-E/01_main-chapter-code): a LoRALayer adds (alpha / rank)·(x·A·B)
// with A [in, rank] drawn by kaiming_uniform_(a = √5) over A itself (fan_in = rank, as torch
// computes it for a 2-D tensor) and B [rank, out] zeros, so a fresh adapter changes nothing; a
// LinearWithLoRA is its Linear plus that adapter. replace_linear_with_lora walks the model as
// the book's recursion over named_children() does (depth first, in registration order), so after
// the same manual_seed every A holds torch's values. Parameter names are torch's:
// "trf_blocks.0.att.W_query.linear.weight", "trf_blocks.0.att.W_query.lora.A", ...
#pragma once

#include <cstdint>
#include <string>

#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/nn/layers.h>
#include <tapegrad/nn/module.h>

namespace tapegrad::nn {

class LoRALayer : public UnaryModule {
 public:
  // Throws Error unless 1 <= rank <= in_dim (A·B cannot have a rank above in_dim) and
  // in_dim, out_dim >= 1.
  LoRALayer(int64_t in_dim, int64_t out_dim, int64_t rank, double alpha,
            DType dtype = DType::Float32, Generator& generator = default_generator(),
            std::string name = "LoRALayer");

  Tensor forward(const Tensor& x) const override;  // [.., in] -> [.., out]

  int64_t rank() const { return A.shape()[1]; }
  double alpha() const { return alpha_; }
  double scaling() const { return alpha_ / static_cast<double>(rank()); }  // alpha / rank

  Parameter A;  // [in_dim, rank]
  Parameter B;  // [rank, out_dim]

 private:
  double alpha_;
};

// linear(x) + lora(x). Stands in for the Linear it wraps (Module::replace_module). merge() folds
// the adapter into the base weight, W += (alpha / rank)·(A·B)ᵀ, for export (forward then runs
// the Linear alone); unmerge() takes it out again (W -= the same product: the weight returns to
// within a rounding of its value before merge()).
class LinearWithLoRA : public UnaryModule {
 public:
  LinearWithLoRA(Linear linear, int64_t rank, double alpha,
                 Generator& generator = default_generator(), std::string name = "LinearWithLoRA");

  Tensor forward(const Tensor& x) const override;  // [.., in] -> [.., out]

  void merge();
  void unmerge();
  bool merged() const { return merged_; }

  Linear linear;
  LoRALayer lora;

 protected:
  std::string stand_in_problem(const Module& original) const override;

 private:
  bool merged_ = false;
};

// The book's replace_linear_with_lora: every Linear of `model` (not inside a LinearWithLoRA)
// becomes a LinearWithLoRA wrapping it, in the order of the book's recursion over
// named_children(). Returns how many were replaced. Throws Error (before replacing anything)
// when rank < 1 or rank exceeds a layer's in_features.
int64_t replace_linear_with_lora(Module& model, int64_t rank, double alpha,
                                 Generator& generator = default_generator());

// Every LinearWithLoRA of `model`, in named_parameters order.
std::vector<LinearWithLoRA*> lora_layers(Module& model);

// merge() / unmerge() on every LinearWithLoRA of `model`.
void merge_lora(Module& model);
void unmerge_lora(Module& model);

// The model's state_dict in the layout of the model before replace_linear_with_lora, the
// adapters merged into the weights (W + (alpha / rank)·(A·B)ᵀ, computed without changing the
// model): "...W_query.weight" instead of "...W_query.linear.weight", no "lora" keys. A plain
// GPTModel (or torch's) loads it. Buffers are included, as in state_dict().
StateDict merged_state_dict(const Module& model);

// Only the adapters' tensors ("...lora.A", "...lora.B"), in state_dict order, and as a
// safetensors file; load_lora reads such a file into a model with the same adapters (strict:
// every adapter tensor and nothing else).
StateDict lora_state_dict(const Module& model);
void save_lora(const Module& model, const std::string& path);
void load_lora(Module& model, const std::string& path);

}  // namespace tapegrad::nn
