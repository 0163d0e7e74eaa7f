// Tests for kernels/attention/attention_isa.cpp, the direct and KV-cache attention kernels built
// once per CPU level: every level here against the highest, forward and backward, in both layouts.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <tapegrad/kernels/attention/attention.h>
#include <tapegrad/kernels/attention/cached_attention.h>
#include "tests/kernels/isa_testing.h"

namespace attention_isa_test {

using namespace tapegrad;
using namespace tapegrad::detail::attention;

template <class T>
std::vector<T> draws(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(u(rng));
  return v;
}

// The same bits at the levels with FMA; within `tolerance` of the highest level's (relative to
// 1 + |x|) at baseline, whose products are rounded before they are added.
template <class T>
void check_close(const std::vector<T>& got, const std::vector<T>& want, CpuCapability level) {
  REQUIRE(got.size() == want.size());
  if (level >= CpuCapability::Avx2) {
    CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0);
    return;
  }
  const double tolerance = sizeof(T) == 4 ? 1e-5 : 1e-13;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]) /
                                (1 + std::abs(static_cast<double>(want[i]))));
  }
  CHECK(worst <= tolerance);
}

template <class T>
struct HeadRun {
  std::vector<T> o, lse, dq, dk, dv;
};

// Every head's forward and backward on the direct kernel, at the level in use.
template <class T>
HeadRun<T> run_direct(const Heads& g, const std::vector<T>& q, const std::vector<T>& k,
                      const std::vector<T>& v, const std::vector<T>& dout) {
  const Kernel<T>& kernel = direct_kernel<T>();
  HeadRun<T> r{std::vector<T>(q.size()),
               std::vector<T>(static_cast<size_t>(g.batch * g.heads * g.t)),
               std::vector<T>(q.size()), std::vector<T>(q.size()), std::vector<T>(q.size())};
  std::vector<T> scratch(
      static_cast<size_t>(std::max(kernel.forward_scratch(g), kernel.backward_scratch(g))));
  for (int64_t pair = 0; pair < g.batch * g.heads; ++pair) {
    const int64_t off = g.offset(pair);
    kernel.forward_head(g, q.data() + off, k.data() + off, v.data() + off, r.o.data() + off,
                        r.lse.data() + pair * g.t, scratch.data());
    kernel.backward_head(g, q.data() + off, k.data() + off, v.data() + off, r.o.data() + off,
                         dout.data() + off, r.lse.data() + pair * g.t, r.dq.data() + off,
                         r.dk.data() + off, r.dv.data() + off, scratch.data());
  }
  return r;
}

template <class T>
int check_direct_levels() {
  constexpr int64_t L = 64 / sizeof(T);
  std::mt19937 rng(77);
  int shapes = 0;
  for (const int64_t t : {1, 7, 19, 40}) {
    for (const int64_t d : {L, 2 * L, 3 * L, 4 * L}) {
      for (const bool packed_heads : {true, false}) {
        const Shape shape = packed_heads ? Shape{1, 2, t, d} : Shape{1, t, 2 * d};
        const Heads g = heads_of(shape, packed_heads ? 0 : 2);
        REQUIRE(direct_takes<T>(g));
        ++shapes;
        const auto n = static_cast<size_t>(shape.numel());
        const auto q = draws<T>(n, rng), k = draws<T>(n, rng), v = draws<T>(n, rng);
        const auto dout = draws<T>(n, rng);
        const std::vector<CpuCapability> levels = testing::cpu_levels_here();
        HeadRun<T> top;
        {
          const testing::CpuLevelGuard guard(levels.back());
          top = run_direct(g, q, k, v, dout);
        }
        for (const CpuCapability level : levels) {
          const testing::CpuLevelGuard guard(level);
          const HeadRun<T> r = run_direct(g, q, k, v, dout);
          INFO("level " << cpu_capability_name(level) << ", T = " << t << ", D = " << d
                        << (packed_heads ? ", [B, H, T, D]" : ", [B, T, C]"));
          check_close(r.o, top.o, level);
          check_close(r.lse, top.lse, level);
          check_close(r.dq, top.dq, level);
          check_close(r.dk, top.dk, level);
          check_close(r.dv, top.dv, level);
        }
      }
    }
  }
  return shapes;
}

template <class T>
void check_cached_levels() {
  std::mt19937 rng(78);
  const int64_t batch = 2, heads = 4, kv_heads = 2, window = 24, dh = 8, length = 19, tn = 3;
  const auto k = draws<T>(static_cast<size_t>(batch * kv_heads * window * dh), rng);
  const auto v = draws<T>(k.size(), rng);
  const auto q = draws<T>(static_cast<size_t>(batch * tn * heads * dh), rng);
  const KVCacheView<T> cache{k.data(), v.data(), batch, heads, window, dh, length, kv_heads};
  const std::vector<CpuCapability> levels = testing::cpu_levels_here();
  std::vector<T> top(q.size());
  {
    const testing::CpuLevelGuard guard(levels.back());
    cached_attention(q.data(), cache, top.data(), tn);
  }
  for (const CpuCapability level : levels) {
    const testing::CpuLevelGuard guard(level);
    std::vector<T> out(q.size());
    cached_attention(q.data(), cache, out.data(), tn);
    INFO("level " << cpu_capability_name(level));
    check_close(out, top, level);
  }
}

TEST_CASE("attention per CPU level: the direct kernel gives the same bits at every level with FMA",
          "[attention][isa]") {
  CHECK(check_direct_levels<float>() == 32);
  CHECK(check_direct_levels<double>() == 32);
}

TEST_CASE("attention per CPU level: the KV cache's attention gives the same bits with FMA",
          "[attention][isa][kv_cache]") {
  check_cached_levels<float>();
  check_cached_levels<double>();
}

}  // namespace attention_isa_test
