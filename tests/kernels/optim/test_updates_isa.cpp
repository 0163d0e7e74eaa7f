// The optimisers' update loops per CPU level (kernels/optim/updates_isa.cpp): at every level this
// CPU has, Adam/AdamW (each option that changes the arithmetic) and SGD give the same bits as at
// baseline, in float32 and float64, on a range whose length runs full registers and a tail; and
// clip_grad_norm_'s sum of squares gives the bits of its documented order.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/optim/updates.h>
#include "tests/kernels/isa_testing.h"

namespace test_updates_isa {

using tapegrad::CpuCapability;
namespace ok = tapegrad::optim_kernels;

constexpr int64_t kN = 45;  // 2 registers of 16 and a tail of 13; 5 of 8 and a tail of 5

template <class T>
struct State {
  std::vector<T> p, m, v, v_max, buf;
  bool operator==(const State& o) const {
    const auto same = [](const std::vector<T>& a, const std::vector<T>& b) {
      return std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
    };
    return same(p, o.p) && same(m, o.m) && same(v, o.v) && same(v_max, o.v_max) && same(buf, o.buf);
  }
};

template <class T>
T gradient(int64_t i, int step) {
  if (i % 11 == 3) return T(-0.0);
  return static_cast<T>(0.01 * std::cos(1.3 * static_cast<double>(i) - step) *
                        (i % 5 == 0 ? 0.0 : 1.0));
}

// Three steps of Adam (with the flags) and of SGD from the same start.
template <class T>
State<T> three_steps(const ok::AdamFlags& adam, const ok::SgdFlags& sgd) {
  State<T> s;
  for (int64_t i = 0; i < kN; ++i) {
    s.p.push_back(static_cast<T>(std::sin(0.37 * static_cast<double>(i))));
    s.m.push_back(T(0)), s.v.push_back(T(0)), s.v_max.push_back(T(0)), s.buf.push_back(T(0));
  }
  std::vector<T> q = s.p, g(kN);
  for (int step = 1; step <= 3; ++step) {
    for (int64_t i = 0; i < kN; ++i) g[static_cast<size_t>(i)] = gradient<T>(i, step);
    const ok::AdamScalars as{
        .lr = 1e-2, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.1, .t = step};
    ok::adam_update<T>(s.p.data(), g.data(), T(0.75), s.m.data(), s.v.data(), s.v_max.data(), kN,
                       as, adam);
    ok::SgdFlags sf = sgd;
    sf.first = step == 1;
    const ok::SgdScalars ss{.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01};
    ok::sgd_update<T>(q.data(), g.data(), T(1), s.buf.data(), kN, ss, sf);
  }
  s.p.insert(s.p.end(), q.begin(), q.end());
  return s;
}

template <class T>
void all_levels_agree() {
  for (const bool decoupled : {false, true}) {
    for (const bool amsgrad : {false, true}) {
      for (const bool maximize : {false, true}) {
        INFO("decoupled " << decoupled << " amsgrad " << amsgrad << " maximize " << maximize);
        const ok::AdamFlags adam{.maximize = maximize,
                                 .decoupled = decoupled,
                                 .coupled_decay = !decoupled,
                                 .amsgrad = amsgrad};
        const ok::SgdFlags sgd{.maximize = maximize,
                               .decay = true,
                               .momentum = true,
                               .nesterov = amsgrad};  // both Nesterov and not
        State<T> baseline;
        for (const CpuCapability level : tapegrad::testing::cpu_levels_here()) {
          INFO("level " << tapegrad::cpu_capability_name(level));
          tapegrad::testing::CpuLevelGuard guard(level);
          const State<T> s = three_steps<T>(adam, sgd);
          if (level == CpuCapability::Baseline) {
            baseline = s;
            CHECK(s.p[1] != static_cast<T>(std::sin(0.37)));  // the steps moved it
          } else {
            CHECK(s == baseline);
          }
        }
      }
    }
  }
}

// Σ (g·scale)² in the order updates.h documents: element i into sum (i − begin) mod 8, the sums
// combined pairwise, one element at a time.
template <class T>
double sum_of_squares_by_definition(const std::vector<T>& g, T scale, int64_t begin, int64_t end) {
  double sums[8] = {};
  for (int64_t i = begin; i < end; ++i) {
    const double x = static_cast<double>(g[static_cast<size_t>(i)] * scale);
    sums[(i - begin) % 8] += x * x;
  }
  for (int width = 4; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) sums[l] += sums[l + width];
  }
  return sums[0];
}

template <class T>
void sums_of_squares_agree() {
  // float32 values in both types: times 0.75 and squared they are exact in double, so a compiler
  // that fuses the definition's x·x + sum (this file is not built with contraction off) rounds
  // as the kernel does; the sums still round, so their order shows.
  std::vector<T> g(301);
  for (size_t i = 0; i < g.size(); ++i) {
    g[i] = static_cast<T>(gradient<float>(static_cast<int64_t>(i), 1) * 1e3f);
  }
  // Starts 0 and 3, and lengths that leave every tail from 0 to 7 elements past the full sums.
  for (const int64_t begin : {int64_t{0}, int64_t{3}}) {
    for (int64_t end = begin; end <= begin + 40; ++end) {
      const double expected = sum_of_squares_by_definition<T>(g, T(0.75), begin, end + 250);
      for (const CpuCapability level : tapegrad::testing::cpu_levels_here()) {
        INFO("level " << tapegrad::cpu_capability_name(level) << ", [" << begin << ", " << end + 250
                      << ")");
        tapegrad::testing::CpuLevelGuard guard(level);
        const double got = ok::sum_of_squares<T>(g.data(), T(0.75), begin, end + 250);
        CHECK(std::memcmp(&got, &expected, sizeof got) == 0);
      }
    }
  }
  CHECK(ok::sum_of_squares<T>(g.data(), T(1), 5, 5) == 0.0);
}

}  // namespace test_updates_isa

TEST_CASE("Adam/AdamW/SGD: every CPU level here gives the same bits", "[optim][adam][isa]") {
  test_updates_isa::all_levels_agree<float>();
  test_updates_isa::all_levels_agree<double>();
}

TEST_CASE("clip_grad_norm_'s sum of squares: every CPU level here gives its order's bits",
          "[optim][clip][isa]") {
  test_updates_isa::sums_of_squares_agree<float>();
  test_updates_isa::sums_of_squares_agree<double>();
}
