#ifndef EARSHOT_CRUBBERBAND_SHIM_H
#define EARSHOT_CRUBBERBAND_SHIM_H
#include <rubberband/rubberband-c.h>
#endif
