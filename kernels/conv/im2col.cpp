// im2col and col2im: row by row of the columns matrix, the in-range stretch of each output row
// copied (or added) in one go and the padding around it zero-filled (or skipped).
#include <tapegrad/kernels/conv/im2col.h>

#include <algorithm>

namespace tapegrad {

namespace {

// The output positions s in [0, out) whose input position s·stride + offset lies in [0, size).
struct Span {
  int64_t begin, end;
};
Span in_range(int64_t out, int64_t stride, int64_t offset, int64_t size) {
  const int64_t begin = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  const int64_t end = size - offset <= 0 ? 0 : (size - offset + stride - 1) / stride;
  const int64_t b = std::min(begin, out);
  return {b, std::clamp(end, b, out)};
}

// Calls row(c, i, j, r, span, in_row, in_col0) for each output row r of kernel tap (c, i, j)
// whose input row in_row is in range; rows in the padding get row(..., in_row = -1, ...).
template <class F>
void for_each_tap_row(const ConvGeometry& g, int64_t channels, F&& row) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      const int64_t row_offset = i * g.dilation_h - g.pad_h;
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        const int64_t col_offset = j * g.dilation_w - g.pad_w;
        const Span cols = in_range(g.out_w, g.stride_w, col_offset, g.in_w);
        const int64_t k = (c * g.kernel_h + i) * g.kernel_w + j;
        for (int64_t r = 0; r < g.out_h; ++r) {
          const int64_t in_row = r * g.stride_h + row_offset;
          const bool inside = in_row >= 0 && in_row < g.in_h;
          row(k, c, r, cols, inside ? in_row : -1, col_offset);
        }
      }
    }
  }
}

}  // namespace

bool im2col_is_identity(const ConvGeometry& g) {
  return g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_h == 0 &&
         g.pad_w == 0 && g.out_h == g.in_h && g.out_w == g.in_w;
}

template <class T>
void im2col(const ConvGeometry& g, int64_t channels, const T* image, T* cols) {
  const int64_t pixels = g.out_pixels();
  for_each_tap_row(
      g, channels,
      [&](int64_t k, int64_t c, int64_t r, Span span, int64_t in_row, int64_t col_offset) {
        T* out = cols + k * pixels + r * g.out_w;
        if (in_row < 0) {
          std::fill_n(out, g.out_w, T(0));
          return;
        }
        const T* in = image + (c * g.in_h + in_row) * g.in_w;
        std::fill_n(out, span.begin, T(0));
        if (g.stride_w == 1) {
          std::copy(in + span.begin + col_offset, in + span.end + col_offset, out + span.begin);
        } else {
          for (int64_t s = span.begin; s < span.end; ++s) out[s] = in[s * g.stride_w + col_offset];
        }
        std::fill(out + span.end, out + g.out_w, T(0));
      });
}

template <class T>
void col2im(const ConvGeometry& g, int64_t channels, const T* cols, T* image) {
  const int64_t pixels = g.out_pixels();
  for_each_tap_row(
      g, channels,
      [&](int64_t k, int64_t c, int64_t r, Span span, int64_t in_row, int64_t col_offset) {
        if (in_row < 0) return;
        const T* from = cols + k * pixels + r * g.out_w;
        T* in = image + (c * g.in_h + in_row) * g.in_w;
        for (int64_t s = span.begin; s < span.end; ++s) in[s * g.stride_w + col_offset] += from[s];
      });
}

template void im2col<float>(const ConvGeometry&, int64_t, const float*, float*);
template void im2col<double>(const ConvGeometry&, int64_t, const double*, double*);
template void col2im<float>(const ConvGeometry&, int64_t, const float*, float*);
template void col2im<double>(const ConvGeometry&, int64_t, const double*, double*);

}  // namespace tapegrad
