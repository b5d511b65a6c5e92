/* A reference for the download rows: recv_discard.c's loop split in two threads, as a client that
 * keeps reading while its file is written must be (Courier's event loop reads, a task writes).
 *
 * usage: recv_write_pipelined [--depth=BUFFERS] HOST PORT PATH OUTPUT
 * The reading thread recv()s into a ring of BUFFERS 1 MiB buffers (8 unless --depth says
 * otherwise: Courier's download read-ahead, TaskOverrides.downloadReadAheadLimit, is 8 MiB) and
 * waits only when every buffer is full; the writing thread write()s each buffer to OUTPUT in order
 * and hands it back. Buffers start 2048 bytes into a page, as recv_discard.c's and Courier's do.
 * What it shows (BENCHMARKS.md, "What reading ahead of the writer costs"): the CPU a pipelined
 * download pays over the single loop, with no Swift, no HTTP parser and no allocator in it.
 * Prints one JSON line in courier-bench's shape, as recv_discard.c does.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CAPACITY (1 << 20)

static char **buffers;
static size_t *lengths;
static long depth, filled, emptied; /* buffers handed to the writer, and handed back */
static int reading_done, write_failed;
static int output = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *writer(void *unused) {
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (emptied == filled && !reading_done) pthread_cond_wait(&changed, &lock);
        if (emptied == filled) { pthread_mutex_unlock(&lock); return NULL; }
        long slot = emptied % depth;
        pthread_mutex_unlock(&lock);
        const char *bytes = buffers[slot];
        size_t count = lengths[slot];
        while (count > 0) {
            ssize_t done = write(output, bytes, count);
            if (done < 0 && errno == EINTR) continue;
            if (done < 0) {
                perror("write");
                pthread_mutex_lock(&lock);
                write_failed = 1;
                pthread_cond_broadcast(&changed);
                pthread_mutex_unlock(&lock);
                return NULL;
            }
            bytes += done;
            count -= (size_t)done;
        }
        pthread_mutex_lock(&lock);
        emptied++;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
    }
}

/* Hands `count` bytes at the start of the reader's current buffer to the writer. */
static int hand_over(size_t count) {
    pthread_mutex_lock(&lock);
    lengths[filled % depth] = count;
    filled++;
    pthread_cond_broadcast(&changed);
    /* Wait for a free buffer to read into next. */
    while (filled - emptied >= depth && !write_failed) pthread_cond_wait(&changed, &lock);
    int ok = !write_failed;
    pthread_mutex_unlock(&lock);
    return ok;
}

int main(int argc, char **argv) {
    depth = 8;
    for (; argc > 1 && strncmp(argv[1], "--", 2) == 0; argv++, argc--) {
        if (strncmp(argv[1], "--depth=", 8) == 0) depth = atol(argv[1] + 8);
        else argc = 0;
    }
    if (argc != 5 || depth < 1) {
        fprintf(stderr, "usage: recv_write_pipelined [--depth=BUFFERS, at least 1] HOST PORT PATH OUTPUT\n");
        return 2;
    }
    buffers = calloc((size_t)depth, sizeof *buffers);
    lengths = calloc((size_t)depth, sizeof *lengths);
    if (!buffers || !lengths) { perror("calloc"); return 1; }
    for (long i = 0; i < depth; i++) {
        char *block = malloc(CAPACITY + 8192);
        if (!block) { perror("malloc"); return 1; }
        buffers[i] = (char *)((((unsigned long)block + 4095) & ~4095UL) + 2048);
    }
    double start = now();
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[2]))};
    if (fd < 0 || inet_pton(AF_INET, argv[1], &address.sin_addr) != 1
        || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) { perror("connect"); return 1; }
    char request[512];
    int length = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n\r\n",
                          argv[3], argv[1], argv[2]);
    if (length <= 0 || (size_t)length >= sizeof request || send(fd, request, (size_t)length, 0) != length) {
        perror("send");
        return 1;
    }
    if ((output = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) { perror("open"); return 1; }
    pthread_t thread;
    if (pthread_create(&thread, NULL, writer, NULL) != 0) { perror("pthread_create"); return 1; }
    long long total = 0, declared = -1;
    int in_head = 1, ok = 1;
    size_t kept = 0; /* bytes of the head kept in the first buffer while it is incomplete */
    for (;;) {
        char *buffer = buffers[filled % depth];
        ssize_t got = recv(fd, buffer + kept, CAPACITY - kept - 1, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) { perror("recv"); ok = 0; break; }
        if (got == 0) break;
        if (in_head) {
            kept += (size_t)got;
            buffer[kept] = 0;
            char *end = strstr(buffer, "\r\n\r\n");
            if (!end) continue;
            size_t head = (size_t)(end + 4 - buffer);
            char *field = strcasestr(buffer, "\r\ncontent-length:");
            if (field && field < end) declared = atoll(field + 17);
            size_t body = kept - head;
            memmove(buffer, buffer + head, body);
            in_head = 0;
            kept = 0;
            total += (long long)body;
            if (body > 0 && !hand_over(body)) { ok = 0; break; }
        } else {
            total += got;
            if (!hand_over((size_t)got)) { ok = 0; break; }
        }
    }
    pthread_mutex_lock(&lock);
    reading_done = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    pthread_join(thread, NULL);
    if (write_failed || !ok) return 1;
    if (close(output) != 0) { perror("close"); return 1; }
    double seconds = now() - start;
    close(fd);
    printf("{\"workload\": \"download\", \"impl\": \"recv-write-pipelined\", \"seconds\": %.6f, \"ops\": 1, "
           "\"bytes\": %lld, \"ok\": %s, \"detail\": \"%lld body bytes, Content-Length %lld, %ld buffers of 1 MiB\"}\n",
           seconds, total, declared >= 0 && total == declared ? "true" : "false", total, declared, depth);
    return 0;
}
