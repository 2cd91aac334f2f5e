// The floor for a file sent over TCP on one host: a sender that reads a file and writes it to a socket,
// and a receiver (a child process) that reads the socket and writes a new file; nothing else (no framing,
// no hash, no encryption). Scripts/bench-resources.sh runs it beside the library's resource transfer, so
// that the library is compared with what reading, sending, receiving and writing the bytes costs on the
// same machine in the same run.
//
//   file-over-tcp SOURCE DESTINATION [BUFFER_BYTES]
//
// Two knobs, to see what the kernel charges for how a file crosses (results/resources-2026-12-01/):
//   RECEIVE_READ=BYTES  the receiver reads the socket at most BYTES at a time (default: BUFFER_BYTES)
//   SENDFILE=1          the sender hands the file to the socket with sendfile(2) instead of reading and writing it
//
// Prints one line: "bytes seconds megabytesPerSecond senderCPUSeconds receiverCPUSeconds". Loopback only.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
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

// Reads `from` to its end and writes everything to `to`, `bufferBytes` at a time.
static void copy(int from, int to, char *buffer, size_t bufferBytes, const char *reading, const char *writing) {
    for (;;) {
        ssize_t got = read(from, buffer, bufferBytes);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) fail(reading);
        if (got == 0) return;
        for (ssize_t done = 0; done < got;) {
            ssize_t wrote = write(to, buffer + done, (size_t)(got - done));
            if (wrote < 0 && errno == EINTR) continue;
            if (wrote < 0) fail(writing);
            done += wrote;
        }
    }
}

static void receive(int listener, const char *destination, size_t bufferBytes) {
    int connection = accept(listener, NULL, NULL);
    if (connection < 0) fail("accept");
    int file = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (file < 0) fail("open destination");
    char *buffer = malloc(bufferBytes);
    if (!buffer) fail("malloc");
    size_t readBytes = getenv("RECEIVE_READ") ? strtoul(getenv("RECEIVE_READ"), NULL, 10) : 0;
    if (readBytes == 0 || readBytes > bufferBytes) readBytes = bufferBytes;
    copy(connection, file, buffer, readBytes, "read socket", "write file");
    if (close(file) != 0) fail("close destination");
    close(connection);
}

int main(int argc, char **argv) {
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

    pid_t child = fork();
    if (child < 0) fail("fork");
    if (child == 0) {
        receive(listener, argv[2], bufferBytes);
        _exit(0);
    }
    close(listener);

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int connection = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (connection < 0) fail("socket");
    if (connect(connection, (struct sockaddr *)&address, sizeof address) != 0) fail("connect");
    char *buffer = malloc(bufferBytes);
    if (!buffer) fail("malloc");
    const char *sendfileKnob = getenv("SENDFILE");
    if (sendfileKnob && strcmp(sendfileKnob, "1") == 0) {
        for (;;) {
            ssize_t sent = sendfile(connection, source, NULL, bufferBytes);
            if (sent < 0 && errno == EINTR) continue;
            if (sent < 0) fail("sendfile");
            if (sent == 0) break;
        }
    } else {
        copy(source, connection, buffer, bufferBytes, "read file", "write socket");
    }
    close(connection);
    int childStatus = 0;
    if (waitpid(child, &childStatus, 0) != child) fail("waitpid");
    clock_gettime(CLOCK_MONOTONIC, &end);
    if (!WIFEXITED(childStatus) || WEXITSTATUS(childStatus) != 0) {
        fprintf(stderr, "the receiver failed\n");
        return 1;
    }

    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    double elapsed = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    printf("%lld %.6f %.1f %.3f %.3f\n", (long long)status.st_size, elapsed, status.st_size / elapsed / 1e6,
           seconds(self.ru_utime) + seconds(self.ru_stime), seconds(children.ru_utime) + seconds(children.ru_stime));
    return 0;
}
