// Leaf tensors: constants from data, filled tensors, inputs that require grad, and detach.
#include <tapegrad/graph/factory.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/random.h>

namespace tapegrad {

namespace {
Tensor leaf_from_doubles(const Shape& shape, std::span<const double> values, DType dtype,
                         bool requires_grad) {
  if (static_cast<int64_t>(values.size()) != shape.numel()) {
    throw Error("tensor: shape " + shape.str() + " holds " + std::to_string(shape.numel()) +
                " values, got " + std::to_string(values.size()));
  }
  Tape& tape = current_tape();
  Tensor t = tape.leaf(shape, dtype, nullptr, requires_grad);
  from_doubles(values, tape.node(t.id()).value, dtype);
  return t;
}
}  // namespace

Tensor tensor(std::initializer_list<double> values, DType dtype) {
  return leaf_from_doubles(Shape{static_cast<int64_t>(values.size())}, values, dtype, false);
}

Tensor tensor(std::initializer_list<std::initializer_list<double>> rows, DType dtype) {
  const int64_t cols = rows.size() == 0 ? 0 : static_cast<int64_t>(rows.begin()->size());
  std::vector<double> flat;
  for (const auto& row : rows) {
    if (static_cast<int64_t>(row.size()) != cols) {
      throw Error("tensor: rows of different lengths (" + std::to_string(cols) + " and " +
                  std::to_string(row.size()) + ")");
    }
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return leaf_from_doubles(Shape{static_cast<int64_t>(rows.size()), cols}, flat, dtype, false);
}

Tensor tensor(std::initializer_list<std::initializer_list<std::initializer_list<double>>> blocks,
              DType dtype) {
  const int64_t rows = blocks.size() == 0 ? 0 : static_cast<int64_t>(blocks.begin()->size());
  const int64_t cols = rows == 0 ? 0 : static_cast<int64_t>(blocks.begin()->begin()->size());
  std::vector<double> flat;
  for (const auto& block : blocks) {
    if (static_cast<int64_t>(block.size()) != rows) throw Error("tensor: ragged nested lists");
    for (const auto& row : block) {
      if (static_cast<int64_t>(row.size()) != cols) throw Error("tensor: ragged nested lists");
      flat.insert(flat.end(), row.begin(), row.end());
    }
  }
  return leaf_from_doubles(Shape{static_cast<int64_t>(blocks.size()), rows, cols}, flat, dtype,
                           false);
}

Tensor scalar(double value, DType dtype) {
  return leaf_from_doubles(Shape{}, std::span<const double>(&value, 1), dtype, false);
}

Tensor from_values(const Shape& shape, std::span<const double> values, DType dtype,
                   bool requires_grad) {
  return leaf_from_doubles(shape, values, dtype, requires_grad);
}

Tensor from_data(const Shape& shape, std::span<const float> values, bool requires_grad) {
  if (static_cast<int64_t>(values.size()) != shape.numel()) {
    throw Error("from_data: shape " + shape.str() + " holds " + std::to_string(shape.numel()) +
                " values, got " + std::to_string(values.size()));
  }
  return current_tape().leaf(shape, DType::Float32, values.data(), requires_grad);
}

Tensor from_data(const Shape& shape, std::span<const double> values, bool requires_grad) {
  if (static_cast<int64_t>(values.size()) != shape.numel()) {
    throw Error("from_data: shape " + shape.str() + " holds " + std::to_string(shape.numel()) +
                " values, got " + std::to_string(values.size()));
  }
  return current_tape().leaf(shape, DType::Float64, values.data(), requires_grad);
}

Tensor zeros(const Shape& shape, DType dtype) {
  return current_tape().leaf(shape, dtype, nullptr, false);
}

Tensor ones(const Shape& shape, DType dtype) {
  return full(shape, 1.0, dtype);
}

Tensor full(const Shape& shape, double value, DType dtype) {
  Tape& tape = current_tape();
  // `shape` may be another node's (zeros(x.shape())), which appending the leaf can move: read
  // the size from the new leaf.
  Tensor t = tape.leaf(shape, dtype, nullptr, false);
  void* out = tape.node(t.id()).value;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DType::Float32) {
      static_cast<float*>(out)[i] = static_cast<float>(value);
    } else {
      static_cast<double*>(out)[i] = value;
    }
  }
  return t;
}

Tensor zeros_like(const Tensor& x) {
  return zeros(Shape(x.shape()), x.dtype());
}

Tensor ones_like(const Tensor& x) {
  return full(Shape(x.shape()), 1.0, x.dtype());
}

Tensor full_like(const Tensor& x, double value) {
  return full(Shape(x.shape()), value, x.dtype());
}

Tensor empty(const Shape& shape, DType dtype) {
  return zeros(shape, dtype);
}

Tensor empty_like(const Tensor& x) {
  return zeros_like(x);
}

namespace {

// torch's cpu_serial_kernel_vec over one thread's range: blocks of two vectors (16 float32 or 8
// float64 values under AVX2), each vector from `vector(first index)`, then one value at a time.
// Fills out[0, n).
template <class T, class Scalar, class Vector>
void fill_torch_range(T* out, int64_t n, Scalar scalar, Vector vector) {
  constexpr int64_t kWidth = 32 / sizeof(T);
  int64_t i = 0;
  for (; i + 2 * kWidth <= n; i += 2 * kWidth) {
    vector(out + i, i, kWidth);
    vector(out + i + kWidth, i + kWidth, kWidth);
  }
  for (; i < n; ++i) out[i] = scalar(i);
}

std::string range_number_text(double v) {  // shortest form that reads back, as Python prints floats
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, v);
    if (std::strtod(text, nullptr) == v || std::isnan(v)) break;
  }
  return text;
}

}  // namespace

Tensor arange(double end, DType dtype) {
  return arange(0.0, end, 1.0, dtype);
}

Tensor arange(double start, double end, double step, DType dtype) {
  const std::string range = range_number_text(start) + " -> " + range_number_text(end) + " (step " +
                            range_number_text(step) + ")";
  if (step == 0.0 || std::isnan(step)) throw Error("arange: step must be nonzero, got " + range);
  if (!std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step)) {
    throw Error("arange: unsupported range " + range);
  }
  if ((step > 0 && end < start) || (step < 0 && end > start)) {
    throw Error("arange: upper bound and lower bound inconsistent with step sign: " + range);
  }
  const double size = std::ceil((end - start) / step);  // torch's rule, in double
  if (!(size <= static_cast<double>(int64_t{1} << 60))) {
    throw Error("arange: " + range + " has too many values");
  }
  Tape& tape = current_tape();
  Tensor t = tape.leaf(Shape{static_cast<int64_t>(size)}, dtype, nullptr, false);
  void* out = tape.node(t.id()).value;
  // In double (torch's accumulate type for both dtypes), with the fused multiply-adds of torch's
  // AVX2 build: fl(start + step·i) per value, fl(first + k·step) within a vector.
  auto fill = [&]<class T>(T* o) {
    fill_torch_range(
        o, t.numel(),
        [&](int64_t i) { return static_cast<T>(std::fma(step, static_cast<double>(i), start)); },
        [&](T* v, int64_t i, int64_t width) {
          const T first = static_cast<T>(std::fma(step, static_cast<double>(i), start));
          for (int64_t k = 0; k < width; ++k) {
            v[k] =
                static_cast<T>(std::fma(static_cast<double>(k), step, static_cast<double>(first)));
          }
        });
  };
  if (dtype == DType::Float32) {
    fill(static_cast<float*>(out));
  } else {
    fill(static_cast<double*>(out));
  }
  return t;
}

namespace {

// A [steps] leaf of dtype filled by fill(values) (a template lambda over the element type);
// steps < 0 is an Error naming op.
template <class Fill>
Tensor steps_leaf(const char* op, int64_t steps, DType dtype, Fill fill) {
  if (steps < 0) {
    throw Error(std::string(op) + ": number of steps must be non-negative, got " +
                std::to_string(steps));
  }
  Tape& tape = current_tape();
  Tensor t = tape.leaf(Shape{steps}, dtype, nullptr, false);
  void* out = tape.node(t.id()).value;
  if (steps == 0) return t;
  if (dtype == DType::Float32) {
    fill(static_cast<float*>(out));
  } else {
    fill(static_cast<double*>(out));
  }
  return t;
}

}  // namespace

Tensor linspace(double start, double end, int64_t steps, DType dtype) {
  // In dtype: the first half fl(start + step·i), the second fl(end − step·(steps − 1 − i)), fused
  // as torch's AVX2 build fuses them; within a vector first + k·step, rounded twice.
  return steps_leaf("linspace", steps, dtype, [&]<class T>(T* o) {
    if (steps == 1) {
      o[0] = static_cast<T>(start);
      return;
    }
    const T from = static_cast<T>(start), to = static_cast<T>(end);
    const T step = (to - from) / static_cast<T>(steps - 1);
    const int64_t halfway = steps / 2;
    auto at = [&](int64_t i) {
      return i < halfway ? std::fma(step, static_cast<T>(i), from)
                         : std::fma(-step, static_cast<T>(steps - 1 - i), to);
    };
    fill_torch_range(o, steps, at, [&](T* v, int64_t i, int64_t width) {
      const T first = at(i);
      for (int64_t k = 0; k < width; ++k) {
        volatile T offset = static_cast<T>(k) * step;  // rounded on its own, as torch's
        v[k] = first + offset;
      }
    });
  });
}

Tensor logspace(double start, double end, int64_t steps, double base, DType dtype) {
  // The exponents in double from the dtype-rounded ends, each product rounded on its own (torch's
  // RangeFactories.cpp is compiled without FMA contraction).
  return steps_leaf("logspace", steps, dtype, [&]<class T>(T* o) {
    if (steps == 1) {
      o[0] = static_cast<T>(std::pow(base, start));
      return;
    }
    const T from = static_cast<T>(start), to = static_cast<T>(end);
    const double step = static_cast<double>(to - from) / static_cast<double>(steps - 1);
    const int64_t halfway = steps / 2;
    for (int64_t i = 0; i < steps; ++i) {
      const bool first_half = i < halfway;
      volatile double offset = step * static_cast<double>(first_half ? i : steps - i - 1);
      const double exponent =
          first_half ? static_cast<double>(from) + offset : static_cast<double>(to) - offset;
      o[i] = static_cast<T>(std::pow(base, exponent));
    }
  });
}

Tensor eye(int64_t n, std::optional<int64_t> m, DType dtype) {
  const int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0) {
    throw Error("eye: n and m must be >= 0, got n = " + std::to_string(n) +
                ", m = " + std::to_string(cols));
  }
  Tensor t = zeros(Shape{n, cols}, dtype);
  void* out = current_tape().node(t.id()).value;
  for (int64_t i = 0; i < std::min(n, cols); ++i) {
    if (dtype == DType::Float32) {
      static_cast<float*>(out)[i * cols + i] = 1.0f;
    } else {
      static_cast<double*>(out)[i * cols + i] = 1.0;
    }
  }
  return t;
}

Tensor rand(const Shape& shape, DType dtype) {
  return rand(shape, dtype, default_generator());
}

Tensor rand(const Shape& shape, DType dtype, Generator& generator) {
  Tape& tape = current_tape();
  Tensor t = tape.leaf(shape, dtype, nullptr, false);
  void* out = tape.node(t.id()).value;
  if (dtype == DType::Float32) {  // t's size: `shape` may have moved (full above)
    generator.uniform(static_cast<float*>(out), t.numel());
  } else {
    generator.uniform(static_cast<double*>(out), t.numel());
  }
  return t;
}

Tensor rand_like(const Tensor& x) {
  return rand(Shape(x.shape()), x.dtype());
}

Tensor randn_like(const Tensor& x) {
  return randn(Shape(x.shape()), x.dtype());
}

Tensor randn(const Shape& shape, DType dtype) {
  return randn(shape, dtype, default_generator());
}

Tensor randn(const Shape& shape, DType dtype, Generator& generator) {
  Tape& tape = current_tape();
  Tensor t = tape.leaf(shape, dtype, nullptr, false);
  void* out = tape.node(t.id()).value;
  if (dtype == DType::Float32) {
    generator.normal(static_cast<float*>(out), t.numel());
  } else {
    generator.normal(static_cast<double*>(out), t.numel());
  }
  return t;
}

Ids randint(int64_t low, int64_t high, const Shape& shape) {
  return randint(low, high, shape, default_generator());
}

Ids randint(int64_t high, const Shape& shape) {
  return randint(0, high, shape, default_generator());
}

Ids randint(int64_t low, int64_t high, const Shape& shape, Generator& generator) {
  if (low >= high) {
    throw Error("randint: expects low < high, got low = " + std::to_string(low) +
                ", high = " + std::to_string(high));
  }
  // torch's random_from_to: range = high - low as uint64 (wraps for the widest ranges).
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  std::vector<int64_t> values(static_cast<size_t>(shape.numel()));
  for (int64_t& v : values) {
    const uint64_t draw = range >= (uint64_t{1} << 32) ? generator.random64() : generator.random();
    v = static_cast<int64_t>(draw % range + static_cast<uint64_t>(low));
  }
  return Ids(shape, std::move(values));
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype) {
  return randint(low, high, shape, dtype, default_generator());
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Generator& generator) {
  if (dtype == DType::Float32 && low < high &&
      static_cast<uint64_t>(high) - static_cast<uint64_t>(low) >= (uint64_t{1} << 32)) {
    throw Error("randint: float32 takes high - low < 2^32, got low = " + std::to_string(low) +
                ", high = " + std::to_string(high));
  }
  const Ids ids = randint(low, high, shape, generator);
  // Each int64 converted once to the dtype, as torch's static_cast (no rounding through double).
  Tape& tape = current_tape();
  Tensor t = tape.leaf(shape, dtype, nullptr, false);
  void* value = tape.node(t.id()).value;
  for (int64_t i = 0; i < ids.numel(); ++i) {
    if (dtype == DType::Float32) {
      static_cast<float*>(value)[i] = static_cast<float>(ids[i]);
    } else {
      static_cast<double*>(value)[i] = static_cast<double>(ids[i]);
    }
  }
  return t;
}

Ids randperm(int64_t n) {
  return randperm(n, default_generator());
}

Ids randperm(int64_t n, Generator& generator) {
  if (n < 0) throw Error("randperm: n must be >= 0, got " + std::to_string(n));
  std::vector<int64_t> values(static_cast<size_t>(n));
  generator.randperm(values.data(), n);
  return Ids(Shape{n}, std::move(values));
}

Tensor randperm(int64_t n, DType dtype) {
  return randperm(n, dtype, default_generator());
}

Tensor randperm(int64_t n, DType dtype, Generator& generator) {
  const Ids ids = randperm(n, generator);
  std::vector<double> values(ids.values().begin(), ids.values().end());
  return from_values(Shape{n}, values, dtype);
}

namespace {

// What Tensor.normal_ / uniform_ may overwrite (header): x's storage, unless x requires grad or
// a recorded op read it. Aliases (detach) share the storage pointer, so they are found too.
void check_fill_in_place(const char* op, const Tensor& x) {
  const std::string what = std::string(op) + ": " +
                           (x.name().empty() ? std::string() : "\"" + x.name() + "\" ") +
                           x.shape().str();
  if (x.requires_grad()) {
    throw Error(what + " requires grad: a leaf that requires grad cannot be filled in place");
  }
  if (x.numel() == 0) return;
  const Tape& tape = x.tape();
  const void* storage = x.node().value;
  for (int32_t id = 0; id < tape.size(); ++id) {
    const Node& n = tape.node(id);
    for (int32_t k = 0; k < n.num_inputs; ++k) {
      if (tape.node(n.inputs[k]).value == storage) {
        throw Error(what + " was already read by " + n.op_name() + " (node " + std::to_string(id) +
                    "), whose backward would read the new values: draw a new tensor instead");
      }
    }
  }
}

// x's storage overwritten by draw(values, n) in its dtype, once check_fill_in_place allows it.
template <class Draw>
void fill_in_place(const char* op, const Tensor& x, Draw draw) {
  check_fill_in_place(op, x);
  void* value = x.node().value;
  if (x.dtype() == DType::Float32) {
    draw(static_cast<float*>(value), x.numel());
  } else {
    draw(static_cast<double*>(value), x.numel());
  }
}

}  // namespace

Tensor normal_(const Tensor& x, double mean, double std) {
  return normal_(x, mean, std, default_generator());
}

Tensor normal_(const Tensor& x, double mean, double std, Generator& generator) {
  fill_in_place("normal_", x, [&](auto* v, int64_t n) { generator.normal(v, n, mean, std); });
  return x;
}

Tensor uniform_(const Tensor& x, double from, double to) {
  return uniform_(x, from, to, default_generator());
}

Tensor uniform_(const Tensor& x, double from, double to, Generator& generator) {
  fill_in_place("uniform_", x, [&](auto* v, int64_t n) { generator.uniform(v, n, from, to); });
  return x;
}

Tensor requires_grad(const Tensor& x) {
  const Node& n = x.node();
  return x.tape().leaf(n.shape, n.dtype, n.value, true);
}

Tensor detach(const Tensor& x) {
  return x.tape().alias_leaf(x);
}

}  // namespace tapegrad
