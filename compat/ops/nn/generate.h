// Deprecated include path, kept for one release: this header moved to <tapegrad/nn/generate.h>.
#pragma once
#pragma message( \
    "<tapegrad/ops/nn/generate.h> is deprecated: include <tapegrad/nn/generate.h> (or <tapegrad/tapegrad.h>)")
#include "nn/generate.h"
