// Leaf tensors: constants from data, filled tensors, inputs that require grad, and detach.
// Each is created on the current tape (see current_tape()).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/tape.h>

namespace tapegrad {

class Generator;

// torch.tensor([...]) for ranks 1 to 3; float32 unless told.
Tensor tensor(std::initializer_list<double> values, DType dtype = DType::Float32);
Tensor tensor(std::initializer_list<std::initializer_list<double>> rows,
              DType dtype = DType::Float32);
Tensor tensor(std::initializer_list<std::initializer_list<std::initializer_list<double>>> blocks,
              DType dtype = DType::Float32);
Tensor scalar(double value, DType dtype = DType::Float32);

// A tensor of `shape` holding `values` (row-major, converted to dtype).
Tensor from_values(const Shape& shape, std::span<const double> values, DType dtype = DType::Float32,
                   bool requires_grad = false);
Tensor from_data(const Shape& shape, std::span<const float> values, bool requires_grad = false);
Tensor from_data(const Shape& shape, std::span<const double> values, bool requires_grad = false);

Tensor zeros(const Shape& shape, DType dtype = DType::Float32);
Tensor ones(const Shape& shape, DType dtype = DType::Float32);
Tensor full(const Shape& shape, double value, DType dtype = DType::Float32);
// torch.zeros_like, ones_like, full_like: x's shape and dtype, no gradient, on the current tape.
Tensor zeros_like(const Tensor& x);
Tensor ones_like(const Tensor& x);
Tensor full_like(const Tensor& x, double value);
// torch.empty and empty_like: torch leaves the values uninitialised; tapegrad's are zeros (a
// tape's arena hands out memory another step wrote, and reading it would not repeat run to run).
Tensor empty(const Shape& shape, DType dtype = DType::Float32);
Tensor empty_like(const Tensor& x);

// torch.arange(end) and arange(start, end, step) with float arguments: ceil((end - start) / step)
// values start + i·step, computed as torch's CPU kernel computes them (in double, the float32
// result rounded from it; blocks of 16 float32 or 8 float64 values from the block's first value
// plus k·step, the rest one by one), so they are torch's bit for bit. Throws Error for a zero or
// non-finite step, a non-finite start or end, or a step of the wrong sign, as torch does.
// Beyond 32768 values torch splits the range among its threads, which moves the blocks: the
// values are then those of torch run with one thread.
Tensor arange(double end, DType dtype = DType::Float32);
Tensor arange(double start, double end, double step = 1.0, DType dtype = DType::Float32);
// torch.linspace(start, end, steps): start and end rounded to dtype, step = (end - start) /
// (steps - 1) in dtype, the first half counted up from start and the second down from end (so
// the last value is exactly end), as torch's CPU kernel (same blocks and thread caveat as
// arange). steps == 1 gives [start]; steps < 0 is an Error.
Tensor linspace(double start, double end, int64_t steps, DType dtype = DType::Float32);
// torch.logspace(start, end, steps, base): base^e for steps exponents e from start to end, as
// torch's CPU kernel: start and end rounded to dtype, step = (end - start) / (steps - 1) in double,
// the first half base^(start + step·i) and the second base^(end − step·(steps − 1 − i)) with
// libm's pow in double, then rounded to dtype; steps == 1 gives [base^start] (start unrounded).
// No thread caveat (torch's loop counts i in int64). steps < 0 is an Error.
Tensor logspace(double start, double end, int64_t steps, double base = 10.0,
                DType dtype = DType::Float32);
// torch.eye(n, m): [n, m] (m = n unless given) with ones on the diagonal. n, m >= 0.
Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, DType dtype = DType::Float32);

// torch.rand(shape): uniform [0, 1) from the generator (the default one unless given).
Tensor rand(const Shape& shape, DType dtype = DType::Float32);
Tensor rand(const Shape& shape, DType dtype, Generator& generator);
// torch.randn(shape): standard normal values, drawn as torch's CPU normal_ draws them (the
// vectorised Box-Muller for 16 values or more, the scalar one with its cached second sample
// below: graph/random.h).
Tensor randn(const Shape& shape, DType dtype = DType::Float32);
Tensor randn(const Shape& shape, DType dtype, Generator& generator);
// torch.rand_like and randn_like: rand / randn of x's shape and dtype (the same draws).
Tensor rand_like(const Tensor& x);
Tensor randn_like(const Tensor& x);
// torch.randint(low, high, shape) (int64, as torch's default dtype): (draw % (high - low)) + low
// with one 32-bit draw per value, or a 64-bit draw when high - low >= 2^32, as torch's CPU
// kernel. randint(high, shape) is randint(0, high, shape). Throws Error unless low < high.
Ids randint(int64_t low, int64_t high, const Shape& shape);
Ids randint(int64_t low, int64_t high, const Shape& shape, Generator& generator);
Ids randint(int64_t high, const Shape& shape);
// The same numbers as a float tensor (torch.randint(low, high, shape, dtype=...)): torch draws a
// float dtype's values by the same stream, each converted once. float32 takes high - low < 2^32
// (torch's float32 stream differs beyond; an Error here); values beyond 2^24 round in float32.
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype);
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Generator& generator);

// torch.randperm(n) (int64, torch's default): a permutation of 0..n-1, torch's CPU shuffle from
// the same seed (Generator::randperm; n - 1 draws). n < 0 is an Error. With a float dtype, the
// same permutation converted (torch swaps the converted values, which gives the same).
Ids randperm(int64_t n);
Ids randperm(int64_t n, Generator& generator);
Tensor randperm(int64_t n, DType dtype);
Tensor randperm(int64_t n, DType dtype, Generator& generator);

// Tensor.normal_(mean, std) and Tensor.uniform_(from, to): x's values replaced in place by
// torch's draws (the same numbers as randn / rand, and as nn::normal_ / nn::uniform_ on a
// Parameter); returns x. Every tensor sharing x's storage (detach) sees them, as in torch. An
// Error, before anything is drawn, when x requires grad (torch refuses in-place ops on such
// leaves) or when a recorded op has already read x's storage: its forward has run and its
// backward would read the new values (torch's version counter fails that backward).
Tensor normal_(const Tensor& x, double mean = 0.0, double std = 1.0);
Tensor normal_(const Tensor& x, double mean, double std, Generator& generator);
Tensor uniform_(const Tensor& x, double from = 0.0, double to = 1.0);
Tensor uniform_(const Tensor& x, double from, double to, Generator& generator);

// A leaf that requires grad, holding a copy of x's value (torch's x.detach().requires_grad_()).
Tensor requires_grad(const Tensor& x);
// A constant sharing x's storage: no copy, no gradient flows back through it.
Tensor detach(const Tensor& x);

}  // namespace tapegrad
