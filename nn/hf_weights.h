// Hugging Face checkpoints of Qwen3 and Llama 3.2 loaded into nn::Qwen3Model / nn::Llama3Model,
// as the book's load_weights_into_qwen (pkg/llms_from_scratch/qwen3.py) and
// load_weights_into_llama (ch05/07_gpt_to_llama) map them, and the models' configs by name.
//
// `path` is a model.safetensors file, a model.safetensors.index.json (HF's sharded layout:
// {"metadata": {...}, "weight_map": {tensor: shard file}}, the shards next to it), or a directory
// holding either (the index is preferred). Every file is memory-mapped; its pages are dropped
// from memory as they are copied, so the peak stays near the model's own size.
//
// Hugging Face name (N a block)                       -> the book's name
//   model.embed_tokens.weight [V, C]                  -> tok_emb.weight
//   model.layers.N.self_attn.{q,k,v,o}_proj.weight    -> trf_blocks.N.att.{W_query, W_key,
//                                                        W_value, out_proj}.weight
//   model.layers.N.self_attn.{q,k}_norm.weight [D]    -> trf_blocks.N.att.{q,k}_norm.scale (Qwen3)
//   model.layers.N.input_layernorm.weight [C]         -> trf_blocks.N.norm1.scale (Llama: .weight)
//   model.layers.N.post_attention_layernorm.weight    -> trf_blocks.N.norm2.scale (Llama: .weight)
//   model.layers.N.mlp.{gate,up,down}_proj.weight     -> trf_blocks.N.ff.{fc1, fc2, fc3}.weight
//   model.norm.weight [C]                             -> final_norm.scale (Llama: .weight)
//   lm_head.weight [V, C]                             -> out_head.weight; when the file has none
//                                                        (tied embeddings: Qwen3 0.6B, Llama 3.2
//                                                        1B and 3B), model.embed_tokens.weight
// Tensors may be F32, BF16, F16 or F64 (converted exactly to float32, or float64 for a float64
// model). out_head gets its own copy of a tied embedding: use_bf16_weights (nn/layers.h) then
// converts the head alone, and a bf16 file's weights come back bit for bit as bfloat16.
//
// Everything is checked before any parameter is written, so on an Error the model is unchanged.
// The message names the function, the file and the tensor: a path that is neither, an index
// whose shard file is missing or does not hold a tensor the index puts there, a tensor missing
// from the checkpoint, a shape that does not fit the model's config (both shapes), a tensor the
// model has no place for (a block beyond n_layers), another dtype. Older files'
// "*.rotary_emb.inv_freq" buffers are ignored.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <tapegrad/nn/llama3.h>
#include <tapegrad/nn/qwen3.h>

namespace tapegrad::nn {

void load_qwen3_weights(Qwen3Model& model, const std::string& path);
void load_llama3_weights(Llama3Model& model, const std::string& path);

// Inference with bfloat16 weights (use_bf16_weights), loaded straight into them: the model of
// `cfg` built under Bf16LoadGuard (no float32 linear weights, nothing drawn), then every Linear's
// weight filled from its tensor as bfloat16 (BF16 bits copied; F32, F16 and F64 read exactly and
// rounded to nearest even, as torch's .to(torch.bfloat16)), the embedding and norms in float32 as
// load_qwen3_weights does. The same model, bit for bit, as loading in float32 and then calling
// use_bf16_weights, without the float32 copy: the peak memory is about the bfloat16 model's.
// Throws what load_qwen3_weights / load_llama3_weights throw (the name in the message is these
// functions').
std::unique_ptr<Qwen3Model> load_qwen3_model_bf16(const Qwen3Config& cfg, const std::string& path);
std::unique_ptr<Llama3Model> load_llama3_model_bf16(const Llama3Config& cfg,
                                                    const std::string& path);

// The book's configs by Hugging Face's model names, case-insensitively: "qwen3-0.6b" (also
// "Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B-Base"), "qwen3-1.7b", "qwen3-4b", "qwen3-8b", "qwen3-14b",
// "qwen3-32b"; "llama3.2-1b" (also "meta-llama/Llama-3.2-1B", "-Instruct"), "llama3.2-3b".
// Throws Error listing the names on anything else.
Qwen3Config qwen3_config(std::string_view name);
Llama3Config llama3_config(std::string_view name);

// The Qwen3Config of a Hugging Face config.json (Qwen3ForCausalLM's fields vocab_size,
// max_position_embeddings, hidden_size, num_attention_heads, num_hidden_layers,
// intermediate_size, head_dim, num_key_value_heads, rope_theta; qk_norm is Qwen3's). `path` is
// the file or its directory. Throws Error naming the file and the field when one is missing or
// not a number, and what check_config rejects.
Qwen3Config qwen3_config_from_json(const std::string& path);

// The Llama3Config of a Hugging Face config.json (LlamaForCausalLM's fields vocab_size,
// max_position_embeddings, hidden_size, num_attention_heads, num_hidden_layers,
// intermediate_size, num_key_value_heads, rope_theta, head_dim when present, and rope_scaling's
// factor, low_freq_factor, high_freq_factor and original_max_position_embeddings, rope_type
// "llama3"). As the book does for Llama 3.2, the model runs a shorter context than the trained
// one: context_length is `context_length` (or max_position_embeddings, if smaller) and
// orig_context_length max_position_embeddings, so rope_theta is rescaled by their ratio. `path`
// is the file or its directory. Throws Error naming the file and the field when one is missing,
// not a number, or does not fit the book's model, and what check_config rejects.
Llama3Config llama3_config_from_json(const std::string& path, int64_t context_length = 8192);

}  // namespace tapegrad::nn
