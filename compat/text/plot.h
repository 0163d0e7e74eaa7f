// Deprecated include path, kept for one release: this header moved to <tapegrad/viz/plot.h>.
#pragma once
#pragma message( \
    "<tapegrad/text/plot.h> is deprecated: include <tapegrad/viz/plot.h> (or <tapegrad/tapegrad.h>)")
#include "viz/plot.h"
