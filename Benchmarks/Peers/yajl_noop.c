/* The parse ceiling: every line through yajl's push parser (one handle per record, as the stream engine does),
 * callbacks that do nothing, numbers as raw lexemes (yajl_number, like StreamMap). UTF-8 is validated (yajl's
 * default). Invalid lines are reported on stderr as "LINE\n"; the count of valid records goes to stdout.
 *   cc -O2 yajl_noop.c -lyajl -o yajl_noop && ./yajl_noop corpus.ndjson */
#include <yajl/yajl_parse.h>
#include "lines.h"

static int on_null(void *c) { (void)c; return 1; }
static int on_bool(void *c, int b) { (void)c; (void)b; return 1; }
static int on_number(void *c, const char *s, size_t l) { (void)c; (void)s; (void)l; return 1; }
static int on_string(void *c, const unsigned char *s, size_t l) { (void)c; (void)s; (void)l; return 1; }
static int on_map(void *c) { (void)c; return 1; }
static int on_key(void *c, const unsigned char *s, size_t l) { (void)c; (void)s; (void)l; return 1; }

static const yajl_callbacks callbacks = {
    on_null, on_bool, NULL, NULL, on_number, on_string, on_map, on_key, on_map, on_map, on_map,
};

static unsigned long valid, invalid;

static void on_line(const unsigned char *line, size_t len, unsigned long lineno, void *ctx) {
    (void)ctx;
    yajl_handle h = yajl_alloc(&callbacks, NULL, NULL);
    if (yajl_parse(h, line, len) == yajl_status_ok && yajl_complete_parse(h) == yajl_status_ok) {
        valid++;
    } else {
        invalid++;
        fprintf(stderr, "%lu\n", lineno);
    }
    yajl_free(h);
}

int main(int argc, char **argv) {
    int rc = for_each_line(argc > 1 ? argv[1] : NULL, on_line, NULL);
    printf("%lu valid, %lu invalid\n", valid, invalid);
    return rc ? rc : (invalid ? 1 : 0);
}
