/* The identity baseline: every line parsed with yajl (one handle per record) and every event re-emitted with
 * yajl_gen (numbers as their raw lexemes, strings re-escaped by yajl_gen), one output line per valid record.
 * Invalid lines are reported on stderr as "LINE\n" and not written.
 *   cc -O2 yajl_gen_identity.c -lyajl -o yajl_gen_identity && ./yajl_gen_identity corpus.ndjson > out */
#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>
#include "lines.h"

#define G ((yajl_gen)c)
static int on_null(void *c) { return yajl_gen_null(G) == yajl_gen_status_ok; }
static int on_bool(void *c, int b) { return yajl_gen_bool(G, b) == yajl_gen_status_ok; }
static int on_number(void *c, const char *s, size_t l) { return yajl_gen_number(G, s, l) == yajl_gen_status_ok; }
static int on_string(void *c, const unsigned char *s, size_t l) { return yajl_gen_string(G, s, l) == yajl_gen_status_ok; }
static int on_start_map(void *c) { return yajl_gen_map_open(G) == yajl_gen_status_ok; }
static int on_end_map(void *c) { return yajl_gen_map_close(G) == yajl_gen_status_ok; }
static int on_start_array(void *c) { return yajl_gen_array_open(G) == yajl_gen_status_ok; }
static int on_end_array(void *c) { return yajl_gen_array_close(G) == yajl_gen_status_ok; }

static const yajl_callbacks callbacks = {
    on_null, on_bool, NULL, NULL, on_number, on_string, on_start_map, on_string, on_end_map, on_start_array, on_end_array,
};

static unsigned long invalid;

static void on_line(const unsigned char *line, size_t len, unsigned long lineno, void *ctx) {
    yajl_gen g = ctx;
    yajl_handle h = yajl_alloc(&callbacks, NULL, g);
    if (yajl_parse(h, line, len) == yajl_status_ok && yajl_complete_parse(h) == yajl_status_ok) {
        const unsigned char *out;
        size_t n;
        yajl_gen_get_buf(g, &out, &n);
        fwrite(out, 1, n, stdout);
        putc('\n', stdout);
    } else {
        invalid++;
        fprintf(stderr, "%lu\n", lineno);
    }
    yajl_gen_clear(g);
    yajl_gen_reset(g, NULL);
    yajl_free(h);
}

int main(int argc, char **argv) {
    static char obuf[1 << 16];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    yajl_gen g = yajl_gen_alloc(NULL);
    int rc = for_each_line(argc > 1 ? argv[1] : NULL, on_line, g);
    yajl_gen_free(g);
    fflush(stdout);
    return rc ? rc : (invalid ? 1 : 0);
}
