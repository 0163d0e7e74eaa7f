// pad: torch.nn.functional.pad with its four modes (constant, reflect, replicate, circular); its
// recorded backward is one op, pad_backward, summing each output element back into the element
// it was copied from (whose own gradient is pad again, with 0 as the fill).
#include <algorithm>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

constexpr int kMaxPads = 2 * kMaxRank;

struct PadState {
  PadMode mode;
  double value;
  int num_pads;
  int64_t pads[kMaxPads];
  const int64_t* map;  // per padded element: the flat index it copies, or -1 (the fill value)
};

const char* mode_name(PadMode mode) {
  switch (mode) {
    case PadMode::Constant:
      return "constant";
    case PadMode::Reflect:
      return "reflect";
    case PadMode::Replicate:
      return "replicate";
    case PadMode::Circular:
      return "circular";
  }
  return "?";
}

std::string pads_text(std::span<const int64_t> pads) {
  std::string s = "(";
  for (size_t i = 0; i < pads.size(); ++i) s += (i ? ", " : "") + std::to_string(pads[i]);
  return s + ")";
}

// Where output coordinate j of a dim of size n padded by (left, right) reads from, as torch's
// kernels: -1 for the constant fill; reflect mirrors without repeating the edge, replicate
// repeats it, circular wraps within the tensor left after negative pads crop it.
int64_t source_of(int64_t j, int64_t n, int64_t left, int64_t right, PadMode mode) {
  const int64_t src = j - left;
  switch (mode) {
    case PadMode::Constant:
      return src >= 0 && src < n ? src : -1;
    case PadMode::Reflect:
      if (src < 0) return -src;
      return src >= n ? 2 * (n - 1) - src : src;
    case PadMode::Replicate:
      return std::clamp<int64_t>(src, 0, n - 1);
    case PadMode::Circular: {
      const int64_t start = std::max<int64_t>(-left, 0);
      const int64_t kept = n - start - std::max<int64_t>(-right, 0);
      const int64_t k = (j - std::max<int64_t>(left, 0)) % kept;
      return start + (k < 0 ? k + kept : k);
    }
  }
  return -1;
}

struct PadPlan {
  Shape shape;
  std::vector<int64_t> map;
};

// Checks the pads against x as torch 1.13 does and maps every output element to its source.
PadPlan plan_pad(const Tensor& x, std::span<const int64_t> pads, PadMode mode) {
  const Shape in = x.shape();
  const int rank = in.rank();
  const auto count = static_cast<int>(pads.size());
  if (count % 2 != 0) throw_unary_error("pad", x, "padding length must be divisible by 2");
  if (count / 2 > rank) {
    throw_unary_error(
        "pad", x,
        "padding length " + std::to_string(count) + " too large for rank " + std::to_string(rank));
  }
  const int padded = count / 2;
  constexpr int64_t kLimit = int64_t{1} << 60;  // no size computation below can overflow
  for (const int64_t p : pads) {
    if (p > kLimit || p < -kLimit) {
      throw_unary_error("pad", x, "padding " + pads_text(pads) + " is too large");
    }
  }
  if (mode != PadMode::Constant &&
      (padded < 1 || padded > 3 || rank < padded + 1 || rank > padded + 2)) {
    throw_unary_error("pad", x,
                      std::string(mode_name(mode)) + " padding " + pads_text(pads) +
                          " pads the last 1 to 3 dims of an input with 1 or 2 more dims (torch's "
                          "2D to 5D non-constant padding)");
  }
  std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
  std::vector<std::vector<int64_t>> sources(static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d) {
    const int64_t n = in[d];
    const int k = rank - 1 - d;  // pads[2k], pads[2k + 1] are this dim's
    const int64_t left = k < padded ? pads[static_cast<size_t>(2 * k)] : 0;
    const int64_t right = k < padded ? pads[static_cast<size_t>(2 * k + 1)] : 0;
    const int64_t size = n + left + right;
    const std::string where = " at dim " + std::to_string(d) + " of size " + std::to_string(n);
    if (size < 0)
      throw_unary_error("pad", x, "padding " + pads_text(pads) + " gives a negative size" + where);
    if (k < padded && mode != PadMode::Constant) {
      if (n == 0)
        throw_unary_error("pad", x,
                          std::string(mode_name(mode)) + " padding needs a nonempty dim" + where);
      if (mode == PadMode::Reflect && (left >= n || right >= n)) {
        throw_unary_error(
            "pad", x, "reflect padding " + pads_text(pads) + " must be less than the size" + where);
      }
      if (mode == PadMode::Circular) {
        if (left > n || right > n) {
          throw_unary_error(
              "pad", x,
              "circular padding " + pads_text(pads) + " wraps around more than once" + where);
        }
        if (n - std::max<int64_t>(-left, 0) - std::max<int64_t>(-right, 0) < 1 && size > 0) {
          throw_unary_error(
              "pad", x,
              "circular padding " + pads_text(pads) + " crops away every element" + where);
        }
      }
    }
    dims[static_cast<size_t>(d)] = size;
    auto& src = sources[static_cast<size_t>(d)];
    src.resize(static_cast<size_t>(size));
    for (int64_t j = 0; j < size; ++j)
      src[static_cast<size_t>(j)] = source_of(j, n, left, right, mode);
  }
  PadPlan plan{Shape(std::span<const int64_t>(dims)), {}};
  const int64_t total = plan.shape.numel();
  plan.map.resize(static_cast<size_t>(total));
  const auto strides = in.strides();
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  for (int64_t o = 0; o < total; ++o) {
    int64_t flat = 0;
    for (int d = 0; d < rank && flat >= 0; ++d) {
      const int64_t s =
          sources[static_cast<size_t>(d)][static_cast<size_t>(index[static_cast<size_t>(d)])];
      flat = s < 0 ? -1 : flat + s * strides[static_cast<size_t>(d)];
    }
    plan.map[static_cast<size_t>(o)] = flat;
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < dims[static_cast<size_t>(d)]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return plan;
}

std::string pad_arguments(const Tape&, const Node& n) {
  const auto& s = n.state_as<PadState>();
  std::string text = pads_text(std::span<const int64_t>(s.pads, static_cast<size_t>(s.num_pads))) +
                     ", " + mode_name(s.mode);
  if (s.mode == PadMode::Constant) text += " " + number_text(s.value);
  return text;
}

int64_t pad_state_bytes(const Tape& tape, const Node& n, bool adjoint) {
  const int64_t count = adjoint ? tape.input(n, 0).shape.numel() : n.shape.numel();
  return count * static_cast<int64_t>(sizeof(int64_t));
}

Tensor pad_adjoint(const Tensor& dy, const Shape& shape, const PadState& state);

// dx += dy summed back into the elements each padded one copies, added in torch's order. Its
// kernels for constant, reflect and replicate add the output elements in order; its circular
// padding (torch 1.13's _pad_circular) copies slices, the last dim's first (left pad, then
// right), so its backward undoes them from the first padded dim (the right pad's copy, then the
// left's) before cutting out the core. With three or more terms per element the orders round
// differently.
template <class T>
void sum_back(const T* dy, const PadState& s, const Shape& out, const Shape& in, T* dx) {
  if (s.mode != PadMode::Circular) {
    for (int64_t o = 0; o < out.numel(); ++o) {
      if (s.map[o] >= 0) dx[s.map[o]] += dy[o];
    }
    return;
  }
  const int rank = in.rank();
  std::vector<int64_t> dims(out.dims().begin(), out.dims().end());
  std::vector<T> g(dy, dy + out.numel());
  for (int k = s.num_pads / 2 - 1; k >= 0; --k) {  // pads[2k], pads[2k + 1]: dim rank − 1 − k
    const int d = rank - 1 - k;
    const int64_t left = s.pads[2 * k], right = s.pads[2 * k + 1], n = in[d];
    const int64_t l = std::max<int64_t>(left, 0), r = std::max<int64_t>(right, 0);
    const int64_t start = std::max<int64_t>(-left, 0);
    const int64_t size = dims[static_cast<size_t>(d)];
    const int64_t kept = size - l - r;
    int64_t outer = 1, inner = 1;
    for (int e = 0; e < d; ++e) outer *= dims[static_cast<size_t>(e)];
    for (int e = d + 1; e < rank; ++e) inner *= dims[static_cast<size_t>(e)];
    std::vector<T> cut(static_cast<size_t>(outer * n * inner), T(0));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        T* row = g.data() + o * size * inner + i;
        const auto at = [&](int64_t j) -> T& { return row[j * inner]; };
        for (int64_t t = 0; t < r; ++t) at(l + t) += at(size - r + t);
        for (int64_t t = 0; t < l; ++t) at(size - l - r + t) += at(t);
        for (int64_t t = 0; t < kept; ++t) {
          cut[static_cast<size_t>((o * n + start + t) * inner + i)] = at(l + t);
        }
      }
    }
    dims[static_cast<size_t>(d)] = n;
    g = std::move(cut);
  }
  for (size_t i = 0; i < g.size(); ++i) dx[i] += g[i];
}

void pad_backward(Tape& tape, const Node& node) {
  // Y[o] = X[map[o]] (or the fill where map[o] = −1)  =>  dX[map[o]] += dY[o]
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    sum_back(node.grad_as<const T>(), node.state_as<PadState>(), node.shape,
             tape.input(node, 0).shape, dx);
  });
}

void pad_grad_graph(GradGraph& g) {
  // Y[o] = X[map[o]]  =>  dX += pad_backward(dY) (dY summed into each element's source)
  const PadState state = g.state<PadState>();
  const Shape shape = g.input(0).shape();
  g.add(0, pad_adjoint(g.grad(), shape, state));
}

void adjoint_backward(Tape& tape, const Node& node) {
  // Y[map[o]] += D[o]  =>  dD[o] += dY[map[o]] (0 where map[o] = −1)
  dispatch(node.dtype, [&]<class T>() {
    T* dd = tape.input_grad<T>(node, 0).to_add();
    if (dd == nullptr) return;
    const int64_t* map = node.state_as<PadState>().map;
    const T* dy = node.grad_as<const T>();
    const int64_t n = tape.input(node, 0).shape.numel();
    for (int64_t o = 0; o < n; ++o) {
      if (map[o] >= 0) dd[o] += dy[map[o]];
    }
  });
}

void adjoint_grad_graph(GradGraph& g) {
  // Y[map[o]] += D[o]  =>  dD += pad(dY, pads, mode, 0)
  const PadState s = g.state<PadState>();
  g.add(0, pad(g.grad(), std::span<const int64_t>(s.pads, static_cast<size_t>(s.num_pads)), s.mode,
               0.0));
}

const OpDef kPad{
    .name = "pad",
    .backward = pad_backward,
    .arguments = pad_arguments,
    .saves = saves::kNothing,
    .state_bytes = [](const Tape& t, const Node& n) { return pad_state_bytes(t, n, false); },
    .grad_graph = pad_grad_graph};
TAPEGRAD_REGISTER_OP(kPad);

const OpDef kPadBackward{
    .name = "pad_backward",
    .backward = adjoint_backward,
    .arguments = pad_arguments,
    .saves = saves::kNothing,
    .state_bytes = [](const Tape& t, const Node& n) { return pad_state_bytes(t, n, true); },
    .grad_graph = adjoint_grad_graph};
TAPEGRAD_REGISTER_OP(kPadBackward);

Tensor pad_adjoint(const Tensor& dy, const Shape& shape, const PadState& state) {
  const Shape padded = dy.shape();
  Tensor y = dy.tape().record(kPadBackward, shape, dy.dtype(), {dy}, state);
  dispatch(y.dtype(), [&]<class T>() {
    const T* dv = dy.data<T>();
    T* yv = output_data<T>(y);
    std::fill(yv, yv + shape.numel(), T(0));
    sum_back(dv, state, padded, shape, yv);
  });
  return y;
}

}  // namespace

Tensor pad(const Tensor& x, std::span<const int64_t> pads, PadMode mode, double value) {
  const PadPlan plan = plan_pad(x, pads, mode);
  PadState state{mode, value, static_cast<int>(pads.size()), {}, nullptr};
  std::copy(pads.begin(), pads.end(), state.pads);
  auto* map = x.tape().arena().allocate_array<int64_t>(static_cast<int64_t>(plan.map.size()));
  std::copy(plan.map.begin(), plan.map.end(), map);
  state.map = map;
  Tensor y = x.tape().record(kPad, plan.shape, x.dtype(), {x}, state);
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    const T fill = static_cast<T>(value);
    for (size_t o = 0; o < plan.map.size(); ++o) yv[o] = plan.map[o] < 0 ? fill : xv[plan.map[o]];
  });
  return y;
}

}  // namespace tapegrad
