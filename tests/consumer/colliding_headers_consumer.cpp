// A user's program whose own include path holds headers named like tapegrad's (nn/layers.h,
// graph/tensor.h, ... under user_include/, written by run_consumer_test.cmake, each defining a
// macro): tapegrad's installed headers include each other as <tapegrad/...>, so they still
// find their own, and the user's headers are the ones found under the user's names.
#include <tapegrad/tapegrad.h>

#include <cstdio>

#include "graph/tensor.h"  // the user's own
#include "nn/layers.h"     // the user's own

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
  std::printf("colliding headers consumer: %lld parameters, user headers %d %d\n",
              static_cast<long long>(model.num_parameters()), USER_GRAPH_TENSOR_H,
              USER_NN_LAYERS_H);
  return model.num_parameters() > 0 ? 0 : 1;
}
