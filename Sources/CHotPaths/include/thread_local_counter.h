#ifndef LMDBREALM_THREAD_LOCAL_COUNTER_H
#define LMDBREALM_THREAD_LOCAL_COUNTER_H

#include <stdint.h>

/// This thread's counter of the `@Persisted` properties initialised so far in the object it is
/// making (LMDBRealm's `ColumnCounter`), 0 on every new thread. A C thread-local: one call and
/// an offset from the thread pointer, where `pthread_getspecific` behind a lazily made key
/// cost several times that on every property of every object made.
intptr_t *lmdbrealm_column_counter(void);

#endif
