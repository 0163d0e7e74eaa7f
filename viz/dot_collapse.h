// Collapsing repeated scopes in the DOT drawing: sibling scopes numbered 0, 1, ... ("head 0",
// "TransformerBlock 0" ...) whose ops and shapes match one for one are drawn once, marked ×N.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <tapegrad/viz/graph_view.h>

namespace tapegrad::dot_detail {

inline constexpr int32_t kNone = -1;

// Which vertices are drawn, and as whom. A group is a set of sibling scopes numbered 0, 1, ...
// ("head 0", "head 1", or "TransformerBlock 0" ... "TransformerBlock 11") whose vertices match
// one for one (op, shape, scope path within the copy); only its first copy is drawn, and every
// vertex of another copy stands in for the vertex at the same position in the first.
struct Collapse {
  std::vector<int32_t> stand_in;  // per vertex: the vertex drawn for it, -1 when none
  std::vector<int32_t> count;     // per scope: N for the drawn first copy of a group, else 0
  std::vector<int32_t> first;     // per scope: the first copy of its group, -1 outside groups
  std::vector<char> chained;      // per scope (a first copy): each copy feeds the next
  std::vector<char> heads;        // per scope (a first copy): the copies are "head N"
};

// "TransformerBlock 3" -> ("TransformerBlock ", 3); "0" -> ("", 0); false without a number at
// the end (or with a leading zero, so that "01" is not "1").
bool split_numbered(const std::string& name, std::string& prefix, int64_t& number);

class Collapser {
 public:
  // heads: collapse the groups of "head N" scopes; repeats: every numbered group.
  Collapser(const GraphView& view, bool heads, bool repeats) : view_(view) { run(heads, repeats); }
  Collapser(const Collapser&) = delete;
  Collapser& operator=(const Collapser&) = delete;

  const Collapse& result() const { return c_; }

  // The group (its first copy) when u and v lie in two different copies of one group, else -1.
  int32_t across_copies(int32_t u, int32_t v) const;
  // The outermost scope around v that is a copy, but not the first, of a group; -1 when none.
  int32_t outermost_other_copy(int32_t v) const;
  // Whether v lies in some copy of group g.
  bool inside_group(int32_t v, int32_t g) const;

 private:
  void run(bool heads, bool repeats);
  int32_t scope_of(int32_t v) const { return view_.graph[static_cast<Vertex>(v)].scope; }
  int32_t parent(int32_t s) const { return view_.scopes[static_cast<size_t>(s)].parent; }
  // The vertices inside each copy (at any depth), forward and gradient apart, in vertex order.
  void collect_members();
  // The scope path of s below `copy`: "att/W_query/".
  std::string path_within(int32_t s, int32_t copy) const;
  // The edges into v from inside `copy` (a block's output feeds the next block twice, the final
  // norm once: only the edges within a copy must match).
  int inner_degree(Vertex v, int32_t copy) const;
  // Copies a and b hold the same ops on the same shapes, in the same order and scopes.
  bool matches(int32_t a, int32_t b);

  const GraphView& view_;
  Collapse c_;
  std::map<std::pair<int32_t, bool>, std::vector<int32_t>> members_;
};

}  // namespace tapegrad::dot_detail
