// Deprecated include path, kept for one release: this header moved to <tapegrad/nn/attention.h>.
#pragma once
#pragma message( \
    "<tapegrad/ops/nn/attention.h> is deprecated: include <tapegrad/nn/attention.h> (or <tapegrad/tapegrad.h>)")
#include "nn/attention.h"
