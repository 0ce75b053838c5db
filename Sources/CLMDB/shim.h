#ifndef CLMDB_SHIM_H
#define CLMDB_SHIM_H

// The system LMDB headers, from Debian's liblmdb-dev.
#include <lmdb.h>

#endif
