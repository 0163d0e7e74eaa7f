// Anomaly mode: the per-thread switch and the NaN/Inf checks the tape runs while it is on.
#include <tapegrad/graph/anomaly.h>

#include <cmath>
#include <string>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/tape.h>

namespace tapegrad {

namespace {

thread_local bool anomaly_mode = false;

// What anomaly mode found in a buffer: the first NaN and the first ±inf (-1 when none).
struct NonFinite {
  int64_t first_nan = -1;
  int64_t first_inf = -1;
};

template <class T>
NonFinite scan_typed(const T* p, int64_t n) {
  NonFinite f;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(p[i])) continue;
    if (std::isnan(p[i])) {
      f.first_nan = i;
      return f;  // NaN is reported first; the scan can stop
    }
    if (f.first_inf < 0) f.first_inf = i;
  }
  return f;
}

NonFinite scan(const void* p, DType dtype, int64_t n) {
  if (p == nullptr) return {};
  return dtype == DType::Float32 ? scan_typed(static_cast<const float*>(p), n)
                                 : scan_typed(static_cast<const double*>(p), n);
}

// "element 3 of [2, 3], float32"
std::string where_in(int64_t index, const Node& n) {
  return "element " + std::to_string(index) + " of " + n.shape.str() + ", " + dtype_name(n.dtype);
}

}  // namespace

void check_forward_value(Tape& tape, int32_t id, const char* consumer, int k) {
  Node& n = tape.node(id);
  if (n.anomaly_checked != 0) return;
  const NonFinite found = scan(n.value, n.dtype, n.shape.numel());
  bool allowed_inf = n.kind == NodeKind::Constant || n.kind == NodeKind::Input ||
                     (n.op != nullptr && n.op->writes_inf != nullptr && n.op->writes_inf(n));
  if (found.first_nan < 0 && found.first_inf >= 0 && !allowed_inf && n.kind == NodeKind::Op) {
    // An op may pass on the infinities of its inputs (x + mask with -inf): only where inf first
    // appears is it an anomaly.
    for (int32_t j = 0; j < n.num_inputs && !allowed_inf; ++j) {
      const Node& in = tape.input(n, j);
      allowed_inf =
          in.anomaly_checked == 2 ||
          (in.anomaly_checked == 0 && scan(in.value, in.dtype, in.shape.numel()).first_inf >= 0);
    }
  }
  if (found.first_nan >= 0 || (found.first_inf >= 0 && !allowed_inf)) {
    const bool nan = found.first_nan >= 0;
    const bool leaf = n.kind != NodeKind::Op;
    std::string what = "anomaly: forward: " + tape.describe_node(id) +
                       (leaf ? " holds " : " produced ") + (nan ? "NaN" : "Inf") + " (first at " +
                       where_in(nan ? found.first_nan : found.first_inf, n) + ")";
    if (!nan && !leaf) what += " from finite inputs";
    if (consumer != nullptr) {
      what +=
          "; found when " + std::string(consumer) + " consumed it as input " + std::to_string(k);
    } else if (k == -1) {
      what += "; found when backward started from it";
    } else {
      what += "; found when its values were read";
    }
    throw Error(what);
  }
  if (n.kind != NodeKind::Parameter) n.anomaly_checked = found.first_inf >= 0 ? 2 : 1;
}

void check_gradient(const Tape& tape, int32_t consumer, int k) {
  const Node& n = tape.node(consumer);
  const int32_t in_id = n.inputs[k];
  const Node& in = tape.node(in_id);
  const void* grad = in.grad_to_read();
  if (grad == nullptr) return;
  const NonFinite found = scan(grad, in.dtype, in.shape.numel());
  if (found.first_nan < 0 && found.first_inf < 0) return;
  const bool nan = found.first_nan >= 0;
  throw Error("anomaly: backward: the backward of " + tape.describe_node(consumer) + " produced " +
              (nan ? "NaN" : "Inf") + " in the gradient of its input " + std::to_string(k) + ", " +
              tape.describe_node(in_id) + " (first at " +
              where_in(nan ? found.first_nan : found.first_inf, in) + ")");
}

void check_seed_gradient(const Tape& tape, int32_t root, std::span<const double> grad) {
  for (double g : grad) {
    if (!std::isfinite(g)) {
      throw Error("anomaly: backward: the gradient given for " + tape.describe_node(root) + " " +
                  tape.node(root).shape.str() + " holds NaN or Inf");
    }
  }
}

bool anomaly_mode_enabled() {
  return anomaly_mode;
}
AnomalyMode::AnomalyMode() : previous_(anomaly_mode) {
  anomaly_mode = true;
}
AnomalyMode::~AnomalyMode() {
  anomaly_mode = previous_;
}

}  // namespace tapegrad
