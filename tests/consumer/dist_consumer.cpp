// A user's data-parallel program built against the installed package (tapegrad::dist): run
// alone, it is rank 0 of 1, and DataParallel, like dist::Job, must leave values and gradients as
// they are.
#include <tapegrad/dist/data_parallel.h>
#include <tapegrad/dist/job.h>
#include <tapegrad/tapegrad.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  tapegrad::dist::MpiSession mpi(argc, argv);
  return tapegrad::dist::run_or_abort([&] {
    tapegrad::Parameter w({2}, tapegrad::DType::Float32, "w");
    const std::vector<double> values{1.0, 2.0};
    w.assign(values);
    w.grad<float>()[0] = 3.0f;
    tapegrad::dist::DataParallel ddp({w});
    ddp.average_gradients();
    // A Job started without mpirun is a job of this process alone and never touches MPI.
    tapegrad::dist::Job job(argc, argv);
    job.share_parameters({w});
    job.average_gradients();
    const bool same = w.values() == values && w.grad<float>()[0] == 3.0f && job.world_size() == 1;
    std::printf("dist consumer: rank %d of %d, %s\n", mpi.rank(), mpi.world_size(),
                same ? "ok" : "changed");
    return same && mpi.world_size() == 1 ? 0 : 1;
  });
}
