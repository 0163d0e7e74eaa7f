// A user's program written against both include paths of the installed package: the folders'
// headers (<tapegrad/nn/gpt.h>) and the deprecated forwarding ones (<tapegrad/ops/nn/gpt.h>).
#include <tapegrad/graph/dot.h>
#include <tapegrad/graph/safetensors.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/io/checkpoint.h>
#include <tapegrad/io/safetensors.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/ops/nn/gpt.h>
#include <tapegrad/optim/checkpoint.h>
#include <tapegrad/text/training.h>
#include <tapegrad/train/training.h>
#include <tapegrad/viz/dot.h>

#include <cstdio>

int main() {
  using namespace tapegrad;
  set_num_threads(1);
  manual_seed(123);
  nn::GPTConfig config{.vocab_size = 32,
                       .context_length = 8,
                       .emb_dim = 16,
                       .n_heads = 2,
                       .n_layers = 1,
                       .drop_rate = 0.0,
                       .qkv_bias = false};
  nn::GPTModel model(config);
  std::printf("include paths consumer: %lld parameters\n",
              static_cast<long long>(model.num_parameters()));
  return model.num_parameters() > 0 ? 0 : 1;
}
