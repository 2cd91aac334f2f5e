// The floor for a file sent over TCP on one host: a sender that reads a file and writes it to a socket,
// and a receiver (a child process) that reads the socket and writes a new file; nothing else (no framing,
// no hash, no encryption). Scripts/bench-resources.sh runs it beside the library's resource transfer, so
// that the library is compared with what reading, sending, receiving and writing the bytes costs on the
// same machine in the same run.
//
//   file-over-tcp SOURCE DESTINATION [BUFFER_BYTES]
//   file-over-tcp --self-test      checks its XXH64 and XXH3-64 against reference digests and exits
//
// Four knobs, to see what the kernel charges for how a file crosses (results/resources-2026-12-01/), what the
// protocol's own check adds to the floor (results/resources-2026-12-01-floor-hash/) and what a hand-off between two
// threads at each end adds (results/resources-2026-12-01-hand-off/):
//   RECEIVE_READ=BYTES  the receiver reads the socket at most BYTES at a time (default: BUFFER_BYTES)
//   SENDFILE=1          the sender hands the file to the socket with sendfile(2) instead of reading and writing it
//   BLOCK_HASH=xxh3     both ends take XXH3-64 (seed 0) of every 1 MiB block of the file as its bytes pass, as the
//                       writer and reader of a resource between two peers of this version do (docs/PROTOCOL.md,
//                       BLOCK); BLOCK_HASH=1 (or xxh64) takes XXH64, as with a peer of an earlier release. The
//                       receiver hands its digests' sum back through a pipe and the run fails when it differs from
//                       the sender's
//   HAND_OFF=1          each end copies on two threads, as the library's resource transfer does: one reads into a ring
//                       of HAND_OFF_SLOTS buffers (default 64), allocated once, each of one read's size (BUFFER_BYTES,
//                       or the receiver's RECEIVE_READ), and hands each read to the other, which writes it (and hashes
//                       it with BLOCK_HASH: the sender as it reads the file, the receiver as it writes the file,
//                       where the library does). With RECEIVE_READ=262144 the receiver's ring holds 16 MiB in reads
//                       of 256 KiB, as the library's window and reads do
//
// Prints one line: "bytes seconds megabytesPerSecond senderCPUSeconds receiverCPUSeconds". Loopback only.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

static void fail(const char *what) {
    perror(what);
    exit(1);
}

static double seconds(struct timeval t) { return t.tv_sec + t.tv_usec / 1e6; }

// XXH64 with seed 0, taken in pieces of any length: written from the algorithm's description (the same
// digests as the library's BlockHasher; `file-over-tcp --self-test` checks four of them).
static const uint64_t prime1 = 0x9E3779B185EBCA87ULL, prime2 = 0xC2B2AE3D27D4EB4FULL,
                      prime3 = 0x165667B19E3779F9ULL, prime4 = 0x85EBCA77C2B2AE63ULL,
                      prime5 = 0x27D4EB2F165667C5ULL;

struct hasher {
    uint64_t lanes[4];
    uint64_t length;
    unsigned char tail[32];
    size_t tailCount;
};

static uint64_t rotate(uint64_t value, int bits) { return (value << bits) | (value >> (64 - bits)); }
static uint64_t word64(const unsigned char *bytes) {
    uint64_t value;
    memcpy(&value, bytes, 8);  // little-endian hosts only (x86-64, arm64)
    return value;
}
static uint32_t word32(const unsigned char *bytes) {
    uint32_t value;
    memcpy(&value, bytes, 4);
    return value;
}
static uint64_t lane(uint64_t accumulator, uint64_t input) {
    return rotate(accumulator + input * prime2, 31) * prime1;
}

static void hasherStart(struct hasher *h) {
    h->lanes[0] = prime1 + prime2;
    h->lanes[1] = prime2;
    h->lanes[2] = 0;
    h->lanes[3] = 0 - prime1;
    h->length = 0;
    h->tailCount = 0;
}

static void stripe(struct hasher *h, const unsigned char *bytes) {
    for (int i = 0; i < 4; i++) h->lanes[i] = lane(h->lanes[i], word64(bytes + 8 * i));
}

static void hasherUpdate(struct hasher *h, const unsigned char *bytes, size_t count) {
    h->length += count;
    if (h->tailCount > 0) {
        size_t take = 32 - h->tailCount < count ? 32 - h->tailCount : count;
        memcpy(h->tail + h->tailCount, bytes, take);
        h->tailCount += take;
        bytes += take;
        count -= take;
        if (h->tailCount < 32) return;
        stripe(h, h->tail);
        h->tailCount = 0;
    }
    for (; count >= 32; bytes += 32, count -= 32) stripe(h, bytes);
    memcpy(h->tail, bytes, count);
    h->tailCount = count;
}

static uint64_t hasherFinish(const struct hasher *h) {
    uint64_t digest;
    if (h->length >= 32) {
        digest = rotate(h->lanes[0], 1) + rotate(h->lanes[1], 7) + rotate(h->lanes[2], 12) + rotate(h->lanes[3], 18);
        for (int i = 0; i < 4; i++) digest = (digest ^ lane(0, h->lanes[i])) * prime1 + prime4;
    } else {
        digest = prime5;
    }
    digest += h->length;
    const unsigned char *p = h->tail;
    size_t left = h->tailCount;
    for (; left >= 8; p += 8, left -= 8) digest = rotate(digest ^ lane(0, word64(p)), 27) * prime1 + prime4;
    if (left >= 4) {
        digest = rotate(digest ^ (uint64_t)word32(p) * prime1, 23) * prime2 + prime3;
        p += 4;
        left -= 4;
    }
    for (; left > 0; p++, left--) digest = rotate(digest ^ *p * prime5, 11) * prime1;
    digest ^= digest >> 33;
    digest *= prime2;
    digest ^= digest >> 29;
    digest *= prime3;
    digest ^= digest >> 32;
    return digest;
}

// XXH3-64 with seed 0 and the reference's default secret, taken in pieces of any length: written from the
// algorithm's description (the same digests as the library's XXH3Hasher; the self-test checks them). Like the
// reference's streaming state it holds back up to 256 bytes and accumulates the input's final stripe only at the
// end; stripes of a large piece are read where they are.
static const unsigned char xxh3Secret[192] = {
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c, 0xde, 0xd4, 0x6d,
    0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f, 0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0,
    0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21, 0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0,
    0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c, 0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b,
    0x1b, 0x53, 0x2e, 0xa3, 0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac,
    0xd8, 0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d, 0x8a, 0x51,
    0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64, 0xea, 0xc5, 0xac, 0x83, 0x34,
    0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb, 0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49,
    0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e, 0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8,
    0xd1, 0x7a, 0xd0, 0x31, 0xce, 0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b,
    0x40, 0x7e,
};
static const uint64_t prime32_1 = 0x9E3779B1ULL, prime32_2 = 0x85EBCA77ULL, prime32_3 = 0xC2B2AE3DULL;
static const uint64_t mix1 = 0x165667919E3779F9ULL, mix2 = 0x9FB21C651E98DF25ULL;

struct hasher3 {
    uint64_t lanes[8];
    size_t stripesInBlock;  // of the current 16-stripe block, 0 to 15
    uint64_t length;
    unsigned char buffer[256];  // bytes not yet accumulated; its last 64 keep the last stripe accumulated
    size_t buffered;
};

static uint64_t fold(uint64_t a, uint64_t b) {
    __uint128_t product = (__uint128_t)a * b;
    return (uint64_t)product ^ (uint64_t)(product >> 64);
}
static uint64_t avalanche3(uint64_t h) {
    h ^= h >> 37;
    h *= mix1;
    return h ^ (h >> 32);
}
static uint64_t avalanche64(uint64_t h) {
    h ^= h >> 33;
    h *= prime2;
    h ^= h >> 29;
    h *= prime3;
    return h ^ (h >> 32);
}
static uint64_t mix16(const unsigned char *input, const unsigned char *key) {
    return fold(word64(input) ^ word64(key), word64(input + 8) ^ word64(key + 8));
}

static void hasher3Start(struct hasher3 *h) {
    const uint64_t lanes[8] = {prime32_3, prime1, prime2, prime3, prime4, prime32_2, prime5, prime32_1};
    memcpy(h->lanes, lanes, sizeof lanes);
    h->stripesInBlock = 0;
    h->length = 0;
    h->buffered = 0;
}

// One 64-byte stripe into the lanes: each gains its keyed word's halves multiplied, and its neighbour's word.
static void accumulate(uint64_t *lanes, const unsigned char *stripe, const unsigned char *key) {
    for (int i = 0; i < 8; i++) {
        uint64_t data = word64(stripe + 8 * i), keyed = data ^ word64(key + 8 * i);
        lanes[i ^ 1] += data;
        lanes[i] += (keyed & 0xFFFFFFFFULL) * (keyed >> 32);
    }
}

// `count` whole stripes, the lanes scrambled whenever a block of 16 is complete. With SSE2 (every x86-64) the lanes
// stay in four registers, two to each, as the library's SIMD8 lanes compile to: the compiler does not find it alone.
static void consume(uint64_t *lanes, size_t *stripesInBlock, const unsigned char *input, size_t count) {
#ifdef __SSE2__
    __m128i acc[4];
    for (int i = 0; i < 4; i++) acc[i] = _mm_loadu_si128((const __m128i *)(lanes + 2 * i));
    const __m128i prime = _mm_set1_epi32((int)prime32_1);
    for (size_t s = 0; s < count; s++, input += 64) {
        const unsigned char *key = xxh3Secret + 8 * *stripesInBlock;
        for (int i = 0; i < 4; i++) {
            __m128i data = _mm_loadu_si128((const __m128i *)(input + 16 * i));
            __m128i keyed = _mm_xor_si128(data, _mm_loadu_si128((const __m128i *)(key + 16 * i)));
            __m128i product = _mm_mul_epu32(keyed, _mm_shuffle_epi32(keyed, _MM_SHUFFLE(0, 3, 0, 1)));
            acc[i] = _mm_add_epi64(acc[i], _mm_add_epi64(product, _mm_shuffle_epi32(data, _MM_SHUFFLE(1, 0, 3, 2))));
        }
        if (++*stripesInBlock == 16) {
            for (int i = 0; i < 4; i++) {
                __m128i mixed = _mm_xor_si128(acc[i], _mm_srli_epi64(acc[i], 47));
                mixed = _mm_xor_si128(mixed, _mm_loadu_si128((const __m128i *)(xxh3Secret + 128 + 16 * i)));
                __m128i high = _mm_mul_epu32(_mm_srli_epi64(mixed, 32), prime);
                acc[i] = _mm_add_epi64(_mm_mul_epu32(mixed, prime), _mm_slli_epi64(high, 32));
            }
            *stripesInBlock = 0;
        }
    }
    for (int i = 0; i < 4; i++) _mm_storeu_si128((__m128i *)(lanes + 2 * i), acc[i]);
#else
    for (size_t s = 0; s < count; s++, input += 64) {
        accumulate(lanes, input, xxh3Secret + 8 * *stripesInBlock);
        if (++*stripesInBlock == 16) {
            for (int i = 0; i < 8; i++) lanes[i] = (lanes[i] ^ (lanes[i] >> 47) ^ word64(xxh3Secret + 128 + 8 * i)) * prime32_1;
            *stripesInBlock = 0;
        }
    }
#endif
}

static void hasher3Update(struct hasher3 *h, const unsigned char *bytes, size_t count) {
    h->length += count;
    if (count <= 256 - h->buffered) {
        memcpy(h->buffer + h->buffered, bytes, count);
        h->buffered += count;
        return;
    }
    // More than the buffer holds: accumulate every whole stripe but the input's last.
    if (h->buffered > 0) {
        size_t fill = 256 - h->buffered;
        memcpy(h->buffer + h->buffered, bytes, fill);
        bytes += fill;
        count -= fill;
        consume(h->lanes, &h->stripesInBlock, h->buffer, 4);
    }
    if (count > 256) {
        size_t stripes = (count - 1) / 64;
        consume(h->lanes, &h->stripesInBlock, bytes, stripes);
        bytes += 64 * stripes;
        count -= 64 * stripes;
        memcpy(h->buffer + 256 - 64, bytes - 64, 64);
    }
    memcpy(h->buffer, bytes, count);
    h->buffered = count;
}

// The digest of at most 240 bytes.
static uint64_t xxh3Short(const unsigned char *in, size_t count) {
    const unsigned char *key = xxh3Secret;
    uint64_t length = count, hash;
    if (count == 0) return avalanche64(word64(key + 56) ^ word64(key + 64));
    if (count <= 3) {
        uint32_t joined = (uint32_t)in[0] << 16 | (uint32_t)in[count >> 1] << 24 | in[count - 1] | (uint32_t)count << 8;
        return avalanche64(joined ^ (word32(key) ^ word32(key + 4)));
    }
    if (count <= 8) {
        hash = (((uint64_t)word32(in) << 32) + word32(in + count - 4)) ^ (word64(key + 8) ^ word64(key + 16));
        hash ^= rotate(hash, 49) ^ rotate(hash, 24);
        hash *= mix2;
        hash ^= (hash >> 35) + length;
        hash *= mix2;
        return hash ^ (hash >> 28);
    }
    if (count <= 16) {
        uint64_t low = word64(in) ^ (word64(key + 24) ^ word64(key + 32));
        uint64_t high = word64(in + count - 8) ^ (word64(key + 40) ^ word64(key + 48));
        return avalanche3(length + __builtin_bswap64(low) + high + fold(low, high));
    }
    hash = length * prime1;
    if (count <= 128) {  // pairs of 16 bytes from both ends, moving inward
        for (size_t pair = 0; pair <= (count - 1) / 32; pair++) {
            hash += mix16(in + 16 * pair, key + 32 * pair) + mix16(in + count - 16 * (pair + 1), key + 32 * pair + 16);
        }
        return avalanche3(hash);
    }
    for (int round = 0; round < 8; round++) hash += mix16(in + 16 * round, key + 16 * round);
    uint64_t tail = mix16(in + count - 16, key + 119);
    for (size_t round = 8; round < count / 16; round++) tail += mix16(in + 16 * round, key + 16 * (round - 8) + 3);
    return avalanche3(avalanche3(hash) + tail);
}

static uint64_t hasher3Finish(const struct hasher3 *h) {
    if (h->length <= 240) return xxh3Short(h->buffer, h->buffered);
    uint64_t lanes[8];
    memcpy(lanes, h->lanes, sizeof lanes);
    size_t stripesInBlock = h->stripesInBlock;
    unsigned char last[64];
    if (h->buffered >= 64) {
        consume(lanes, &stripesInBlock, h->buffer, (h->buffered - 1) / 64);
        memcpy(last, h->buffer + h->buffered - 64, 64);
    } else {  // the final stripe starts in the last one accumulated, kept at the buffer's end
        memcpy(last, h->buffer + 256 - (64 - h->buffered), 64 - h->buffered);
        memcpy(last + 64 - h->buffered, h->buffer, h->buffered);
    }
    accumulate(lanes, last, xxh3Secret + 121);
    uint64_t result = h->length * prime1;
    for (int i = 0; i < 4; i++) {
        result += fold(lanes[2 * i] ^ word64(xxh3Secret + 11 + 16 * i), lanes[2 * i + 1] ^ word64(xxh3Secret + 19 + 16 * i));
    }
    return avalanche3(result);
}

// The blocks of a file as its bytes pass, hashed with XXH64 or XXH3-64: each block's digest added into `sum` as the
// block ends.
#define BLOCK_BYTES (1u << 20)
struct blocks {
    int xxh3;
    struct hasher hasher;
    struct hasher3 hasher3;
    size_t inBlock;
    uint64_t sum;
};

static void blocksStart(struct blocks *b, int xxh3) {
    b->xxh3 = xxh3;
    b->inBlock = 0;
    b->sum = 0;
    hasherStart(&b->hasher);
    hasher3Start(&b->hasher3);
}

static uint64_t blockDigest(struct blocks *b) {
    uint64_t digest = b->xxh3 ? hasher3Finish(&b->hasher3) : hasherFinish(&b->hasher);
    hasherStart(&b->hasher);
    hasher3Start(&b->hasher3);
    return digest;
}

static void blocksTake(struct blocks *b, const unsigned char *bytes, size_t count) {
    while (count > 0) {
        size_t take = BLOCK_BYTES - b->inBlock < count ? BLOCK_BYTES - b->inBlock : count;
        if (b->xxh3) {
            hasher3Update(&b->hasher3, bytes, take);
        } else {
            hasherUpdate(&b->hasher, bytes, take);
        }
        b->inBlock += take;
        bytes += take;
        count -= take;
        if (b->inBlock == BLOCK_BYTES) {
            b->sum += blockDigest(b);
            b->inBlock = 0;
        }
    }
}

static uint64_t blocksFinish(struct blocks *b) {
    if (b->inBlock > 0) b->sum += blockDigest(b);
    b->inBlock = 0;
    return b->sum;
}

// The digest of `count` pattern bytes ((i * 31 + 7) mod 256, as the library's hasher tests have them) as one
// block of `xxh3`'s kind, taken in pieces of uneven sizes.
static uint64_t patternDigest(int xxh3, size_t count) {
    unsigned char *bytes = malloc(count ? count : 1);
    if (!bytes) fail("malloc");
    for (size_t i = 0; i < count; i++) bytes[i] = (unsigned char)(i * 31 + 7);
    struct blocks blocks;
    blocksStart(&blocks, xxh3);
    for (size_t at = 0, piece = 1; at < count; at += piece, piece = piece * 3 % 65537 + 1) {
        if (piece > count - at) piece = count - at;
        blocksTake(&blocks, bytes + at, piece);
    }
    free(bytes);
    return count == 0 ? blockDigest(&blocks) : blocksFinish(&blocks);  // a file's blocks are never empty
}

static int selfTest(void) {
    const char *inputs[] = {"", "abc", "0123456789abcdef0123456789abcdef"};
    const uint64_t expected[] = {0xef46db3751d8e999ULL, 0x44bc2cf5ad770999ULL, 0x642a94958e71e6c5ULL};
    for (int i = 0; i < 3; i++) {
        struct hasher h;
        hasherStart(&h);
        for (size_t at = 0; at < strlen(inputs[i]); at++) hasherUpdate(&h, (const unsigned char *)inputs[i] + at, 1);
        if (hasherFinish(&h) != expected[i]) {
            fprintf(stderr, "XXH64(\"%s\") is %016llx, not %016llx\n", inputs[i],
                    (unsigned long long)hasherFinish(&h), (unsigned long long)expected[i]);
            return 1;
        }
    }
    // XXH3-64 of the pattern at the edges of each of its length classes, and of a whole block (the reference's
    // digests: the Python package xxhash, xxh3_64_hexdigest); XXH64 of the whole block.
    const struct {
        int xxh3;
        size_t count;
        uint64_t digest;
    } patterns[] = {
        {1, 0, 0x2d06800538d394c2ULL},   {1, 1, 0x4c5cca45d0f4811fULL},    {1, 3, 0x15f7093b173d005cULL},
        {1, 4, 0xdca012f95811b6b9ULL},   {1, 8, 0xdec6a9a43575982eULL},    {1, 9, 0xcbe393399f17ffbdULL},
        {1, 16, 0x7e484c18d74895d0ULL},  {1, 17, 0x208bde5ee2bed407ULL},   {1, 128, 0xf92b70eaa21a6288ULL},
        {1, 129, 0xf8f76713f2bb60faULL}, {1, 240, 0xccc7375172c41f03ULL},  {1, 241, 0x0b3b630948ce4a00ULL},
        {1, 256, 0xec85b75bafe6ca74ULL}, {1, 257, 0x12ef0ff633841459ULL},  {1, 1024, 0x23bc880ebf0d29c6ULL},
        {1, 1025, 0xc09fdfbc398c7d82ULL}, {1, 65536, 0xcf188822048798b0ULL}, {1, BLOCK_BYTES, 0x269eb834f6c110a9ULL},
        {0, BLOCK_BYTES, 0x292cc494f5a2e5ecULL},
    };
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        uint64_t digest = patternDigest(patterns[i].xxh3, patterns[i].count);
        if (digest != patterns[i].digest) {
            fprintf(stderr, "%s of %zu pattern bytes is %016llx, not %016llx\n", patterns[i].xxh3 ? "XXH3-64" : "XXH64",
                    patterns[i].count, (unsigned long long)digest, (unsigned long long)patterns[i].digest);
            return 1;
        }
    }
    printf("XXH64 and XXH3-64: the reference digests match\n");
    return 0;
}

// One read of at most `count` bytes (0 at the end), again when interrupted; `what` names it in a failure.
static ssize_t readSome(int from, char *buffer, size_t count, const char *what) {
    ssize_t got;
    do got = read(from, buffer, count);
    while (got < 0 && errno == EINTR);
    if (got < 0) fail(what);
    return got;
}

// Writes all `count` bytes, however many calls it takes; `what` names it in a failure.
static void writeAll(int to, const char *buffer, size_t count, const char *what) {
    for (size_t done = 0; done < count;) {
        ssize_t wrote = write(to, buffer + done, count - done);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote < 0) fail(what);
        done += (size_t)wrote;
    }
}

// Reads `from` to its end and writes everything to `to`, `bufferBytes` at a time; with `blocks`, hashes what it
// read before writing it.
static void copy(int from, int to, char *buffer, size_t bufferBytes, struct blocks *blocks, const char *reading,
                 const char *writing) {
    for (;;) {
        ssize_t got = readSome(from, buffer, bufferBytes, reading);
        if (got == 0) return;
        if (blocks) blocksTake(blocks, (const unsigned char *)buffer, (size_t)got);
        writeAll(to, buffer, (size_t)got, writing);
    }
}

// The HAND_OFF copy: a ring of buffers between a thread that reads and one that writes.
struct ring {
    int to;
    size_t slots;
    char **buffers;
    ssize_t *lengths;  // bytes in each slot; 0 marks the end
    size_t filled;     // slots read and not yet written
    pthread_mutex_t lock;
    pthread_cond_t changed;
    struct blocks *blocks;
    int hashOnRead;  // the sender hashes what it reads from the file, the receiver what it writes to it
    const char *writing;
};

static void *ringWrite(void *argument) {
    struct ring *r = argument;
    for (size_t slot = 0;; slot = (slot + 1) % r->slots) {
        pthread_mutex_lock(&r->lock);
        while (r->filled == 0) pthread_cond_wait(&r->changed, &r->lock);
        pthread_mutex_unlock(&r->lock);
        ssize_t got = r->lengths[slot];
        if (got == 0) return NULL;
        char *buffer = r->buffers[slot];
        writeAll(r->to, buffer, (size_t)got, r->writing);
        if (r->blocks && !r->hashOnRead) blocksTake(r->blocks, (const unsigned char *)buffer, (size_t)got);
        pthread_mutex_lock(&r->lock);
        r->filled--;
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
    }
}

// As copy(), on two threads through `slots` buffers of `readBytes`, one read each.
static void handOff(int from, int to, size_t slots, size_t readBytes, struct blocks *blocks, int hashOnRead,
                    const char *reading, const char *writing) {
    struct ring r = {.to = to, .slots = slots, .blocks = blocks, .hashOnRead = hashOnRead, .writing = writing};
    r.buffers = calloc(slots, sizeof *r.buffers);
    r.lengths = calloc(slots, sizeof *r.lengths);
    if (!r.buffers || !r.lengths) fail("calloc");
    for (size_t i = 0; i < slots; i++)
        if (!(r.buffers[i] = malloc(readBytes))) fail("malloc");
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.changed, NULL);
    pthread_t writer;
    if (pthread_create(&writer, NULL, ringWrite, &r) != 0) fail("pthread_create");
    for (size_t slot = 0;; slot = (slot + 1) % slots) {
        pthread_mutex_lock(&r.lock);
        while (r.filled == slots) pthread_cond_wait(&r.changed, &r.lock);
        pthread_mutex_unlock(&r.lock);
        ssize_t got = readSome(from, r.buffers[slot], readBytes, reading);
        if (got > 0 && blocks && hashOnRead) blocksTake(blocks, (const unsigned char *)r.buffers[slot], (size_t)got);
        r.lengths[slot] = got;
        pthread_mutex_lock(&r.lock);
        r.filled++;
        pthread_cond_broadcast(&r.changed);
        pthread_mutex_unlock(&r.lock);
        if (got == 0) break;
    }
    if (pthread_join(writer, NULL) != 0) fail("pthread_join");
    for (size_t i = 0; i < slots; i++) free(r.buffers[i]);
    free(r.buffers);
    free(r.lengths);
}

static size_t handOffSlots(void) {
    const char *knob = getenv("HAND_OFF");
    if (!knob || strcmp(knob, "1") != 0) return 0;
    const char *slots = getenv("HAND_OFF_SLOTS");
    size_t count = slots ? strtoul(slots, NULL, 10) : 64;
    return count > 1 ? count : 2;
}

// Receives the file into `destination`; with `blocks`, hashes it as it comes.
static void receive(int listener, const char *destination, size_t bufferBytes, struct blocks *blocks) {
    int connection = accept(listener, NULL, NULL);
    if (connection < 0) fail("accept");
    int file = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (file < 0) fail("open destination");
    size_t readBytes = getenv("RECEIVE_READ") ? strtoul(getenv("RECEIVE_READ"), NULL, 10) : 0;
    if (readBytes == 0 || readBytes > bufferBytes) readBytes = bufferBytes;
    size_t slots = handOffSlots();
    if (slots > 0) {
        handOff(connection, file, slots, readBytes, blocks, 0, "read socket", "write file");
    } else {
        char *buffer = malloc(readBytes);
        if (!buffer) fail("malloc");
        copy(connection, file, buffer, readBytes, blocks, "read socket", "write file");
        free(buffer);
    }
    if (close(file) != 0) fail("close destination");
    close(connection);
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--self-test") == 0) return selfTest();
    if (argc < 3) {
        fprintf(stderr, "usage: %s SOURCE DESTINATION [BUFFER_BYTES]\n", argv[0]);
        return 2;
    }
    size_t bufferBytes = argc > 3 ? strtoul(argv[3], NULL, 10) : (1u << 20);
    if (bufferBytes == 0) bufferBytes = 1u << 20;

    int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0) fail("socket");
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = 0};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (bind(listener, (struct sockaddr *)&address, length) != 0) fail("bind");
    if (listen(listener, 1) != 0) fail("listen");
    if (getsockname(listener, (struct sockaddr *)&address, &length) != 0) fail("getsockname");

    int source = open(argv[1], O_RDONLY | O_CLOEXEC);
    if (source < 0) fail("open source");
    struct stat status;
    if (fstat(source, &status) != 0) fail("fstat");

    const char *hashKnob = getenv("BLOCK_HASH");
    int xxh3 = hashKnob && strcmp(hashKnob, "xxh3") == 0;
    int hashing = xxh3 || (hashKnob && (strcmp(hashKnob, "1") == 0 || strcmp(hashKnob, "xxh64") == 0));
    if (hashKnob && *hashKnob && strcmp(hashKnob, "0") != 0 && !hashing) {
        fprintf(stderr, "BLOCK_HASH=%s: 1, xxh64 or xxh3\n", hashKnob);
        return 2;
    }
    int digests[2] = {-1, -1};  // the receiver's sum of block digests, back to the sender
    if (hashing && pipe(digests) != 0) fail("pipe");

    pid_t child = fork();
    if (child < 0) fail("fork");
    if (child == 0) {
        struct blocks blocks;
        blocksStart(&blocks, xxh3);
        receive(listener, argv[2], bufferBytes, hashing ? &blocks : NULL);
        if (hashing) {
            uint64_t sum = blocksFinish(&blocks);
            if (write(digests[1], &sum, sizeof sum) != (ssize_t)sizeof sum) fail("write digests");
        }
        _exit(0);
    }
    close(listener);
    if (hashing) close(digests[1]);
    struct blocks blocks;
    blocksStart(&blocks, xxh3);

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int connection = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (connection < 0) fail("socket");
    if (connect(connection, (struct sockaddr *)&address, sizeof address) != 0) fail("connect");
    char *buffer = malloc(bufferBytes);
    if (!buffer) fail("malloc");
    size_t slots = handOffSlots();
    const char *sendfileKnob = getenv("SENDFILE");
    if (sendfileKnob && strcmp(sendfileKnob, "1") == 0) {
        if (hashing) {
            fprintf(stderr, "BLOCK_HASH needs the sender to read the file: not with SENDFILE=1\n");
            return 2;
        }
        for (;;) {
            ssize_t sent = sendfile(connection, source, NULL, bufferBytes);
            if (sent < 0 && errno == EINTR) continue;
            if (sent < 0) fail("sendfile");
            if (sent == 0) break;
        }
    } else if (slots > 0) {
        handOff(source, connection, slots, bufferBytes, hashing ? &blocks : NULL, 1, "read file", "write socket");
    } else {
        copy(source, connection, buffer, bufferBytes, hashing ? &blocks : NULL, "read file", "write socket");
    }
    close(connection);
    int childStatus = 0;
    if (waitpid(child, &childStatus, 0) != child) fail("waitpid");
    clock_gettime(CLOCK_MONOTONIC, &end);
    if (!WIFEXITED(childStatus) || WEXITSTATUS(childStatus) != 0) {
        fprintf(stderr, "the receiver failed\n");
        return 1;
    }
    if (hashing) {
        uint64_t received = 0;
        if (read(digests[0], &received, sizeof received) != (ssize_t)sizeof received) fail("read digests");
        if (received != blocksFinish(&blocks)) {
            fprintf(stderr, "the receiver's block digests differ from the sender's\n");
            return 1;
        }
    }

    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    double elapsed = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    printf("%lld %.6f %.1f %.3f %.3f\n", (long long)status.st_size, elapsed, status.st_size / elapsed / 1e6,
           seconds(self.ru_utime) + seconds(self.ru_stime), seconds(children.ru_utime) + seconds(children.ru_stime));
    return 0;
}
