/* What a client that only uploads can reach: a file POSTed to a sink by sendfile() or by
 * read() + send(), for comparing the upload row's peers with the machine (BENCHMARKS.md, "The
 * full run of 2026-11-25, 08:02 UTC"). Not a client: no response parsing beyond printing it.
 *
 * usage: sendfile_upload MODE CHUNK PORT FILE
 *   MODE  sendfile    blocking sendfile() of CHUNK bytes at a time
 *         nbsendfile  the same on a non-blocking socket, poll() when a call would block
 *         copy        read() CHUNK bytes into one buffer, then send() them
 * Sends `POST /upload` with the file as the body (Content-Length, Connection: close) to
 * 127.0.0.1:PORT, reads the answer until the server closes, and prints one line: the mode, the
 * chunk, GB/s from connect to the answer's end, and the answer's body.
 *
 * Build and run against the benchmark's sink (`courier-bench serve all --sink-port-file F`):
 *   cc -O2 -o /tmp/sendfile_upload Benchmarks/peers/sendfile_upload.c
 *   /tmp/sendfile_upload nbsendfile 4194304 "$(cat F)" Benchmarks/.build/work/big.bin
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int send_all(int socket_fd, const char *bytes, size_t count) {
    while (count > 0) {
        ssize_t done = send(socket_fd, bytes, count, 0);
        if (done < 0) { if (errno == EINTR) continue; perror("send"); return 0; }
        bytes += done;
        count -= (size_t)done;
    }
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: sendfile_upload sendfile|nbsendfile|copy CHUNK PORT FILE\n");
        return 2;
    }
    const char *mode = argv[1];
    long chunk = atol(argv[2]);
    int file = open(argv[4], O_RDONLY | O_CLOEXEC);
    struct stat info;
    if (chunk <= 0 || file < 0 || fstat(file, &info) != 0) { perror(argv[4]); return 1; }
    long long size = info.st_size;

    double start = now();
    int socket_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[3]))};
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    if (socket_fd < 0 || connect(socket_fd, (struct sockaddr *)&address, sizeof address) != 0) { perror("connect"); return 1; }
    char head[256];
    int length = snprintf(head, sizeof head,
                          "POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
                          "Content-Length: %lld\r\nConnection: close\r\n\r\n", size);
    if (!send_all(socket_fd, head, (size_t)length)) return 1;

    if (strcmp(mode, "copy") == 0) {
        char *buffer = malloc((size_t)chunk);
        if (!buffer) { perror("malloc"); return 1; }
        for (;;) {
            ssize_t got = read(file, buffer, (size_t)chunk);
            if (got < 0) { if (errno == EINTR) continue; perror("read"); return 1; }
            if (got == 0) break;
            if (!send_all(socket_fd, buffer, (size_t)got)) return 1;
        }
    } else {
        int nonblocking = strcmp(mode, "nbsendfile") == 0;
        if (!nonblocking && strcmp(mode, "sendfile") != 0) { fprintf(stderr, "unknown mode %s\n", mode); return 2; }
        if (nonblocking) fcntl(socket_fd, F_SETFL, O_NONBLOCK);
        off_t offset = 0;
        while (offset < size) {
            long long left = size - offset;
            ssize_t sent = sendfile(socket_fd, file, &offset, (size_t)(left < chunk ? left : chunk));
            if (sent < 0 && (errno == EAGAIN || errno == EINTR)) {
                struct pollfd wait_for = {.fd = socket_fd, .events = POLLOUT};
                poll(&wait_for, 1, -1);
                continue;
            }
            if (sent <= 0) { perror("sendfile"); return 1; }
        }
        if (nonblocking) fcntl(socket_fd, F_SETFL, 0);
    }

    char answer[4096];
    size_t kept = 0;
    ssize_t got;
    while ((got = recv(socket_fd, answer + kept, sizeof answer - 1 - kept, 0)) > 0) kept += (size_t)got;
    answer[kept] = 0;
    double seconds = now() - start;
    close(socket_fd);
    const char *body = strstr(answer, "\r\n\r\n");
    printf("%s %ld: %.2f GB/s %s\n", mode, chunk, size / seconds / 1e9, body ? body + 4 : "(no answer)");
    return 0;
}
