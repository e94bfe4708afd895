/* Shared by the C peers: read NDJSON from a file (or stdin) in 1 MiB blocks and call `on_line` for every
 * non-empty line (without its '\n' and a trailing '\r'), with its 1-based line number. */
#ifndef STREAMMAP_BENCH_LINES_H
#define STREAMMAP_BENCH_LINES_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*line_fn)(const unsigned char *line, size_t len, unsigned long lineno, void *ctx);

static int for_each_line(const char *path, line_fn on_line, void *ctx) {
    FILE *f = (path && strcmp(path, "-") != 0) ? fopen(path, "rb") : stdin;
    if (!f) { perror(path); return 3; }
    size_t cap = 1 << 20, len = 0;
    unsigned char *buf = malloc(cap);
    unsigned long lineno = 0;
    for (;;) {
        if (len == cap) { cap *= 2; buf = realloc(buf, cap); }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        size_t start = 0;
        for (;;) {
            unsigned char *nl = memchr(buf + start, '\n', len - start);
            if (!nl) break;
            size_t end = (size_t)(nl - buf), l = end - start;
            lineno++;
            if (l > 0 && buf[start + l - 1] == '\r') l--;
            if (l > 0) on_line(buf + start, l, lineno, ctx);
            start = end + 1;
        }
        if (n == 0) {
            if (start < len) {
                size_t l = len - start;
                lineno++;
                if (l > 0 && buf[start + l - 1] == '\r') l--;
                if (l > 0) on_line(buf + start, l, lineno, ctx);
            }
            break;
        }
        memmove(buf, buf + start, len - start);
        len -= start;
    }
    free(buf);
    if (f != stdin) fclose(f);
    return 0;
}
#endif
