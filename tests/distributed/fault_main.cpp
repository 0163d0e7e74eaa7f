// A job in which rank 1 fails while rank 0 waits in a collective: run_or_abort must end both
// with rank 1's message (tests/distributed/run_fault.cmake checks the output and the time).
#include <mpi.h>

#include <tapegrad/dist/data_parallel.h>
#include <tapegrad/graph/error.h>

int main(int argc, char** argv) {
  tapegrad::dist::MpiSession mpi(argc, argv);
  return tapegrad::dist::run_or_abort([&] {
    if (mpi.rank() == 1) throw tapegrad::Error("cannot open data file /nonexistent/corpus.txt");
    MPI_Barrier(MPI_COMM_WORLD);  // rank 0 would wait here forever without the abort
    return 0;
  });
}
