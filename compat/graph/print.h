// Deprecated include path, kept for one release: this header moved to <tapegrad/io/print.h>.
#pragma once
#pragma message( \
    "<tapegrad/graph/print.h> is deprecated: include <tapegrad/io/print.h> (or <tapegrad/tapegrad.h>)")
#include "io/print.h"
