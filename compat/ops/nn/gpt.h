// Deprecated include path, kept for one release: this header moved to <tapegrad/nn/gpt.h>.
#pragma once
#pragma message( \
    "<tapegrad/ops/nn/gpt.h> is deprecated: include <tapegrad/nn/gpt.h> (or <tapegrad/tapegrad.h>)")
#include "nn/gpt.h"
