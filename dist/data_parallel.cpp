// DataParallel: rank 0's parameters broadcast at start, gradients averaged in fixed buckets.
#include <tapegrad/dist/data_parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>

#include <tapegrad/dist/progress_thread.h>
#include <tapegrad/graph/checkpoint.h>
#include <tapegrad/graph/error.h>

// The rank-order sums round where MPI's sums do: no fused multiply-adds of the compiler's choosing.
#pragma GCC optimize("fp-contract=off")

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
  // Serialised threads: DataParallelOptions::progress_thread tests requests from a thread of
  // its own while the main thread starts others (under one mutex).
  int provided = 0;
  if (!initialized) MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
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
      buckets_.push_back(Bucket{p.dtype(), {}, 0, {}, {}, MPI_REQUEST_NULL, 0});
    }
    buckets_.back().members.push_back(i);
    buckets_.back().elements += p.numel();
  }
  for (const Bucket& bucket : buckets_) {
    const int64_t padded = options_.rank_order_sum ? share(bucket) * world_size_ : bucket.elements;
    largest = std::max(largest, padded * dtype_size(bucket.dtype));
  }
  // Allocated by the first blocking average: a step that overlaps every bucket, or a sharded
  // optimiser that averages itself, never holds it (154 MB at GPT-2 124M, its embedding's).
  staging_bytes_ = largest;
  check_same_layout();
  broadcast_parameters();
  if (options_.progress_thread && world_size_ > 1) {
    require_serialized_threads("DataParallel (progress_thread)");
    progress_ =
        std::make_unique<ProgressThread>([this] { test_started(); }, options_.progress_interval);
  }
}

void DataParallel::check_same_layout() const {
  // Ranks with other parameters or buckets would broadcast and reduce mismatched buffers
  // (garbage, or a hang): compare every rank's layout first, so each rank throws the same Error.
  uint64_t h = 1469598103934665603ULL;  // FNV-1a over the words below
  auto mix = [&h](int64_t word) {
    for (int b = 0; b < 8; ++b) {
      h ^= (static_cast<uint64_t>(word) >> (8 * b)) & 0xff;
      h *= 1099511628211ULL;
    }
  };
  mix(options_.rank_order_sum);
  for (const Parameter& p : parameters_) {
    mix(static_cast<int64_t>(p.dtype()));
    mix(p.requires_grad());
    for (const int64_t d : p.shape().dims()) mix(d);
    mix(-1);
  }
  for (const Bucket& bucket : buckets_) mix(bucket.elements);
  const uint64_t mine[3] = {static_cast<uint64_t>(parameters_.size()),
                            static_cast<uint64_t>(buckets_.size()), h};
  std::vector<uint64_t> all(3 * static_cast<size_t>(world_size_));
  check(MPI_Allgather(mine, 3, MPI_UINT64_T, all.data(), 3, MPI_UINT64_T, options_.comm),
        "MPI_Allgather of the layouts");
  for (int r = 1; r < world_size_; ++r) {
    const uint64_t* theirs = all.data() + 3 * r;
    if (std::equal(theirs, theirs + 3, all.data())) continue;
    throw Error("DataParallel: the ranks disagree about the model or the buckets: rank 0 has " +
                std::to_string(all[0]) + " parameters in " + std::to_string(all[1]) +
                " buckets (layout " + std::to_string(all[2]) + "), rank " + std::to_string(r) +
                " " + std::to_string(theirs[0]) + " in " + std::to_string(theirs[1]) + " (layout " +
                std::to_string(theirs[2]) +
                "); every rank must build the same model with the same options");
  }
}

int64_t DataParallel::share(const Bucket& bucket) const {
  return (bucket.elements + world_size_ - 1) / world_size_;
}

void DataParallel::sum_in_rank_order(const Bucket& bucket, char* packed, const char* received) {
  const int64_t c = share(bucket);
  const int64_t n = std::min(c, bucket.elements - rank_ * c);  // this rank's real elements
  auto sum = [&]<class T>() {
    const auto* in = reinterpret_cast<const T*>(received);
    T* out = reinterpret_cast<T*>(packed) + rank_ * c;
    for (int64_t j = 0; j < n; ++j) {
      T s = in[j];
      for (int q = 1; q < world_size_; ++q) s += in[q * c + j];
      out[j] = s;
    }
  };
  if (bucket.dtype == DType::Float32) {
    sum.template operator()<float>();
  } else {
    sum.template operator()<double>();
  }
  check(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, packed, static_cast<int>(c),
                      mpi_type(bucket.dtype), options_.comm),
        "MPI_Allgather of the summed gradients");
}

DataParallel::~DataParallel() {
  if (progress_) progress_->stop();
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

GradientsFinal::GradientsFinal(const Tape& tape) : tape_(tape) {
  for (int32_t i = tape.size(); i-- > 0;) {  // down, so the first node using a parameter stays
    for (const ParameterImpl* p : checkpoint_parameters(tape, i)) segments_[p] = i;
  }
}

int32_t GradientsFinal::after(const ParameterImpl& parameter) const {
  const bool used =
      parameter.leaf_tape == &tape_ && parameter.leaf_generation == tape_.generation();
  int32_t final_after = used ? parameter.leaf_node + 1 : std::numeric_limits<int32_t>::max();
  if (const auto it = segments_.find(&parameter); it != segments_.end()) {
    final_after = std::min(final_after, it->second);
  }
  return final_after;
}

BackwardOptions DataParallel::backward_options(const Tape& tape) {
  if (world_size_ == 1) return {};
  if (overlapping_) {
    throw Error(
        "DataParallel::backward_options: the previous overlapped backward's gradients "
        "were not averaged (call average_gradients() after each backward)");
  }
  const GradientsFinal final_after(tape);
  for (Bucket& bucket : buckets_) {
    bucket.ready_after = std::numeric_limits<int32_t>::max();
    for (size_t i : bucket.members) {
      bucket.ready_after = std::min(bucket.ready_after, final_after.after(*parameters_[i].get()));
    }
  }
  overlapping_ = true;
  started_ = 0;
  if (progress_) progress_->start();
  BackwardOptions options;
  options.after_node = [this](int32_t i) { after_node(i); };
  return options;
}

void DataParallel::test_started() {
  for (size_t b = 0; b < started_; ++b) {
    if (buckets_[b].request == MPI_REQUEST_NULL) continue;
    int done = 0;
    check(MPI_Test(&buckets_[b].request, &done, MPI_STATUS_IGNORE), "MPI_Test");
  }
}

void DataParallel::start(size_t b) {
  Bucket& bucket = buckets_[b];
  if (options_.rank_order_sum) {
    const int64_t c = share(bucket);
    const size_t bytes = static_cast<size_t>(c * world_size_ * dtype_size(bucket.dtype));
    if (bucket.buffer.size() != bytes) bucket.buffer.resize(bytes);  // zeroed: the padding
    if (bucket.received.size() != bytes) bucket.received.resize(bytes);
    pack(bucket, bucket.buffer.data());
    check(MPI_Ialltoall(bucket.buffer.data(), static_cast<int>(c), mpi_type(bucket.dtype),
                        bucket.received.data(), static_cast<int>(c), mpi_type(bucket.dtype),
                        options_.comm, &bucket.request),
          "MPI_Ialltoall of the gradients");
    return;
  }
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
  auto ready = [&] { return started_ < buckets_.size() && buckets_[started_].ready_after >= i; };
  if (ready()) {
    std::unique_lock<std::mutex> mpi;  // a progress thread's MPI_Test waits for these starts
    if (progress_) mpi = std::unique_lock(progress_->mpi_mutex());
    while (ready()) start(started_++);
  }
  // Open MPI moves a non-blocking collective on only inside MPI calls: test the started ones
  // (the progress thread does, when there is one).
  if (!progress_) test_started();
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
    if (progress_) progress_->stop();  // parked: the MPI calls below are this thread's alone
    overlapping_ = false;
    started_in_backward_ = static_cast<int>(started_);
    for (size_t b = 0; b < started_; ++b) {
      check(MPI_Wait(&buckets_[b].request, MPI_STATUS_IGNORE), "MPI_Wait for the gradients");
      if (options_.rank_order_sum) {
        sum_in_rank_order(buckets_[b], buckets_[b].buffer.data(), buckets_[b].received.data());
      }
      unpack(buckets_[b], buckets_[b].buffer.data());
    }
    first_blocking = started_;
  }
  if (first_blocking < buckets_.size() && staging_.empty()) {
    staging_.resize(static_cast<size_t>(staging_bytes_));
    if (options_.rank_order_sum) staging_received_.resize(staging_.size());
  }
  for (size_t b = first_blocking; b < buckets_.size(); ++b) {
    pack(buckets_[b], staging_.data());
    if (options_.rank_order_sum) {
      const int64_t c = share(buckets_[b]);
      const int64_t padded = c * world_size_;
      const size_t element = static_cast<size_t>(dtype_size(buckets_[b].dtype));
      std::memset(staging_.data() + buckets_[b].elements * static_cast<int64_t>(element), 0,
                  static_cast<size_t>(padded - buckets_[b].elements) * element);
      check(MPI_Alltoall(staging_.data(), static_cast<int>(c), mpi_type(buckets_[b].dtype),
                         staging_received_.data(), static_cast<int>(c), mpi_type(buckets_[b].dtype),
                         options_.comm),
            "MPI_Alltoall of the gradients");
      sum_in_rank_order(buckets_[b], staging_.data(), staging_received_.data());
      unpack(buckets_[b], staging_.data());
      continue;
    }
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
