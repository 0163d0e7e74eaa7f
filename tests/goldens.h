// The one reader of the suite's golden format (tests/goldens/golden_format.py writes it): one
// tensor a line, `name dtype shape v1 ... vn`, values as float.hex(), read exactly; or one text
// a line, `name txt text` (what torch or a program prints), or `name hex 48656c` (a text's bytes,
// for texts with NUL, CR or line separators); or a list of unsigned 64-bit integers,
// `name u64 n 0x...` (a generator's state, beyond a double's exact integers).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <tapegrad/graph/shape.h>

namespace tapegrad::testing {

struct GoldenTensor {
  std::string name;
  DType dtype = DType::Float64;  // f32 -> Float32; f64 and i64 -> Float64 (tapegrad has no ints)
  bool integer = false;          // written as i64: ids, indices, masks
  Shape shape;
  std::vector<double> values;  // exact: f32 values and small integers are doubles too
  bool is_text = false;        // a txt or hex record: `text` holds it, no shape or values
  std::string text;
  std::vector<uint64_t> u64;  // a u64 record's values (its shape is [n]; `values` stays empty)

  std::vector<int64_t> ints() const {
    std::vector<int64_t> out;
    for (double v : values) out.push_back(static_cast<int64_t>(v));
    return out;
  }
};

// A txt record's text: "\\n" was a newline, "\\\\" a backslash.
inline std::string unescape_golden_text(const std::string& written) {
  std::string out;
  for (size_t i = 0; i < written.size(); ++i) {
    if (written[i] == '\\' && i + 1 < written.size()) {
      out += written[i + 1] == 'n' ? '\n' : written[i + 1];
      ++i;
    } else {
      out += written[i];
    }
  }
  return out;
}

// The words of a text record ("warmup_cosine 5 20 0x1.99p-4 0x1.06p-10").
inline std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// Every record of a golden file, by name; `relative` is the path under tests/goldens/. `order`,
// when given, receives the names in file order (where the writer's order means something).
// Throws std::runtime_error naming the file and the record when the file is missing or a line is
// bad.
inline std::map<std::string, GoldenTensor> read_goldens(const std::string& relative,
                                                        std::vector<std::string>* order = nullptr) {
  const std::string path = std::string(TAPEGRAD_GOLDEN_DIR) + "/" + relative;
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot open golden file " + path);
  std::map<std::string, GoldenTensor> out;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    GoldenTensor g;
    std::string dtype, dims, token;
    in >> g.name >> dtype;
    if (dtype == "hex") {
      std::string hex;
      in >> hex;  // empty for an empty text
      if (hex.size() % 2 != 0) throw std::runtime_error(path + ": \"" + g.name + "\" has odd hex");
      g.is_text = true;
      for (size_t i = 0; i < hex.size(); i += 2) {
        g.text.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
      }
    } else if (dtype == "txt") {
      const size_t start = g.name.size() + 5;  // after "name txt "
      g.is_text = true;
      g.text = unescape_golden_text(line.size() > start ? line.substr(start) : "");
    } else {
      if (dtype != "f32" && dtype != "f64" && dtype != "i64" && dtype != "u64") {
        throw std::runtime_error(path + ": \"" + g.name + "\" has an unknown dtype " + dtype);
      }
      g.dtype = dtype == "f32" ? DType::Float32 : DType::Float64;
      g.integer = dtype == "i64" || dtype == "u64";
      in >> dims;
      std::vector<int64_t> shape;
      if (dims != "scalar") {
        std::istringstream dim_in(dims);
        while (std::getline(dim_in, token, ',')) shape.push_back(std::stoll(token));
      }
      g.shape = Shape(std::span<const int64_t>(shape));
      size_t count = 0;
      if (dtype == "u64") {
        while (in >> token) g.u64.push_back(std::stoull(token, nullptr, 16));
        count = g.u64.size();
      } else {
        // strtod reads float.hex()'s "0x1.8p+1", inf and nan exactly (iostream's >> does not).
        while (in >> token) g.values.push_back(std::strtod(token.c_str(), nullptr));
        count = g.values.size();
      }
      if (static_cast<int64_t>(count) != g.shape.numel()) {
        throw std::runtime_error(path + ": \"" + g.name + "\" has " + std::to_string(count) +
                                 " values for its shape");
      }
    }
    const std::string name = g.name;
    if (!out.emplace(name, std::move(g)).second) {
      throw std::runtime_error(path + ": \"" + name + "\" is written twice");
    }
    if (order != nullptr) order->push_back(name);
  }
  return out;
}

// A golden file read once for the whole test run.
class GoldenFile {
 public:
  explicit GoldenFile(const std::string& relative)
      : relative_(relative), tensors_(read_goldens(relative, &names_)) {}
  GoldenFile(const std::string& area, const std::string& file) : GoldenFile(area + "/" + file) {}

  const GoldenTensor& operator[](const std::string& name) const {
    const auto it = tensors_.find(name);
    if (it == tensors_.end()) {
      throw std::runtime_error("golden file " + relative_ + " has no \"" + name + "\"");
    }
    return it->second;
  }
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  const std::map<std::string, GoldenTensor>& tensors() const { return tensors_; }
  const std::vector<std::string>& names() const { return names_; }  // in file order

 private:
  std::string relative_;
  std::vector<std::string> names_;  // filled by read_goldens before tensors_ is initialised
  std::map<std::string, GoldenTensor> tensors_;
};

// The file under tests/goldens/, read at its first use.
inline const GoldenFile& golden_file(const std::string& relative) {
  static std::map<std::string, std::unique_ptr<GoldenFile>> cache;
  auto& slot = cache[relative];
  if (!slot) slot = std::make_unique<GoldenFile>(relative);
  return *slot;
}

}  // namespace tapegrad::testing
