// The LibTorch side of tapegrad-bench's op table (--workloads ops): each row of op_rows.h as a
// LibTorch user writes it (forward, .sum(), .backward()), built into the LibTorch plugin.
#include <dlfcn.h>

#include <torch/torch.h>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tools/bench/op_rows.h"

namespace {

using tapegrad_bench::kOpCols;
using tapegrad_bench::kOpRows;
using tapegrad_bench::OpKind;
using tapegrad_bench::OpRow;
using torch::Tensor;

struct TorchOp {
  const OpRow* row = nullptr;
  Tensor a, b, index;         // the inputs (a and b leaves that require grad where differentiable)
  std::function<Tensor()> f;  // the row's op on them
};

Tensor float_tensor(const std::vector<float>& v, int64_t rows, int64_t cols, bool grad) {
  return torch::from_blob(const_cast<float*>(v.data()), {rows, cols}, torch::kFloat32)
      .clone()
      .set_requires_grad(grad);
}

// The row's op, or an empty function for a name this file does not know.
std::function<Tensor()> op_of(const std::string& n, TorchOp& o) {
  const Tensor& a = o.a;
  const Tensor& b = o.b;
  const Tensor& i = o.index;
  using F = std::function<Tensor()>;
  // Elementwise, one input.
  if (n == "abs") return F([&] { return a.abs(); });
  if (n == "sign") return F([&] { return a.sign(); });
  if (n == "square") return F([&] { return a.square(); });
  if (n == "rsqrt") return F([&] { return a.rsqrt(); });
  if (n == "log1p") return F([&] { return a.log1p(); });
  if (n == "expm1") return F([&] { return a.expm1(); });
  if (n == "exp2") return F([&] { return a.exp2(); });
  if (n == "log2") return F([&] { return a.log2(); });
  if (n == "log10") return F([&] { return a.log10(); });
  if (n == "sin") return F([&] { return a.sin(); });
  if (n == "cos") return F([&] { return a.cos(); });
  if (n == "tan") return F([&] { return a.tan(); });
  if (n == "asin") return F([&] { return a.asin(); });
  if (n == "acos") return F([&] { return a.acos(); });
  if (n == "atan") return F([&] { return a.atan(); });
  if (n == "sinh") return F([&] { return a.sinh(); });
  if (n == "cosh") return F([&] { return a.cosh(); });
  if (n == "asinh") return F([&] { return a.asinh(); });
  if (n == "acosh") return F([&] { return a.acosh(); });
  if (n == "atanh") return F([&] { return a.atanh(); });
  if (n == "erf") return F([&] { return a.erf(); });
  if (n == "erfc") return F([&] { return a.erfc(); });
  if (n == "floor") return F([&] { return a.floor(); });
  if (n == "ceil") return F([&] { return a.ceil(); });
  if (n == "round") return F([&] { return a.round(); });
  if (n == "trunc") return F([&] { return a.trunc(); });
  if (n == "frac") return F([&] { return a.frac(); });
  if (n == "clamp") return F([&] { return a.clamp(-0.5, 0.5); });
  // Elementwise, two inputs (the /bcast rows differ in b's shape only).
  const std::string base = n.substr(0, n.find('/'));
  if (base == "maximum") return F([&] { return torch::maximum(a, b); });
  if (base == "minimum") return F([&] { return torch::minimum(a, b); });
  if (base == "pow") return F([&] { return a.pow(b); });
  if (base == "atan2") return F([&] { return a.atan2(b); });
  if (base == "fmod") return F([&] { return a.fmod(b); });
  if (base == "remainder") return F([&] { return a.remainder(b); });
  if (base == "logaddexp") return F([&] { return a.logaddexp(b); });
  if (base == "lerp") return F([&] { return a.lerp(b, 0.3); });
  if (base == "lt") return F([&] { return a.lt(b); });
  if (n == "isnan") return F([&] { return a.isnan(); });
  if (n == "argmax") return F([&] { return a.argmax(1); });
  if (n == "argmin") return F([&] { return a.argmin(1); });
  // Reductions.
  if (n == "sum(all)") return F([&] { return a.sum(); });
  if (n == "sum(dim 0)") return F([&] { return a.sum(0); });
  if (n == "sum") return F([&] { return a.sum(1); });
  if (n == "mean") return F([&] { return a.mean(1); });
  if (n == "max(all)") return F([&] { return a.max(); });
  if (n == "max") return F([&] { return std::get<0>(a.max(1)); });
  if (n == "min") return F([&] { return std::get<0>(a.min(1)); });
  if (n == "amax") return F([&] { return a.amax(1); });
  if (n == "amin") return F([&] { return a.amin(1); });
  if (n == "prod") return F([&] { return a.prod(1); });
  if (n == "var") return F([&] { return a.var(1); });
  if (n == "std") return F([&] { return a.std(1); });
  if (n == "logsumexp") return F([&] { return a.logsumexp(1); });
  if (n == "norm") return F([&] { return a.norm(2, 1); });
  if (n == "norm(p=1)") return F([&] { return a.norm(1, 1); });
  if (n == "cumsum") return F([&] { return a.cumsum(1); });
  if (n == "cumprod") return F([&] { return a.cumprod(1); });
  if (n == "cummax") return F([&] { return std::get<0>(a.cummax(1)); });
  if (n == "cummin") return F([&] { return std::get<0>(a.cummin(1)); });
  if (n == "logcumsumexp") return F([&] { return a.logcumsumexp(1); });
  if (n == "sort") return F([&] { return std::get<0>(a.sort(1)); });
  if (n == "topk(16)") return F([&] { return std::get<0>(a.topk(16, 1)); });
  // Gather / scatter.
  if (n == "gather") return F([&] { return a.gather(1, i); });
  if (n == "take_along_dim") return F([&] { return torch::take_along_dim(a, i, 1); });
  if (n == "scatter") return F([&] { return a.scatter(1, i, b); });
  if (n == "scatter_add") return F([&] { return a.scatter_add(1, i, b); });
  if (n == "index_select") return F([&] { return a.index_select(0, i); });
  if (n == "index_add") return F([&] { return a.index_add(0, i, b); });
  return F();
}

}  // namespace

extern "C" {

void* tgb_torch_op_create(const char* row, int threads) {
  torch::set_num_threads(threads);
  using SetThreads = void (*)(int);
  if (auto f = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
    f(threads);
  }
  const OpRow* r = tapegrad_bench::find_op_row(row);
  if (r == nullptr) return nullptr;
  auto o = std::make_unique<TorchOp>();
  o->row = r;
  const tapegrad_bench::OpRowInputs in = tapegrad_bench::make_op_row_inputs(*r);
  const bool grad = r->kind != OpKind::Forward;
  o->a = float_tensor(in.a, kOpRows, kOpCols, grad);
  const std::string name = r->name;
  // b is an input of the binary rows and the scatter family's source; only those take its grad.
  const bool b_used = r->kind == OpKind::Binary || r->kind == OpKind::Forward ||
                      name == "scatter" || name == "scatter_add" || name == "index_add";
  o->b = float_tensor(in.b, kOpRows, tapegrad_bench::op_row_second_cols(*r), grad && b_used);
  if (!in.index.empty()) {
    const int64_t n = static_cast<int64_t>(in.index.size());
    o->index = torch::from_blob(const_cast<int64_t*>(in.index.data()), {n}, torch::kInt64).clone();
    if (n == kOpRows * kOpCols) o->index = o->index.view({kOpRows, kOpCols});
  }
  o->f = op_of(name, *o);
  if (!o->f) return nullptr;
  return o.release();
}

double tgb_torch_op_run(void* op, int reps) {
  TorchOp& o = *static_cast<TorchOp*>(op);
  double loss = 0;
  for (int rep = 0; rep < reps; ++rep) {
    if (o.row->kind == OpKind::Forward) {
      torch::NoGradGuard no_grad;
      loss = o.f().sum().item<double>();
      continue;
    }
    // set_to_none, torch's fastest zero_grad: the backward's buffer becomes .grad, no copy.
    o.a.mutable_grad().reset();
    if (o.b.requires_grad()) o.b.mutable_grad().reset();
    const Tensor s = o.f().sum();
    s.backward();
    loss = s.item<double>();
  }
  return loss;
}

double tgb_torch_op_grad_sum(void* op) {
  const TorchOp& o = *static_cast<TorchOp*>(op);
  if (!o.a.grad().defined()) return 0;
  return o.a.grad().to(torch::kFloat64).sum().item<double>();
}

void tgb_torch_op_destroy(void* op) {
  delete static_cast<TorchOp*>(op);
}

}  // extern "C"
