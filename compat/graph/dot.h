// Deprecated include path, kept for one release: this header moved to <tapegrad/viz/dot.h>.
#pragma once
#pragma message( \
    "<tapegrad/graph/dot.h> is deprecated: include <tapegrad/viz/dot.h> (or <tapegrad/tapegrad.h>)")
#include "viz/dot.h"
