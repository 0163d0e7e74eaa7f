// The distributed tests' main: MPI around Catch2; only rank 0 prints, every rank's verdict counts
// (mpirun exits non-zero when any rank does).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <vector>

#include <tapegrad/dist/data_parallel.h>

int main(int argc, char** argv) {
  tapegrad::dist::MpiSession mpi(argc, argv);
  std::vector<char*> args(argv, argv + argc);
  char out_flag[] = "--out";
  char dev_null[] = "/dev/null";
  if (mpi.rank() != 0) {
    args.push_back(out_flag);
    args.push_back(dev_null);
  }
  const int failed = Catch::Session().run(static_cast<int>(args.size()), args.data());
  // Every rank waits for the others, so none finalises while another still reduces.
  MPI_Barrier(MPI_COMM_WORLD);
  return failed == 0 ? 0 : 1;
}
