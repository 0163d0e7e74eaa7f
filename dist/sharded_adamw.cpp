// ShardedAdamW: ZeRO stage 1 (reduce-scatter in rank order, AdamW's kernel on this rank's
// elements, all-gather of the weights) and its state gathered into unsharded AdamW's format.
#include <tapegrad/dist/sharded_adamw.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <utility>

#include <tapegrad/graph/error.h>
#include <tapegrad/kernels/optim/updates.h>

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
  if (shard_.chunk_bytes <= 0) {
    refuse("chunk_bytes must be positive, got " + std::to_string(shard_.chunk_bytes));
  }
  MPI_Comm_rank(shard_.comm, &rank_);
  MPI_Comm_size(shard_.comm, &world_size_);
  build_layout();
  check_same_layout();
}

ShardedAdamW::~ShardedAdamW() = default;

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
  const int64_t n = world_size_;
  const int64_t element = dtype_size(dtype_);
  const int64_t most = std::max<int64_t>(1, shard_.chunk_bytes / (element * n));
  per_rank_ = std::min(most, std::max<int64_t>(1, (total_ + n - 1) / n));
  const int64_t span = per_rank_ * n;
  const int64_t num_chunks = (total_ + span - 1) / span;
  chunks_.resize(static_cast<size_t>(num_chunks));
  // Walk the flat vector once, cutting pieces at parameter and chunk boundaries.
  size_t param = 0;
  int64_t offset = 0;
  for (int64_t c = 0; c < num_chunks; ++c) {
    Chunk& chunk = chunks_[static_cast<size_t>(c)];
    const int64_t length = std::min(span, total_ - c * span);
    for (int64_t position = 0; position < length;) {
      const int64_t n_here = std::min(params_[param].numel() - offset, length - position);
      chunk.pieces.push_back(Piece{param, offset, position, n_here});
      // The part of the piece inside this rank's [r·C, (r+1)·C).
      const int64_t lo = std::max(position, rank_ * per_rank_);
      const int64_t hi = std::min(position + n_here, (rank_ + 1) * per_rank_);
      if (lo < hi) {
        chunk.owned.push_back(
            Owned{Piece{param, offset + (lo - position), lo, hi - lo}, group_of_[param], owned_});
        owned_ += hi - lo;
      }
      position += n_here;
      offset += n_here;
      if (offset == params_[param].numel()) {
        ++param;
        offset = 0;
      }
    }
  }
  const size_t state = static_cast<size_t>(owned_ * element);
  exp_avg_ = AlignedBuffer(state);
  exp_avg_sq_ = AlignedBuffer(state);
  if (options_.amsgrad) max_exp_avg_sq_ = AlignedBuffer(state);
  send_ = AlignedBuffer(static_cast<size_t>(span * element));
  receive_ = AlignedBuffer(static_cast<size_t>(span * element));
}

void ShardedAdamW::check_same_layout() const {
  // Ranks with other parameters would exchange mismatched chunks (garbage or a hang): compare
  // every rank's layout with the others' first, so every rank throws the same Error.
  std::vector<int64_t> words{static_cast<int64_t>(dtype_), per_rank_,
                             static_cast<int64_t>(options_.amsgrad)};
  for (const Parameter& p : params_) {
    words.push_back(static_cast<int64_t>(p.shape().dims().size()));
    for (const int64_t d : p.shape().dims()) words.push_back(d);
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
           "chunk_bytes");
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
void ShardedAdamW::step_typed() {
  const auto begin = std::chrono::steady_clock::now();
  const MPI_Datatype type = mpi_type(dtype_);
  const int count = static_cast<int>(per_rank_);
  const int64_t span = per_rank_ * world_size_;
  T* send = static_cast<T*>(send_.data());
  T* receive = static_cast<T*>(receive_.data());
  // DataParallel::average_gradients' scale, so the averaged gradient is the same bits.
  const T scale = T(1) / static_cast<T>(world_size_);

  // 1. Reduce-scatter: this rank's elements of the averaged gradient, into its gradients.
  for (const Chunk& chunk : chunks_) {
    int64_t filled = 0;
    for (const Piece& piece : chunk.pieces) {
      std::memcpy(send + piece.position, params_[piece.param].grad<T>() + piece.offset,
                  static_cast<size_t>(piece.n) * sizeof(T));
      filled = piece.position + piece.n;
    }
    std::fill(send + filled, send + span, T(0));  // the last chunk's padding
    check(MPI_Alltoall(send, count, type, receive, count, type, shard_.comm),
          "MPI_Alltoall of the gradients");
    for (const Owned& o : chunk.owned) {
      T* g = params_[o.piece.param].grad<T>() + o.piece.offset;
      const T* first = receive + (o.piece.position - rank_ * per_rank_);
      for (int64_t j = 0; j < o.piece.n; ++j) {
        T sum = first[j];
        for (int q = 1; q < world_size_; ++q) sum += first[q * per_rank_ + j];
        g[j] = sum * scale;
      }
    }
  }

  // Clipping by the norm of the averaged gradient: Σ g² of each shard, in double, then the
  // shards' sums added in rank order on every rank (the same coefficient everywhere).
  T coef = T(1);
  if (max_norm_ > 0.0) {
    double mine = 0.0;
    for (const Chunk& chunk : chunks_) {
      for (const Owned& o : chunk.owned) {
        const T* g = params_[o.piece.param].grad<T>() + o.piece.offset;
        for (int64_t j = 0; j < o.piece.n; ++j) {
          const double v = static_cast<double>(g[j]);
          mine += v * v;
        }
      }
    }
    std::vector<double> parts(static_cast<size_t>(world_size_));
    check(MPI_Allgather(&mine, 1, MPI_DOUBLE, parts.data(), 1, MPI_DOUBLE, shard_.comm),
          "MPI_Allgather of the squared norms");
    double acc = 0.0;
    for (const double part : parts) acc += part;
    const T total = static_cast<T>(std::sqrt(acc));
    last_grad_norm_ = static_cast<double>(total);
    // clip_grad_norm_'s coefficient: min(1, max_norm / (norm + 1e-6)), in the dtype.
    const T raw = T(1) / (total + static_cast<T>(1e-6)) * static_cast<T>(max_norm_);
    coef = std::isnan(raw) ? raw : std::min(raw, T(1));
  }
  communication_seconds_ += seconds_since(begin);

  // 2. AdamW's kernel on this rank's elements, in the parameters' memory.
  ++t_;
  T* m = static_cast<T*>(exp_avg_.data());
  T* v = static_cast<T*>(exp_avg_sq_.data());
  T* v_max = static_cast<T*>(max_exp_avg_sq_.data());
  for (const Chunk& chunk : chunks_) {
    for (const Owned& o : chunk.owned) {
      const Parameter& p = params_[o.piece.param];
      const Group& group = groups_[o.group];
      optim_kernels::adam_update<T>(
          p.data<T>() + o.piece.offset, p.grad<T>() + o.piece.offset, coef, m + o.state_offset,
          v + o.state_offset, v_max != nullptr ? v_max + o.state_offset : nullptr, o.piece.n,
          optim_kernels::AdamScalars{group.lr, options_.betas[0], options_.betas[1], options_.eps,
                                     group.weight_decay, t_},
          {.maximize = options_.maximize,
           .decoupled = true,
           .coupled_decay = false,
           .amsgrad = options_.amsgrad});
    }
  }

  // 3. All-gather: every rank's updated elements into every rank's parameters.
  const auto gather_begin = std::chrono::steady_clock::now();
  for (const Chunk& chunk : chunks_) {
    for (const Owned& o : chunk.owned) {
      std::memcpy(send + o.piece.position, params_[o.piece.param].data<T>() + o.piece.offset,
                  static_cast<size_t>(o.piece.n) * sizeof(T));
    }
    check(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, send, count, type, shard_.comm),
          "MPI_Allgather of the parameters");
    for (const Piece& piece : chunk.pieces) {
      std::memcpy(params_[piece.param].data<T>() + piece.offset, send + piece.position,
                  static_cast<size_t>(piece.n) * sizeof(T));
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
  std::vector<char> send(static_cast<size_t>(per_rank_ * element));
  std::vector<char> all(here ? static_cast<size_t>(per_rank_ * world_size_ * element) : 0);
  const AlignedBuffer* buffers[3] = {&exp_avg_, &exp_avg_sq_, &max_exp_avg_sq_};
  for (size_t s = 0; s < slots.size(); ++s) {
    for (const Chunk& chunk : chunks_) {
      for (const Owned& o : chunk.owned) {
        std::memcpy(send.data() + (o.piece.position - rank_ * per_rank_) * element,
                    static_cast<const char*>(buffers[s]->data()) + o.state_offset * element,
                    static_cast<size_t>(o.piece.n * element));
      }
      check(MPI_Gather(send.data(), static_cast<int>(per_rank_), mpi_type(dtype_), all.data(),
                       static_cast<int>(per_rank_), mpi_type(dtype_), root, shard_.comm),
            "MPI_Gather of the optimiser state");
      if (!here) continue;
      for (const Piece& piece : chunk.pieces) {
        std::vector<double>& values = out.tensors[tensor_of[piece.param] + s].values;
        for (int64_t j = 0; j < piece.n; ++j) {
          const char* at = all.data() + (piece.position + j) * element;
          values[static_cast<size_t>(piece.offset + j)] =
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
    for (const Chunk& chunk : chunks_) {
      for (const Owned& o : chunk.owned) {
        for (int64_t j = 0; j < o.piece.n; ++j) {
          const double value =
              t_ == 0 ? 0.0
                      : tensors[o.piece.param][s]->values[static_cast<size_t>(o.piece.offset + j)];
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
