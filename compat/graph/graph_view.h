// Deprecated include path, kept for one release: this header moved to <tapegrad/viz/graph_view.h>.
#pragma once
#pragma message( \
    "<tapegrad/graph/graph_view.h> is deprecated: include <tapegrad/viz/graph_view.h> (or <tapegrad/tapegrad.h>)")
#include "viz/graph_view.h"
