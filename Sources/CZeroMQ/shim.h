#ifndef LUMEN_CZEROMQ_SHIM_H
#define LUMEN_CZEROMQ_SHIM_H
#include <zmq.h>
#endif
