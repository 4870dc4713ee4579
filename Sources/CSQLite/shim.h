#ifndef LUMEN_CSQLITE_SHIM_H
#define LUMEN_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
