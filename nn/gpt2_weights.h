// Pretrained GPT-2: OpenAI's configurations and loading a Hugging Face GPT-2 checkpoint into
// nn::GPTModel, as the book's load_weights_into_gpt (ch05/01_main-chapter-code/gpt_generate.py).
//
// The file is Hugging Face's model.safetensors for GPT2Model / GPT2LMHeadModel, names optionally
// prefixed "transformer.":
//   wte.weight [V, C] -> tok_emb.weight, and out_head.weight (GPT-2 ties its head to wte; a
//                        "lm_head.weight" in the file is used instead when present)
//   wpe.weight [T, C] -> pos_emb.weight
//   h.N.ln_1.{weight,bias} [C]          -> trf_blocks.N.norm1.{scale,shift}
//   h.N.attn.c_attn.weight [C, 3C]      -> trf_blocks.N.att.W_{query,key,value}.weight, each
//                                          [C, C]: HF's Conv1D computes x @ W + b, so its weight
//                                          is nn.Linear's transposed, q|k|v side by side
//   h.N.attn.c_attn.bias [3C]           -> trf_blocks.N.att.W_{query,key,value}.bias
//   h.N.attn.c_proj.{weight,bias}       -> trf_blocks.N.att.out_proj (weight transposed)
//   h.N.ln_2.{weight,bias}              -> trf_blocks.N.norm2.{scale,shift}
//   h.N.mlp.c_fc.{weight,bias} [C, 4C]  -> trf_blocks.N.ff.layers.0 (weight transposed)
//   h.N.mlp.c_proj.{weight,bias} [4C,C] -> trf_blocks.N.ff.layers.2 (weight transposed)
//   ln_f.{weight,bias}                  -> final_norm.{scale,shift}
// The attention buffers "h.N.attn.bias" and "h.N.attn.masked_bias" of older files are ignored.
// Tensors may be F32, F64, F16 or BF16; they are converted to the model's dtype.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <tapegrad/nn/gpt.h>

namespace tapegrad::nn {

// OpenAI's four GPT-2 sizes with the book's settings for pretrained weights (gpt_generate.py:
// context 1024, qkv_bias true, drop_rate 0.0 since the weights are used for inference).
inline constexpr GPTConfig GPT2_CONFIG_124M{50257, 1024, 768, 12, 12, 0.0, true};    // small
inline constexpr GPTConfig GPT2_CONFIG_355M{50257, 1024, 1024, 16, 24, 0.0, true};   // medium
inline constexpr GPTConfig GPT2_CONFIG_774M{50257, 1024, 1280, 20, 36, 0.0, true};   // large
inline constexpr GPTConfig GPT2_CONFIG_1558M{50257, 1024, 1600, 25, 48, 0.0, true};  // xl

// The configuration of a GPT-2 size by name: the book's "gpt2-small (124M)", Hugging Face's
// "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", or "124M", "355M", "774M", "1558M", or
// "small", "medium", "large", "xl". Throws Error listing the names on anything else.
GPTConfig gpt2_config(std::string_view name);

// The configuration of the checkpoint at `path`, read from its tensor shapes: vocab_size and
// emb_dim from wte, context_length from wpe, n_layers from the h.N blocks present, qkv_bias true,
// drop_rate 0.0. n_heads is `n_heads` when positive, else that of `model_name` (gpt2_config's
// names; its emb_dim and n_layers must then match the file), else GPT-2's for emb_dim (768 -> 12,
// 1024 -> 16, 1280 -> 20, 1600 -> 25). Throws Error naming the file when it is not a safetensors
// file, has no wte/wpe, has gaps in its h.N blocks, or n_heads cannot be found.
GPTConfig infer_gpt2_config(const std::string& path, std::string_view model_name = "",
                            int64_t n_heads = 0);

// Copies the checkpoint at `path` into `model` (the book's load_weights_into_gpt). Every tensor
// is read and checked into a staging state_dict first and then loaded through
// Module::load_state_dict, so on any Error (not a safetensors file, a missing tensor, a shape
// that does not fit model.config(), an unexpected tensor such as a block beyond n_layers, an
// unsupported dtype) the model is left unchanged; the message names the file, the tensor and
// both shapes.
void load_gpt2_weights(GPTModel& model, const std::string& path);

}  // namespace tapegrad::nn
