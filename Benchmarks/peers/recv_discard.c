/* The reference of the stream and download rows: the least a client can do to receive a body,
 * and to save it (a floor of work, not a ceiling of speed: curl outran it on 2026-11-25).
 *
 * usage: recv_discard [--buffer=BYTES] [--lowat=BYTES] [--spin] [--start=BYTES] HOST PORT PATH [OUTPUT]
 * Sends one HTTP/1.1 GET with Connection: close, reads the answer with recv() into one buffer
 * (1 MiB unless --buffer says otherwise; curl 7.88 reads into 100 KiB) until the server closes,
 * counts the body bytes after the head and discards them, or
 * with OUTPUT write()s them to that file (created or truncated; closed before the clock stops,
 * not fsynced, as curl -o does not).
 * Prints one JSON line in courier-bench's shape (seconds from connect to the last byte, bytes,
 * ok when the body has the head's Content-Length). No parsing beyond that: not a client, a floor.
 *
 * Two switches test why curl outruns this loop (BENCHMARKS.md, "Why curl outruns a blocking
 * receive loop"): --lowat sets SO_RCVLOWAT, so a blocked recv() wakes only once that many bytes
 * wait (or the peer closes), and --spin polls the socket with MSG_DONTWAIT without ever sleeping,
 * which burns a core and is a measurement, not a way to write a client.
 *
 * The buffer starts 2048 bytes into a 4 KiB page, as Courier's wide read buffers do
 * (Sources/Courier/Transport/MidPageBuffers.swift): on AMD EPYC the kernel's copy into a buffer
 * that starts near a page boundary ran at half speed (BENCHMARKS.md, "Where a read buffer
 * starts"). --start=BYTES puts it elsewhere in its page; --start=16 is where glibc's malloc puts
 * a mebibyte it maps, which is what this loop used before 2026-11-26.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int save(int fd, const char *bytes, size_t count) {
    while (count > 0) {
        ssize_t done = write(fd, bytes, count);
        if (done < 0) { if (errno == EINTR) continue; perror("write"); return 0; }
        bytes += done;
        count -= (size_t)done;
    }
    return 1;
}

int main(int argc, char **argv) {
    size_t capacity = 1 << 20;
    int lowat = 0, spin = 0;
    size_t start_in_page = 2048;
    for (; argc > 1 && strncmp(argv[1], "--", 2) == 0; argv++, argc--) {
        if (strncmp(argv[1], "--buffer=", 9) == 0) capacity = (size_t)atoll(argv[1] + 9);
        else if (strncmp(argv[1], "--lowat=", 8) == 0) lowat = atoi(argv[1] + 8);
        else if (strcmp(argv[1], "--spin") == 0) spin = 1;
        else if (strncmp(argv[1], "--start=", 8) == 0) start_in_page = (size_t)atoll(argv[1] + 8);
        else argc = 0; /* an unknown switch: print the usage */
    }
    if ((argc != 4 && argc != 5) || capacity < 4096 || lowat < 0 || start_in_page >= 4096) {
        fprintf(stderr, "usage: recv_discard [--buffer=BYTES, at least 4096] [--lowat=BYTES] [--spin]"
                        " [--start=BYTES in a page, below 4096] HOST PORT PATH [OUTPUT]\n");
        return 2;
    }
    /* Rounding up to a page takes up to 4095 bytes, and the start in the page fewer than 4096. */
    char *block = malloc(capacity + 8192);
    if (!block) { perror("malloc"); return 1; }
    char *buffer = (char *)((((unsigned long)block + 4095) & ~4095UL) + start_in_page);
    double start = now();
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[2]))};
    if (fd < 0 || inet_pton(AF_INET, argv[1], &address.sin_addr) != 1
        || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) { perror("connect"); return 1; }
    if (lowat > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof lowat) != 0) { perror("SO_RCVLOWAT"); return 1; }
    int length = snprintf(buffer, capacity, "GET %s HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n\r\n",
                          argv[3], argv[1], argv[2]);
    if (send(fd, buffer, (size_t)length, 0) != length) { perror("send"); return 1; }
    int out = -1;
    if (argc == 5 && (out = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) { perror("open"); return 1; }
    long long total = 0, head = -1, declared = -1;
    size_t kept = 0; /* bytes of the head kept in buffer while it is incomplete */
    for (;;) {
        ssize_t got = recv(fd, buffer + kept, capacity - kept - 1, spin ? MSG_DONTWAIT : 0);
        if (got < 0 && spin && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (got < 0) { perror("recv"); return 1; }
        if (got == 0) break;
        if (head < 0) {
            kept += (size_t)got;
            buffer[kept] = 0;
            char *end = strstr(buffer, "\r\n\r\n");
            if (!end) continue;
            head = end + 4 - buffer;
            char *field = strcasestr(buffer, "\r\ncontent-length:");
            if (field && field < end) declared = atoll(field + 17);
            total = (long long)kept - head;
            if (out >= 0 && total > 0 && !save(out, buffer + head, (size_t)total)) return 1;
            kept = 0;
        } else {
            total += got;
            if (out >= 0 && !save(out, buffer, (size_t)got)) return 1;
        }
    }
    if (out >= 0 && close(out) != 0) { perror("close"); return 1; }
    double seconds = now() - start;
    close(fd);
    printf("{\"workload\": \"%s\", \"impl\": \"%s\", ", out >= 0 ? "download" : "stream", out >= 0 ? "recv-write" : "recv-discard");
    printf("\"seconds\": %.6f, \"ops\": 1, \"bytes\": %lld, "
           "\"ok\": %s, \"detail\": \"%lld body bytes, Content-Length %lld\"}\n",
           seconds, total, declared >= 0 && total == declared ? "true" : "false", total, declared);
    return 0;
}
