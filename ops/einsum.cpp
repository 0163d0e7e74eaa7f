// einsum: torch.einsum's equations, composed of recorded ops (diagonal for repeated subscripts,
// sum, permute, reshape, expand, mul and matmul), so its gradients of every order are theirs.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// A subscript: a letter's character code, or 128 + k for the k-th dim an ellipsis stands for
// (counted so that every operand's ellipsis dims line up on the right, as torch broadcasts them).
using EinsumLabel = int;
constexpr EinsumLabel kEinsumEllipsis = 128;

struct EinsumTerm {
  std::vector<EinsumLabel> letters_before, letters_after;  // around the ellipsis, if any
  bool ellipsis = false;
};

[[noreturn]] void throw_einsum_error(std::string_view equation, const std::string& what) {
  throw Error("einsum: \"" + std::string(equation) + "\": " + what);
}

std::string einsum_label_text(EinsumLabel label) {
  return label < kEinsumEllipsis ? std::string(1, static_cast<char>(label)) : "...";
}

EinsumTerm parse_einsum_term(std::string_view equation, std::string_view term) {
  EinsumTerm t;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == '.') {
      if (t.ellipsis || term.substr(i, 3) != "...") {
        throw_einsum_error(equation, "an ellipsis is three dots, at most one per operand");
      }
      t.ellipsis = true;
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      (t.ellipsis ? t.letters_after : t.letters_before).push_back(c);
    } else {
      throw_einsum_error(equation, std::string("invalid subscript '") + c +
                                       "' (letters a-z, A-Z and one ellipsis only)");
    }
  }
  return t;
}

// An operand during the contraction: the tensor and the subscript of each of its dims.
struct EinsumOperand {
  Tensor x;
  std::vector<EinsumLabel> labels;
};

int einsum_find(const std::vector<EinsumLabel>& labels, EinsumLabel label) {
  const auto it = std::find(labels.begin(), labels.end(), label);
  return it == labels.end() ? -1 : static_cast<int>(it - labels.begin());
}

// Sums out the dims whose label `keep` rejects.
void einsum_sum_out(EinsumOperand& op, const std::function<bool(EinsumLabel)>& keep) {
  std::vector<int> dims;
  std::vector<EinsumLabel> kept;
  for (size_t d = 0; d < op.labels.size(); ++d) {
    if (keep(op.labels[d])) {
      kept.push_back(op.labels[d]);
    } else {
      dims.push_back(static_cast<int>(d));
    }
  }
  if (dims.empty()) return;
  op.x = sum(op.x, std::span<const int>(dims), false);
  op.labels = kept;
}

// x's dims reordered to `order` (labels of x), skipping the copy when already in order.
Tensor einsum_permute(const EinsumOperand& op, const std::vector<EinsumLabel>& order) {
  std::vector<int64_t> perm;
  bool identity = true;
  for (size_t d = 0; d < order.size(); ++d) {
    perm.push_back(einsum_find(op.labels, order[d]));
    identity = identity && perm.back() == static_cast<int64_t>(d);
  }
  return identity ? op.x : permute(op.x, std::span<const int64_t>(perm));
}

Tensor einsum_reshape(const Tensor& x, std::vector<int64_t> dims) {
  const Shape shape(std::span<const int64_t>(dims.data(), dims.size()));
  return x.shape() == shape ? x : reshape(x, std::span<const int64_t>(dims));
}

int64_t einsum_size(const EinsumOperand& op, EinsumLabel label) {
  return op.x.shape()[einsum_find(op.labels, label)];
}

// The product of a and b summed over their shared labels that `needed` rejects, as one batched
// matmul (or a broadcast mul when nothing is summed): [batch, a's own, b's own].
EinsumOperand einsum_pair(EinsumOperand a, EinsumOperand b,
                          const std::function<bool(EinsumLabel)>& needed) {
  // A label only one side holds and nothing later needs is summed out first.
  einsum_sum_out(a, [&](EinsumLabel l) { return needed(l) || einsum_find(b.labels, l) >= 0; });
  einsum_sum_out(b, [&](EinsumLabel l) { return needed(l) || einsum_find(a.labels, l) >= 0; });
  std::vector<EinsumLabel> batch, contracted, a_own, b_own;
  for (const EinsumLabel l : a.labels) {
    if (einsum_find(b.labels, l) < 0) {
      a_own.push_back(l);
    } else {
      (needed(l) ? batch : contracted).push_back(l);
    }
  }
  for (const EinsumLabel l : b.labels) {
    if (einsum_find(a.labels, l) < 0) b_own.push_back(l);
  }
  // A shared label of size 1 on one side broadcasts to the other's size.
  std::vector<int64_t> a_sizes(a.x.shape().dims().begin(), a.x.shape().dims().end());
  std::vector<int64_t> b_sizes(b.x.shape().dims().begin(), b.x.shape().dims().end());
  bool expand_a = false, expand_b = false;
  for (size_t d = 0; d < a.labels.size(); ++d) {
    const int k = einsum_find(b.labels, a.labels[d]);
    if (k < 0 || a_sizes[d] == b_sizes[static_cast<size_t>(k)]) continue;
    if (a_sizes[d] == 1) {
      a_sizes[d] = b_sizes[static_cast<size_t>(k)];
      expand_a = true;
    } else {
      b_sizes[static_cast<size_t>(k)] = a_sizes[d];
      expand_b = true;
    }
  }
  if (expand_a) a.x = expand(a.x, std::span<const int64_t>(a_sizes));
  if (expand_b) b.x = expand(b.x, std::span<const int64_t>(b_sizes));
  const auto count = [](const EinsumOperand& op, const std::vector<EinsumLabel>& labels) {
    int64_t n = 1;
    for (const EinsumLabel l : labels) n *= einsum_size(op, l);
    return n;
  };
  const int64_t nb = count(a, batch), nl = count(a, a_own), nk = count(a, contracted),
                nr = count(b, b_own);
  EinsumOperand out;
  std::vector<int64_t> dims;
  for (const EinsumLabel l : batch) dims.push_back(einsum_size(a, l));
  for (const EinsumLabel l : a_own) dims.push_back(einsum_size(a, l));
  for (const EinsumLabel l : b_own) dims.push_back(einsum_size(b, l));
  out.labels = batch;
  out.labels.insert(out.labels.end(), a_own.begin(), a_own.end());
  out.labels.insert(out.labels.end(), b_own.begin(), b_own.end());
  std::vector<EinsumLabel> a_order = batch, b_order = batch;
  a_order.insert(a_order.end(), a_own.begin(), a_own.end());
  a_order.insert(a_order.end(), contracted.begin(), contracted.end());
  b_order.insert(b_order.end(), contracted.begin(), contracted.end());
  b_order.insert(b_order.end(), b_own.begin(), b_own.end());
  const Tensor a3 = einsum_reshape(einsum_permute(a, a_order), {nb, nl, nk});
  const Tensor b3 = einsum_reshape(einsum_permute(b, b_order), {nb, nk, nr});
  // Nothing summed: an outer product per batch element, which mul broadcasts without a GEMM.
  const Tensor product =
      contracted.empty() ? mul(a3, einsum_reshape(b3, {nb, 1, nr})) : matmul(a3, b3);
  out.x = einsum_reshape(product, dims);
  return out;
}

}  // namespace

Tensor einsum(std::string_view equation, std::span<const Tensor> operands) {
  std::string eq;
  for (const char c : equation) {
    if (c != ' ') eq += c;
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<EinsumTerm> terms;
  for (size_t begin = 0;;) {
    const size_t comma = lhs.find(',', begin);
    terms.push_back(
        parse_einsum_term(equation, std::string_view(lhs).substr(begin, comma - begin)));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  if (terms.size() != operands.size()) {
    throw_einsum_error(equation, std::to_string(terms.size()) + " operand subscripts for " +
                                     std::to_string(operands.size()) + " operands");
  }
  // Each operand's dims labelled; the ellipsis dims right-aligned across operands.
  int ellipsis_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const EinsumTerm& t = terms[i];
    const int letters = static_cast<int>(t.letters_before.size() + t.letters_after.size());
    const int rank = operands[i].rank();
    if (t.ellipsis ? rank < letters : rank != letters) {
      throw_einsum_error(equation, "operand " + std::to_string(i) + " " +
                                       operands[i].shape().str() + " has rank " +
                                       std::to_string(rank) + " for " + std::to_string(letters) +
                                       " subscripts" + (t.ellipsis ? " and an ellipsis" : ""));
    }
    if (t.ellipsis) ellipsis_rank = std::max(ellipsis_rank, rank - letters);
  }
  std::vector<EinsumOperand> ops;
  std::array<int, 256> occurrences{};
  for (size_t i = 0; i < terms.size(); ++i) {
    const EinsumTerm& t = terms[i];
    EinsumOperand op{operands[i], t.letters_before};
    const int covered =
        operands[i].rank() - static_cast<int>(t.letters_before.size() + t.letters_after.size());
    for (int k = 0; t.ellipsis && k < covered; ++k) {
      op.labels.push_back(kEinsumEllipsis + ellipsis_rank - covered + k);
    }
    op.labels.insert(op.labels.end(), t.letters_after.begin(), t.letters_after.end());
    // Counted as written: a subscript repeated within an operand is not an implicit output's.
    for (const EinsumLabel l : op.labels) ++occurrences[static_cast<size_t>(l)];
    // A subscript repeated within an operand takes the diagonal (a trace when it is summed).
    for (size_t p = 0; p < op.labels.size(); ++p) {
      for (size_t q = p + 1; q < op.labels.size(); ++q) {
        if (op.labels[p] != op.labels[q]) continue;
        const int64_t sp = op.x.shape()[static_cast<int>(p)],
                      sq = op.x.shape()[static_cast<int>(q)];
        if (sp != sq) {
          throw_einsum_error(equation, "subscript " + einsum_label_text(op.labels[p]) +
                                           " is repeated for operand " + std::to_string(i) + " " +
                                           operands[i].shape().str() +
                                           " but the sizes don't match, " + std::to_string(sp) +
                                           " != " + std::to_string(sq));
        }
        op.x = diagonal(op.x, 0, static_cast<int>(p), static_cast<int>(q));
        const EinsumLabel label = op.labels[p];
        op.labels.erase(op.labels.begin() + static_cast<std::ptrdiff_t>(q));
        op.labels.erase(op.labels.begin() + static_cast<std::ptrdiff_t>(p));
        op.labels.push_back(label);
        p = static_cast<size_t>(-1);  // start over: the labels moved
        break;
      }
    }
    ops.push_back(op);
  }
  // Sizes of one subscript must agree across operands, or be 1 (broadcast).
  std::array<int64_t, 256> size_of;
  size_of.fill(-1);
  for (size_t i = 0; i < ops.size(); ++i) {
    for (size_t d = 0; d < ops[i].labels.size(); ++d) {
      const auto l = static_cast<size_t>(ops[i].labels[d]);
      const int64_t s = ops[i].x.shape()[static_cast<int>(d)];
      if (size_of[l] == -1 || size_of[l] == 1) {
        size_of[l] = s;
      } else if (s != 1 && s != size_of[l]) {
        throw_einsum_error(equation, "subscript " + einsum_label_text(ops[i].labels[d]) +
                                         " has size " + std::to_string(s) + " for operand " +
                                         std::to_string(i) + " " + operands[i].shape().str() +
                                         ", which does not broadcast with the size " +
                                         std::to_string(size_of[l]) + " seen before");
      }
    }
  }
  // The output's subscripts: as written, or the ellipsis dims then every letter used once, in
  // character order (torch's implicit form).
  std::vector<EinsumLabel> output;
  if (arrow != std::string::npos) {
    const std::string rhs = eq.substr(arrow + 2);
    const EinsumTerm t = parse_einsum_term(equation, rhs);
    output = t.letters_before;
    for (int k = 0; t.ellipsis && k < ellipsis_rank; ++k) output.push_back(kEinsumEllipsis + k);
    output.insert(output.end(), t.letters_after.begin(), t.letters_after.end());
    for (size_t k = 0; k < output.size(); ++k) {
      const EinsumLabel l = output[k];
      if (l < kEinsumEllipsis && occurrences[static_cast<size_t>(l)] == 0) {
        throw_einsum_error(equation, "output subscript " + einsum_label_text(l) +
                                         " does not appear in any operand");
      }
      if (std::find(output.begin(), output.begin() + static_cast<std::ptrdiff_t>(k), l) !=
          output.begin() + static_cast<std::ptrdiff_t>(k)) {
        throw_einsum_error(equation,
                           "output subscript " + einsum_label_text(l) + " appears more than once");
      }
    }
  } else {
    for (int k = 0; k < ellipsis_rank; ++k) output.push_back(kEinsumEllipsis + k);
    for (EinsumLabel l = 0; l < kEinsumEllipsis; ++l) {
      if (occurrences[static_cast<size_t>(l)] == 1) output.push_back(l);
    }
  }
  const auto in_output = [&](EinsumLabel l) { return einsum_find(output, l) >= 0; };
  // Left to right, as torch without opt_einsum: each pair keeps the labels the output or a later
  // operand needs.
  EinsumOperand result = ops[0];
  for (size_t i = 1; i < ops.size(); ++i) {
    const auto needed = [&](EinsumLabel l) {
      if (in_output(l)) return true;
      for (size_t j = i + 1; j < ops.size(); ++j) {
        if (einsum_find(ops[j].labels, l) >= 0) return true;
      }
      return false;
    };
    result = einsum_pair(result, ops[i], needed);
  }
  einsum_sum_out(result, in_output);
  // An output subscript whose operands all had size 1 there (kept), or that the operands
  // broadcast, is already in `result`; the order is the output's.
  return einsum_permute(result, output);
}

}  // namespace tapegrad
