// Tests for kernels/attention/attention_one_block.cpp: bit for bit the blocked kernel on every
// shape it takes, forward and backward, in both layouts.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include <tapegrad/kernels/attention/attention.h>

using namespace tapegrad;
using namespace tapegrad::detail::attention;

namespace {

template <class T>
std::vector<T> draws(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(u(rng));
  if (n > 3) {  // zeros of both signs, for the signs of the products' zeros
    v[1] = T(0);
    v[3] = -T(0);
  }
  return v;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Every head's forward and backward on kernel `k`; dq, dk, dv start from `start` (the kernels
// accumulate into them).
template <class T>
struct KernelRun {
  std::vector<T> o, lse, dq, dk, dv;
};
template <class T>
KernelRun<T> run(const Kernel<T>& kernel, const Heads& g, const std::vector<T>& q,
                 const std::vector<T>& k, const std::vector<T>& v, const std::vector<T>& dout,
                 const std::vector<T>& start) {
  KernelRun<T> r{std::vector<T>(q.size()),
                 std::vector<T>(static_cast<size_t>(g.batch * g.heads * g.t)), start, start, start};
  std::vector<T> scratch(
      static_cast<size_t>(std::max(kernel.forward_scratch(g), kernel.backward_scratch(g))));
  for (int64_t pair = 0; pair < g.batch * g.heads; ++pair) {
    const int64_t off = g.offset(pair);
    kernel.forward_head(g, q.data() + off, k.data() + off, v.data() + off, r.o.data() + off,
                        r.lse.data() + pair * g.t, scratch.data());
  }
  for (int64_t pair = 0; pair < g.batch * g.heads; ++pair) {
    const int64_t off = g.offset(pair);
    kernel.backward_head(g, q.data() + off, k.data() + off, v.data() + off, r.o.data() + off,
                         dout.data() + off, r.lse.data() + pair * g.t, r.dq.data() + off,
                         r.dk.data() + off, r.dv.data() + off, scratch.data());
  }
  return r;
}

// The one-block kernel against the blocked one on every shape the former takes among T <= 12,
// D <= 20, as [B, H, T, D] and as [B, T, H·D]. Returns how many shapes it took.
template <class T>
int check_all_shapes() {
  std::mt19937 rng(1234);
  int taken = 0;
  for (int64_t t = 1; t <= 12; ++t) {
    for (int64_t d = 1; d <= 20; ++d) {
      for (const bool packed_heads : {true, false}) {
        const Shape shape = packed_heads ? Shape{2, 2, t, d} : Shape{2, t, 2 * d};
        const Heads g = heads_of(shape, packed_heads ? 0 : 2);
        if (!one_block_takes<T>(g)) continue;
        ++taken;
        const auto n = static_cast<size_t>(shape.numel());
        const auto q = draws<T>(n, rng), k = draws<T>(n, rng), v = draws<T>(n, rng);
        const auto dout = draws<T>(n, rng), start = draws<T>(n, rng);
        const KernelRun<T> one = run(one_block_kernel<T>(), g, q, k, v, dout, start);
        const KernelRun<T> blocked = run(blocked_kernel<T>(), g, q, k, v, dout, start);
        INFO("T = " << t << ", D = " << d << (packed_heads ? ", [B, H, T, D]" : ", [B, T, C]"));
        CHECK(same_bits(one.o, blocked.o));
        CHECK(same_bits(one.lse, blocked.lse));
        CHECK(same_bits(one.dq, blocked.dq));
        CHECK(same_bits(one.dk, blocked.dk));
        CHECK(same_bits(one.dv, blocked.dv));
      }
    }
  }
  return taken;
}

}  // namespace

TEST_CASE("attention one-block kernel: bit for bit the blocked kernel on every shape it takes",
          "[attention][kernels]") {
  // The book's heads (T = 6, D = 1) must be among them, or the test would compare nothing that
  // runs.
  CHECK(one_block_takes<float>(heads_of(Shape{2, 6, 2}, 2)));
  CHECK(check_all_shapes<float>() > 0);
  CHECK(check_all_shapes<double>() > 0);
}
