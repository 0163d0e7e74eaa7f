// Reading tokenizers' files (text/tokenizer_files.h).
#include <tapegrad/text/tokenizer_files.h>

#include <fstream>
#include <sstream>

#include <tapegrad/graph/error.h>

namespace tapegrad::detail {

using json = nlohmann::json;

std::string read_tokenizer_file(const std::filesystem::path& path, std::string_view who,
                                std::string_view what, std::string_view hint) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(std::string(who) + ": cannot open the " + std::string(what) + " file '" +
                path.string() + "' (" + std::string(hint) + ")");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

json parse_tokenizer_json(const std::string& text, const std::filesystem::path& path,
                          std::string_view who) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw Error(std::string(who) + ": '" + path.string() + "' is not JSON: " + e.what());
  }
}

std::vector<std::pair<std::string, std::string>> hf_bpe_merges(const json& file,
                                                               const std::filesystem::path& path,
                                                               std::string_view who) {
  auto fail = [&](const std::string& why) {
    throw Error(std::string(who) + ": '" + path.string() + "' " + why);
  };
  const json* model = file.is_object() && file.contains("model") ? &file["model"] : nullptr;
  if (!model || !model->is_object() || model->value("type", "") != "BPE" ||
      !model->contains("vocab") || !(*model)["vocab"].is_object() || !model->contains("merges") ||
      !(*model)["merges"].is_array()) {
    fail("has no BPE model with vocab and merges");
  }
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve((*model)["merges"].size());
  for (const json& merge : (*model)["merges"]) {
    if (merge.is_string()) {  // "a b"
      const std::string text = merge.get<std::string>();
      const size_t space = text.find(' ');
      if (space == std::string::npos) fail("has a merge '" + text + "' that is not 'a b'");
      merges.emplace_back(text.substr(0, space), text.substr(space + 1));
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string()) {
      merges.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());  // newer files
    } else {
      fail("has a merge that is neither 'a b' nor a pair of strings");
    }
  }
  return merges;
}

}  // namespace tapegrad::detail
