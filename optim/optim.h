// Everything for training: optimisers (SGD, Adam, AdamW), lr schedules and gradient clipping.
#pragma once

#include <tapegrad/optim/adam.h>
#include <tapegrad/optim/clip.h>
#include <tapegrad/optim/optimizer.h>
#include <tapegrad/optim/schedule.h>
#include <tapegrad/optim/sgd.h>
