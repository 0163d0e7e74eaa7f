// where: a where the condition is nonzero, else b, torch.where(cond, a, b) with broadcasting.
//
// The condition is a float32 or float64 mask, as for masked_fill (nonzero, NaN included, means
// "take a"); it never gets a gradient. cond, a and b broadcast together as in torch; a and b
// must share a dtype, which the output takes.
#include <array>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// Calls f(out_index, cond_index, a_index, b_index) over `out` in row-major order.
template <class F>
void for_each_where(const Shape& out, const Strides& c, const Strides& a, const Strides& b, F&& f) {
  const int64_t c_step = c[kMaxRank - 1], a_step = a[kMaxRank - 1], b_step = b[kMaxRank - 1];
  const std::array<int64_t, kMaxRank> dims = padded_dims(out);
  const int64_t n = dims[kMaxRank - 1];
  for_each_strided_row<3>(dims, {&c, &a, &b}, [&](int64_t o, const std::array<int64_t, 3>& base) {
    for (int64_t i = 0; i < n; ++i) {
      f(o + i, base[0] + i * c_step, base[1] + i * a_step, base[2] + i * b_step);
    }
  });
}

void where_backward(Tape& tape, const Node& node) {
  // Y = where(C ≠ 0, A, B)  =>  dA += reduce(dY ⊙ [C ≠ 0]); dB += reduce(dY ⊙ [C = 0]); C: none
  dispatch(node.dtype, [&]<class T>() {
    const Node& cond = tape.input(node, 0);
    const Node& a = tape.input(node, 1);
    const Node& b = tape.input(node, 2);
    T* da = tape.input_grad<T>(node, 1).to_add();
    T* db = tape.input_grad<T>(node, 2).to_add();
    if (da == nullptr && db == nullptr) return;
    const T* dy = node.grad_as<const T>();
    const Strides cs = broadcast_strides(cond.shape, node.shape);
    const Strides as = broadcast_strides(a.shape, node.shape);
    const Strides bs = broadcast_strides(b.shape, node.shape);
    dispatch(cond.dtype, [&]<class M>() {
      const M* c = cond.value_as<const M>();
      // Broadcast dims have stride 0, so += at the strided index sums dY over them (reduce).
      for_each_where(node.shape, cs, as, bs, [&](int64_t o, int64_t k, int64_t i, int64_t j) {
        if (c[k] != M(0)) {
          if (da != nullptr) da[i] += dy[o];
        } else if (db != nullptr) {
          db[j] += dy[o];
        }
      });
    });
  });
}

void where_grad_graph(GradGraph& g) {
  // Y = where(C ≠ 0, A, B)  =>  dA += sum_to_size(where(C, dY, 0)), dB += sum_to_size(where(C, 0,
  // dY))
  const Tensor c = g.input(0), zero = zeros(Shape{}, g.grad().dtype());
  const Shape a = g.input(1).shape(), b = g.input(2).shape();
  if (g.needs(1)) g.add(1, sum_to_size(where(c, g.grad(), zero), a));
  if (g.needs(2)) g.add(2, sum_to_size(where(c, zero, g.grad()), b));
}

const OpDef kWhere{.name = "where",
                   .backward = where_backward,
                   .arguments = nullptr,
                   .saves = saves::kInput0,
                   .grad_graph = where_grad_graph};
TAPEGRAD_REGISTER_OP(kWhere);

}  // namespace

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_same_dtype("where", a, b);
  bool ok_ab = false, ok_all = false;
  const Shape ab = broadcast_shape(a.shape(), b.shape(), &ok_ab);
  const Shape out = ok_ab ? broadcast_shape(cond.shape(), ab, &ok_all) : Shape{};
  if (!ok_ab || !ok_all) {
    throw Error("where: " + describe("cond", cond) + ", " + describe("a", a) + ", " +
                describe("b", b) + ": cannot broadcast the three shapes together");
  }
  Tensor y = a.tape().record(kWhere, out, a.dtype(), {cond, a, b});
  const Strides cs = broadcast_strides(cond.shape(), out);
  const Strides as = broadcast_strides(a.shape(), out);
  const Strides bs = broadcast_strides(b.shape(), out);
  dispatch(y.dtype(), [&]<class T>() {
    const T* av = a.data<T>();
    const T* bv = b.data<T>();
    T* yv = output_data<T>(y);
    dispatch(cond.dtype(), [&]<class M>() {
      const M* c = cond.data<M>();
      for_each_where(out, cs, as, bs, [&](int64_t o, int64_t k, int64_t i, int64_t j) {
        yv[o] = c[k] != M(0) ? av[i] : bv[j];
      });
    });
  });
  return y;
}

// The number as a 0-D constant of the tensor branch's dtype: where's broadcasting does the rest.
Tensor where(const Tensor& cond, const Tensor& a, double b) {
  return where(cond, a, full(Shape{}, b, a.dtype()));
}

Tensor where(const Tensor& cond, double a, const Tensor& b) {
  return where(cond, full(Shape{}, a, b.dtype()), b);
}

Tensor where(const Tensor& cond, double a, double b, DType dtype) {
  return where(cond, full(Shape{}, a, dtype), full(Shape{}, b, dtype));
}

}  // namespace tapegrad
