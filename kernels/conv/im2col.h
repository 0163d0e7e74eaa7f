// im2col and col2im: one image's receptive fields as the columns of a matrix, and back, for the
// convolution kernels (conv.h) to run as GEMMs.
#pragma once

#include <cstdint>

#include <tapegrad/kernels/conv/conv.h>

namespace tapegrad {

// cols [channels·kernel_h·kernel_w, out_h·out_w] from image [channels, in_h, in_w]: row
// (c·kernel_h + i)·kernel_w + j, column r·out_w + s holds image[c, r·stride_h − pad_h +
// i·dilation_h, s·stride_w − pad_w + j·dilation_w], 0 in the padding.
template <class T>
void im2col(const ConvGeometry& g, int64_t channels, const T* image, T* cols);

// image += the columns summed back onto the pixels im2col read them from (padding dropped).
template <class T>
void col2im(const ConvGeometry& g, int64_t channels, const T* cols, T* image);

// Whether im2col would copy the image unchanged (1×1 kernel, stride 1, no padding): the callers
// then use the image itself as the columns.
bool im2col_is_identity(const ConvGeometry& g);

}  // namespace tapegrad
