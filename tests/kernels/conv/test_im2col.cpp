// Tests for kernels/conv/im2col.cpp and conv.cpp on buffers: im2col's layout on a small image,
// col2im as its adjoint, and the 1×1 path that reads the image itself.
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <numeric>
#include <vector>

#include <tapegrad/kernels/conv/conv.h>
#include <tapegrad/kernels/conv/im2col.h>

using namespace tapegrad;

namespace test_im2col {

ConvGeometry geometry(int64_t in_h, int64_t in_w, int64_t k, int64_t stride, int64_t pad,
                      int64_t dilation) {
  ConvGeometry g;
  g.batch = 1;
  g.in_channels = g.out_channels = 2;
  g.in_h = in_h;
  g.in_w = in_w;
  g.kernel_h = g.kernel_w = k;
  g.stride_h = g.stride_w = stride;
  g.pad_h = g.pad_w = pad;
  g.dilation_h = g.dilation_w = dilation;
  g.out_h = (in_h + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
  g.out_w = (in_w + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
  return g;
}

}  // namespace test_im2col

TEST_CASE("im2col: receptive fields as columns, zeros in the padding", "[kernels][conv]") {
  // One channel of 3×3 (1..9), a 2×2 kernel, padding 1, stride 2: output 2×2.
  ConvGeometry g = test_im2col::geometry(3, 3, 2, 2, 1, 1);
  const std::vector<double> image{1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<double> cols(static_cast<size_t>(4 * g.out_pixels()), -1.0);
  im2col(g, 1, image.data(), cols.data());
  // Row (i, j) of the kernel, column (r, s) of the output: image[2r − 1 + i, 2s − 1 + j].
  CHECK(cols == std::vector<double>{0, 0, 0, 5,    // tap (0, 0)
                                    0, 0, 4, 6,    // tap (0, 1)
                                    0, 2, 0, 8,    // tap (1, 0)
                                    1, 3, 7, 9});  // tap (1, 1)
}

TEST_CASE("col2im is im2col's adjoint, for strides, padding and dilation", "[kernels][conv]") {
  // <col2im(C), X> = <C, im2col(X)> for any C and X: the input gradient sums what im2col copied.
  for (const auto& [k, stride, pad, dilation] : std::vector<std::array<int64_t, 4>>{
           {3, 1, 1, 1}, {3, 2, 0, 1}, {2, 3, 2, 2}, {1, 2, 0, 1}}) {
    INFO("k " << k << " stride " << stride << " pad " << pad << " dilation " << dilation);
    const ConvGeometry g = test_im2col::geometry(5, 6, k, stride, pad, dilation);
    const auto n_image = static_cast<size_t>(2 * g.in_pixels());
    const auto n_cols = static_cast<size_t>(g.col_rows() * g.out_pixels());
    std::vector<double> x(n_image), c(n_cols), cols(n_cols), back(n_image, 0.0);
    for (size_t i = 0; i < n_image; ++i) x[i] = static_cast<double>((i * 7) % 11) - 5;
    for (size_t i = 0; i < n_cols; ++i) c[i] = static_cast<double>((i * 5) % 13) - 6;
    im2col(g, 2, x.data(), cols.data());
    col2im(g, 2, c.data(), back.data());
    CHECK(std::inner_product(back.begin(), back.end(), x.begin(), 0.0) ==
          std::inner_product(c.begin(), c.end(), cols.begin(), 0.0));
  }
}

TEST_CASE("conv kernels: a 1×1 convolution reads the image as its columns", "[kernels][conv]") {
  // A 1×1 kernel with stride 1 and no padding reads the image itself as the columns: each
  // output pixel is W·X of that pixel's channels.
  ConvGeometry g = test_im2col::geometry(4, 8, 1, 1, 0, 1);
  REQUIRE(im2col_is_identity(g));
  std::vector<float> x(static_cast<size_t>(2 * g.in_pixels())), w{0.5f, -1.25f, 2.0f, 0.75f};
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 9) * 0.25f - 1.0f;
  std::vector<float> y(static_cast<size_t>(2 * g.out_pixels()));
  conv2d_forward(g, x.data(), w.data(), static_cast<const float*>(nullptr), y.data());
  for (int64_t c = 0; c < 2; ++c) {
    for (int64_t p = 0; p < g.out_pixels(); ++p) {
      const float want =
          w[static_cast<size_t>(2 * c)] * x[static_cast<size_t>(p)] +
          w[static_cast<size_t>(2 * c + 1)] * x[static_cast<size_t>(g.in_pixels() + p)];
      CHECK(y[static_cast<size_t>(c * g.out_pixels() + p)] == Approx(want).epsilon(1e-6));
    }
  }
}
