// tapegrad-bench's op table (--workloads ops): each row of op_rows.h (an elementwise op, a
// reduction, a gather/scatter op) forward and backward on [1024, 1024] float32, tapegrad against
// LibTorch in the same run.
#pragma once

#include <string>
#include <vector>

namespace tapegrad_bench {

// The names --op-rows accepts: every row of the table.
std::vector<std::string> op_row_names();

// The worker side ("--worker tapegrad-ops --threads N", or "--worker torch-ops --plugin PATH
// --threads N"): prints "ready <info>", then for each "r ROW K" runs the row K times and answers
// "<seconds> <Σ y of the last run> <Σ of the first input's gradient>"; "q" ends it.
int op_worker_main(const std::vector<std::string>& args);

// The parent side: the rows named (all when empty) at each thread count, tapegrad and LibTorch
// (its plugin, with glibc's default and with the tuned malloc; the faster counts) interleaved;
// prints the table and the rows below 1.0x. Without a plugin, tapegrad's times alone.
int run_op_workloads(const std::vector<std::string>& rows, const std::vector<int>& threads,
                     double sample_factor, const char* torch_plugin);

}  // namespace tapegrad_bench
