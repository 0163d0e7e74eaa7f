// Rendering DOT text in-process through Graphviz's libgvc (SVG, PNG, PDF, ...); in a build without
// Graphviz (TAPEGRAD_GRAPHVIZ, cmake/TapegradDependencies.cmake), an Error saying so.
#if TAPEGRAD_HAVE_GRAPHVIZ
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#endif

#include <mutex>
#include <string>

#include <tapegrad/graph/error.h>
#include <tapegrad/io/atomic_file.h>
#include <tapegrad/viz/dot.h>

namespace tapegrad {

#if TAPEGRAD_HAVE_GRAPHVIZ
namespace {

thread_local std::string graphviz_errors;

int collect_graphviz_error(char* message) {
  graphviz_errors += message;
  return 0;
}

// Graphviz reports through a process-wide callback: collect its messages while we call it.
class GraphvizErrors {
 public:
  GraphvizErrors() : previous_(agseterrf(collect_graphviz_error)) { graphviz_errors.clear(); }
  ~GraphvizErrors() { agseterrf(previous_); }
  GraphvizErrors(const GraphvizErrors&) = delete;
  GraphvizErrors& operator=(const GraphvizErrors&) = delete;
  std::string message(const char* what) const {
    std::string m = std::string("render: ") + what;
    std::string details = graphviz_errors;
    while (!details.empty() && (details.back() == '\n' || details.back() == ' '))
      details.pop_back();
    return details.empty() ? m : m + ": " + details;
  }

 private:
  agusererrf previous_;
};

// One Graphviz context for the whole process, never freed. Graphviz 2.42's pango text-layout
// plugin remembers the last font name it measured in a static pointer (pango_textlayout's
// `fontname`) that points into the context's font dictionary: with a context per render, the
// next render's strcmp reads the freed name (AddressSanitizer: heap-use-after-free). Graphviz is
// not thread-safe either, so renders hold graphviz_mutex().
GVC_t* shared_context() {
  static GVC_t* const gvc = gvContext();
  return gvc;
}

std::mutex& graphviz_mutex() {
  static std::mutex m;
  return m;
}

// A laid-out graph on the shared context, freed in the right order (layout, graph).
class Layout {
 public:
  Layout(std::string_view dot, const GraphvizErrors& errors) : gvc_(shared_context()) {
    if (gvc_ == nullptr) throw Error(errors.message("cannot create a Graphviz context"));
    const std::string text(dot);
    graph_ = agmemread(text.c_str());
    if (graph_ == nullptr) throw Error(errors.message("Graphviz could not parse the DOT text"));
    if (gvLayout(gvc_, graph_, "dot") != 0) {
      agclose(graph_);
      throw Error(errors.message("Graphviz could not lay out the graph"));
    }
  }
  ~Layout() {
    gvFreeLayout(gvc_, graph_);
    agclose(graph_);
  }
  Layout(const Layout&) = delete;
  Layout& operator=(const Layout&) = delete;
  GVC_t* gvc() const { return gvc_; }
  Agraph_t* graph() const { return graph_; }

 private:
  GVC_t* gvc_;
  Agraph_t* graph_ = nullptr;
};

}  // namespace

void render(std::string_view dot, std::string_view format, const std::string& path) {
  write_file_atomically(path, render(dot, format));
}

std::string render(std::string_view dot, std::string_view format) {
  const std::lock_guard<std::mutex> lock(graphviz_mutex());
  GraphvizErrors errors;
  Layout layout(dot, errors);
  const std::string fmt(format);
  char* data = nullptr;
  unsigned int length = 0;
  if (gvRenderData(layout.gvc(), layout.graph(), fmt.c_str(), &data, &length) != 0) {
    if (data != nullptr) gvFreeRenderData(data);
    throw Error(errors.message(("cannot render " + fmt).c_str()));
  }
  std::string out(data, length);
  gvFreeRenderData(data);
  return out;
}
#else
void render(std::string_view dot, std::string_view format, const std::string& path) {
  write_file_atomically(path, render(dot, format));
}

std::string render(std::string_view, std::string_view format) {
  throw Error("render: cannot render " + std::string(format) +
              ": this tapegrad was built without Graphviz (its configure found no libgvc; "
              "install libgraphviz-dev and graphviz and configure again); to_dot's text renders "
              "with Graphviz's dot program elsewhere");
}
#endif

}  // namespace tapegrad
