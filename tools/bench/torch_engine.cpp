// The LibTorch comparator, built as a plugin the benchmark loads only in the processes that run
// it: the same steps as tapegrad's (same init, same data, same ops), written as the book writes
// them: the attention step (tgb_torch_*), the GPT training step (tgb_torch_gpt_*) and the
// convolution workloads (tgb_torch_cnn_*).
#include <dlfcn.h>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "tools/bench/workload.h"

namespace {

// LibTorch's own setting covers its OpenMP pool; OpenBLAS (when it is the BLAS) has a pool of
// its own that would otherwise use every core. Looked up at run time: the reference BLAS has none.
void limit_blas_threads(int threads) {
  using SetThreads = void (*)(int);
  if (auto f = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
    f(threads);
  }
}

void scale_in_place(torch::Tensor& t, double factor) {
  // float32 values times the factor rounded to float32, as tapegrad's engine does it.
  const float f = static_cast<float>(factor);
  float* p = t.data_ptr<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] *= f;
}

double sum_of(const torch::Tensor& t) {
  const float* p = t.data_ptr<float>();
  double s = 0;
  for (int64_t i = 0; i < t.numel(); ++i) s += static_cast<double>(p[i]);
  return s;
}

// --- the book's GPTModel in torch::nn --------------------------------------------------------
// Sebastian Raschka's "Build a Large Language Model (From Scratch)", chapter 4 (ch04/
// 01_main-chapter-code/gpt.py, Apache License 2.0), module for module as tools/bench/
// torch_gpt.py writes it in Python: the modules are constructed (and their parameters drawn from
// the default generator) in the book's order, so torch::manual_seed(123) gives the book's weights,
// and registered in that order, so parameters() lists them as Python does.
namespace book {

using torch::Tensor;

struct MultiHeadAttentionImpl : torch::nn::Module {
  MultiHeadAttentionImpl(int64_t d_in, int64_t d_out, int64_t context_length, double dropout_p,
                         int64_t num_heads, bool qkv_bias)
      : d_out(d_out), num_heads(num_heads), head_dim(d_out / num_heads) {
    TORCH_CHECK(d_out % num_heads == 0, "d_out must be divisible by num_heads");
    W_query = register_module(
        "W_query", torch::nn::Linear(torch::nn::LinearOptions(d_in, d_out).bias(qkv_bias)));
    W_key = register_module(
        "W_key", torch::nn::Linear(torch::nn::LinearOptions(d_in, d_out).bias(qkv_bias)));
    W_value = register_module(
        "W_value", torch::nn::Linear(torch::nn::LinearOptions(d_in, d_out).bias(qkv_bias)));
    out_proj = register_module("out_proj", torch::nn::Linear(d_out, d_out));
    dropout = register_module("dropout", torch::nn::Dropout(dropout_p));
    mask = register_buffer("mask", torch::triu(torch::ones({context_length, context_length}), 1));
  }

  Tensor forward(const Tensor& x) {  // x: [B, T, C]
    const int64_t b = x.size(0), t = x.size(1);
    Tensor k = W_key(x);  // [B, T, C]
    Tensor q = W_query(x);
    Tensor v = W_value(x);
    k = k.view({b, t, num_heads, head_dim}).transpose(1, 2);  // [B, H, T, D]
    v = v.view({b, t, num_heads, head_dim}).transpose(1, 2);
    q = q.view({b, t, num_heads, head_dim}).transpose(1, 2);
    Tensor scores = q.matmul(k.transpose(2, 3));  // [B, H, T, T]
    scores.masked_fill_(mask.to(torch::kBool).slice(0, 0, t).slice(1, 0, t),
                        -std::numeric_limits<double>::infinity());
    Tensor weights = torch::softmax(scores / std::sqrt(static_cast<double>(k.size(-1))), -1);
    weights = dropout(weights);
    Tensor ctx = weights.matmul(v).transpose(1, 2);  // [B, T, H, D]
    ctx = ctx.contiguous().view({b, t, d_out});      // [B, T, C]
    return out_proj(ctx);
  }

  int64_t d_out, num_heads, head_dim;
  torch::nn::Linear W_query{nullptr}, W_key{nullptr}, W_value{nullptr}, out_proj{nullptr};
  torch::nn::Dropout dropout{nullptr};
  Tensor mask;
};
TORCH_MODULE(MultiHeadAttention);

struct LayerNormImpl : torch::nn::Module {
  explicit LayerNormImpl(int64_t emb_dim)
      : scale(register_parameter("scale", torch::ones(emb_dim))),
        shift(register_parameter("shift", torch::zeros(emb_dim))) {}

  Tensor forward(const Tensor& x) {  // [..., C]
    const Tensor mean = x.mean(-1, /*keepdim=*/true);
    const Tensor var = x.var(-1, /*unbiased=*/false, /*keepdim=*/true);
    return scale * ((x - mean) / torch::sqrt(var + eps)) + shift;
  }

  double eps = 1e-5;
  Tensor scale, shift;
};
TORCH_MODULE(LayerNorm);

// The book's tanh approximation, op for op (torch.tensor(2.0 / torch.pi) is float32).
struct GELUImpl : torch::nn::Module {
  Tensor forward(const Tensor& x) {
    return 0.5 * x *
           (1 + torch::tanh(torch::sqrt(torch::tensor(2.0 / M_PI, torch::kFloat32)) *
                            (x + 0.044715 * torch::pow(x, 3))));
  }
};
TORCH_MODULE(GELU);

struct FeedForwardImpl : torch::nn::Module {
  // The layers are appended one by one: as arguments of one call, C++ would construct (and
  // draw the weights of) the two Linears in an unspecified order.
  explicit FeedForwardImpl(int64_t emb_dim) {
    layers->push_back(torch::nn::Linear(emb_dim, 4 * emb_dim));  // [B, T, C] -> [B, T, 4C]
    layers->push_back(GELU());
    layers->push_back(torch::nn::Linear(4 * emb_dim, emb_dim));  // [B, T, 4C] -> [B, T, C]
    register_module("layers", layers);
  }

  Tensor forward(const Tensor& x) { return layers->forward(x); }  // [B, T, C]

  torch::nn::Sequential layers;
};
TORCH_MODULE(FeedForward);

struct TransformerBlockImpl : torch::nn::Module {
  explicit TransformerBlockImpl(const tgb_gpt_config& cfg)
      : att(register_module(
            "att", MultiHeadAttention(cfg.emb_dim, cfg.emb_dim, cfg.context_length, cfg.drop_rate,
                                      cfg.n_heads, cfg.qkv_bias != 0))),
        ff(register_module("ff", FeedForward(cfg.emb_dim))),
        norm1(register_module("norm1", LayerNorm(cfg.emb_dim))),
        norm2(register_module("norm2", LayerNorm(cfg.emb_dim))),
        drop_resid(register_module("drop_resid", torch::nn::Dropout(cfg.drop_rate))) {}

  Tensor forward(Tensor x) {  // [B, T, C]
    Tensor shortcut = x;
    x = drop_resid(att(norm1(x))) + shortcut;
    shortcut = x;
    return drop_resid(ff(norm2(x))) + shortcut;
  }

  MultiHeadAttention att;
  FeedForward ff;
  LayerNorm norm1, norm2;
  torch::nn::Dropout drop_resid;
};
TORCH_MODULE(TransformerBlock);

struct GPTModelImpl : torch::nn::Module {
  explicit GPTModelImpl(const tgb_gpt_config& cfg)
      : tok_emb(register_module("tok_emb", torch::nn::Embedding(cfg.vocab_size, cfg.emb_dim))),
        pos_emb(register_module("pos_emb", torch::nn::Embedding(cfg.context_length, cfg.emb_dim))),
        drop_emb(register_module("drop_emb", torch::nn::Dropout(cfg.drop_rate))),
        trf_blocks(register_module("trf_blocks", torch::nn::Sequential())),
        final_norm(nullptr),
        out_head(nullptr) {
    for (int64_t i = 0; i < cfg.n_layers; ++i) trf_blocks->push_back(TransformerBlock(cfg));
    final_norm = register_module("final_norm", LayerNorm(cfg.emb_dim));
    out_head = register_module(
        "out_head",
        torch::nn::Linear(torch::nn::LinearOptions(cfg.emb_dim, cfg.vocab_size).bias(false)));
  }

  Tensor forward(const Tensor& in_idx) {  // [B, T] token ids
    const int64_t t = in_idx.size(1);
    Tensor x = tok_emb(in_idx) + pos_emb(torch::arange(t, in_idx.options()));  // [B, T, C]
    x = trf_blocks->forward(drop_emb(x));                                      // [B, T, C]
    return out_head(final_norm(x));                                            // [B, T, V]
  }

  torch::nn::Embedding tok_emb, pos_emb;
  torch::nn::Dropout drop_emb;
  torch::nn::Sequential trf_blocks;
  LayerNorm final_norm;
  torch::nn::Linear out_head;
};
TORCH_MODULE(GPTModel);

}  // namespace book

// The attention step: the book's MultiHeadAttention (training mode, dropout p), mean(out²),
// backward, SGD, as tapegrad's engine runs nn::MultiHeadAttention.
struct Engine {
  tgb_shape s{};
  torch::Tensor x;
  book::MultiHeadAttention mha{nullptr};
  std::unique_ptr<torch::optim::SGD> sgd;
};

// One GPT training step as torch_gpt.py's step(): forward, cross-entropy over the flattened
// logits, backward, clip_grad_norm_(1.0), AdamW.
struct GptEngine {
  explicit GptEngine(const tgb_gpt_config& cfg) : model(nullptr) {
    torch::manual_seed(123);
    model = book::GPTModel(cfg);
    model->train();
    optimizer = std::make_unique<torch::optim::AdamW>(
        model->parameters(), torch::optim::AdamWOptions(cfg.lr).weight_decay(cfg.weight_decay));
    // torch.randint(0, V, (B, T + 1), generator=torch.Generator().manual_seed(123)): one fixed
    // batch, inputs and next-token targets.
    const torch::Tensor tokens = torch::randint(0, cfg.vocab_size, {cfg.batch, cfg.t + 1},
                                                at::detail::createCPUGenerator(123));
    inputs = tokens.slice(1, 0, cfg.t);       // [B, T]
    targets = tokens.slice(1, 1, cfg.t + 1);  // [B, T]
  }

  double step() {
    optimizer->zero_grad();
    const torch::Tensor logits = model(inputs);  // [B, T, V]
    const torch::Tensor loss =
        torch::nn::functional::cross_entropy(logits.flatten(0, 1), targets.flatten());
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    optimizer->step();
    return loss.item<double>();
  }

  book::GPTModel model;
  std::unique_ptr<torch::optim::AdamW> optimizer;
  torch::Tensor inputs, targets;
};

// The convolution workloads as tools/bench/torch_cnn.py writes them (cnn_workload.cpp says what
// each step is): manual_seed(123) before the layers, which are constructed one by one in the
// script's order so they draw torch's init; the inputs torch.rand from a Generator seeded 123, the
// labels torch.randint from it next. float32 NCHW on the CPU: ATen sends these convolutions to
// its oneDNN (mkldnn) path. channels_last: the model and inputs in NHWC, the layout oneDNN's
// kernels want, so no reorder around each convolution (torch's advice for CNNs on the CPU); the
// numbers are the same up to rounding.
struct CnnEngine {
  CnnEngine(const std::string& workload, bool channels_last) : resnet(workload == "conv2d-resnet") {
    const auto format =
        channels_last ? torch::MemoryFormat::ChannelsLast : torch::MemoryFormat::Contiguous;
    at::Generator gen = at::detail::createCPUGenerator(123);
    torch::manual_seed(123);
    if (resnet) {
      conv = torch::nn::Conv2d(torch::nn::Conv2dOptions(64, 64, 3).padding(1));
      x = torch::rand({8, 64, 56, 56}, gen).contiguous(format).requires_grad_();
      params = conv->parameters();
    } else {
      // Appended one by one: as arguments of one call, C++ would construct (and draw the
      // weights of) the layers in an unspecified order.
      model = torch::nn::Sequential();
      model->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 3).padding(1)));
      model->push_back(torch::nn::ReLU());
      model->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)));
      model->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 3).padding(1)));
      model->push_back(torch::nn::ReLU());
      model->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)));
      model->push_back(torch::nn::Flatten());
      model->push_back(torch::nn::Linear(32 * 7 * 7, 10));
      images = torch::rand({32, 1, 28, 28}, gen).contiguous(format);
      labels = torch::randint(0, 10, {32}, gen, torch::kLong);
      params = model->parameters();
      optimizer =
          std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(0.01).momentum(0.9));
    }
    if (channels_last) {
      torch::NoGradGuard no_grad;
      for (torch::Tensor& p : params) {
        if (p.dim() == 4) p.set_data(p.contiguous(format));
      }
    }
  }

  double step() {
    if (resnet) {
      if (x.grad().defined()) x.mutable_grad().zero_();
      conv->zero_grad();
      const torch::Tensor loss = conv(x).mean();
      loss.backward();
      return loss.item<double>();
    }
    optimizer->zero_grad();
    const torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(images), labels);
    loss.backward();
    optimizer->step();
    return loss.item<double>();
  }

  // Σ of the parameters and the input, as torch_cnn.py's checksum.
  double checksum() const {
    torch::NoGradGuard no_grad;
    double sum = 0;
    for (const torch::Tensor& p : params) sum += p.to(torch::kFloat64).sum().item<double>();
    return sum + (resnet ? x : images).to(torch::kFloat64).sum().item<double>();
  }

  bool resnet;
  torch::nn::Conv2d conv{nullptr};
  torch::nn::Sequential model{nullptr};
  torch::Tensor x, images, labels;
  std::vector<torch::Tensor> params;
  std::unique_ptr<torch::optim::SGD> optimizer;
};

}  // namespace

extern "C" {

void* tgb_torch_create(const tgb_shape* shape, int threads) {
  torch::set_num_threads(threads);
  limit_blas_threads(threads);
  auto e = std::make_unique<Engine>();
  e->s = *shape;
  const tgb_shape& s = e->s;
  // The module first (its own init draws), then the benchmark's weights over it, in the order
  // tapegrad's engine draws them: x, W_query, W_key, W_value ([d_out, d_in]), out_proj's weight
  // and bias; scaled when the workload says so.
  e->mha = book::MultiHeadAttention(s.d_in, s.d_out, s.t, s.dropout, s.heads, false);
  e->mha->train();
  torch::manual_seed(123);
  e->x = torch::rand({s.b, s.t, s.d_in});
  const std::vector<torch::Tensor> params{e->mha->W_query->weight, e->mha->W_key->weight,
                                          e->mha->W_value->weight, e->mha->out_proj->weight,
                                          e->mha->out_proj->bias};
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < params.size(); ++i) {
      torch::Tensor r = torch::rand(params[i].sizes());
      if (s.scaled) {
        const double n = static_cast<double>(i < 3 ? s.d_in : s.d_out);
        scale_in_place(r, 1.0 / std::sqrt(n));
      }
      params[i].copy_(r);
    }
  }
  e->sgd = std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(1e-3));
  return e.release();
}

double tgb_torch_checksum(void* engine) {
  auto& e = *static_cast<Engine*>(engine);
  torch::NoGradGuard no_grad;
  double sum = sum_of(e.x);
  for (const torch::Tensor& p :
       {e.mha->W_query->weight, e.mha->W_key->weight, e.mha->W_value->weight,
        e.mha->out_proj->weight, e.mha->out_proj->bias}) {
    sum += sum_of(p);
  }
  return sum;
}

double tgb_torch_step(void* engine) {
  auto& e = *static_cast<Engine*>(engine);
  e.sgd->zero_grad();
  torch::Tensor out = e.mha(e.x);  // [B, T, d_out]
  torch::Tensor loss = (out * out).mean();
  loss.backward();
  e.sgd->step();
  return loss.item<double>();
}

void tgb_torch_destroy(void* engine) {
  delete static_cast<Engine*>(engine);
}

void* tgb_torch_gpt_create(const tgb_gpt_config* cfg, int threads) {
  torch::set_num_threads(threads);
  limit_blas_threads(threads);
  return new GptEngine(*cfg);
}

// Σ over the parameters of each one's float64 sum, as torch_gpt.py computes it.
double tgb_torch_gpt_checksum(void* engine) {
  torch::NoGradGuard no_grad;
  double sum = 0;
  for (const torch::Tensor& p : static_cast<GptEngine*>(engine)->model->parameters()) {
    sum += p.to(torch::kFloat64).sum().item<double>();
  }
  return sum;
}

double tgb_torch_gpt_step(void* engine) {
  return static_cast<GptEngine*>(engine)->step();
}

void tgb_torch_gpt_destroy(void* engine) {
  delete static_cast<GptEngine*>(engine);
}

// workload: "conv2d-resnet" or "cnn-step"; channels_last: NHWC model and inputs (CnnEngine).
void* tgb_torch_cnn_create(const char* workload, int channels_last, int threads) {
  torch::set_num_threads(threads);
  limit_blas_threads(threads);
  return new CnnEngine(workload, channels_last != 0);
}

double tgb_torch_cnn_checksum(void* engine) {
  return static_cast<CnnEngine*>(engine)->checksum();
}

double tgb_torch_cnn_step(void* engine) {
  return static_cast<CnnEngine*>(engine)->step();
}

void tgb_torch_cnn_destroy(void* engine) {
  delete static_cast<CnnEngine*>(engine);
}

// GFLOP/s of torch::mm on n x n float32 matrices: the best of `reps` timed products.
double tgb_torch_gemm_gflops(int64_t n, int reps, int threads) {
  torch::set_num_threads(threads);
  limit_blas_threads(threads);
  torch::manual_seed(1);
  torch::Tensor a = torch::rand({n, n}), b = torch::rand({n, n}), c = torch::empty({n, n});
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    torch::mm_out(c, a, b);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0 && sec < best) best = sec;  // the first is a warm-up
  }
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / best /
         1e9;
}

// "LibTorch 1.13.1, BLAS: OpenBLAS 0.3.21 ... (core Haswell)" or the reference BLAS.
const char* tgb_torch_info() {
  static std::string info;
  using Str = char* (*)();
  std::string blas = "the reference BLAS (no OpenBLAS loaded)";
  if (auto config = reinterpret_cast<Str>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) {
    blas = config();
    if (auto core = reinterpret_cast<Str>(dlsym(RTLD_DEFAULT, "openblas_get_corename"))) {
      blas += std::string(" (kernels: ") + core() + ")";
    }
  }
  info = std::string("LibTorch ") + TORCH_VERSION + ", BLAS: " + blas;
  return info.c_str();
}

}  // extern "C"
