// The pooling and resampling loops (kernels/pool/pool.h): plain loops over each plane, in torch
// 1.13's CPU order of operations.
#include <tapegrad/kernels/pool/pool.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace tapegrad::pool {

namespace {

// torch's adaptive pooling bounds: floor(i·in / out) and ceil((i + 1)·in / out), in integers.
int64_t adaptive_start(int64_t i, int64_t out, int64_t in) {
  return (i / out) * in + ((i % out) * in) / out;
}
int64_t adaptive_end(int64_t i, int64_t out, int64_t in) {
  return 1 + ((i + 1) * in - 1) / out;
}

// One avg window: its clipped bounds and its divisor (0 when it lies wholly in padding).
struct AvgWindow {
  int64_t h0, h1, w0, w1, divisor;
};

AvgWindow avg_window(const Geometry& g, const AvgOptions& o, int64_t oh, int64_t ow) {
  int64_t h0 = oh * g.stride_h - g.pad_h;
  int64_t w0 = ow * g.stride_w - g.pad_w;
  int64_t h1 = std::min(h0 + g.kernel_h, g.in_h + g.pad_h);
  int64_t w1 = std::min(w0 + g.kernel_w, g.in_w + g.pad_w);
  const int64_t pool_size = (h1 - h0) * (w1 - w0);
  h0 = std::max<int64_t>(h0, 0);
  w0 = std::max<int64_t>(w0, 0);
  h1 = std::min(h1, g.in_h);
  w1 = std::min(w1, g.in_w);
  if (h0 >= h1 || w0 >= w1) return {h0, h1, w0, w1, 0};
  const int64_t divisor = o.divisor_override != 0 ? o.divisor_override
                          : o.count_include_pad   ? pool_size
                                                  : (h1 - h0) * (w1 - w0);
  return {h0, h1, w0, w1, divisor};
}

// Eight values of T in one vector (GCC's and Clang's vector extensions: the target's SIMD when it
// has it, pairs of narrower vectors or scalars when not).
template <class T>
struct Lanes8;
template <>
struct Lanes8<float> {
  typedef float type __attribute__((vector_size(8 * sizeof(float))));
};
template <>
struct Lanes8<double> {
  typedef double type __attribute__((vector_size(8 * sizeof(double))));
};

// max_forward for the 2×2 window at stride 2 that lies wholly inside the input (no padding,
// dilation 1; the common CNN pooling), eight outputs at a time in vectors: the general loop's
// per-window set-up and its compare-and-branch per value (mispredicted: which value wins is data)
// cost more than the comparisons. Same rule and scan order as the general loop; starting from the
// window's first value instead of -inf gives the same maximum and index (a first -inf or NaN is
// kept either way).
template <class T>
bool max_forward_2x2(const Geometry& g, const T* x, T* y, int64_t* index) {
  if (g.kernel_h != 2 || g.kernel_w != 2 || g.stride_h != 2 || g.stride_w != 2 || g.pad_h != 0 ||
      g.pad_w != 0 || g.dilation_h != 1 || g.dilation_w != 1 || 2 * g.out_h > g.in_h ||
      2 * g.out_w > g.in_w) {
    return false;
  }
  constexpr int kLanes = 8;
  using V = typename Lanes8<T>::type;
  using M = decltype(V{} > V{});  // a comparison's lanes: all ones or zero
  const int64_t in_w = g.in_w, in_plane = g.in_h * in_w, out_w = g.out_w;
  const int64_t out_plane = g.out_h * out_w;
  const M one = M{} + 1, two = one + one, three = two + one;
  // The vectors read 2 * kLanes values of each row from the window's first: past the row's end
  // (lanes not stored) but within the input, but for the input's last windows, read from a
  // padded copy.
  const T* end = x + g.planes * in_plane;
  // The windows of outputs [ow, ow + n) of the row pair (r0, r1), n <= kLanes.
  auto block = [&](const T* r0, const T* r1, int64_t row, int64_t ow, int64_t n, T* yo,
                   int64_t* io) {
    V lo0, hi0, lo1, hi1;
    const T* p0 = r0 + 2 * ow;
    const T* p1 = r1 + 2 * ow;
    T in0[2 * kLanes] = {}, in1[2 * kLanes] = {};
    if (p1 + 2 * kLanes > end) {
      std::copy_n(p0, 2 * n, in0);
      std::copy_n(p1, 2 * n, in1);
      p0 = in0;
      p1 = in1;
    }
    std::memcpy(&lo0, p0, sizeof(V));
    std::memcpy(&hi0, p0 + kLanes, sizeof(V));
    std::memcpy(&lo1, p1, sizeof(V));
    std::memcpy(&hi1, p1 + kLanes, sizeof(V));
    const V a = __builtin_shufflevector(lo0, hi0, 0, 2, 4, 6, 8, 10, 12, 14);
    const V b = __builtin_shufflevector(lo0, hi0, 1, 3, 5, 7, 9, 11, 13, 15);
    const V c = __builtin_shufflevector(lo1, hi1, 0, 2, 4, 6, 8, 10, 12, 14);
    const V d = __builtin_shufflevector(lo1, hi1, 1, 3, 5, 7, 9, 11, 13, 15);
    V max = a;
    M best = M{};
    M take = (b > max) | (b != b);  // v != v: NaN
    max = take ? b : max;
    best = take ? one : best;
    take = (c > max) | (c != c);
    max = take ? c : max;
    best = take ? two : best;
    take = (d > max) | (d != d);
    max = take ? d : max;
    best = take ? three : best;
    for (int64_t l = 0; l < n; ++l) {
      yo[ow + l] = max[l];
      io[ow + l] = row + 2 * (ow + l) + (best[l] & 1) + (best[l] >> 1) * in_w;
    }
  };
  for (int64_t p = 0; p < g.planes; ++p) {
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const int64_t row = 2 * oh * in_w;
      const T* r0 = x + p * in_plane + row;
      T* yo = y + p * out_plane + oh * out_w;
      int64_t* io = index + p * out_plane + oh * out_w;
      for (int64_t ow = 0; ow < out_w; ow += kLanes) {
        block(r0, r0 + in_w, row, ow, std::min<int64_t>(kLanes, out_w - ow), yo, io);
      }
    }
  }
  return true;
}

}  // namespace

template <class T>
void max_forward(const Geometry& g, const T* x, T* y, int64_t* index) {
  if (max_forward_2x2(g, x, y, index)) return;
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  for (int64_t p = 0; p < g.planes; ++p) {
    const T* xp = x + p * in_plane;
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        int64_t h0 = oh * g.stride_h - g.pad_h;
        int64_t w0 = ow * g.stride_w - g.pad_w;
        const int64_t h1 = std::min(h0 + (g.kernel_h - 1) * g.dilation_h + 1, g.in_h);
        const int64_t w1 = std::min(w0 + (g.kernel_w - 1) * g.dilation_w + 1, g.in_w);
        while (h0 < 0) h0 += g.dilation_h;
        while (w0 < 0) w0 += g.dilation_w;
        int64_t best = h0 * g.in_w + w0;
        T max = -std::numeric_limits<T>::infinity();
        for (int64_t h = h0; h < h1; h += g.dilation_h) {
          for (int64_t w = w0; w < w1; w += g.dilation_w) {
            const int64_t at = h * g.in_w + w;
            const T v = xp[at];
            // Selects, not a branch: which value wins is data, and mispredicting it cost more
            // than the comparisons.
            const bool take = v > max || std::isnan(v);
            max = take ? v : max;
            best = take ? at : best;
          }
        }
        const int64_t o = p * out_plane + oh * g.out_w + ow;
        y[o] = max;
        index[o] = best;
      }
    }
  }
}

template <class T>
void max_backward(const Geometry& g, const T* dy, const int64_t* index, T* dx) {
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  for (int64_t p = 0; p < g.planes; ++p) {
    for (int64_t o = p * out_plane; o < (p + 1) * out_plane; ++o) {
      dx[p * in_plane + index[o]] += dy[o];
    }
  }
}

template <class T>
void avg_forward(const Geometry& g, const AvgOptions& o, const T* x, T* y, bool add) {
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  for (int64_t p = 0; p < g.planes; ++p) {
    const T* xp = x + p * in_plane;
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const AvgWindow win = avg_window(g, o, oh, ow);
        T value = 0;
        if (win.divisor != 0) {
          T sum = 0;
          for (int64_t h = win.h0; h < win.h1; ++h) {
            for (int64_t w = win.w0; w < win.w1; ++w) sum += xp[h * g.in_w + w];
          }
          value = sum / static_cast<T>(win.divisor);
        }
        T& out = y[p * out_plane + oh * g.out_w + ow];
        out = add ? out + value : value;
      }
    }
  }
}

template <class T>
void avg_backward(const Geometry& g, const AvgOptions& o, const T* dy, T* dx) {
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  for (int64_t p = 0; p < g.planes; ++p) {
    T* dxp = dx + p * in_plane;
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const AvgWindow win = avg_window(g, o, oh, ow);
        if (win.divisor == 0) continue;
        const T delta = dy[p * out_plane + oh * g.out_w + ow] / static_cast<T>(win.divisor);
        for (int64_t h = win.h0; h < win.h1; ++h) {
          for (int64_t w = win.w0; w < win.w1; ++w) dxp[h * g.in_w + w] += delta;
        }
      }
    }
  }
}

template <class T>
void adaptive_avg_forward(const Geometry& g, const T* x, T* y, bool add) {
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  for (int64_t p = 0; p < g.planes; ++p) {
    const T* xp = x + p * in_plane;
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const int64_t h0 = adaptive_start(oh, g.out_h, g.in_h);
      const int64_t h1 = adaptive_end(oh, g.out_h, g.in_h);
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const int64_t w0 = adaptive_start(ow, g.out_w, g.in_w);
        const int64_t w1 = adaptive_end(ow, g.out_w, g.in_w);
        T sum = 0;
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) sum += xp[h * g.in_w + w];
        }
        const T value = sum / static_cast<T>(h1 - h0) / static_cast<T>(w1 - w0);
        T& out = y[p * out_plane + oh * g.out_w + ow];
        out = add ? out + value : value;
      }
    }
  }
}

template <class T>
void adaptive_avg_backward(const Geometry& g, const T* dy, T* dx) {
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  for (int64_t p = 0; p < g.planes; ++p) {
    T* dxp = dx + p * in_plane;
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const int64_t h0 = adaptive_start(oh, g.out_h, g.in_h);
      const int64_t h1 = adaptive_end(oh, g.out_h, g.in_h);
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const int64_t w0 = adaptive_start(ow, g.out_w, g.in_w);
        const int64_t w1 = adaptive_end(ow, g.out_w, g.in_w);
        const T delta = dy[p * out_plane + oh * g.out_w + ow] / static_cast<T>(h1 - h0) /
                        static_cast<T>(w1 - w0);
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) dxp[h * g.in_w + w] += delta;
        }
      }
    }
  }
}

template <class T>
void adaptive_max_forward(const Geometry& g, const T* x, T* y, int64_t* index) {
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  for (int64_t p = 0; p < g.planes; ++p) {
    const T* xp = x + p * in_plane;
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const int64_t h0 = adaptive_start(oh, g.out_h, g.in_h);
      const int64_t h1 = adaptive_end(oh, g.out_h, g.in_h);
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const int64_t w0 = adaptive_start(ow, g.out_w, g.in_w);
        const int64_t w1 = adaptive_end(ow, g.out_w, g.in_w);
        int64_t best = h0 * g.in_w + w0;
        T max = -std::numeric_limits<T>::infinity();
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) {
            const int64_t at = h * g.in_w + w;
            const T v = xp[at];
            // Selects, not a branch: which value wins is data, and mispredicting it cost more
            // than the comparisons.
            const bool take = v > max || std::isnan(v);
            max = take ? v : max;
            best = take ? at : best;
          }
        }
        const int64_t o = p * out_plane + oh * g.out_w + ow;
        y[o] = max;
        index[o] = best;
      }
    }
  }
}

template <class T>
void interpolate_forward(const Geometry& g, const Axis& h, const Axis& w, bool nearest, const T* x,
                         T* y, bool add) {
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  for (int64_t p = 0; p < g.planes; ++p) {
    const T* xp = x + p * in_plane;
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const T* row0 = xp + h.i0[oh] * g.in_w;
      const T* row1 = xp + h.i1[oh] * g.in_w;
      const T lh0 = static_cast<T>(h.l0[oh]), lh1 = static_cast<T>(h.l1[oh]);
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const int64_t w0 = w.i0[ow], w1 = w.i1[ow];
        T value;
        if (nearest) {
          value = row0[w0];
        } else {
          // a·wa + b·wb as torch's build computes it: fma(a, wa, b·wb).
          const T lw0 = static_cast<T>(w.l0[ow]), lw1 = static_cast<T>(w.l1[ow]);
          const T t0 = std::fma(row0[w0], lw0, row0[w1] * lw1);
          const T t1 = std::fma(row1[w0], lw0, row1[w1] * lw1);
          value = std::fma(t0, lh0, t1 * lh1);
        }
        T& out = y[p * out_plane + oh * g.out_w + ow];
        out = add ? out + value : value;
      }
    }
  }
}

template <class T>
void interpolate_backward(const Geometry& g, const Axis& h, const Axis& w, bool nearest,
                          const T* dy, T* dx) {
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  for (int64_t p = 0; p < g.planes; ++p) {
    T* dxp = dx + p * in_plane;
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      T* row0 = dxp + h.i0[oh] * g.in_w;
      T* row1 = dxp + h.i1[oh] * g.in_w;
      const T lh0 = static_cast<T>(h.l0[oh]), lh1 = static_cast<T>(h.l1[oh]);
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const T d = dy[p * out_plane + oh * g.out_w + ow];
        const int64_t w0 = w.i0[ow], w1 = w.i1[ow];
        if (nearest) {
          row0[w0] += d;
          continue;
        }
        const T lw0 = static_cast<T>(w.l0[ow]), lw1 = static_cast<T>(w.l1[ow]);
        // dx += (lh·lw)·d, fused as torch's build fuses it.
        row0[w0] = std::fma(lh0 * lw0, d, row0[w0]);
        row0[w1] = std::fma(lh0 * lw1, d, row0[w1]);
        row1[w0] = std::fma(lh1 * lw0, d, row1[w0]);
        row1[w1] = std::fma(lh1 * lw1, d, row1[w1]);
      }
    }
  }
}

#define TAPEGRAD_POOL_INSTANTIATE(T)                                                               \
  template void max_forward<T>(const Geometry&, const T*, T*, int64_t*);                           \
  template void max_backward<T>(const Geometry&, const T*, const int64_t*, T*);                    \
  template void avg_forward<T>(const Geometry&, const AvgOptions&, const T*, T*, bool);            \
  template void avg_backward<T>(const Geometry&, const AvgOptions&, const T*, T*);                 \
  template void adaptive_avg_forward<T>(const Geometry&, const T*, T*, bool);                      \
  template void adaptive_avg_backward<T>(const Geometry&, const T*, T*);                           \
  template void adaptive_max_forward<T>(const Geometry&, const T*, T*, int64_t*);                  \
  template void interpolate_forward<T>(const Geometry&, const Axis&, const Axis&, bool, const T*,  \
                                       T*, bool);                                                  \
  template void interpolate_backward<T>(const Geometry&, const Axis&, const Axis&, bool, const T*, \
                                        T*);
TAPEGRAD_POOL_INSTANTIATE(float)
TAPEGRAD_POOL_INSTANTIATE(double)
#undef TAPEGRAD_POOL_INSTANTIATE

}  // namespace tapegrad::pool
