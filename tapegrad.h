// The umbrella header: everything a training script uses (installed as <tapegrad/tapegrad.h>).
#pragma once

#include "graph/dot.h"
#include "graph/error.h"
#include "graph/factory.h"
#include "graph/gradcheck.h"
#include "graph/parameter.h"
#include "graph/random.h"
#include "graph/shape.h"
#include "graph/tape.h"
#include "ops/nn/attention.h"
#include "ops/nn/gpt.h"
#include "ops/nn/gpt2_weights.h"
#include "ops/nn/layers.h"
#include "ops/nn/module.h"
#include "ops/ops.h"
#include "optim/checkpoint.h"
#include "optim/optim.h"
