// float32 convolutions on oneDNN's direct kernels (kernels/conv/conv_dnnl.h), linked at build
// time (TAPEGRAD_HAVE_DNNL, set by CMake for this file only when it finds oneDNN), and stand-ins
// that decline every call when it is not.
//
// Why oneDNN rather than im2col + GEMM here: its direct kernels run on channel-blocked layouts
// (nChw16c) with no columns matrix at all, and at ResNet's sizes (64 -> 64 channels, 3x3, 56x56)
// reach about the GEMM's own peak in each of forward, input gradient and weight gradient, which
// im2col + OpenBLAS cannot (the columns are 9x the image, written and read again, packed again
// by the GEMM; the input gradient's product has only C_out as its depth). It is also what
// PyTorch runs on the CPU for float32 convolutions. The operands stay in tapegrad's NCHW / OIHW
// layouts: each call reorders them into the layouts the kernel chose and the results back.
//
// One engine and stream per thread, one set of primitives and reorders per geometry (cached per
// thread: after the first step a convolution creates nothing), the blocked copies in per-thread
// scratch that only grows. Debian's
// oneDNN runs on OpenMP; tapegrad splits the work over its own threads (the images of the forward
// and the input gradient; the weight gradient runs whole on the calling thread, so its sum over
// the images has one order), so each thread's OpenMP team is set to one thread.
#include <tapegrad/kernels/conv/conv_dnnl.h>

#ifdef TAPEGRAD_HAVE_DNNL
#include <omp.h>

#include <algorithm>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <tuple>
#include <unordered_map>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/scratch.h>
#endif

namespace tapegrad::detail {

#ifdef TAPEGRAD_HAVE_DNNL

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

enum class Kind { Forward, ForwardBias, BackwardData, BackwardWeights };

using Key = std::tuple<Kind, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;

Key key_of(Kind kind, const ConvGeometry& g) {
  return {kind,    g.batch, g.in_channels, g.in_h,       g.in_w,     g.out_channels,
          g.out_h, g.out_w, g.kernel_h,    g.kernel_w,   g.stride_h, g.stride_w,
          g.pad_h, g.pad_w, g.dilation_h,  g.dilation_w, g.groups};
}

// The padding after the last row and column that out_h, out_w imply (ConvGeometry keeps only the
// padding before).
int64_t pad_after(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad,
                  int64_t dilation) {
  return (out - 1) * stride + dilation * (kernel - 1) + 1 - in - pad;
}

struct OperandTag0;
struct OperandTag1;
struct OperandTag2;

// This thread's buffer for operand `slot` (0 to 2) of a call in the kernel's layout: shared by
// every geometry, so the blocked copies cost the largest call's size, not one per layer.
void* operand_scratch(int slot, size_t bytes) {
  const size_t floats = (bytes + sizeof(float) - 1) / sizeof(float);
  if (slot == 0) return thread_scratch<OperandTag0, float>(floats);
  if (slot == 1) return thread_scratch<OperandTag1, float>(floats);
  return thread_scratch<OperandTag2, float>(floats);
}

// One operand: the caller's buffer in tapegrad's layout (its handle set at each call) and, when
// the kernel wants another layout, this thread's scratch in that one and the reorder between
// them.
struct Operand {
  dnnl::memory user, inner;
  dnnl::reorder reorder;  // user -> inner for an input, inner -> user for an output
  bool reordered = false;
  int slot = 0;

  Operand() = default;
  Operand(const dnnl::memory::desc& user_md, const dnnl::memory::desc& inner_md,
          const dnnl::engine& engine, int slot_, bool output)
      : user(user_md, engine, DNNL_MEMORY_NONE), reordered(user_md != inner_md), slot(slot_) {
    inner = reordered ? dnnl::memory(inner_md, engine, DNNL_MEMORY_NONE) : user;
    if (reordered) {
      reorder = output ? dnnl::reorder(inner, user) : dnnl::reorder(user, inner);
    }
  }
  // The memory the primitive reads: the caller's data, reordered when needed.
  const dnnl::memory& in(dnnl::stream& s, const void* data) {
    user.set_data_handle(const_cast<void*>(data));
    if (reordered) {
      inner.set_data_handle(operand_scratch(slot, inner.get_desc().get_size()));
      reorder.execute(s, user, inner);
    }
    return inner;
  }
  // The memory the primitive writes, for the caller's buffer `data` (finish() then reorders).
  const dnnl::memory& target(void* data) {
    user.set_data_handle(data);
    if (reordered) inner.set_data_handle(operand_scratch(slot, inner.get_desc().get_size()));
    return inner;
  }
  void finish(dnnl::stream& s) {
    if (reordered) reorder.execute(s, inner, user);
  }
};

struct Conv {
  dnnl::primitive primitive;
  Operand a, b, c;  // fwd: src, weights, dst; bwd data: diff_dst, weights, diff_src;
                    // bwd weights: src, diff_dst, diff_weights
  dnnl::memory bias;
};

struct ThreadState {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<Key, Conv> convs;
  ThreadState() { omp_set_num_threads(1); }
};

ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}

struct Descs {
  dnnl::memory::desc src, weights, dst, bias;  // tapegrad's layouts
  dnnl::memory::desc src_any, weights_any, dst_any;
  dims strides, dilation, pad_l, pad_r;
};

Descs descs(const ConvGeometry& g) {
  Descs d;
  const dims src{g.batch, g.in_channels, g.in_h, g.in_w};
  const dims dst{g.batch, g.out_channels, g.out_h, g.out_w};
  const dims weights = g.groups == 1
                           ? dims{g.out_channels, g.in_channels, g.kernel_h, g.kernel_w}
                           : dims{g.groups, g.group_out(), g.group_in(), g.kernel_h, g.kernel_w};
  d.src = {src, dt::f32, tag::nchw};
  d.dst = {dst, dt::f32, tag::nchw};
  d.weights = {weights, dt::f32, g.groups == 1 ? tag::oihw : tag::goihw};
  d.bias = {{g.out_channels}, dt::f32, tag::x};
  d.src_any = {src, dt::f32, tag::any};
  d.dst_any = {dst, dt::f32, tag::any};
  d.weights_any = {weights, dt::f32, tag::any};
  d.strides = {g.stride_h, g.stride_w};
  d.dilation = {g.dilation_h - 1, g.dilation_w - 1};  // oneDNN counts the gaps
  d.pad_l = {g.pad_h, g.pad_w};
  d.pad_r = {pad_after(g.in_h, g.out_h, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h),
             pad_after(g.in_w, g.out_w, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w)};
  return d;
}

dnnl::convolution_forward::primitive_desc forward_pd(const Descs& d, const dnnl::engine& e,
                                                     bool bias) {
  const auto desc =
      bias ? dnnl::convolution_forward::desc(
                 dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, d.src_any,
                 d.weights_any, d.bias, d.dst_any, d.strides, d.dilation, d.pad_l, d.pad_r)
           : dnnl::convolution_forward::desc(
                 dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, d.src_any,
                 d.weights_any, d.dst_any, d.strides, d.dilation, d.pad_l, d.pad_r);
  return {desc, e};
}

Conv& conv_for(Kind kind, const ConvGeometry& g) {
  ThreadState& s = thread_state();
  const Key key = key_of(kind, g);
  auto it = s.convs.find(key);
  if (it != s.convs.end()) return it->second;
  const Descs d = descs(g);
  const dnnl::engine& e = s.engine;
  Conv c;
  const auto fwd = forward_pd(d, e, kind == Kind::ForwardBias);
  if (kind == Kind::Forward || kind == Kind::ForwardBias) {
    c.primitive = dnnl::convolution_forward(fwd);
    c.a = Operand(d.src, fwd.src_desc(), e, 0, false);
    c.b = Operand(d.weights, fwd.weights_desc(), e, 1, false);
    c.c = Operand(d.dst, fwd.dst_desc(), e, 2, true);
    if (kind == Kind::ForwardBias) c.bias = dnnl::memory(d.bias, e, DNNL_MEMORY_NONE);
  } else if (kind == Kind::BackwardData) {
    const dnnl::convolution_backward_data::primitive_desc pd(
        dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, d.src_any,
                                              d.weights_any, d.dst_any, d.strides, d.dilation,
                                              d.pad_l, d.pad_r),
        e, fwd);
    c.primitive = dnnl::convolution_backward_data(pd);
    c.a = Operand(d.dst, pd.diff_dst_desc(), e, 0, false);
    c.b = Operand(d.weights, pd.weights_desc(), e, 1, false);
    c.c = Operand(d.src, pd.diff_src_desc(), e, 2, true);
  } else {
    const dnnl::convolution_backward_weights::primitive_desc pd(
        dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, d.src_any,
                                                 d.weights_any, d.dst_any, d.strides, d.dilation,
                                                 d.pad_l, d.pad_r),
        e, fwd);
    c.primitive = dnnl::convolution_backward_weights(pd);
    c.a = Operand(d.src, pd.src_desc(), e, 0, false);
    c.b = Operand(d.dst, pd.diff_dst_desc(), e, 1, false);
    c.c = Operand(d.weights, pd.diff_weights_desc(), e, 2, true);
  }
  return s.convs.emplace(key, std::move(c)).first->second;
}

struct SumTag;

// Runs `conv` with its output written to out, or added to it when accumulating (by way of this
// thread's scratch): run(buffer) executes the primitive for the output buffer given.
template <class F>
void write_or_add(ThreadState& s, Conv& conv, float* out, int64_t count, bool accumulate, F&& run) {
  float* target = accumulate ? thread_scratch<SumTag, float>(static_cast<size_t>(count)) : out;
  run(conv.c.target(target));
  conv.c.finish(s.stream);
  s.stream.wait();
  if (accumulate) {
    for (int64_t i = 0; i < count; ++i) out[i] += target[i];
  }
}

// The images [0, batch) split over tapegrad's threads, each part one call on its sub-batch
// (an image's results do not depend on the others).
template <class F>
void over_images(const ConvGeometry& g, F&& part) {
  const double flops = 2.0 * static_cast<double>(g.out_channels * g.col_rows() * g.out_pixels());
  parallel_for(g.batch, flops, [&](int, int64_t begin, int64_t end) {
    ConvGeometry sub = g;
    sub.batch = end - begin;
    part(sub, begin);
  });
}

}  // namespace

bool dnnl_conv_usable(const ConvGeometry& g) {
  // oneDNN takes no negative padding: a stride that leaves input rows unread beyond the last
  // window, or conv_transpose2d's output_padding, goes to im2col.
  return g.batch > 0 &&
         pad_after(g.in_h, g.out_h, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h) >= 0 &&
         pad_after(g.in_w, g.out_w, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w) >= 0;
}

void dnnl_conv_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                       float* y, bool accumulate) {
  over_images(g, [&](const ConvGeometry& sub, int64_t first) {
    ThreadState& s = thread_state();
    Conv& c = conv_for(b != nullptr ? Kind::ForwardBias : Kind::Forward, sub);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, c.a.in(s.stream, x + first * g.in_channels * g.in_pixels())},
        {DNNL_ARG_WEIGHTS, c.b.in(s.stream, w)}};
    if (b != nullptr) {
      c.bias.set_data_handle(const_cast<float*>(b));
      args.emplace(DNNL_ARG_BIAS, c.bias);
    }
    write_or_add(s, c, y + first * g.out_channels * g.out_pixels(),
                 sub.batch * g.out_channels * g.out_pixels(), accumulate,
                 [&](const dnnl::memory& dst) {
                   args.insert_or_assign(DNNL_ARG_DST, dst);
                   c.primitive.execute(s.stream, args);
                 });
  });
}

void dnnl_conv_backward_data(const ConvGeometry& g, const float* dy, const float* w, float* dx,
                             bool accumulate) {
  over_images(g, [&](const ConvGeometry& sub, int64_t first) {
    ThreadState& s = thread_state();
    Conv& c = conv_for(Kind::BackwardData, sub);
    const dnnl::memory& diff_dst = c.a.in(s.stream, dy + first * g.out_channels * g.out_pixels());
    const dnnl::memory& weights = c.b.in(s.stream, w);
    write_or_add(s, c, dx + first * g.in_channels * g.in_pixels(),
                 sub.batch * g.in_channels * g.in_pixels(), accumulate,
                 [&](const dnnl::memory& diff_src) {
                   c.primitive.execute(s.stream, {{DNNL_ARG_DIFF_DST, diff_dst},
                                                  {DNNL_ARG_WEIGHTS, weights},
                                                  {DNNL_ARG_DIFF_SRC, diff_src}});
                 });
  });
}

void dnnl_conv_backward_weights(const ConvGeometry& g, const float* dy, const float* x, float* dw,
                                bool accumulate) {
  ThreadState& s = thread_state();
  Conv& c = conv_for(Kind::BackwardWeights, g);
  const dnnl::memory& src = c.a.in(s.stream, x);
  const dnnl::memory& diff_dst = c.b.in(s.stream, dy);
  write_or_add(s, c, dw, g.weight_numel(), accumulate, [&](const dnnl::memory& diff_weights) {
    c.primitive.execute(s.stream, {{DNNL_ARG_SRC, src},
                                   {DNNL_ARG_DIFF_DST, diff_dst},
                                   {DNNL_ARG_DIFF_WEIGHTS, diff_weights}});
  });
}

#else

bool dnnl_conv_usable(const ConvGeometry&) {
  return false;
}
void dnnl_conv_forward(const ConvGeometry&, const float*, const float*, const float*, float*,
                       bool) {}
void dnnl_conv_backward_data(const ConvGeometry&, const float*, const float*, float*, bool) {}
void dnnl_conv_backward_weights(const ConvGeometry&, const float*, const float*, float*, bool) {}

#endif

}  // namespace tapegrad::detail
