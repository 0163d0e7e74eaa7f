// ShardedAdamW: ZeRO stage 1 (reduce-scatter in rank order, overlapped with backward or not,
// AdamW's kernel on this rank's elements, all-gather of the weights), clipping with
// clip_grad_norm_'s bits, and its state gathered into unsharded AdamW's format.
#include <tapegrad/dist/sharded_adamw.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include <tapegrad/dist/data_parallel.h>
#include <tapegrad/graph/error.h>
#include <tapegrad/kernels/optim/updates.h>
#include <tapegrad/optim/clip.h>

// The rank-order sums and the clip coefficient round where DataParallel's and clip_grad_norm_'s
// do: no fused multiply-adds of the compiler's choosing.
#pragma GCC optimize("fp-contract=off")

namespace tapegrad::dist {

namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw Error("ShardedAdamW: " + what);
}

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  refuse(std::string(what) + " failed: " + std::string(text, length));
}

MPI_Datatype mpi_type(DType dtype) {
  return dtype == DType::Float32 ? MPI_FLOAT : MPI_DOUBLE;
}

std::vector<ParamGroup> one_group(std::vector<Parameter> params) {
  std::vector<ParamGroup> groups(1);
  groups[0].params = std::move(params);
  return groups;
}

// FNV-1a over 64-bit words: a short fingerprint of a layout that ranks can compare.
uint64_t fingerprint(const std::vector<int64_t>& words) {
  uint64_t h = 1469598103934665603ULL;
  for (const int64_t w : words) {
    for (int b = 0; b < 8; ++b) {
      h ^= (static_cast<uint64_t>(w) >> (8 * b)) & 0xff;
      h *= 1099511628211ULL;
    }
  }
  return h;
}

double seconds_since(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

}  // namespace

ShardedAdamW::ShardedAdamW(std::vector<Parameter> params, AdamWOptions options, ShardOptions shard)
    : ShardedAdamW(one_group(std::move(params)), options, shard) {}

ShardedAdamW::ShardedAdamW(std::vector<ParamGroup> groups, AdamWOptions options, ShardOptions shard)
    : Optimizer("AdamW", std::move(groups), options.lr, options.weight_decay),
      options_(options),
      shard_(shard) {
  for (int k = 0; k < 2; ++k) {
    const double beta = options.betas[static_cast<size_t>(k)];
    if (!(beta >= 0.0 && beta < 1.0)) {
      refuse("betas[" + std::to_string(k) + "] must be in [0, 1), got " + std::to_string(beta));
    }
  }
  if (!(std::isfinite(options.eps) && options.eps > 0.0)) {
    refuse("eps must be > 0, got " + std::to_string(options.eps));
  }
  if (shard_.bucket_bytes <= 0 || shard_.first_bucket_bytes <= 0) {
    refuse("bucket_bytes and first_bucket_bytes must be positive, got " +
           std::to_string(shard_.bucket_bytes) + " and " +
           std::to_string(shard_.first_bucket_bytes));
  }
  if (shard_.max_in_flight < 1) {
    refuse("max_in_flight must be at least 1, got " + std::to_string(shard_.max_in_flight));
  }
  MPI_Comm_rank(shard_.comm, &rank_);
  MPI_Comm_size(shard_.comm, &world_size_);
  build_layout();
  check_same_layout();
}

ShardedAdamW::~ShardedAdamW() {
  // A step left between its overlapped backward and step() (an exception): finish what was
  // started, so MPI does not write into freed buffers.
  for (Bucket& bucket : buckets_) {
    if (bucket.request != MPI_REQUEST_NULL) MPI_Wait(&bucket.request, MPI_STATUS_IGNORE);
  }
}

void ShardedAdamW::build_layout() {
  size_t index = 0;
  bool first = true;
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (const Parameter& p : groups_[g].params) {
      const size_t i = index++;
      if (!p.requires_grad() || p.numel() == 0) continue;
      if (first) dtype_ = p.dtype();
      first = false;
      if (p.dtype() != dtype_) {
        refuse("every trainable parameter must have one dtype (one flat vector): " +
               describe_param(p, i) + " is " + dtype_name(p.dtype()) + ", the first one " +
               dtype_name(dtype_));
      }
      params_.push_back(p);
      group_of_.push_back(g);
      state_index_.push_back(i);
      total_ += p.numel();
    }
  }
  // clip_grad_norm_'s chunks (the empty ones, of tensors under 64 elements, left out: they add
  // +0.0 to its sums), so that each is summed whole on the rank that owns it.
  units_of_param_.resize(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    const int64_t n = params_[i].numel();
    for (int c = 0; c < kClipNormChunks; ++c) {
      const int64_t begin = clip_norm_chunk_begin(n, c), end = clip_norm_chunk_begin(n, c + 1);
      if (begin == end) continue;
      units_of_param_[i].push_back(units_.size());
      units_.push_back(Unit{i, begin, end});
    }
  }
  // Buckets from the last parameter back (roughly the order backward finishes them), filled
  // chunk by chunk up to their size; a chunk larger than a bucket gets one of its own.
  const int64_t element = dtype_size(dtype_);
  for (size_t i = params_.size(); i-- > 0;) {
    for (const size_t u : units_of_param_[i]) {
      const int64_t n = units_[u].end - units_[u].begin;
      const int64_t limit =
          (buckets_.size() == 1 ? shard_.first_bucket_bytes : shard_.bucket_bytes) / element;
      if (buckets_.empty() ||
          (buckets_.back().elements > 0 && buckets_.back().elements + n > limit)) {
        buckets_.emplace_back();
      }
      buckets_.back().units.push_back(u);
      buckets_.back().elements += n;
    }
  }
  const int n_ranks = world_size_;
  unit_counts_.assign(static_cast<size_t>(n_ranks), 0);
  std::vector<std::vector<size_t>> units_by_rank(static_cast<size_t>(n_ranks));
  for (Bucket& bucket : buckets_) {
    if (bucket.elements > INT_MAX) {
      refuse("a bucket of " + std::to_string(bucket.elements) +
             " elements is more than MPI's int counts hold; use a smaller bucket_bytes");
    }
    // Rank r owns the chunks from the first one starting at or after r/N of the bucket: whole
    // chunks, contiguous, about 1/N each.
    std::vector<int64_t> start_of(bucket.units.size() + 1, 0);
    for (size_t k = 0; k < bucket.units.size(); ++k) {
      const Unit& unit = units_[bucket.units[k]];
      start_of[k + 1] = start_of[k] + (unit.end - unit.begin);
    }
    std::vector<size_t> first_unit(static_cast<size_t>(n_ranks) + 1, bucket.units.size());
    for (int r = 0; r < n_ranks; ++r) {
      size_t k = 0;
      while (k < bucket.units.size() && start_of[k] * n_ranks < r * bucket.elements) ++k;
      first_unit[static_cast<size_t>(r)] = k;
    }
    for (int r = 0; r < n_ranks; ++r) {
      const size_t lo = first_unit[static_cast<size_t>(r)];
      const size_t hi = first_unit[static_cast<size_t>(r) + 1];
      bucket.displs.push_back(static_cast<int>(start_of[lo]));
      bucket.counts.push_back(static_cast<int>(start_of[hi] - start_of[lo]));
      for (size_t k = lo; k < hi; ++k)
        units_by_rank[static_cast<size_t>(r)].push_back(bucket.units[k]);
      unit_counts_[static_cast<size_t>(r)] += static_cast<int>(hi - lo);
    }
    // The packing, in runs of consecutive chunks of one parameter; this rank's part of them.
    const size_t mine_lo = first_unit[static_cast<size_t>(rank_)];
    const size_t mine_hi = first_unit[static_cast<size_t>(rank_) + 1];
    for (size_t k = 0; k < bucket.units.size(); ++k) {
      const Unit& unit = units_[bucket.units[k]];
      const int64_t n = unit.end - unit.begin;
      Run* last = bucket.runs.empty() ? nullptr : &bucket.runs.back();
      if (last != nullptr && last->param == unit.param && last->offset + last->n == unit.begin &&
          k != mine_lo && k != mine_hi) {
        last->n += n;
      } else {
        bucket.runs.push_back(Run{unit.param, unit.begin, start_of[k], n});
      }
    }
    for (const Run& run : bucket.runs) {
      if (run.position >= start_of[mine_lo] && run.position < start_of[mine_hi]) {
        bucket.owned.push_back(Owned{run, group_of_[run.param], owned_});
        owned_ += run.n;
      }
    }
    const int mine = bucket.counts[static_cast<size_t>(rank_)];
    for (int q = 0; q < n_ranks; ++q) {
      bucket.receive_counts.push_back(mine);
      bucket.receive_displs.push_back(q * mine);
    }
    send_elements_ = std::max(send_elements_, bucket.elements);
    receive_elements_ = std::max(receive_elements_, static_cast<int64_t>(mine) * n_ranks);
  }
  for (int r = 0; r < n_ranks; ++r) {
    unit_displs_.push_back(static_cast<int>(unit_order_.size()));
    unit_order_.insert(unit_order_.end(), units_by_rank[static_cast<size_t>(r)].begin(),
                       units_by_rank[static_cast<size_t>(r)].end());
  }
  unit_sums_.assign(units_.size(), 0.0);
  gathered_sums_.assign(units_.size(), 0.0);
  const size_t state = static_cast<size_t>(owned_ * element);
  exp_avg_ = AlignedBuffer(state);
  exp_avg_sq_ = AlignedBuffer(state);
  if (options_.amsgrad) max_exp_avg_sq_ = AlignedBuffer(state);
}

void ShardedAdamW::check_same_layout() const {
  // Ranks with other parameters would exchange mismatched buckets (garbage or a hang): compare
  // every rank's layout with the others' first, so every rank throws the same Error.
  std::vector<int64_t> words{static_cast<int64_t>(dtype_), static_cast<int64_t>(buckets_.size()),
                             static_cast<int64_t>(options_.amsgrad)};
  for (const Parameter& p : params_) {
    words.push_back(static_cast<int64_t>(p.shape().dims().size()));
    for (const int64_t d : p.shape().dims()) words.push_back(d);
  }
  for (const Bucket& bucket : buckets_) {
    words.push_back(bucket.elements);
    for (const int count : bucket.counts) words.push_back(count);
  }
  const uint64_t mine[3] = {static_cast<uint64_t>(total_), static_cast<uint64_t>(params_.size()),
                            fingerprint(words)};
  std::vector<uint64_t> all(3 * static_cast<size_t>(world_size_));
  check(MPI_Allgather(mine, 3, MPI_UINT64_T, all.data(), 3, MPI_UINT64_T, shard_.comm),
        "MPI_Allgather of the layouts");
  for (int r = 1; r < world_size_; ++r) {
    const uint64_t* theirs = all.data() + 3 * r;
    if (std::equal(theirs, theirs + 3, all.data())) continue;
    refuse("the ranks disagree about the parameters: rank 0 has " + std::to_string(all[0]) +
           " elements in " + std::to_string(all[1]) + " trainable tensors (layout " +
           std::to_string(all[2]) + "), rank " + std::to_string(r) + " " +
           std::to_string(theirs[0]) + " in " + std::to_string(theirs[1]) + " (layout " +
           std::to_string(theirs[2]) +
           "); every rank must build the same model, dtype and "
           "bucket sizes");
  }
}

void ShardedAdamW::set_clip_grad_norm(double max_norm) {
  if (!(std::isfinite(max_norm) && max_norm >= 0)) {
    refuse("the clipping max_norm must be >= 0, got " + std::to_string(max_norm));
  }
  max_norm_ = max_norm;
}

int64_t ShardedAdamW::state_bytes() const {
  return static_cast<int64_t>(exp_avg_.bytes() + exp_avg_sq_.bytes() + max_exp_avg_sq_.bytes());
}

BackwardOptions ShardedAdamW::backward_options(const Tape& tape) {
  if (world_size_ == 1) return {};
  if (overlapping_) {
    refuse(
        "backward_options: the previous overlapped backward was not followed by step() (call "
        "step() after each backward)");
  }
  const GradientsFinal final_after(tape);
  for (Bucket& bucket : buckets_) {
    bucket.ready_after = std::numeric_limits<int32_t>::max();
    for (const size_t u : bucket.units) {
      bucket.ready_after =
          std::min(bucket.ready_after, final_after.after(*params_[units_[u].param].get()));
    }
  }
  overlapping_ = true;
  started_ = 0;
  BackwardOptions options;
  options.after_node = [this](int32_t i) { after_node(i); };
  return options;
}

void ShardedAdamW::after_node(int32_t i) {
  const auto begin = std::chrono::steady_clock::now();
  // In bucket order on every rank (a collective's order must agree), as far as final.
  while (started_ < buckets_.size() && buckets_[started_].ready_after >= i) {
    if (dtype_ == DType::Float32) {
      start<float>(started_++);
    } else {
      start<double>(started_++);
    }
  }
  // Open MPI moves a non-blocking collective on only inside MPI calls: test the started ones.
  for (const size_t b : in_flight_) {
    if (buckets_[b].request == MPI_REQUEST_NULL) continue;
    int done = 0;
    check(MPI_Test(&buckets_[b].request, &done, MPI_STATUS_IGNORE), "MPI_Test");
  }
  communication_seconds_ += seconds_since(begin);
}

template <class T>
void ShardedAdamW::start(size_t b) {
  Bucket& bucket = buckets_[b];
  if (free_slots_.empty()) {
    if (static_cast<int>(slots_.size()) < shard_.max_in_flight) {
      slots_.push_back(Slot{
          AlignedBuffer(static_cast<size_t>(send_elements_) * sizeof(T)),
          AlignedBuffer(static_cast<size_t>(std::max<int64_t>(1, receive_elements_)) * sizeof(T))});
      free_slots_.push_back(static_cast<int>(slots_.size()) - 1);
    } else {
      finish<T>(in_flight_.front());  // frees the oldest's slot
    }
  }
  bucket.slot = free_slots_.back();
  free_slots_.pop_back();
  in_flight_.push_back(b);
  Slot& slot = slots_[static_cast<size_t>(bucket.slot)];
  T* send = static_cast<T*>(slot.send.data());
  for (const Run& run : bucket.runs) {
    std::memcpy(send + run.position, params_[run.param].grad<T>() + run.offset,
                static_cast<size_t>(run.n) * sizeof(T));
  }
  const MPI_Datatype type = mpi_type(dtype_);
  check(MPI_Ialltoallv(send, bucket.counts.data(), bucket.displs.data(), type, slot.receive.data(),
                       bucket.receive_counts.data(), bucket.receive_displs.data(), type,
                       shard_.comm, &bucket.request),
        "MPI_Ialltoallv of the gradients");
}

template <class T>
void ShardedAdamW::finish(size_t b) {
  Bucket& bucket = buckets_[b];
  check(MPI_Wait(&bucket.request, MPI_STATUS_IGNORE), "MPI_Wait for the gradients");
  // DataParallel::average_gradients' scale, so the averaged gradient is the same bits.
  const T scale = T(1) / static_cast<T>(world_size_);
  const int64_t c = bucket.counts[static_cast<size_t>(rank_)];
  const int64_t mine = bucket.displs[static_cast<size_t>(rank_)];
  const T* receive = static_cast<const T*>(slots_[static_cast<size_t>(bucket.slot)].receive.data());
  for (const Owned& o : bucket.owned) {
    T* g = params_[o.run.param].grad<T>() + o.run.offset;
    const T* first = receive + (o.run.position - mine);
    for (int64_t j = 0; j < o.run.n; ++j) {
      T sum = first[j];
      for (int q = 1; q < world_size_; ++q) sum += first[q * c + j];
      g[j] = sum * scale;
    }
  }
  free_slots_.push_back(bucket.slot);
  bucket.slot = -1;
  in_flight_.erase(std::find(in_flight_.begin(), in_flight_.end(), b));
}

void ShardedAdamW::step() {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].grad_scale() != 1.0) {
      refuse(describe_param(params_[i], state_index_[i]) +
             " has a pending clip_grad_norm_ scale: with a sharded optimiser no rank holds the "
             "averaged gradient to take its norm; use set_clip_grad_norm(max_norm) instead");
    }
  }
  if (dtype_ == DType::Float32) {
    step_typed<float>();
  } else {
    step_typed<double>();
  }
  ++steps_;
}

template <class T>
double ShardedAdamW::clip_coefficient_sum() {
  // This rank's chunks, each summed as clip_grad_norm_ sums it, in unit_order_'s order.
  const int first = unit_displs_[static_cast<size_t>(rank_)];
  int k = first;
  for (int j = 0; j < unit_counts_[static_cast<size_t>(rank_)]; ++j, ++k) {
    const Unit& unit = units_[unit_order_[static_cast<size_t>(k)]];
    gathered_sums_[static_cast<size_t>(k)] =
        clip_norm_chunk_sum_of_squares(params_[unit.param].grad<T>(), unit.begin, unit.end);
  }
  check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered_sums_.data(),
                       unit_counts_.data(), unit_displs_.data(), MPI_DOUBLE, shard_.comm),
        "MPI_Allgatherv of the squared norms");
  for (size_t j = 0; j < unit_order_.size(); ++j) unit_sums_[unit_order_[j]] = gathered_sums_[j];
  // clip_grad_norm_'s order: each tensor's chunks in order, then the tensors in the
  // optimiser's order.
  double acc = 0.0;
  for (size_t i = 0; i < params_.size(); ++i) {
    double sum = 0.0;
    for (const size_t u : units_of_param_[i]) sum += unit_sums_[u];
    acc += clip_norm_part(sum, dtype_);
  }
  return acc;
}

template <class T>
void ShardedAdamW::step_typed() {
  const auto begin = std::chrono::steady_clock::now();
  // 1. Reduce-scatter: this rank's elements of the averaged gradient, into its gradients. The
  // buckets an overlapped backward did not start are started now; without overlap each is
  // finished before the next starts (one pair of buffers).
  const bool overlapped = overlapping_;
  overlapping_ = false;
  if (overlapped) {
    started_in_backward_ = static_cast<int>(started_);
  } else {
    started_ = 0;
  }
  for (; started_ < buckets_.size(); ++started_) {
    start<T>(started_);
    if (!overlapped) finish<T>(started_);
  }
  while (!in_flight_.empty()) finish<T>(in_flight_.front());

  // Clipping by the norm of the averaged gradient, with clip_grad_norm_'s bits.
  T coef = T(1);
  if (max_norm_ > 0.0) {
    const double total = clip_norm_total(clip_coefficient_sum<T>(), dtype_ == DType::Float32);
    last_grad_norm_ = total;
    // clip_grad_norm_'s coefficient: min(1, max_norm / (norm + 1e-6)), in the dtype.
    const T raw = T(1) / (static_cast<T>(total) + static_cast<T>(1e-6)) * static_cast<T>(max_norm_);
    coef = std::isnan(raw) ? raw : std::min(raw, T(1));
  }
  communication_seconds_ += seconds_since(begin);

  // 2. AdamW's kernel on this rank's elements, in the parameters' memory.
  ++t_;
  T* m = static_cast<T*>(exp_avg_.data());
  T* v = static_cast<T*>(exp_avg_sq_.data());
  T* v_max = static_cast<T*>(max_exp_avg_sq_.data());
  for (const Bucket& bucket : buckets_) {
    for (const Owned& o : bucket.owned) {
      const Parameter& p = params_[o.run.param];
      const Group& group = groups_[o.group];
      optim_kernels::adam_update<T>(
          p.data<T>() + o.run.offset, p.grad<T>() + o.run.offset, coef, m + o.state_offset,
          v + o.state_offset, v_max != nullptr ? v_max + o.state_offset : nullptr, o.run.n,
          optim_kernels::AdamScalars{group.lr, options_.betas[0], options_.betas[1], options_.eps,
                                     group.weight_decay, t_},
          {.maximize = options_.maximize,
           .decoupled = true,
           .coupled_decay = false,
           .amsgrad = options_.amsgrad});
    }
  }

  // 3. All-gather: every rank's updated elements into every rank's parameters, through the
  // first slot's send buffer (every slot is free now).
  if (buckets_.empty()) return;
  const auto gather_begin = std::chrono::steady_clock::now();
  T* buffer = static_cast<T*>(slots_.front().send.data());
  for (const Bucket& bucket : buckets_) {
    for (const Owned& o : bucket.owned) {
      std::memcpy(buffer + o.run.position, params_[o.run.param].data<T>() + o.run.offset,
                  static_cast<size_t>(o.run.n) * sizeof(T));
    }
    check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer, bucket.counts.data(),
                         bucket.displs.data(), mpi_type(dtype_), shard_.comm),
          "MPI_Allgatherv of the parameters");
    for (const Run& run : bucket.runs) {
      std::memcpy(params_[run.param].data<T>() + run.offset, buffer + run.position,
                  static_cast<size_t>(run.n) * sizeof(T));
    }
  }
  communication_seconds_ += seconds_since(gather_begin);
}

OptimizerState ShardedAdamW::gather_state(int root) const {
  const bool here = rank_ == root;
  OptimizerState out;
  // The names, and their order, of AdamW::state(), so a checkpoint is the same bytes.
  std::vector<std::string> slots{"exp_avg", "exp_avg_sq"};
  if (options_.amsgrad) slots.emplace_back("max_exp_avg_sq");
  if (here) {
    out.optimizer = "AdamW";
    out.step = steps_;
    for (size_t g = 0; g < groups_.size(); ++g) {
      const std::string prefix = "group." + std::to_string(g) + ".";
      out.scalars.push_back({prefix + "lr", groups_[g].lr});
      out.scalars.push_back({prefix + "weight_decay", groups_[g].weight_decay});
      if (groups_[g].initial_lr)
        out.scalars.push_back({prefix + "initial_lr", *groups_[g].initial_lr});
    }
  }
  if (t_ == 0) return out;  // no parameter has stepped: AdamW has no state yet
  // Every trainable parameter stepped t_ times (zero-sized ones too, as AdamW gives them state).
  std::vector<size_t> tensor_of(params_.size());  // params_[i]'s first slot in out.tensors
  if (here) {
    size_t index = 0, next = 0;
    for (const Group& group : groups_) {
      for (const Parameter& p : group.params) {
        const size_t i = index++;
        if (!p.requires_grad() || p.numel() == 0) continue;  // AdamW: no gradient, no state
        const std::string prefix = "param." + std::to_string(i) + ".";
        out.scalars.push_back({prefix + "step", static_cast<double>(t_)});
        if (next < params_.size() && state_index_[next] == i)
          tensor_of[next++] = out.tensors.size();
        for (const std::string& slot : slots) {
          out.tensors.push_back({prefix + slot, p.shape(), p.dtype(),
                                 std::vector<double>(static_cast<size_t>(p.numel()))});
        }
      }
    }
  }
  const int64_t element = dtype_size(dtype_);
  std::vector<char> send(static_cast<size_t>(std::max<int64_t>(1, send_elements_) * element));
  std::vector<char> all(here ? send.size() : 0);
  const AlignedBuffer* buffers[3] = {&exp_avg_, &exp_avg_sq_, &max_exp_avg_sq_};
  for (size_t s = 0; s < slots.size(); ++s) {
    for (const Bucket& bucket : buckets_) {
      const int64_t mine = bucket.displs[static_cast<size_t>(rank_)];
      for (const Owned& o : bucket.owned) {
        std::memcpy(send.data() + (o.run.position - mine) * element,
                    static_cast<const char*>(buffers[s]->data()) + o.state_offset * element,
                    static_cast<size_t>(o.run.n * element));
      }
      check(MPI_Gatherv(send.data(), bucket.counts[static_cast<size_t>(rank_)], mpi_type(dtype_),
                        all.data(), bucket.counts.data(), bucket.displs.data(), mpi_type(dtype_),
                        root, shard_.comm),
            "MPI_Gatherv of the optimiser state");
      if (!here) continue;
      for (const Run& run : bucket.runs) {
        std::vector<double>& values = out.tensors[tensor_of[run.param] + s].values;
        for (int64_t j = 0; j < run.n; ++j) {
          const char* at = all.data() + (run.position + j) * element;
          values[static_cast<size_t>(run.offset + j)] =
              dtype_ == DType::Float32 ? static_cast<double>(*reinterpret_cast<const float*>(at))
                                       : *reinterpret_cast<const double*>(at);
        }
      }
    }
  }
  return out;
}

OptimizerState ShardedAdamW::state() const {
  refuse(
      "state(): the moments are spread over the ranks; call gather_state(root) on every rank "
      "(it returns the whole state, in AdamW's format, on root)");
}

void ShardedAdamW::load_full_state(const OptimizerState& state) {
  const std::string where = "load_full_state: ";
  if (state.optimizer != "AdamW")
    refuse(where + "the state is from " + state.optimizer + ", not AdamW");
  if (state.step < 0) refuse(where + "step must be >= 0, got " + std::to_string(state.step));
  // Everything is checked before anything changes.
  struct GroupValues {
    double lr, weight_decay;
    std::optional<double> initial_lr;
  };
  std::vector<GroupValues> groups;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const std::string prefix = "group." + std::to_string(g) + ".";
    const StateScalar* lr = state.find_scalar(prefix + "lr");
    const StateScalar* wd = state.find_scalar(prefix + "weight_decay");
    if (lr == nullptr || wd == nullptr) refuse(where + "no " + prefix + "lr or weight_decay");
    const StateScalar* initial = state.find_scalar(prefix + "initial_lr");
    groups.push_back({lr->value, wd->value,
                      initial != nullptr ? std::optional<double>(initial->value) : std::nullopt});
  }
  std::vector<std::string> slots{"exp_avg", "exp_avg_sq"};
  if (options_.amsgrad) slots.emplace_back("max_exp_avg_sq");
  std::vector<std::vector<const StateTensor*>> tensors(params_.size());
  int64_t t = -1;
  for (size_t i = 0; i < params_.size(); ++i) {
    const std::string prefix = "param." + std::to_string(state_index_[i]) + ".";
    const StateScalar* step = state.find_scalar(prefix + "step");
    const int64_t steps = step != nullptr ? static_cast<int64_t>(step->value) : 0;
    if (t >= 0 && steps != t) {
      refuse(where + "the parameters have stepped different numbers of times (" +
             std::to_string(t) + " and " + std::to_string(steps) + " for " +
             describe_param(params_[i], state_index_[i]) +
             "); a sharded AdamW steps every parameter together");
    }
    t = steps;
    for (const std::string& slot : slots) {
      const StateTensor* tensor = state.find_tensor(prefix + slot);
      if (steps == 0) continue;
      if (tensor == nullptr || tensor->shape != params_[i].shape() ||
          tensor->dtype != params_[i].dtype() ||
          static_cast<int64_t>(tensor->values.size()) != params_[i].numel()) {
        refuse(where + "\"" + prefix + slot + "\" is missing or does not fit " +
               describe_param(params_[i], state_index_[i]));
      }
      tensors[i].push_back(tensor);
    }
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    groups_[g].lr = groups[g].lr;
    groups_[g].weight_decay = groups[g].weight_decay;
    groups_[g].initial_lr = groups[g].initial_lr;
  }
  steps_ = state.step;
  t_ = std::max<int64_t>(t, 0);
  AlignedBuffer* buffers[3] = {&exp_avg_, &exp_avg_sq_, &max_exp_avg_sq_};
  for (size_t s = 0; s < slots.size(); ++s) {
    for (const Bucket& bucket : buckets_) {
      for (const Owned& o : bucket.owned) {
        for (int64_t j = 0; j < o.run.n; ++j) {
          const double value =
              t_ == 0 ? 0.0
                      : tensors[o.run.param][s]->values[static_cast<size_t>(o.run.offset + j)];
          if (dtype_ == DType::Float32) {
            static_cast<float*>(buffers[s]->data())[o.state_offset + j] = static_cast<float>(value);
          } else {
            static_cast<double*>(buffers[s]->data())[o.state_offset + j] = value;
          }
        }
      }
    }
  }
}

}  // namespace tapegrad::dist
