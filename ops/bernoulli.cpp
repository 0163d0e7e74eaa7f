// bernoulli: torch.bernoulli(p) and torch.bernoulli(x, p) on CPU, the same 0/1 draws as torch for
// the same seed (Generator::bernoulli); a leaf with no gradient.
//
// torch records BernoulliBackward0, whose gradient is zeros; here the result is a constant, so p
// gets no gradient at all, which sums the same. Not an op of the registry: nothing is recorded.
#include <string>

#include <tapegrad/graph/random.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

Tensor bernoulli(const Tensor& p, Generator& generator) {
  const Shape shape = p.shape();  // by value: appending the leaf may move p's node
  // torch checks each probability as it draws; here all of them first, naming the first bad one.
  dispatch(p.dtype(), [&]<class T>() {
    const T* v = p.data<T>();
    for (int64_t i = 0; i < shape.numel(); ++i) {
      if (!(v[i] >= T(0) && v[i] <= T(1))) {
        throw_unary_error("bernoulli", p,
                          "each probability must be in [0, 1], got " + std::to_string(v[i]) +
                              " at " + position_text(shape, i));
      }
    }
  });
  Tape& tape = p.tape();
  Tensor out = tape.leaf(shape, p.dtype(), nullptr, false);
  dispatch(p.dtype(), [&]<class T>() {
    generator.bernoulli(tape.node(out.id()).value_as<T>(), p.data<T>(), shape.numel());
  });
  return out;
}

Tensor bernoulli(const Tensor& x, double p, Generator& generator) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw_unary_error("bernoulli", x, "expects p to be in [0, 1], but got p=" + std::to_string(p));
  }
  const Shape shape = x.shape();
  Tape& tape = x.tape();
  Tensor out = tape.leaf(shape, x.dtype(), nullptr, false);
  dispatch(x.dtype(), [&]<class T>() {
    generator.bernoulli(tape.node(out.id()).value_as<T>(), shape.numel(), p);
  });
  return out;
}

}  // namespace tapegrad
