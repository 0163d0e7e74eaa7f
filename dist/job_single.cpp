// dist::Job in a build without MPI: every job is this process alone, and nothing is exchanged.
#include <tapegrad/dist/job.h>

#include <utility>

namespace tapegrad::dist {

struct Job::Mpi {};

Job::Job(int& /*argc*/, char**& /*argv*/) {}
Job::~Job() = default;

int Job::run(const std::function<int()>& body, int error_status) const {
  return detail::run_alone(body, error_status);
}

void Job::broadcast(std::vector<uint8_t>& /*bytes*/) const {}

std::vector<std::vector<uint64_t>> Job::gather(const std::vector<uint64_t>& words) const {
  return {words};
}

void Job::share_parameters(const std::vector<Parameter>& /*parameters*/) {}
BackwardOptions Job::backward_options(const Tape& /*tape*/) {
  return {};
}
void Job::average_gradients() {}
double Job::allreduce_seconds() const {
  return 0.0;
}

// One process: nothing to shard.
std::unique_ptr<Optimizer> Job::make_adamw(std::vector<Parameter> parameters, AdamWOptions options,
                                           bool /*shard*/) {
  return std::make_unique<AdamW>(std::move(parameters), options);
}
bool Job::clip_in_step(double /*max_norm*/) {
  return false;
}
OptimizerState Job::optimizer_state(const Optimizer& optimizer) const {
  return optimizer.state();
}
void Job::load_optimizer_state(Optimizer& optimizer, const OptimizerState& state) const {
  optimizer.load_state(state);
}

// dist::rank_seed of rank 0, the only rank: the run's seed.
uint64_t Job::rank_seed(uint64_t seed) const {
  return seed;
}

}  // namespace tapegrad::dist
