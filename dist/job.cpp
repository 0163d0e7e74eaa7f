// dist::Job over MPI: under mpirun the job is MPI_COMM_WORLD, otherwise one process that never
// touches MPI.
#include <tapegrad/dist/job.h>

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include <tapegrad/dist/data_parallel.h>
#include <tapegrad/dist/sharded_adamw.h>

namespace tapegrad::dist {

struct Job::Mpi {
  MpiSession session;
  std::optional<DataParallel> data_parallel;
  ShardedAdamW* sharded = nullptr;  // make_adamw's, when sharded (the caller owns it)
  Mpi(int& argc, char**& argv) : session(argc, argv) {}
};

Job::Job(int& argc, char**& argv) {
  // Open MPI's launcher sets OMPI_COMM_WORLD_SIZE in every process it starts.
  if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) return;
  mpi_ = std::make_unique<Mpi>(argc, argv);
  rank_ = mpi_->session.rank();
  world_size_ = mpi_->session.world_size();
}

Job::~Job() = default;

int Job::run(const std::function<int()>& body, int error_status) const {
  if (!mpi_) return detail::run_alone(body, error_status);
  return run_or_abort(body);
}

void Job::broadcast(std::vector<uint8_t>& bytes) const {
  if (world_size_ == 1) return;
  uint64_t size = bytes.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  bytes.resize(size);
  for (uint64_t at = 0; at < size;) {  // MPI counts are int: 1 GiB at a time
    const int n = static_cast<int>(std::min<uint64_t>(size - at, uint64_t{1} << 30));
    MPI_Bcast(bytes.data() + at, n, MPI_BYTE, 0, MPI_COMM_WORLD);
    at += static_cast<uint64_t>(n);
  }
}

std::vector<std::vector<uint64_t>> Job::gather(const std::vector<uint64_t>& words) const {
  if (world_size_ == 1) return {words};
  std::vector<uint64_t> all(rank_ == 0 ? words.size() * static_cast<size_t>(world_size_) : 0);
  MPI_Gather(words.data(), static_cast<int>(words.size()), MPI_UINT64_T, all.data(),
             static_cast<int>(words.size()), MPI_UINT64_T, 0, MPI_COMM_WORLD);
  std::vector<std::vector<uint64_t>> out;
  for (size_t r = 0; rank_ == 0 && r < static_cast<size_t>(world_size_); ++r) {
    out.emplace_back(all.begin() + static_cast<ptrdiff_t>(r * words.size()),
                     all.begin() + static_cast<ptrdiff_t>((r + 1) * words.size()));
  }
  return out;
}

void Job::share_parameters(const std::vector<Parameter>& parameters) {
  if (world_size_ > 1) mpi_->data_parallel.emplace(parameters);  // rank 0's values everywhere
}

BackwardOptions Job::backward_options(const Tape& tape) {
  if (sharded_) return mpi_->sharded->backward_options(tape);
  if (mpi_ && mpi_->data_parallel) return mpi_->data_parallel->backward_options(tape);
  return {};
}

void Job::average_gradients() {
  if (mpi_ && mpi_->data_parallel && !sharded_) mpi_->data_parallel->average_gradients();
}

double Job::allreduce_seconds() const {
  if (sharded_) return mpi_->sharded->communication_seconds();
  return mpi_ && mpi_->data_parallel ? mpi_->data_parallel->allreduce_seconds() : 0.0;
}

std::unique_ptr<Optimizer> Job::make_adamw(std::vector<Parameter> parameters, AdamWOptions options,
                                           bool shard) {
  if (!shard || world_size_ == 1) return std::make_unique<AdamW>(std::move(parameters), options);
  auto optimizer = std::make_unique<ShardedAdamW>(std::move(parameters), options);
  mpi_->sharded = optimizer.get();
  sharded_ = true;
  return optimizer;
}

bool Job::clip_in_step(double max_norm) {
  if (!sharded_) return false;
  mpi_->sharded->set_clip_grad_norm(max_norm);
  return true;
}

OptimizerState Job::optimizer_state(const Optimizer& optimizer) const {
  if (sharded_ && &optimizer == mpi_->sharded) return mpi_->sharded->gather_state(0);
  return optimizer.state();
}

void Job::load_optimizer_state(Optimizer& optimizer, const OptimizerState& state) const {
  if (sharded_ && &optimizer == mpi_->sharded) {
    mpi_->sharded->load_full_state(state);
  } else {
    optimizer.load_state(state);
  }
}

uint64_t Job::rank_seed(uint64_t seed) const {
  return dist::rank_seed(seed, rank_);
}

}  // namespace tapegrad::dist
