// rope: rotary position embeddings from cos/sin tables (the book's apply_rope, halves rotated),
// and compute_rope_params, the tables as the book's qwen3.py and llama3.py compute them.
#include <array>
#include <cmath>
#include <numbers>

#include <tapegrad/kernels/gemm/gemm_kernels.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct RopeState {
  int64_t outer, t, d;  // x as [outer, T, D]; the tables' first T rows are read
};

// rotate_half(x) of the book: cat(-x[.., D/2:], x[.., :D/2]), written with ops.
Tensor rotate_half(const Tensor& x, int64_t d) {
  const std::array<Tensor, 2> halves{neg(narrow(x, -1, d / 2, d / 2)), narrow(x, -1, 0, d / 2)};
  return cat(halves, -1);
}

// Its transpose: the gradient of rotate_half, cat(z[.., D/2:], -z[.., :D/2]).
Tensor unrotate_half(const Tensor& z, int64_t d) {
  const std::array<Tensor, 2> halves{narrow(z, -1, d / 2, d / 2), neg(narrow(z, -1, 0, d / 2))};
  return cat(halves, -1);
}

void rope_backward(Tape& tape, const Node& node) {
  // Y = X⊙cos + rot(X)⊙sin, rot(X) = [−X₂, X₁]  =>  dX += dY⊙cos + rotᵀ(dY⊙sin) with
  // rotᵀ(Z) = [Z₂, −Z₁]; dcos[t] += Σ_outer dY⊙X, dsin[t] += Σ_outer dY⊙rot(X)
  dispatch(node.dtype, [&]<class T>() {
    const auto [outer, t, d] = node.state_as<RopeState>();
    const int64_t h = d / 2;
    const T* x = tape.input(node, 0).value_as<const T>();
    const T* c = tape.input(node, 1).value_as<const T>();
    const T* s = tape.input(node, 2).value_as<const T>();
    const T* dy = node.grad_as<const T>();
    T* dx = tape.input_grad<T>(node, 0).to_add();
    T* dc = tape.input_grad<T>(node, 1).to_add();
    T* ds = tape.input_grad<T>(node, 2).to_add();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t p = 0; p < t; ++p) {
        const int64_t row = (o * t + p) * d;
        const T *ci = c + p * d, *si = s + p * d, *xi = x + row, *g = dy + row;
        for (int64_t i = 0; i < d; ++i) {
          const T rot = i < h ? -xi[i + h] : xi[i - h];
          if (dx != nullptr)
            dx[row + i] += g[i] * ci[i] + (i < h ? g[i + h] * si[i + h] : -(g[i - h] * si[i - h]));
          if (dc != nullptr) dc[p * d + i] += g[i] * xi[i];
          if (ds != nullptr) ds[p * d + i] += g[i] * rot;
        }
      }
    }
  });
}

void rope_grad_graph(GradGraph& g) {
  // dX = dY⊙cos + rotᵀ(dY⊙sin); dcos, dsin: Σ over the leading dims, placed in the tables' rows
  const RopeState s = g.state<RopeState>();
  const Shape table = g.input(1).shape();
  const Tensor c = narrow(g.input(1), 0, 0, s.t), sn = narrow(g.input(2), 0, 0, s.t);  // [T, D]
  if (g.needs(0)) g.add(0, add(mul(g.grad(), c), unrotate_half(mul(g.grad(), sn), s.d)));
  const Shape rows{s.t, s.d};
  if (g.needs(1)) g.add(1, placed(sum_to_size(mul(g.grad(), g.input(0)), rows), table, 0, 0));
  if (g.needs(2)) {
    const Tensor rot = rotate_half(g.input(0), s.d);
    g.add(2, placed(sum_to_size(mul(g.grad(), rot), rows), table, 0, 0));
  }
}

const OpDef kRope{.name = "rope",
                  .backward = rope_backward,
                  .saves = saves::kInput0 | saves::kInput1 | saves::kInput2,
                  .grad_graph = rope_grad_graph};
TAPEGRAD_REGISTER_OP(kRope);

[[noreturn]] void throw_rope_error(const Tensor& x, const Tensor& cos, const Tensor& sin,
                                   const std::string& what) {
  throw Error("rope: " + describe("x", x) + ", " + describe("cos", cos) + ", " +
              describe("sin", sin) + ": " + what);
}

}  // namespace

Tensor rope(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  check_same_dtype("rope", x, cos);
  check_same_dtype("rope", x, sin);
  if (x.rank() < 2) throw_rope_error(x, cos, sin, "x must be [.., T, D]");
  if (cos.rank() != 2 || cos.shape() != sin.shape()) {
    throw_rope_error(x, cos, sin, "cos and sin must both be [L, D] tables of one shape");
  }
  const int64_t t = x.size(-2), d = x.size(-1);
  if (d % 2 != 0)
    throw_rope_error(x, cos, sin, "the head dim D " + std::to_string(d) + " must be even");
  if (cos.size(1) != d) throw_rope_error(x, cos, sin, "the tables' last dim must be x's D");
  if (cos.size(0) < t) {
    throw_rope_error(x, cos, sin,
                     "the tables have " + std::to_string(cos.size(0)) +
                         " positions, fewer than x's T " + std::to_string(t));
  }
  const int64_t outer = t * d == 0 ? 0 : x.numel() / (t * d), h = d / 2;
  Tensor y = x.tape().record(kRope, x.shape(), x.dtype(), {x, cos, sin}, RopeState{outer, t, d});
  dispatch(y.dtype(), [&]<class T>() {
    const T *xv = x.data<T>(), *c = cos.data<T>(), *s = sin.data<T>();
    T* out = output_data<T>(y);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t p = 0; p < t; ++p) {
        const int64_t row = (o * t + p) * d;
        const T *ci = c + p * d, *si = s + p * d, *xi = xv + row;
        // (x·cos) + (rotated·sin), each product rounded, as the book's expression computes it
        for (int64_t i = 0; i < d; ++i) {
          const T rot = i < h ? -xi[i + h] : xi[i - h];
          const T a = detail::unfused(xi[i] * ci[i]), b = detail::unfused(rot * si[i]);
          out[row + i] = a + b;
        }
      }
    }
  });
  return y;
}

RopeTables compute_rope_params(int64_t head_dim, double theta_base, int64_t context_length,
                               const std::optional<RopeFreqConfig>& freq_config) {
  if (head_dim <= 0 || head_dim % 2 != 0) {
    throw Error("compute_rope_params: head_dim " + std::to_string(head_dim) +
                " must be positive and even");
  }
  if (context_length <= 0) {
    throw Error("compute_rope_params: context_length " + std::to_string(context_length) +
                " must be positive");
  }
  if (!(theta_base > 0.0)) {
    throw Error("compute_rope_params: theta_base " + number_text(theta_base) + " must be > 0");
  }
  // float32 throughout, as the book's tensors: theta ** (arange(0, D, 2) / D), then 1.0 / that.
  const int64_t half = head_dim / 2;
  std::vector<float> inv_freq(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    inv_freq[static_cast<size_t>(i)] = static_cast<float>(2 * i) / static_cast<float>(head_dim);
  }
  // torch's pow, cos and sin are SLEEF's 1-ulp functions (vmath's), not the C library's: the
  // tables' bits depend on it.
  vmath::pow_base(static_cast<float>(theta_base), inv_freq.data(), inv_freq.data(), half);
  for (float& v : inv_freq) v = 1.0f / v;  // 1.0 / tensor: torch's reciprocal
  if (freq_config) {
    // Llama 3's smoothing: low frequencies divided by factor, high ones kept, the band between
    // interpolated (the book's llama3.py, in its float32 tensor arithmetic).
    const RopeFreqConfig& f = *freq_config;
    const double low_wavelen = f.original_context_length / f.low_freq_factor;
    const double high_wavelen = f.original_context_length / f.high_freq_factor;
    // A Python number over a tensor is torch's reciprocal times the number: two roundings.
    const float two_pi = static_cast<float>(2.0 * std::numbers::pi);
    const float factor = static_cast<float>(f.factor);
    for (float& inv : inv_freq) {
      const float wavelen = (1.0f / inv) * two_pi;
      const float scaled = wavelen > static_cast<float>(low_wavelen) ? inv / factor : inv;
      // Each product rounded before the sum, as torch's separate ops (no multiply-add).
      const float ratio =
          detail::unfused((1.0f / wavelen) * static_cast<float>(f.original_context_length));
      const float smooth = (ratio - static_cast<float>(f.low_freq_factor)) /
                           static_cast<float>(f.high_freq_factor - f.low_freq_factor);
      const float smoothed =
          detail::unfused((1.0f - smooth) * (inv / factor)) + detail::unfused(smooth * inv);
      const bool medium =
          wavelen <= static_cast<float>(low_wavelen) && wavelen >= static_cast<float>(high_wavelen);
      inv = medium ? smoothed : scaled;
    }
  }
  RopeTables tables{context_length, head_dim, {}, {}};
  tables.cos.resize(static_cast<size_t>(context_length * head_dim));
  tables.sin.resize(tables.cos.size());
  for (int64_t p = 0; p < context_length; ++p) {
    // angles = positions[:, None] * inv_freq[None, :], then cat([angles, angles], dim=1)
    float* row = tables.cos.data() + p * head_dim;
    for (int64_t i = 0; i < head_dim; ++i) {
      row[i] = static_cast<float>(p) * inv_freq[static_cast<size_t>(i % half)];
    }
  }
  const int64_t n = context_length * head_dim;
  vmath::sin(tables.cos.data(), tables.sin.data(), n);
  vmath::cos(tables.cos.data(), tables.cos.data(), n);
  return tables;
}

}  // namespace tapegrad
