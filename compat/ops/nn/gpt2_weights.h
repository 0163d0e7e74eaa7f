// Deprecated include path, kept for one release: this header moved to <tapegrad/nn/gpt2_weights.h>.
#pragma once
#pragma message( \
    "<tapegrad/ops/nn/gpt2_weights.h> is deprecated: include <tapegrad/nn/gpt2_weights.h> (or <tapegrad/tapegrad.h>)")
#include "nn/gpt2_weights.h"
