// Gradient checking: numeric Jacobians by central differences versus the tape's backward.
#include <tapegrad/graph/gradcheck.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <set>

#include <tapegrad/graph/error.h>

namespace tapegrad {

GradcheckInput random_input(const Shape& shape, uint64_t seed, double lo, double hi) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(lo, hi);
  GradcheckInput in{shape, std::vector<double>(static_cast<size_t>(shape.numel())), true};
  for (double& v : in.values) v = uniform(engine);
  return in;
}

namespace {

struct Evaluation {
  std::vector<double> output;
  Shape shape;
};

// Runs f on a fresh tape and returns its output values.
Evaluation evaluate(Tape& tape, const std::function<Tensor()>& f) {
  tape.reset();
  TapeScope scope(tape);
  Tensor y = f();
  if (y.dtype() != DType::Float64) throw Error("gradcheck: the function must return float64");
  return {y.values(), y.shape()};
}

class Checker {
 public:
  Checker(const std::string& name, const GradcheckOptions& options) : options_(options) {
    report_.function = name;
    report_.passed = true;
  }

  void compare(int input, int64_t element, int64_t output_element, double numeric,
               double analytic) {
    ++report_.checked;
    const double error = std::abs(analytic - numeric);
    const double tolerance = options_.atol + options_.rtol * std::abs(numeric);
    const double ratio = std::isnan(error) ? INFINITY : error / tolerance;
    if (ratio > worst_ratio_) {
      worst_ratio_ = ratio;
      report_.input = input;
      report_.element = element;
      report_.output_element = output_element;
      report_.numeric = numeric;
      report_.analytic = analytic;
      report_.error = error;
      report_.tolerance = tolerance;
    }
    if (!(error <= tolerance)) report_.passed = false;
  }

  GradcheckReport finish(std::vector<std::string> ops) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "gradcheck \"%s\" %s: worst at input %d element %lld (output element %lld): "
                  "numeric %.10g, analytic %.10g, error %.3g (tolerance %.3g), %lld entries",
                  report_.function.c_str(), report_.passed ? "passed" : "FAILED", report_.input,
                  static_cast<long long>(report_.element),
                  static_cast<long long>(report_.output_element), report_.numeric, report_.analytic,
                  report_.error, report_.tolerance, static_cast<long long>(report_.checked));
    report_.message = line;
    report_.ops = std::move(ops);
    return report_;
  }

 private:
  GradcheckOptions options_;
  GradcheckReport report_;
  double worst_ratio_ = -1.0;
};

std::vector<std::string> recorded_ops(const Tape& tape) {
  std::set<std::string> names;
  for (int32_t i = 0; i < tape.size(); ++i) {
    if (tape.node(i).kind == NodeKind::Op) names.insert(tape.node(i).op_name());
  }
  return {names.begin(), names.end()};
}

}  // namespace

GradcheckReport gradcheck_parameters(const std::string& name, const std::function<Tensor()>& f,
                                     const std::vector<Parameter>& parameters,
                                     const GradcheckOptions& options) {
  for (const Parameter& p : parameters) {
    if (p.dtype() != DType::Float64) {
      throw Error("gradcheck: parameter \"" + p.name() + "\" must be float64");
    }
  }
  Checker checker(name, options);
  Tape analytic_tape, probe_tape;
  TapeScope scope(analytic_tape);
  Tensor y = f();
  if (y.dtype() != DType::Float64) throw Error("gradcheck: the function must return float64");
  const int64_t n_out = y.numel();
  std::vector<std::string> ops = recorded_ops(analytic_tape);

  auto numeric_column = [&](double* x, double direction_scale, const std::vector<double>* u,
                            int64_t n) {
    // Central difference of the whole output along one direction (one element, or u).
    std::vector<double> saved(x, x + n);
    for (int64_t i = 0; i < n; ++i) x[i] = saved[i] + options.eps * (u ? (*u)[i] : direction_scale);
    const Evaluation plus = evaluate(probe_tape, f);
    for (int64_t i = 0; i < n; ++i) x[i] = saved[i] - options.eps * (u ? (*u)[i] : direction_scale);
    const Evaluation minus = evaluate(probe_tape, f);
    std::copy(saved.begin(), saved.end(), x);  // restore exactly
    std::vector<double> column(plus.output.size());
    for (size_t j = 0; j < column.size(); ++j) {
      column[j] = (plus.output[j] - minus.output[j]) / (2 * options.eps);
    }
    return column;
  };

  if (!options.fast_mode) {
    // Analytic Jacobian, one output element (one backward) at a time.
    std::vector<std::vector<std::vector<double>>> analytic(parameters.size());
    std::vector<double> seed(static_cast<size_t>(n_out), 0.0);
    for (int64_t j = 0; j < n_out; ++j) {
      for (const Parameter& p : parameters) p.zero_grad();
      seed[static_cast<size_t>(j)] = 1.0;
      if (y.requires_grad()) analytic_tape.backward(y, seed, {.retain_graph = true});
      seed[static_cast<size_t>(j)] = 0.0;
      for (size_t k = 0; k < parameters.size(); ++k) {
        analytic[k].push_back(parameters[k].grad_values());
      }
    }
    for (size_t k = 0; k < parameters.size(); ++k) {
      if (!parameters[k].requires_grad()) continue;
      double* x = parameters[k].data<double>();
      for (int64_t i = 0; i < parameters[k].numel(); ++i) {
        std::vector<double> column = numeric_column(x + i, 1.0, nullptr, 1);
        for (int64_t j = 0; j < n_out; ++j) {
          checker.compare(static_cast<int>(k), i, j, column[static_cast<size_t>(j)],
                          analytic[k][static_cast<size_t>(j)][static_cast<size_t>(i)]);
        }
      }
    }
  } else {
    std::mt19937_64 engine(options.seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::vector<double> v(static_cast<size_t>(n_out));
    for (double& e : v) e = uniform(engine);
    for (const Parameter& p : parameters) p.zero_grad();
    if (y.requires_grad()) analytic_tape.backward(y, v, {.retain_graph = true});
    for (size_t k = 0; k < parameters.size(); ++k) {
      if (!parameters[k].requires_grad()) continue;
      const int64_t n = parameters[k].numel();
      std::vector<double> u(static_cast<size_t>(n));
      for (double& e : u) e = uniform(engine);
      const std::vector<double> g = parameters[k].grad_values();
      double analytic = 0.0;
      for (int64_t i = 0; i < n; ++i)
        analytic += g[static_cast<size_t>(i)] * u[static_cast<size_t>(i)];
      std::vector<double> column = numeric_column(parameters[k].data<double>(), 0.0, &u, n);
      double numeric = 0.0;
      for (int64_t j = 0; j < n_out; ++j)
        numeric += column[static_cast<size_t>(j)] * v[static_cast<size_t>(j)];
      checker.compare(static_cast<int>(k), -1, -1, numeric, analytic);
    }
  }
  for (const Parameter& p : parameters) p.zero_grad();
  return checker.finish(std::move(ops));
}

GradcheckReport gradcheck(const std::string& name, const GradcheckFunction& f,
                          const std::vector<GradcheckInput>& inputs,
                          const GradcheckOptions& options) {
  std::vector<Parameter> parameters;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Parameter p = Parameter::from_values(inputs[k].shape, inputs[k].values, DType::Float64,
                                         "input " + std::to_string(k));
    p.set_requires_grad(inputs[k].requires_grad);
    parameters.push_back(p);
  }
  std::vector<Tensor> leaves(parameters.size());
  return gradcheck_parameters(
      name,
      [&]() {
        for (size_t k = 0; k < parameters.size(); ++k) leaves[k] = Tensor(parameters[k]);
        return f(leaves);
      },
      parameters, options);
}

}  // namespace tapegrad
