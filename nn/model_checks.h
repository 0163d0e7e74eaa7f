// What the language models (GPTModel, Qwen3Model, Llama3Model) check of their configs when built
// and of their input ids before they record anything, so a bad call is an Error naming the config
// field or the model and the ids' shape, never a read past an embedding or position table.
#pragma once

#include <cstdint>
#include <string>

#include <tapegrad/graph/ids.h>

namespace tapegrad::nn {

// Throws `<config>: <field> <value> must be positive` unless value > 0 ("GPTConfig", "n_heads").
void check_positive(const char* config, const char* field, int64_t value);

// Throws unless in_idx is [B, T], positions first_position .. first_position + T − 1 are below
// context_length, and every id is in [0, vocab_size). `model` names the model in the message
// ("GPTModel: in_idx [2, 9] has 9 tokens, more than context_length 8"); a first_position past 0
// (a KV cache's) says to reset the cache.
void check_token_ids(const std::string& model, const Ids& in_idx, int64_t context_length,
                     int64_t vocab_size, int64_t first_position = 0);

}  // namespace tapegrad::nn
