// The convolution kernels of conv.h: float32 on oneDNN's direct kernels where it is linked
// (conv_dnnl.h), else per image and group, im2col then one GEMM (or a GEMM then col2im), the
// images in order so every sum has a fixed order whatever the thread count (the GEMMs split
// themselves over the threads).
#include <tapegrad/kernels/conv/conv.h>

#include <algorithm>
#include <type_traits>

#include <tapegrad/kernels/conv/conv_dnnl.h>
#include <tapegrad/kernels/conv/im2col.h>
#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/kernels/scratch.h>

namespace tapegrad {

namespace {

struct ColumnsTag;

// One image's columns for group `group`: the image itself when im2col would copy it unchanged,
// else im2col into this thread's scratch.
template <class T>
const T* columns(const ConvGeometry& g, const T* image, int64_t group) {
  const T* channels = image + group * g.group_in() * g.in_pixels();
  if (im2col_is_identity(g)) return channels;
  T* cols =
      detail::thread_scratch<ColumnsTag, T>(static_cast<size_t>(g.col_rows() * g.out_pixels()));
  im2col(g, g.group_in(), channels, cols);
  return cols;
}

}  // namespace

template <class T>
void conv2d_forward(const ConvGeometry& g, const T* x, const T* w, const T* b, T* y,
                    bool accumulate) {
  if constexpr (std::is_same_v<T, float>) {
    if (detail::dnnl_conv_usable(g)) return detail::dnnl_conv_forward(g, x, w, b, y, accumulate);
  }
  // Y[n, group] = W[group] · cols(X[n], group) (+ b: the bias rows, then accumulated onto)
  const int64_t k = g.col_rows(), pixels = g.out_pixels(), gout = g.group_out();
  for (int64_t n = 0; n < g.batch; ++n) {
    const T* image = x + n * g.in_channels * g.in_pixels();
    for (int64_t group = 0; group < g.groups; ++group) {
      T* out = y + (n * g.out_channels + group * gout) * pixels;
      if (b != nullptr) {
        for (int64_t c = 0; c < gout; ++c)
          std::fill_n(out + c * pixels, pixels, b[group * gout + c]);
      }
      gemm(matrix(out, gout, pixels), matrix(w + group * gout * k, gout, k),
           matrix(columns(g, image, group), k, pixels), {.accumulate = accumulate || b != nullptr});
    }
  }
}

template <class T>
void conv2d_backward_input(const ConvGeometry& g, const T* dy, const T* w, T* dx, bool accumulate) {
  if constexpr (std::is_same_v<T, float>) {
    if (detail::dnnl_conv_usable(g))
      return detail::dnnl_conv_backward_data(g, dy, w, dx, accumulate);
  }
  if (!accumulate) std::fill_n(dx, g.batch * g.in_channels * g.in_pixels(), T(0));
  // Y = W·cols(X)  =>  dX += col2im(Wᵀ·dY), per image and group
  const int64_t k = g.col_rows(), pixels = g.out_pixels(), gout = g.group_out();
  const bool identity = im2col_is_identity(g);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t group = 0; group < g.groups; ++group) {
      const T* dys = dy + (n * g.out_channels + group * gout) * pixels;
      T* image = dx + (n * g.in_channels + group * g.group_in()) * g.in_pixels();
      if (identity) {
        gemm(matrix(image, k, pixels), matrix(w + group * gout * k, gout, k).t(),
             matrix(dys, gout, pixels), {.accumulate = true});
        continue;
      }
      T* cols = detail::thread_scratch<ColumnsTag, T>(static_cast<size_t>(k * pixels));
      gemm(matrix(cols, k, pixels), matrix(w + group * gout * k, gout, k).t(),
           matrix(dys, gout, pixels));
      col2im(g, g.group_in(), cols, image);
    }
  }
}

template <class T>
void conv2d_backward_weight(const ConvGeometry& g, const T* dy, const T* x, T* dw,
                            bool accumulate) {
  if constexpr (std::is_same_v<T, float>) {
    if (detail::dnnl_conv_usable(g)) {
      return detail::dnnl_conv_backward_weights(g, dy, x, dw, accumulate);
    }
  }
  // Y = W·cols(X)  =>  dW[group] += Σ_n dY[n, group]·cols(X[n], group)ᵀ
  const int64_t k = g.col_rows(), pixels = g.out_pixels(), gout = g.group_out();
  if (g.batch == 0 && !accumulate) std::fill_n(dw, g.weight_numel(), T(0));
  for (int64_t n = 0; n < g.batch; ++n) {
    const T* image = x + n * g.in_channels * g.in_pixels();
    for (int64_t group = 0; group < g.groups; ++group) {
      const T* dys = dy + (n * g.out_channels + group * gout) * pixels;
      gemm(matrix(dw + group * gout * k, gout, k), matrix(dys, gout, pixels),
           matrix(columns(g, image, group), k, pixels).t(), {.accumulate = accumulate || n > 0});
    }
  }
}

template <class T>
void channel_sums(const T* y, int64_t batch, int64_t channels, int64_t pixels, T* db) {
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const T* row = y + (n * channels + c) * pixels;
      // Eight running sums, so the adds vectorise instead of waiting on one another.
      T lanes[8] = {};
      int64_t p = 0;
      for (; p + 8 <= pixels; p += 8) {
        for (int k = 0; k < 8; ++k) lanes[k] += row[p + k];
      }
      for (; p < pixels; ++p) lanes[p % 8] += row[p];
      db[c] += ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) +
               ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
    }
  }
}

template <class T>
void add_channel_bias(T* y, const T* b, int64_t batch, int64_t channels, int64_t pixels) {
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      T* row = y + (n * channels + c) * pixels;
      for (int64_t p = 0; p < pixels; ++p) row[p] += b[c];
    }
  }
}

#define TAPEGRAD_CONV_INSTANTIATE(T)                                                            \
  template void conv2d_forward<T>(const ConvGeometry&, const T*, const T*, const T*, T*, bool); \
  template void conv2d_backward_input<T>(const ConvGeometry&, const T*, const T*, T*, bool);    \
  template void conv2d_backward_weight<T>(const ConvGeometry&, const T*, const T*, T*, bool);   \
  template void channel_sums<T>(const T*, int64_t, int64_t, int64_t, T*);                       \
  template void add_channel_bias<T>(T*, const T*, int64_t, int64_t, int64_t);
TAPEGRAD_CONV_INSTANTIATE(float)
TAPEGRAD_CONV_INSTANTIATE(double)
#undef TAPEGRAD_CONV_INSTANTIATE

}  // namespace tapegrad
