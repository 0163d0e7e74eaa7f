// What a language model checks of its input ids before it records anything (GPTModel, Qwen3Model,
// Llama3Model), so a bad call is an Error naming the model and the ids' shape, never a read past
// an embedding table or a position table.
#pragma once

#include <cstdint>
#include <string>

#include <tapegrad/graph/ids.h>

namespace tapegrad::nn {

// Throws unless in_idx is [B, T], positions first_position .. first_position + T − 1 are below
// context_length, and every id is in [0, vocab_size). `model` names the model in the message
// ("GPTModel: in_idx [2, 9] has 9 tokens, more than context_length 8"); a first_position past 0
// (a KV cache's) says to reset the cache.
void check_token_ids(const std::string& model, const Ids& in_idx, int64_t context_length,
                     int64_t vocab_size, int64_t first_position = 0);

}  // namespace tapegrad::nn
