// The generator's block loops per CPU level (kernels/random/): each level's dropout mask and the
// state it leaves are the Generator's own loops' (which tests/graph/test_random.cpp holds to one
// float64 uniform per element), from every phase of the stream.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/random/random.h>

#include "../isa_testing.h"

using namespace tapegrad;

TEST_CASE("random kernels: every level's dropout mask and state are the generator's own",
          "[random][isa]") {
  for (CpuCapability level : testing::cpu_levels_here()) {
    testing::CpuLevelGuard guard(level);
    for (double p : {0.1, 0.5, 1e-9, 0.999999}) {
      for (int64_t before : {0, 1, 623, 624, 625}) {
        for (int64_t n : {1, 311, 313, 512, 513, 1500, 5000}) {
          Generator g(7 + static_cast<uint64_t>(before));
          for (int64_t i = 0; i < before; ++i) g.random();
          Generator own = g;
          std::vector<uint8_t> keep(static_cast<size_t>(n)), expected(static_cast<size_t>(n));
          g.dropout_keep_mask(keep.data(), n, p, random_kernels::block_loops());
          own.dropout_keep_mask(expected.data(), n, p, Generator::own_loops());
          INFO(cpu_capability_name(level) << ": p " << p << " before " << before << " n " << n);
          CHECK(keep == expected);
          CHECK(g.state() == own.state());
        }
      }
    }
  }
}
