/* hcq.h: the whole public API of hcq, a freestanding userspace GPU stack.
 * One header per layer, from the bottom: base (errors, values), compiler
 * (dtypes, kernel IR, compile), mem (buffers, signals), queue (devices,
 * queues, programs, graphs), tensor (lazy tensors on any device, autodiff),
 * nn (training: parameters, optimizers, data). */
#ifndef HCQ_HCQ_H
#define HCQ_HCQ_H

#include "base.h"
#include "compiler.h"
#include "mem.h"
#include "queue.h"
#include "tensor.h"
#include "nn.h"

#endif
