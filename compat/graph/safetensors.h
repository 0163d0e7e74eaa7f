// Deprecated include path, kept for one release: this header moved to <tapegrad/io/safetensors.h>.
#pragma once
#pragma message( \
    "<tapegrad/graph/safetensors.h> is deprecated: include <tapegrad/io/safetensors.h> (or <tapegrad/tapegrad.h>)")
#include "io/safetensors.h"
