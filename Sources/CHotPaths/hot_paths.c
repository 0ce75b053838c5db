// LMDBRealm's and LMDBKit's routines in C, in one translation unit (valgrind 3.19, the
// benchmark suite's profiler, cannot read a program with a second DWARF 5 C unit):
//
// - CRC-32C (Castagnoli, polynomial 0x82F63B78 reflected): the checksum of every record
//   LMDBRealm writes. The processor's instruction when it has one, chosen once at first use;
//   a byte-at-a-time table otherwise.
// - The thread-local column counter of the object a thread is making.
// - LMDB's default key order, compared eight bytes at a time (every database LMDBKit opens).

#include "crc32c.h"
#include "key_order.h"
#include "thread_local_counter.h"

#include <lmdb.h>

#include <pthread.h>
#include <string.h>

static uint32_t table[256];

static void build_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[n] = c;
    }
}

static uint32_t crc32c_table(uint32_t crc, const unsigned char *p, size_t length) {
    crc = ~crc;
    while (length--) crc = table[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

#if defined(__x86_64__)
#include <nmmintrin.h>

__attribute__((target("sse4.2"))) static uint32_t crc32c_hardware(uint32_t crc, const unsigned char *p, size_t length) {
    uint64_t c = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
        p += 8;
        length -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (length--) c32 = _mm_crc32_u8(c32, *p++);
    return ~c32;
}

static int has_hardware(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>

static uint32_t crc32c_hardware(uint32_t crc, const unsigned char *p, size_t length) {
    uint32_t c = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __crc32cd(c, word);
        p += 8;
        length -= 8;
    }
    while (length--) c = __crc32cb(c, *p++);
    return ~c;
}

static int has_hardware(void) { return 1; }
#else
static uint32_t crc32c_hardware(uint32_t crc, const unsigned char *p, size_t length) { return crc32c_table(crc, p, length); }
static int has_hardware(void) { return 0; }
#endif

typedef uint32_t (*crc32c_function)(uint32_t, const unsigned char *, size_t);

static crc32c_function chosen;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void choose(void) {
    if (has_hardware()) {
        chosen = crc32c_hardware;
    } else {
        build_table();
        chosen = crc32c_table;
    }
}

uint32_t lmdbrealm_crc32c(uint32_t crc, const void *data, size_t length) {
    pthread_once(&once, choose);
    return chosen(crc, (const unsigned char *)data, length);
}

// MARK: - The column counter

static _Thread_local intptr_t column_counter;

intptr_t *lmdbrealm_column_counter(void) {
    return &column_counter;
}

// MARK: - The key order

// Eight- and four-byte loads from any address, plain loads even in an unoptimised build.
typedef uint64_t __attribute__((aligned(1), may_alias)) unaligned_u64;
typedef uint32_t __attribute__((aligned(1), may_alias)) unaligned_u32;

int lmdbkit_compare_keys(const void *a, size_t a_size, const void *b, size_t b_size) {
    const unsigned char *p = a, *q = b;
    size_t n = a_size < b_size ? a_size : b_size;
    for (; n >= 8; n -= 8, p += 8, q += 8) {
        uint64_t x = *(const unaligned_u64 *)p, y = *(const unaligned_u64 *)q;
        if (x != y) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            // The first differing byte decides, as in memcmp: the most significant once swapped.
            x = __builtin_bswap64(x);
            y = __builtin_bswap64(y);
#endif
            return x < y ? -1 : 1;
        }
    }
    // The last 0 to 7 bytes: four, two and one at a time, most significant first.
    if (n >= 4) {
        uint32_t x = *(const unaligned_u32 *)p, y = *(const unaligned_u32 *)q;
        if (x != y) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            x = __builtin_bswap32(x);
            y = __builtin_bswap32(y);
#endif
            return x < y ? -1 : 1;
        }
        n -= 4, p += 4, q += 4;
    }
    if (n >= 2) {
        unsigned x = (unsigned)p[0] << 8 | p[1], y = (unsigned)q[0] << 8 | q[1];
        if (x != y) return x < y ? -1 : 1;
        n -= 2, p += 2, q += 2;
    }
    if (n == 1 && *p != *q) return *p < *q ? -1 : 1;
    return a_size < b_size ? -1 : a_size > b_size;
}

static int compare_values(const MDB_val *a, const MDB_val *b) {
    return lmdbkit_compare_keys(a->mv_data, a->mv_size, b->mv_data, b->mv_size);
}

int lmdbkit_use_fast_key_order(void *txn, unsigned int dbi) {
    unsigned int flags = 0;
    int rc = mdb_dbi_flags(txn, dbi, &flags);
    if (rc != MDB_SUCCESS) return rc;
    if (!(flags & (MDB_INTEGERKEY | MDB_REVERSEKEY))) mdb_set_compare(txn, dbi, compare_values);
    if ((flags & MDB_DUPSORT) && !(flags & (MDB_INTEGERDUP | MDB_REVERSEDUP))) mdb_set_dupsort(txn, dbi, compare_values);
    return MDB_SUCCESS;
}
