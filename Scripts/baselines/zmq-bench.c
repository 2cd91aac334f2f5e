// ZeroMQ baselines for Scripts/bench-baselines.sh: the same loopback figures the test-runner reports,
// measured through libzmq over TCP, server and client in separate processes.
//
//   pull ENDPOINT SECONDS                      bind PULL, receive until the sender's empty end message
//                                              (or SECONDS + 10 s); print the bytes/s measured here,
//                                              from the first message to the last.
//   push ENDPOINT SIZE SECONDS MAX_MESSAGES    connect PUSH, send SIZE-byte messages for SECONDS or
//                                              MAX_MESSAGES (whichever first), then the empty end message.
//   rep ENDPOINT SECONDS                       bind REP, echo every message until an empty one (or
//                                              SECONDS + 10 s).
//   req ENDPOINT SIZE SECONDS MAX_ROUNDS       connect REQ, 1,000 warm-up round trips, then SIZE-byte
//                                              round trips for SECONDS or MAX_ROUNDS; print p50/p90/p99 (us).
//   version                                    print the version of the libzmq linked in.
//
// Each result is one JSON line on stdout. Every loop ends by itself: send and receive time out after
// 2 s, and every mode has a deadline. High-water marks of 64 messages bound the memory 1 MiB messages take.
//   gcc -O2 -Wall -Wextra -std=c99 -o zmq-bench zmq-bench.c -lzmq
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

enum { timeoutMs = 2000, highWaterMark = 64, warmupRounds = 1000, graceSeconds = 10 };

static double now(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (double)time.tv_sec + (double)time.tv_nsec / 1e9;
}

static void fail(const char *what) {
    fprintf(stderr, "zmq-bench: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(1);
}

// A socket with bounded timeouts, queues and linger, bound (server) or connected (client).
static void *open_socket(void *context, int type, const char *endpoint, int bind) {
    void *socket = zmq_socket(context, type);
    int timeout = timeoutMs, hwm = highWaterMark, linger = timeoutMs;
    if (!socket) fail("zmq_socket");
    zmq_setsockopt(socket, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_setsockopt(socket, ZMQ_SNDTIMEO, &timeout, sizeof timeout);
    zmq_setsockopt(socket, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt(socket, ZMQ_RCVHWM, &hwm, sizeof hwm);
    zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof linger);
    if ((bind ? zmq_bind(socket, endpoint) : zmq_connect(socket, endpoint)) != 0) fail(endpoint);
    return socket;
}

static void pull(void *socket, double seconds) {
    double deadline = now() + seconds + graceSeconds, first = 0, last = 0;
    long long bytes = 0, messages = 0;
    zmq_msg_t message;
    zmq_msg_init(&message);
    while (now() < deadline) {
        if (zmq_msg_recv(&message, socket, 0) < 0) {
            if (zmq_errno() == EAGAIN) continue;  // nothing for 2 s: check the deadline
            fail("receive");
        }
        size_t size = zmq_msg_size(&message);
        if (size == 0) break;  // the sender's end message
        last = now();
        if (messages++ == 0) first = last;  // the clock starts at the first message: it is not counted
        else bytes += (long long)size;
    }
    zmq_msg_close(&message);
    if (messages < 2) { fprintf(stderr, "zmq-bench: fewer than 2 messages received\n"); exit(1); }
    printf("{\"bytesPerSecond\": %.0f, \"messages\": %lld, \"seconds\": %.3f}\n",
           (double)bytes / (last - first), messages, last - first);
}

static void push(void *socket, size_t size, double seconds, long long maxMessages) {
    double end = now() + seconds;
    for (long long sent = 0; sent < maxMessages && now() < end; sent++) {
        zmq_msg_t message;
        if (zmq_msg_init_size(&message, size) != 0) fail("zmq_msg_init_size");
        memset(zmq_msg_data(&message), 'x', size);
        if (zmq_msg_send(&message, socket, 0) < 0) fail("send");  // the receiver was gone for 2 s
    }
    if (zmq_send(socket, "", 0, 0) < 0) fail("send the end message");
}

static void rep(void *socket, double seconds) {
    double deadline = now() + seconds + graceSeconds;
    char buffer[65536];
    while (now() < deadline) {
        int size = zmq_recv(socket, buffer, sizeof buffer, 0);
        if (size < 0) {
            if (zmq_errno() == EAGAIN) continue;
            fail("receive");
        }
        if (size > (int)sizeof buffer) size = (int)sizeof buffer;  // truncated: only for huge messages
        if (zmq_send(socket, buffer, (size_t)size, 0) < 0) fail("send");
        if (size == 0) break;  // the client's end message, answered so that its REQ socket is not left waiting
    }
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Nearest rank: the smallest sample with at least percent % of the n samples at or below it.
static double percentile(const double *sorted, long n, long percent) {
    long rank = (percent * n + 99) / 100;  // ceil(percent / 100 * n)
    return sorted[rank < 1 ? 0 : rank - 1];
}

static void round_trip(void *socket, char *buffer, size_t size) {
    if (zmq_send(socket, buffer, size, 0) < 0) fail("send");
    if (zmq_recv(socket, buffer, size, 0) != (int)size) fail("receive the echo");
}

static void req(void *socket, size_t size, double seconds, long maxRounds) {
    char *buffer = calloc(size, 1);
    double *samples = malloc(sizeof(double) * (size_t)maxRounds);
    if (!buffer || !samples) { fprintf(stderr, "zmq-bench: out of memory\n"); exit(1); }
    memset(buffer, 'x', size);
    for (int i = 0; i < warmupRounds; i++) round_trip(socket, buffer, size);
    long n = 0;
    for (double end = now() + seconds; n < maxRounds && now() < end; n++) {
        double start = now();
        round_trip(socket, buffer, size);
        samples[n] = (now() - start) * 1e6;
    }
    round_trip(socket, buffer, 0);  // the end message: the server answers it and stops
    if (n == 0) { fprintf(stderr, "zmq-bench: no round trip measured\n"); exit(1); }
    qsort(samples, (size_t)n, sizeof(double), compare);
    printf("{\"p50Microseconds\": %.3f, \"p90Microseconds\": %.3f, \"p99Microseconds\": %.3f, \"samples\": %ld}\n",
           percentile(samples, n, 50), percentile(samples, n, 90), percentile(samples, n, 99), n);
    free(samples);
    free(buffer);
}

static void usage(void) {
    fprintf(stderr, "usage: zmq-bench pull|rep ENDPOINT SECONDS\n"
                    "       zmq-bench push|req ENDPOINT SIZE SECONDS MAX_COUNT\n"
                    "       zmq-bench version\n");
    exit(2);
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "version") == 0) {
        int major, minor, patch;
        zmq_version(&major, &minor, &patch);
        printf("%d.%d.%d\n", major, minor, patch);
        return 0;
    }
    int server = argc == 4 && (strcmp(argv[1], "pull") == 0 || strcmp(argv[1], "rep") == 0);
    int client = argc == 6 && (strcmp(argv[1], "push") == 0 || strcmp(argv[1], "req") == 0);
    if (!server && !client) usage();
    double seconds = atof(argv[server ? 3 : 4]);
    long size = client ? atol(argv[3]) : 0, count = client ? atol(argv[5]) : 0;
    if (seconds <= 0 || (client && (size < 1 || count < 1))) usage();
    void *context = zmq_ctx_new();
    if (!context) fail("zmq_ctx_new");
    int type = strcmp(argv[1], "pull") == 0   ? ZMQ_PULL
               : strcmp(argv[1], "push") == 0 ? ZMQ_PUSH
               : strcmp(argv[1], "rep") == 0  ? ZMQ_REP
                                              : ZMQ_REQ;
    void *socket = open_socket(context, type, argv[2], server);
    switch (type) {
    case ZMQ_PULL: pull(socket, seconds); break;
    case ZMQ_PUSH: push(socket, (size_t)size, seconds, count); break;
    case ZMQ_REP: rep(socket, seconds); break;
    default: req(socket, (size_t)size, seconds, count); break;
    }
    zmq_close(socket);
    zmq_ctx_term(context);
    return 0;
}
