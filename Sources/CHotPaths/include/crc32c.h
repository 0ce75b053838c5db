#ifndef LMDBREALM_CRC32C_H
#define LMDBREALM_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/// The CRC-32C (Castagnoli) of `length` bytes at `data`, continuing from `crc` (0 to start).
/// Uses the processor's CRC32 instruction where there is one (SSE 4.2 on x86-64, the CRC
/// extension on ARMv8), a table otherwise.
uint32_t lmdbrealm_crc32c(uint32_t crc, const void *data, size_t length);

#endif
