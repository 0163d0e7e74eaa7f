// DataParallel: rank 0's parameters broadcast at start, gradients averaged in fixed buckets.
#include <tapegrad/dist/data_parallel.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>

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
  if (options_.bucket_bytes <= 0) {
    throw Error("DataParallel: bucket_bytes must be positive, got " +
                std::to_string(options_.bucket_bytes));
  }
  MPI_Comm_rank(options_.comm, &rank_);
  MPI_Comm_size(options_.comm, &world_size_);
  // Consecutive parameters of one dtype share a bucket until it would pass bucket_bytes; a
  // parameter larger than a bucket gets one of its own.
  int64_t largest = 0;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const Parameter& p = parameters_[i];
    if (!p.defined()) throw Error("DataParallel: parameter " + std::to_string(i) + " is undefined");
    if (!p.requires_grad()) continue;
    const int64_t bytes = p.numel() * dtype_size(p.dtype());
    if (buckets_.empty() || buckets_.back().dtype != p.dtype() ||
        (buckets_.back().elements > 0 &&
         (buckets_.back().elements * dtype_size(p.dtype()) + bytes > options_.bucket_bytes))) {
      buckets_.push_back(Bucket{p.dtype(), {}, 0});
    }
    buckets_.back().members.push_back(i);
    buckets_.back().elements += p.numel();
    largest = std::max(largest, buckets_.back().elements * dtype_size(p.dtype()));
  }
  staging_.resize(static_cast<size_t>(largest));
  broadcast_parameters();
}

void DataParallel::broadcast_parameters() {
  for (const Parameter& p : parameters_) {
    check(
        MPI_Bcast(p.raw_data(), static_cast<int>(p.numel()), mpi_type(p.dtype()), 0, options_.comm),
        "MPI_Bcast of the parameters");
  }
}

void DataParallel::average_gradients() {
  if (world_size_ == 1) return;
  const auto start = std::chrono::steady_clock::now();
  for (const Bucket& bucket : buckets_) {
    const size_t element = static_cast<size_t>(dtype_size(bucket.dtype));
    char* cursor = staging_.data();
    for (size_t i : bucket.members) {
      const Parameter& p = parameters_[i];
      const size_t bytes = static_cast<size_t>(p.numel()) * element;
      std::memcpy(cursor, p.raw_grad(), bytes);
      cursor += bytes;
    }
    check(MPI_Allreduce(MPI_IN_PLACE, staging_.data(), static_cast<int>(bucket.elements),
                        mpi_type(bucket.dtype), MPI_SUM, options_.comm),
          "MPI_Allreduce of the gradients");
    cursor = staging_.data();
    for (size_t i : bucket.members) {
      const Parameter& p = parameters_[i];
      const int64_t n = p.numel();
      if (bucket.dtype == DType::Float32) {
        const float scale = 1.0f / static_cast<float>(world_size_);
        const auto* sum = reinterpret_cast<const float*>(cursor);
        float* grad = p.grad<float>();
        for (int64_t k = 0; k < n; ++k) grad[k] = sum[k] * scale;
      } else {
        const double scale = 1.0 / world_size_;
        const auto* sum = reinterpret_cast<const double*>(cursor);
        double* grad = p.grad<double>();
        for (int64_t k = 0; k < n; ++k) grad[k] = sum[k] * scale;
      }
      cursor += static_cast<size_t>(n) * element;
    }
  }
  allreduce_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

uint64_t rank_seed(uint64_t seed, int rank) {
  // Rank 0 keeps the run's seed (a 1-process run is the plain run); other ranks are spread by
  // the golden-ratio constant, whose low 32 bits (all MT19937 uses) differ for every rank.
  return seed + static_cast<uint64_t>(rank) * 0x9E3779B97F4A7C15ULL;
}

}  // namespace tapegrad::dist
