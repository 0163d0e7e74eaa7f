// Integer arithmetic on Ids: torch's int64 add, sub, mul, floor_divide, remainder and the
// comparisons, broadcast, off the tape (integers carry no gradient); Ids as a float tensor and
// back.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// c = f(a, b) with a and b broadcast (torch's rules); f gets b's position for its errors.
template <class F>
Ids ids_binary(const char* op, const Ids& a, const Ids& b, F&& f) {
  bool ok = false;
  const Shape out = broadcast_shape(a.shape(), b.shape(), &ok);
  if (!ok) {
    throw Error(std::string(op) + ": a " + a.shape().str() + ", b " + b.shape().str() +
                " (Ids): the shapes do not broadcast");
  }
  std::vector<int64_t> c(static_cast<size_t>(out.numel()));
  const std::span<const int64_t> av = a.values(), bv = b.values();
  for_each_broadcast(out, broadcast_strides(a.shape(), out), broadcast_strides(b.shape(), out),
                     [&](int64_t o, int64_t i, int64_t j) {
                       c[static_cast<size_t>(o)] =
                           f(av[static_cast<size_t>(i)], bv[static_cast<size_t>(j)], j);
                     });
  return Ids(out, std::move(c));
}

// Two's-complement wrapping, as torch's int64 kernels overflow (signed overflow is undefined in
// C++, so the sums and products run on uint64_t).
int64_t ids_wrap(uint64_t v) {
  return static_cast<int64_t>(v);
}

[[noreturn]] void throw_ids_division_by_zero(const char* op, const Ids& b, int64_t j) {
  throw Error(std::string(op) + ": b " + b.shape().str() + " (Ids): integer division by zero at b" +
              position_text(b.shape(), j) + " (torch's ZeroDivisionError)");
}

int64_t ids_floor_divide(int64_t a, int64_t b) {
  if (b == -1) return ids_wrap(0 - static_cast<uint64_t>(a));  // INT64_MIN // -1 wraps
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t ids_remainder(int64_t a, int64_t b) {
  if (b == -1) return 0;  // INT64_MIN % -1 is undefined in C++
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

Ids ids_scalar(int64_t c) {
  return Ids(Shape{}, std::vector<int64_t>{c});
}

}  // namespace

Ids add(const Ids& a, const Ids& b) {
  return ids_binary("add", a, b, [](int64_t x, int64_t y, int64_t) {
    return ids_wrap(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
  });
}

Ids sub(const Ids& a, const Ids& b) {
  return ids_binary("sub", a, b, [](int64_t x, int64_t y, int64_t) {
    return ids_wrap(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
  });
}

Ids mul(const Ids& a, const Ids& b) {
  return ids_binary("mul", a, b, [](int64_t x, int64_t y, int64_t) {
    return ids_wrap(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
  });
}

Ids floor_divide(const Ids& a, const Ids& b) {
  return ids_binary("floor_divide", a, b, [&](int64_t x, int64_t y, int64_t j) {
    if (y == 0) throw_ids_division_by_zero("floor_divide", b, j);
    return ids_floor_divide(x, y);
  });
}

Ids remainder(const Ids& a, const Ids& b) {
  return ids_binary("remainder", a, b, [&](int64_t x, int64_t y, int64_t j) {
    if (y == 0) throw_ids_division_by_zero("remainder", b, j);
    return ids_remainder(x, y);
  });
}

Ids eq(const Ids& a, const Ids& b) {
  return ids_binary("eq", a, b, [](int64_t x, int64_t y, int64_t) { return int64_t{x == y}; });
}
Ids ne(const Ids& a, const Ids& b) {
  return ids_binary("ne", a, b, [](int64_t x, int64_t y, int64_t) { return int64_t{x != y}; });
}
Ids lt(const Ids& a, const Ids& b) {
  return ids_binary("lt", a, b, [](int64_t x, int64_t y, int64_t) { return int64_t{x < y}; });
}
Ids le(const Ids& a, const Ids& b) {
  return ids_binary("le", a, b, [](int64_t x, int64_t y, int64_t) { return int64_t{x <= y}; });
}
Ids gt(const Ids& a, const Ids& b) {
  return ids_binary("gt", a, b, [](int64_t x, int64_t y, int64_t) { return int64_t{x > y}; });
}
Ids ge(const Ids& a, const Ids& b) {
  return ids_binary("ge", a, b, [](int64_t x, int64_t y, int64_t) { return int64_t{x >= y}; });
}

Ids add(const Ids& a, int64_t c) {
  return add(a, ids_scalar(c));
}
Ids sub(const Ids& a, int64_t c) {
  return sub(a, ids_scalar(c));
}
Ids mul(const Ids& a, int64_t c) {
  return mul(a, ids_scalar(c));
}
Ids floor_divide(const Ids& a, int64_t c) {
  return floor_divide(a, ids_scalar(c));
}
Ids remainder(const Ids& a, int64_t c) {
  return remainder(a, ids_scalar(c));
}
Ids eq(const Ids& a, int64_t c) {
  return eq(a, ids_scalar(c));
}
Ids ne(const Ids& a, int64_t c) {
  return ne(a, ids_scalar(c));
}
Ids lt(const Ids& a, int64_t c) {
  return lt(a, ids_scalar(c));
}
Ids le(const Ids& a, int64_t c) {
  return le(a, ids_scalar(c));
}
Ids gt(const Ids& a, int64_t c) {
  return gt(a, ids_scalar(c));
}
Ids ge(const Ids& a, int64_t c) {
  return ge(a, ids_scalar(c));
}

Tensor from_ids(const Ids& ids, DType dtype) {
  const std::vector<double> values(ids.values().begin(), ids.values().end());
  return from_values(ids.shape(), values, dtype);
}

Ids to_ids(const Tensor& x) {
  std::vector<int64_t> ids(static_cast<size_t>(x.numel()));
  dispatch(x.dtype(), [&]<class T>() {
    const T* v = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      // [-2^63, 2^63): the doubles that truncate to an int64 (torch's cast is undefined beyond).
      const double d = static_cast<double>(v[i]);
      if (!(d >= -0x1p63 && d < 0x1p63)) {
        throw_unary_error("to_ids", x,
                          "value " + number_text(d) + " at " + position_text(x.shape(), i) +
                              " is not an int64 (NaN, infinite or out of range)");
      }
      ids[static_cast<size_t>(i)] = static_cast<int64_t>(d);  // toward zero, as torch's .long()
    }
  });
  return Ids(x.shape(), std::move(ids));
}

}  // namespace tapegrad
