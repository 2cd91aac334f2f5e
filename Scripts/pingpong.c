// A baseline for the round-trip analysis in README (Performance): two threads ping-pong 64 bytes over
// loopback TCP with blocking sockets, TCP_NODELAY. Each side may spin a given number of microseconds
// before it answers (work), and the two threads may be pinned to cores 0 and 1. Prints the p50 round trip.
//
//   cc -O2 -pthread -o pingpong Scripts/pingpong.c && ./pingpong WORK_US [PIN]
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { messageSize = 64, warmup = 2000, count = 20000 };
static int workMicroseconds, pin, listener;

static long nowNanoseconds(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return time.tv_sec * 1000000000L + time.tv_nsec;
}

static void work(void) {
    long end = nowNanoseconds() + workMicroseconds * 1000L;
    while (workMicroseconds > 0 && nowNanoseconds() < end) {}
}

static void pinTo(int core) {
    if (!pin) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static int readExactly(int fd, char *buffer) {
    for (int got = 0; got < messageSize;) {
        ssize_t n = read(fd, buffer + got, messageSize - got);
        if (n <= 0) return 0;
        got += (int)n;
    }
    return 1;
}

static void noDelay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void *echo(void *unused) {
    (void)unused;
    pinTo(1);
    int fd = accept(listener, NULL, NULL);
    noDelay(fd);
    char buffer[messageSize];
    while (readExactly(fd, buffer)) {
        work();
        if (write(fd, buffer, messageSize) != messageSize) break;
    }
    close(fd);
    return NULL;
}

static int compare(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s WORK_US [PIN]\n", argv[0]);
        return 2;
    }
    workMicroseconds = atoi(argv[1]);
    pin = argc > 2 && atoi(argv[2]) != 0;
    pinTo(0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    listener = socket(AF_INET, SOCK_STREAM, 0);
    if (bind(listener, (struct sockaddr *)&address, length) != 0 || listen(listener, 1) != 0
        || getsockname(listener, (struct sockaddr *)&address, &length) != 0) {
        perror("listen");
        return 1;
    }
    pthread_t thread;
    pthread_create(&thread, NULL, echo, NULL);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&address, length) != 0) {
        perror("connect");
        return 1;
    }
    noDelay(fd);
    char buffer[messageSize] = {0};
    long *samples = malloc(sizeof(long) * count);
    for (int index = 0; index < warmup + count; index++) {
        long start = nowNanoseconds();
        if (write(fd, buffer, messageSize) != messageSize || !readExactly(fd, buffer)) return 1;
        work();
        if (index >= warmup) samples[index - warmup] = nowNanoseconds() - start;
    }
    close(fd);
    pthread_join(thread, NULL);
    qsort(samples, count, sizeof(long), compare);
    printf("work %d us per side, %s: round trip p50 %.1f us\n", workMicroseconds,
           pin ? "pinned to cores 0 and 1" : "not pinned", samples[count / 2] / 1000.0);
    return 0;
}
