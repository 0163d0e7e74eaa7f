// Deprecated include path, kept for one release: this header moved to <tapegrad/nn/layers.h>.
#pragma once
#pragma message( \
    "<tapegrad/ops/nn/layers.h> is deprecated: include <tapegrad/nn/layers.h> (or <tapegrad/tapegrad.h>)")
#include "nn/layers.h"
