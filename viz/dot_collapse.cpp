// Collapsing repeated scopes in the DOT drawing: which copies match, and who stands in for whom.
#include <tapegrad/viz/dot_collapse.h>

#include <algorithm>

namespace tapegrad::dot_detail {

namespace {

bool is_head_name(const std::string& name) {
  if (name.size() < 6 || name.compare(0, 5, "head ") != 0) return false;
  return std::all_of(name.begin() + 5, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool split_numbered(const std::string& name, std::string& prefix, int64_t& number) {
  size_t digits = name.size();
  while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
  const size_t length = name.size() - digits;
  if (length == 0 || length > 9 || (length > 1 && name[digits] == '0')) return false;
  prefix = name.substr(0, digits);
  number = std::stoll(name.substr(digits));
  return true;
}

int32_t Collapser::across_copies(int32_t u, int32_t v) const {
  for (int32_t a = scope_of(u); a >= 0; a = parent(a)) {
    const int32_t g = c_.first[static_cast<size_t>(a)];
    if (g == kNone) continue;
    for (int32_t b = scope_of(v); b >= 0; b = parent(b)) {
      if (b != a && c_.first[static_cast<size_t>(b)] == g) return g;
    }
  }
  return kNone;
}

int32_t Collapser::outermost_other_copy(int32_t v) const {
  int32_t found = kNone;
  for (int32_t a = scope_of(v); a >= 0; a = parent(a)) {
    const int32_t g = c_.first[static_cast<size_t>(a)];
    if (g != kNone && g != a) found = a;
  }
  return found;
}

bool Collapser::inside_group(int32_t v, int32_t g) const {
  for (int32_t a = scope_of(v); a >= 0; a = parent(a)) {
    if (c_.first[static_cast<size_t>(a)] == g) return true;
  }
  return false;
}

void Collapser::run(bool heads, bool repeats) {
  const int32_t nv = view_.num_vertices();
  const int32_t ns = static_cast<int32_t>(view_.scopes.size());
  Collapse& c = c_;
  c.stand_in.resize(static_cast<size_t>(nv));
  for (int32_t v = 0; v < nv; ++v) c.stand_in[static_cast<size_t>(v)] = v;
  c.count.assign(static_cast<size_t>(ns), 0);
  c.first.assign(static_cast<size_t>(ns), kNone);
  c.chained.assign(static_cast<size_t>(ns), 0);
  c.heads.assign(static_cast<size_t>(ns), 0);
  if (!heads && !repeats) return;

  // Candidate groups: siblings with one prefix, numbered 0, 1, ... in the order created.
  std::map<std::pair<int32_t, std::string>, std::vector<int32_t>> candidates;
  for (int32_t s = 0; s < ns; ++s) {
    const ScopeInfo& info = view_.scopes[static_cast<size_t>(s)];
    std::string prefix;
    int64_t number = 0;
    if (!split_numbered(info.name, prefix, number)) continue;
    if (!(repeats || is_head_name(info.name))) continue;
    auto& copies = candidates[{info.parent, prefix}];
    if (number == static_cast<int64_t>(copies.size())) copies.push_back(s);
  }
  for (auto& [key, copies] : candidates) {
    if (copies.size() < 2) continue;
    for (int32_t s : copies) c.first[static_cast<size_t>(s)] = copies[0];
  }
  collect_members();
  // Keep only the groups whose copies match the first one vertex for vertex.
  for (auto& [key, copies] : candidates) {
    if (copies.size() < 2) continue;
    bool same = true;
    for (size_t k = 1; k < copies.size() && same; ++k) same = matches(copies[0], copies[k]);
    if (!same) {
      for (int32_t s : copies) c.first[static_cast<size_t>(s)] = kNone;
      continue;
    }
    c.count[static_cast<size_t>(copies[0])] = static_cast<int32_t>(copies.size());
    c.heads[static_cast<size_t>(copies[0])] = is_head_name(key.second + "0");
  }
  collect_members();
  // A group is chained when a forward edge runs from one of its copies into another.
  for (int32_t v = 0; v < view_.num_forward; ++v) {
    for (Edge e :
         boost::make_iterator_range(boost::in_edges(static_cast<Vertex>(v), view_.graph))) {
      const int32_t g = across_copies(static_cast<int32_t>(boost::source(e, view_.graph)), v);
      if (g != kNone) c.chained[static_cast<size_t>(g)] = 1;
    }
  }
  // Each vertex in a copy other than the first moves to its place in the first copy of the
  // outermost such group, until it lies in first copies only (nested groups: the heads of a
  // repeated block).
  for (int32_t v = 0; v < nv; ++v) {
    int32_t s = v;
    while (s != kNone) {
      const int32_t copy = outermost_other_copy(s);
      if (copy == kNone) break;
      const bool gradient = view_.is_gradient(static_cast<Vertex>(s));
      const std::vector<int32_t>& own = members_[{copy, gradient}];
      const std::vector<int32_t>& drawn = members_[{c.first[static_cast<size_t>(copy)], gradient}];
      const size_t position =
          static_cast<size_t>(std::lower_bound(own.begin(), own.end(), s) - own.begin());
      s = position < drawn.size() ? drawn[position] : kNone;
    }
    c.stand_in[static_cast<size_t>(v)] = s;
  }
}

void Collapser::collect_members() {
  members_.clear();
  for (int32_t v = 0; v < view_.num_vertices(); ++v) {
    const bool gradient = view_.is_gradient(static_cast<Vertex>(v));
    for (int32_t a = scope_of(v); a >= 0; a = parent(a)) {
      if (c_.first[static_cast<size_t>(a)] != kNone) members_[{a, gradient}].push_back(v);
    }
  }
}

std::string Collapser::path_within(int32_t s, int32_t copy) const {
  std::string path;
  for (; s >= 0 && s != copy; s = parent(s)) {
    path = view_.scopes[static_cast<size_t>(s)].name + "/" + path;
  }
  return path;
}

int Collapser::inner_degree(Vertex v, int32_t copy) const {
  int n = 0;
  for (Edge e : boost::make_iterator_range(boost::in_edges(v, view_.graph))) {
    for (int32_t a = scope_of(static_cast<int32_t>(boost::source(e, view_.graph))); a >= 0;
         a = parent(a)) {
      if (a == copy) {
        ++n;
        break;
      }
    }
  }
  return n;
}

bool Collapser::matches(int32_t a, int32_t b) {
  for (bool gradient : {false, true}) {
    const std::vector<int32_t>& x = members_[{a, gradient}];
    const std::vector<int32_t>& y = members_[{b, gradient}];
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      const Vertex vx = static_cast<Vertex>(x[i]);
      const Vertex vy = static_cast<Vertex>(y[i]);
      const VertexProps& p = view_.graph[vx];
      const VertexProps& q = view_.graph[vy];
      if (p.kind != q.kind || p.op != q.op || p.shape != q.shape || p.dtype != q.dtype ||
          inner_degree(vx, a) != inner_degree(vy, b) ||
          path_within(p.scope, a) != path_within(q.scope, b)) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace tapegrad::dot_detail
