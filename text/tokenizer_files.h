// Reading tokenizers' files (internal to text/): whole files, JSON, Hugging Face's merges.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tapegrad::detail {

// The file's bytes; Error "<who>: cannot open the <what> file '<path>' (<hint>)" when unreadable.
std::string read_tokenizer_file(const std::filesystem::path& path, std::string_view who,
                                std::string_view what, std::string_view hint);
// The file's JSON; Error "<who>: '<path>' is not JSON: ..." otherwise.
nlohmann::json parse_tokenizer_json(const std::string& text, const std::filesystem::path& path,
                                    std::string_view who);
// A tokenizer.json's BPE merges ("a b" strings, or pairs in newer files), in priority order;
// Error naming `who` and the file when it has no BPE model or a merge is neither form.
std::vector<std::pair<std::string, std::string>> hf_bpe_merges(const nlohmann::json& file,
                                                               const std::filesystem::path& path,
                                                               std::string_view who);

}  // namespace tapegrad::detail
