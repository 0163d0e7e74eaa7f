// DataParallel: rank 0's parameters broadcast at start, gradients averaged in fixed buckets.
#include <tapegrad/dist/data_parallel.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>

#include <tapegrad/graph/error.h>

namespace tapegrad::dist {

namespace {

MPI_Datatype mpi_type(DType dtype) {
  return dtype == DType::Float32 ? MPI_FLOAT : MPI_DOUBLE;
}

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string("DataParallel: ") + what + " failed: " + std::string(text, length));
}

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size_);
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

int run_or_abort(const std::function<int()>& body, MPI_Comm comm) {
  try {
    return body();
  } catch (const std::exception& e) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    std::fprintf(stderr, "rank %d of %d: error: %s\n", rank, size, e.what());
    std::fflush(stderr);
    MPI_Abort(comm, 1);  // ends every rank; does not return
    return 1;
  }
}

DataParallel::DataParallel(std::vector<Parameter> parameters, DataParallelOptions options)
    : parameters_(std::move(parameters)), options_(options) {
  if (options_.bucket_bytes <= 0 || options_.first_bucket_bytes <= 0) {
    throw Error("DataParallel: bucket_bytes and first_bucket_bytes must be positive, got " +
                std::to_string(options_.bucket_bytes) + " and " +
                std::to_string(options_.first_bucket_bytes));
  }
  MPI_Comm_rank(options_.comm, &rank_);
  MPI_Comm_size(options_.comm, &world_size_);
  // From the last parameter back, consecutive parameters of one dtype share a bucket until it
  // would pass its size; a parameter larger than a bucket gets one of its own.
  int64_t largest = 0;
  for (size_t i = parameters_.size(); i-- > 0;) {
    const Parameter& p = parameters_[i];
    if (!p.defined()) throw Error("DataParallel: parameter " + std::to_string(i) + " is undefined");
    if (!p.requires_grad()) continue;
    const int64_t bytes = p.numel() * dtype_size(p.dtype());
    const int64_t size_limit =
        buckets_.size() == 1 ? options_.first_bucket_bytes : options_.bucket_bytes;
    if (buckets_.empty() || buckets_.back().dtype != p.dtype() ||
        (buckets_.back().elements > 0 &&
         (buckets_.back().elements * dtype_size(p.dtype()) + bytes > size_limit))) {
      buckets_.push_back(Bucket{p.dtype(), {}, 0, {}, MPI_REQUEST_NULL, 0});
    }
    buckets_.back().members.push_back(i);
    buckets_.back().elements += p.numel();
    largest = std::max(largest, buckets_.back().elements * dtype_size(p.dtype()));
  }
  staging_.resize(static_cast<size_t>(largest));
  broadcast_parameters();
}

DataParallel::~DataParallel() {
  // A step left between its backward and average_gradients (an exception): finish what was
  // started, so MPI does not write into freed buffers.
  for (Bucket& bucket : buckets_) {
    if (bucket.request != MPI_REQUEST_NULL) MPI_Wait(&bucket.request, MPI_STATUS_IGNORE);
  }
}

void DataParallel::broadcast_parameters() {
  for (const Parameter& p : parameters_) {
    check(
        MPI_Bcast(p.raw_data(), static_cast<int>(p.numel()), mpi_type(p.dtype()), 0, options_.comm),
        "MPI_Bcast of the parameters");
  }
}

void DataParallel::pack(const Bucket& bucket, char* out) const {
  const size_t element = static_cast<size_t>(dtype_size(bucket.dtype));
  for (size_t i : bucket.members) {
    const Parameter& p = parameters_[i];
    const size_t bytes = static_cast<size_t>(p.numel()) * element;
    std::memcpy(out, p.raw_grad(), bytes);
    out += bytes;
  }
}

void DataParallel::unpack(const Bucket& bucket, const char* sums) const {
  for (size_t i : bucket.members) {
    const Parameter& p = parameters_[i];
    const int64_t n = p.numel();
    if (bucket.dtype == DType::Float32) {
      const float scale = 1.0f / static_cast<float>(world_size_);
      const auto* sum = reinterpret_cast<const float*>(sums);
      float* grad = p.grad<float>();
      for (int64_t k = 0; k < n; ++k) grad[k] = sum[k] * scale;
    } else {
      const double scale = 1.0 / world_size_;
      const auto* sum = reinterpret_cast<const double*>(sums);
      double* grad = p.grad<double>();
      for (int64_t k = 0; k < n; ++k) grad[k] = sum[k] * scale;
    }
    sums += static_cast<size_t>(n) * static_cast<size_t>(dtype_size(bucket.dtype));
  }
}

BackwardOptions DataParallel::backward_options(const Tape& tape) {
  if (world_size_ == 1) return {};
  if (overlapping_) {
    throw Error(
        "DataParallel::backward_options: the previous overlapped backward's gradients "
        "were not averaged (call average_gradients() after each backward)");
  }
  // A parameter's gradient is final once the walk has passed its leaf's first consumer, which
  // comes right after the leaf (made at the parameter's first use); one this step's forward did
  // not use keeps the gradient it has, final from the start.
  for (Bucket& bucket : buckets_) {
    bucket.ready_after = std::numeric_limits<int32_t>::max();
    for (size_t i : bucket.members) {
      const ParameterImpl* impl = parameters_[i].get();
      if (impl->leaf_tape == &tape && impl->leaf_generation == tape.generation()) {
        bucket.ready_after = std::min(bucket.ready_after, impl->leaf_node + 1);
      }
    }
  }
  overlapping_ = true;
  started_ = 0;
  BackwardOptions options;
  options.after_node = [this](int32_t i) { after_node(i); };
  return options;
}

void DataParallel::start(size_t b) {
  Bucket& bucket = buckets_[b];
  const size_t bytes = static_cast<size_t>(bucket.elements * dtype_size(bucket.dtype));
  if (bucket.buffer.size() != bytes) bucket.buffer.resize(bytes);
  pack(bucket, bucket.buffer.data());
  check(MPI_Iallreduce(MPI_IN_PLACE, bucket.buffer.data(), static_cast<int>(bucket.elements),
                       mpi_type(bucket.dtype), MPI_SUM, options_.comm, &bucket.request),
        "MPI_Iallreduce of the gradients");
}

void DataParallel::after_node(int32_t i) {
  const auto begin = std::chrono::steady_clock::now();
  // In bucket order on every rank (a collective's order must agree), as far as final.
  while (started_ < buckets_.size() && buckets_[started_].ready_after >= i) start(started_++);
  // Open MPI moves a non-blocking collective on only inside MPI calls: test the started ones.
  for (size_t b = 0; b < started_; ++b) {
    if (buckets_[b].request == MPI_REQUEST_NULL) continue;
    int done = 0;
    check(MPI_Test(&buckets_[b].request, &done, MPI_STATUS_IGNORE), "MPI_Test");
  }
  allreduce_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

void DataParallel::average_gradients() {
  if (world_size_ == 1) return;
  const auto begin = std::chrono::steady_clock::now();
  // The buckets backward started are waited for; the others (all of them without overlap) are
  // reduced now by the blocking MPI_Allreduce, faster than a non-blocking one with nothing left
  // to overlap. Every rank started the same buckets (the same graph), so the collectives agree.
  size_t first_blocking = 0;
  if (overlapping_) {
    overlapping_ = false;
    started_in_backward_ = static_cast<int>(started_);
    for (size_t b = 0; b < started_; ++b) {
      check(MPI_Wait(&buckets_[b].request, MPI_STATUS_IGNORE), "MPI_Wait for the gradients");
      unpack(buckets_[b], buckets_[b].buffer.data());
    }
    first_blocking = started_;
  }
  for (size_t b = first_blocking; b < buckets_.size(); ++b) {
    pack(buckets_[b], staging_.data());
    check(MPI_Allreduce(MPI_IN_PLACE, staging_.data(), static_cast<int>(buckets_[b].elements),
                        mpi_type(buckets_[b].dtype), MPI_SUM, options_.comm),
          "MPI_Allreduce of the gradients");
    unpack(buckets_[b], staging_.data());
  }
  allreduce_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

uint64_t rank_seed(uint64_t seed, int rank) {
  // Rank 0 keeps the run's seed (a 1-process run is the plain run); other ranks are spread by
  // the golden-ratio constant, whose low 32 bits (all MT19937 uses) differ for every rank.
  return seed + static_cast<uint64_t>(rank) * 0x9E3779B97F4A7C15ULL;
}

}  // namespace tapegrad::dist
