// The floor for a file sent over TCP on one host: a sender that reads a file and writes it to a socket,
// and a receiver (a child process) that reads the socket and writes a new file; nothing else (no framing,
// no hash, no encryption). Scripts/bench-resources.sh runs it beside the library's resource transfer, so
// that the library is compared with what reading, sending, receiving and writing the bytes costs on the
// same machine in the same run.
//
//   file-over-tcp SOURCE DESTINATION [BUFFER_BYTES]
//   file-over-tcp --self-test      checks its XXH64 against reference digests and exits
//
// Four knobs, to see what the kernel charges for how a file crosses (results/resources-2026-12-01/), what the
// protocol's own check adds to the floor (results/resources-2026-12-01-floor-hash/) and what a hand-off between two
// threads at each end adds (results/resources-2026-12-01-hand-off/):
//   RECEIVE_READ=BYTES  the receiver reads the socket at most BYTES at a time (default: BUFFER_BYTES)
//   SENDFILE=1          the sender hands the file to the socket with sendfile(2) instead of reading and writing it
//   BLOCK_HASH=1        both ends take XXH64 (seed 0) of every 1 MiB block of the file as its bytes pass, as a
//                       resource's writer and reader do (docs/PROTOCOL.md, BLOCK); the receiver hands its digests'
//                       sum back through a pipe and the run fails when it differs from the sender's
//   HAND_OFF=1          each end copies on two threads, as the library's resource transfer does: one reads into a ring
//                       of HAND_OFF_SLOTS buffers (default 64), allocated once, each of one read's size (BUFFER_BYTES,
//                       or the receiver's RECEIVE_READ), and hands each read to the other, which writes it (and hashes
//                       it with BLOCK_HASH=1: the sender as it reads the file, the receiver as it writes the file,
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

// The blocks of a file as its bytes pass: each block's digest added into `sum` as the block ends.
#define BLOCK_BYTES (1u << 20)
struct blocks {
    struct hasher hasher;
    size_t inBlock;
    uint64_t sum;
};

static void blocksTake(struct blocks *b, const unsigned char *bytes, size_t count) {
    while (count > 0) {
        size_t take = BLOCK_BYTES - b->inBlock < count ? BLOCK_BYTES - b->inBlock : count;
        hasherUpdate(&b->hasher, bytes, take);
        b->inBlock += take;
        bytes += take;
        count -= take;
        if (b->inBlock == BLOCK_BYTES) {
            b->sum += hasherFinish(&b->hasher);
            hasherStart(&b->hasher);
            b->inBlock = 0;
        }
    }
}

static uint64_t blocksFinish(struct blocks *b) {
    if (b->inBlock > 0) b->sum += hasherFinish(&b->hasher);
    return b->sum;
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
    // A whole block, in reads of uneven sizes: bytes (i * 31 + 7) mod 256, as BlockHasherTests has it.
    unsigned char *block = malloc(BLOCK_BYTES);
    if (!block) fail("malloc");
    for (size_t i = 0; i < BLOCK_BYTES; i++) block[i] = (unsigned char)(i * 31 + 7);
    struct blocks blocks = {.inBlock = 0, .sum = 0};
    hasherStart(&blocks.hasher);
    for (size_t at = 0, piece = 1; at < BLOCK_BYTES; at += piece, piece = piece * 3 % 65537 + 1) {
        if (piece > BLOCK_BYTES - at) piece = BLOCK_BYTES - at;
        blocksTake(&blocks, block + at, piece);
    }
    free(block);
    if (blocksFinish(&blocks) != 0x292cc494f5a2e5ecULL) {
        fprintf(stderr, "XXH64 of the 1 MiB pattern is %016llx\n", (unsigned long long)blocksFinish(&blocks));
        return 1;
    }
    printf("XXH64: the reference digests match\n");
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
    int hashing = hashKnob && strcmp(hashKnob, "1") == 0;
    int digests[2] = {-1, -1};  // the receiver's sum of block digests, back to the sender
    if (hashing && pipe(digests) != 0) fail("pipe");

    pid_t child = fork();
    if (child < 0) fail("fork");
    if (child == 0) {
        struct blocks blocks = {.inBlock = 0, .sum = 0};
        hasherStart(&blocks.hasher);
        receive(listener, argv[2], bufferBytes, hashing ? &blocks : NULL);
        if (hashing) {
            uint64_t sum = blocksFinish(&blocks);
            if (write(digests[1], &sum, sizeof sum) != (ssize_t)sizeof sum) fail("write digests");
        }
        _exit(0);
    }
    close(listener);
    if (hashing) close(digests[1]);
    struct blocks blocks = {.inBlock = 0, .sum = 0};
    hasherStart(&blocks.hasher);

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
            fprintf(stderr, "BLOCK_HASH=1 needs the sender to read the file: not with SENDFILE=1\n");
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
