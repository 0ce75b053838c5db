// LMDBRealm's and LMDBKit's routines in C, in one translation unit (valgrind 3.19, the
// benchmark suite's profiler, cannot read a program with a second DWARF 5 C unit):
//
// - CRC-32C (Castagnoli, polynomial 0x82F63B78 reflected): the checksum of every record
//   LMDBRealm writes. The processor's instruction when it has one (on x86-64 in three
//   interleaved streams joined by a carry-less multiplication), chosen once at first use; a
//   byte-at-a-time table otherwise.
// - The thread-local column counter of the object a thread is making.
// - LMDB's default key order, compared eight bytes at a time (every database LMDBKit opens).
//   No lmdb.h here: only LMDBKit and CLMDB's shim include it (Scripts/check-layers.sh).
// - The sort of the index and backlink entries a write buffers (two threads for big ones).

// mremap (the pending entries' table).
#define _GNU_SOURCE

#include "crc32c.h"
#include "key_order.h"
#include "pending_entries.h"
#include "thread_local_counter.h"


#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
#include <wmmintrin.h>

// Three streams: the CRC32 instruction takes 3 cycles but the processor starts one each cycle,
// so a buffer long enough is cut into three equal blocks A, B and C, whose CRCs are computed
// side by side and then joined: crc(A B C) = shift(crc(A), |B| + |C|) ^ shift(crc(B), |C|) ^ crc(C),
// where shift(c, n) is the CRC register after n zero bytes, c * x^(8n) mod P. With the register
// in reflected order, a carry-less product c * K and a CRC32 of the product from 0 make
// c * K * x^33 mod P: K = x^(8n - 33) mod P shifts by n bytes (one multiplication, one CRC32).
enum { stream_words_max = 256 };           // blocks of up to 2 KiB: 6 KiB a round of three
static uint32_t shift_constant[2 * stream_words_max + 1];  // K for n = 8 * i bytes, i >= 1

// x^k mod P, reflected (bit 31 is x^0).
static uint32_t power_of_x(uint32_t register_value, unsigned steps) {
    for (unsigned i = 0; i < steps; i++) register_value = (register_value >> 1) ^ ((register_value & 1) ? 0x82F63B78u : 0);
    return register_value;
}

static void build_shift_constants(void) {
    uint32_t k = power_of_x(0x80000000u, 64 - 33);  // n = 8 bytes: x^31
    shift_constant[1] = k;
    for (unsigned i = 2; i <= 2 * stream_words_max; i++) {
        k = power_of_x(k, 64);
        shift_constant[i] = k;
    }
}

__attribute__((target("sse4.2,pclmul"))) static inline uint64_t shifted(uint64_t c, unsigned words) {
    __m128i product = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)c), _mm_cvtsi32_si128((int)shift_constant[words]), 0);
    return _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(product));
}

__attribute__((target("sse4.2,pclmul"))) static uint32_t crc32c_hardware(uint32_t crc, const unsigned char *p, size_t length) {
    uint64_t c = ~crc;
    // Three streams while each block would be at least 4 words (below that the join costs more
    // than it saves).
    while (length >= 3 * 4 * 8) {
        size_t words = length / 24;
        if (words > stream_words_max) words = stream_words_max;
        const unsigned char *b = p + 8 * words, *e = b + 8 * words;
        uint64_t c1 = 0, c2 = 0;
        for (size_t i = 0; i < words; i++) {
            uint64_t x, y, z;
            memcpy(&x, p + 8 * i, 8);
            memcpy(&y, b + 8 * i, 8);
            memcpy(&z, e + 8 * i, 8);
            c = _mm_crc32_u64(c, x);
            c1 = _mm_crc32_u64(c1, y);
            c2 = _mm_crc32_u64(c2, z);
        }
        c = shifted(c, (unsigned)(2 * words)) ^ shifted(c1, (unsigned)words) ^ c2;
        p += 24 * words;
        length -= 24 * words;
    }
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
    if (!__builtin_cpu_supports("sse4.2") || !__builtin_cpu_supports("pclmul")) return 0;
    build_shift_constants();
    return 1;
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
    crc32c_function function;
    if (has_hardware()) {
        function = crc32c_hardware;
    } else {
        build_table();
        function = crc32c_table;
    }
    // Released after the tables it reads are built: a thread that sees it sees them.
    __atomic_store_n(&chosen, function, __ATOMIC_RELEASE);
}

uint32_t lmdbrealm_crc32c(uint32_t crc, const void *data, size_t length) {
    // One load once chosen (a record read calls this: pthread_once each time cost a fifth of
    // the routine).
    crc32c_function function = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
    if (__builtin_expect(function == NULL, 0)) {
        pthread_once(&once, choose);
        function = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
    }
    return function(crc, (const unsigned char *)data, length);
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

int lmdbkit_compare_values(const lmdbkit_value *a, const lmdbkit_value *b) {
    return lmdbkit_compare_keys(a->mv_data, a->mv_size, b->mv_data, b->mv_size);
}

// MARK: - Pending index entries

typedef lmdbrealm_pending_entry entry;

/// The 16 bytes two big-endian words hold, written to `out`.
static inline const uint8_t *words_bytes(uint64_t w0, uint64_t w1, uint8_t out[16]) {
    for (int i = 0; i < 8; i++) {
        out[i] = (uint8_t)(w0 >> (56 - 8 * i));
        out[8 + i] = (uint8_t)(w1 >> (56 - 8 * i));
    }
    return out;
}

/// The bytes of an entry's key: from the buffer when longer than 16, else from its words (an
/// entry whose key and value both fit in 16 bytes has nothing in the buffer).
static inline const uint8_t *key_bytes(const entry *e, const uint8_t *bytes, uint8_t scratch[16]) {
    return e->key_count > 16 ? bytes + e->start : words_bytes(e->k0, e->k1, scratch);
}

static inline const uint8_t *value_bytes(const entry *e, const uint8_t *bytes, uint8_t scratch[16]) {
    return e->value_count > 16 ? bytes + e->start + e->key_count : words_bytes(e->v0, e->v1, scratch);
}

static inline __attribute__((always_inline)) int compare_entries(const entry *a, const entry *b, const uint8_t *bytes) {
    if (a->dbi != b->dbi) return a->dbi < b->dbi ? -1 : 1;
    if (a->k0 != b->k0) return a->k0 < b->k0 ? -1 : 1;
    if (a->k1 != b->k1) return a->k1 < b->k1 ? -1 : 1;
    if (a->key_count != b->key_count || a->key_count > 16) {
        // Equal in their first 16 bytes, zero-padded: past them, or the shorter first.
        if (a->key_count <= 16 && b->key_count <= 16) return a->key_count < b->key_count ? -1 : 1;
        uint8_t x[16], y[16];
        int c = lmdbkit_compare_keys(key_bytes(a, bytes, x), a->key_count, key_bytes(b, bytes, y), b->key_count);
        if (c != 0) return c;
    }
    if (a->v0 != b->v0) return a->v0 < b->v0 ? -1 : 1;
    if (a->v1 != b->v1) return a->v1 < b->v1 ? -1 : 1;
    if (a->value_count <= 16 && b->value_count <= 16) return (a->value_count > b->value_count) - (a->value_count < b->value_count);
    uint8_t x[16], y[16];
    return lmdbkit_compare_keys(value_bytes(a, bytes, x), a->value_count, value_bytes(b, bytes, y), b->value_count);
}

static inline void swap_entries(entry *a, entry *b) {
    entry t = *a;
    *a = *b;
    *b = t;
}

static void insertion_sort(entry *e, size_t n, const uint8_t *bytes) {
    for (size_t i = 1; i < n; i++) {
        if (compare_entries(&e[i - 1], &e[i], bytes) <= 0) continue;
        entry t = e[i];
        size_t j = i;
        do {
            e[j] = e[j - 1];
            j--;
        } while (j > 0 && compare_entries(&e[j - 1], &t, bytes) > 0);
        e[j] = t;
    }
}

static void sift_down(entry *e, size_t root, size_t n, const uint8_t *bytes) {
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n) return;
        if (child + 1 < n && compare_entries(&e[child], &e[child + 1], bytes) < 0) child++;
        if (compare_entries(&e[root], &e[child], bytes) >= 0) return;
        swap_entries(&e[root], &e[child]);
        root = child;
    }
}

static void heap_sort(entry *e, size_t n, const uint8_t *bytes) {
    for (size_t i = n / 2; i-- > 0;) sift_down(e, i, n, bytes);
    for (size_t end = n; end-- > 1;) {
        swap_entries(&e[0], &e[end]);
        sift_down(e, 0, end, bytes);
    }
}

// Partitions e[0..<n] (n > 24) around the median of e[0], e[n/2] and e[n-1]; returns the
// pivot's place j: e[0..<j] <= e[j] <= e[j+1..<n]. Partitions of equal entries split evenly.
static size_t partition(entry *e, size_t n, const uint8_t *bytes) {
    size_t mid = n / 2;
    if (compare_entries(&e[mid], &e[0], bytes) < 0) swap_entries(&e[mid], &e[0]);
    if (compare_entries(&e[n - 1], &e[mid], bytes) < 0) {
        swap_entries(&e[n - 1], &e[mid]);
        if (compare_entries(&e[mid], &e[0], bytes) < 0) swap_entries(&e[mid], &e[0]);
    }
    // e[0] <= e[mid] <= e[n - 1]: the pivot goes to e[0]'s right, the ends guard the scans.
    swap_entries(&e[mid], &e[1]);
    entry pivot = e[1];
    size_t i = 1, j = n - 1;
    for (;;) {
        do i++; while (compare_entries(&e[i], &pivot, bytes) < 0);
        do j--; while (compare_entries(&pivot, &e[j], bytes) < 0);
        if (i >= j) break;
        swap_entries(&e[i], &e[j]);
    }
    swap_entries(&e[1], &e[j]);
    return j;
}

// Quicksort, the smaller side first; insertion sort for short runs, heapsort past a depth of
// 2 log2 n.
static void intro_sort(entry *e, size_t n, unsigned depth, const uint8_t *bytes) {
    while (n > 24) {
        if (depth == 0) {
            heap_sort(e, n, bytes);
            return;
        }
        depth--;
        size_t j = partition(e, n, bytes);
        size_t left = j, right = n - j - 1;
        if (left < right) {
            intro_sort(e, left, depth, bytes);
            e += j + 1;
            n = right;
        } else {
            intro_sort(e + j + 1, right, depth, bytes);
            n = left;
        }
    }
    insertion_sort(e, n, bytes);
}

/// One side of a partition, sorted on a thread of its own.
struct sort_job {
    entry *entries;
    size_t count;
    unsigned depth;
    const uint8_t *bytes;
};

static void *run_sort_job(void *argument) {
    struct sort_job *job = argument;
    intro_sort(job->entries, job->count, job->depth, job->bytes);
    return NULL;
}

// Past this many entries, with two processors or more, the sides of the first partition are
// sorted at once on two threads (the entries a big write buffers: 600,000 for 100,000
// articles with six links each).
#define PARALLEL_SORT_MINIMUM 65536

// Partitions e[0..<n] around e[p]; returns the pivot's place j: e[0..<j] <= e[j] <= e[j+1..<n].
static size_t partition_around(entry *e, size_t n, size_t p, const uint8_t *bytes) {
    swap_entries(&e[0], &e[p]);
    entry pivot = e[0];
    size_t i = 0, j = n;
    for (;;) {
        do i++; while (i < n && compare_entries(&e[i], &pivot, bytes) < 0);
        do j--; while (compare_entries(&pivot, &e[j], bytes) < 0);  // e[0] stops it
        if (i >= j) break;
        swap_entries(&e[i], &e[j]);
    }
    swap_entries(&e[0], &e[j]);
    return j;
}

// The place of the median of 63 entries spread evenly over e[0..<n] (n >= 63): a pivot that
// splits a big input near its middle, where the median of three may not (entries of two
// indexes, one five times the other's size, split 5:1 when it falls in the smaller).
static size_t sampled_median(const entry *e, size_t n, const uint8_t *bytes) {
    enum { samples = 63 };
    size_t at[samples];
    for (size_t k = 0; k < samples; k++) {
        size_t place = k * (n / samples) + n / (2 * samples);
        size_t m = k;
        while (m > 0 && compare_entries(&e[at[m - 1]], &e[place], bytes) > 0) {
            at[m] = at[m - 1];
            m--;
        }
        at[m] = place;
    }
    return at[samples / 2];
}

void lmdbrealm_sort_pending_entries(lmdbrealm_pending_entry *entries, size_t count, const uint8_t *bytes) {
    unsigned depth = 0;
    for (size_t m = count; m > 1; m >>= 1) depth += 2;
    if (count >= PARALLEL_SORT_MINIMUM) {
        if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
            size_t j = partition_around(entries, count, sampled_median(entries, count, bytes), bytes);
            // A lopsided split gains little from a thread: the larger side is most of the work.
            if (j > count / 8 && count - j - 1 > count / 8) {
                struct sort_job left = {entries, j, depth - 1, bytes};
                pthread_t thread;
                if (pthread_create(&thread, NULL, run_sort_job, &left) == 0) {
                    intro_sort(entries + j + 1, count - j - 1, depth - 1, bytes);
                    pthread_join(thread, NULL);
                    return;
                }
            }
            intro_sort(entries, j, depth - 1, bytes);
            intro_sort(entries + j + 1, count - j - 1, depth - 1, bytes);
            return;
        }
    }
    intro_sort(entries, count, depth, bytes);
}

// Past this size the table is an anonymous mapping.
#define PENDING_TABLE_MAPPED_BYTES ((size_t)1 << 20)

int lmdbrealm_pending_table_reserve(lmdbrealm_pending_table *table, size_t minimum) {
    if (minimum <= table->capacity) return 0;
    size_t capacity = table->capacity ? table->capacity : 64;
    while (capacity < minimum) {
        if (capacity > SIZE_MAX / 2 / sizeof(entry)) return -1;
        capacity *= 2;
    }
    size_t size = capacity * sizeof(entry);
    void *grown;
    if (size < PENDING_TABLE_MAPPED_BYTES) {
        grown = realloc(table->base, size);
        if (grown == NULL) return -1;
    } else if (table->mapped) {
        grown = mremap(table->base, table->capacity * sizeof(entry), size, MREMAP_MAYMOVE);
        if (grown == MAP_FAILED) return -1;
    } else {
        grown = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (grown == MAP_FAILED) return -1;
        madvise(grown, size, MADV_HUGEPAGE);
        if (table->count > 0) memcpy(grown, table->base, table->count * sizeof(entry));
        free(table->base);
        table->mapped = 1;
    }
    table->base = grown;
    table->capacity = capacity;
    return 0;
}

void lmdbrealm_pending_table_release(lmdbrealm_pending_table *table) {
    if (table->mapped) {
        munmap(table->base, table->capacity * sizeof(entry));
    } else {
        free(table->base);
    }
    table->base = NULL;
    table->count = 0;
    table->capacity = 0;
    table->mapped = 0;
}

void lmdbrealm_heap_sort_pending_entries(lmdbrealm_pending_entry *entries, size_t count, const uint8_t *bytes) {
    heap_sort(entries, count, bytes);
}
