// oneDNN's bf16 matmul for the bf16 products (kernels/gemm/gemm_bf16.cpp), linked at build time
// (TAPEGRAD_HAVE_DNNL, set by CMake for this file only when it finds oneDNN), and empty
// stand-ins when it is not. One engine and stream per thread, one primitive per shape (cached
// per thread, so after the first step a product creates nothing). Debian's oneDNN runs its
// kernels on OpenMP; tapegrad splits products over its own threads, so each thread's OpenMP
// team is set to one thread (as OpenBLAS is).
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include <tapegrad/kernels/gemm/gemm_kernels.h>

#ifdef TAPEGRAD_HAVE_DNNL
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace tapegrad::detail {

#ifdef TAPEGRAD_HAVE_DNNL

bool dnnl_linked() {
  return true;
}

const char* dnnl_version() {
  static const std::string version = [] {
    const dnnl_version_t* v = ::dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch);
  }();
  return version.c_str();
}

namespace {

using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, bool, int64_t, bool, int64_t, uint32_t,
                       bool>;  // m, n, k, lda, a_t, ldb, b_t, ldc, alpha bits, accumulate

// A shape's primitive and its operands' memory objects (pointed at each product's data).
struct Product {
  dnnl::matmul matmul;
  dnnl::memory a, b, c;
};

struct ThreadState {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<Key, Product> primitives;
  ThreadState() { omp_set_num_threads(1); }
};

ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}

// [rows, cols] with row stride ld, or its transpose read in place.
dnnl::memory::desc desc(int64_t rows, int64_t cols, int64_t ld, bool transposed,
                        dnnl::memory::data_type type) {
  const dnnl::memory::dims strides =
      transposed ? dnnl::memory::dims{1, ld} : dnnl::memory::dims{ld, 1};
  return dnnl::memory::desc({rows, cols}, type, strides);
}

}  // namespace

void dnnl_bf16_gemm(float* c, int64_t ldc, const uint16_t* a, int64_t lda, bool a_transposed,
                    const uint16_t* b, int64_t ldb, bool b_transposed, int64_t m, int64_t n,
                    int64_t k, float alpha, bool accumulate) {
  using dt = dnnl::memory::data_type;
  ThreadState& s = thread_state();
  uint32_t alpha_bits = 0;
  std::memcpy(&alpha_bits, &alpha, sizeof alpha);
  const Key key{m, n, k, lda, a_transposed, ldb, b_transposed, ldc, alpha_bits, accumulate};
  auto it = s.primitives.find(key);
  if (it == s.primitives.end()) {
    const auto a_md = desc(m, k, lda, a_transposed, dt::bf16);
    const auto b_md = desc(k, n, ldb, b_transposed, dt::bf16);
    const auto c_md = desc(m, n, ldc, false, dt::f32);
    dnnl::primitive_attr attr;
    if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
    if (accumulate) {
      dnnl::post_ops ops;
      ops.append_sum(1.0f);
      attr.set_post_ops(ops);
    }
    const dnnl::matmul::desc d(a_md, b_md, c_md);
    Product p{dnnl::matmul(dnnl::matmul::primitive_desc(d, attr, s.engine)),
              dnnl::memory(a_md, s.engine, nullptr), dnnl::memory(b_md, s.engine, nullptr),
              dnnl::memory(c_md, s.engine, nullptr)};
    it = s.primitives.emplace(key, std::move(p)).first;
  }
  Product& p = it->second;
  p.a.set_data_handle(const_cast<uint16_t*>(a));
  p.b.set_data_handle(const_cast<uint16_t*>(b));
  p.c.set_data_handle(c);
  // The C API: its argument array allocates nothing (the C++ one builds an unordered_map).
  const dnnl_exec_arg_t args[3] = {
      {DNNL_ARG_SRC, p.a.get()}, {DNNL_ARG_WEIGHTS, p.b.get()}, {DNNL_ARG_DST, p.c.get()}};
  dnnl::error::wrap_c_api(dnnl_primitive_execute(p.matmul.get(), s.stream.get(), 3, args),
                          "tapegrad: oneDNN matmul");
  dnnl::error::wrap_c_api(dnnl_stream_wait(s.stream.get()), "tapegrad: oneDNN stream wait");
}

#else

bool dnnl_linked() {
  return false;
}
const char* dnnl_version() {
  return nullptr;
}
void dnnl_bf16_gemm(float*, int64_t, const uint16_t*, int64_t, bool, const uint16_t*, int64_t, bool,
                    int64_t, int64_t, int64_t, float, bool) {}

#endif

}  // namespace tapegrad::detail
