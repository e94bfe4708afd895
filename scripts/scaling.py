#!/usr/bin/env python3
"""Keeps every feature linear: runs each case at size n and 16n through the release binary and fails when the
larger run takes more than LIMIT (48) times as long.

A linear feature takes ~16x as long at 16n, a quadratic one ~256x: the margin absorbs a noisy machine without
hiding a quadratic. Each case covers one feature family (key styles on arrays of objects, wide objects and deep
nesting, unmapped keys kept, identity, many errors and warnings per record, lossy arrays, reverse mapping, the
rejects file, long strings through every string conversion, deep nesting, specs with many fields, big enum
tables, long paths, --jobs, every framing, gzip input of one member and of many, compressed output, CSV and TSV
output, streammap infer, long and deep `where` expressions, the "did you mean" hints of an invalid spec), in both
engines where the engine matters. A run that takes more than 60 s fails its case. Inputs are
generated at run time in a temporary directory. The small run's time is the best of three, the large run's the best of two.
Prints each case's two times and their ratio; ends with `scaling: N passed, M failed`, exit 1 on a failure.

    scripts/scaling.py path/to/streammap          # every case (about 1 minute on 2 cores)
    scripts/scaling.py path/to/streammap camel    # the cases whose name contains "camel"
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

LIMIT = float(os.environ.get("SCALING_LIMIT", "48"))
# A run that takes longer than this fails the case (a quadratic one would otherwise hang the whole check).
TIMEOUT = 60
FACTOR = 16


def objects_array(n):
    """One record: an array of n small objects with snake_case keys."""
    items = ",".join('{"item_id":%d,"item_name":"n%d","nested_obj":{"inner_key":%d}}' % (i, i, i) for i in range(n))
    return '{"items_list":[%s]}\n' % items


def wide_object(n):
    return "{%s}\n" % ",".join('"key_number_%d":%d' % (i, i) for i in range(n))


def nested(n, key="a_b"):
    return '{"%s":' % key * n + "1" + "}" * n + "\n"


def records(n, line='{"id":%d,"user_name":"u%d","tags":["a","b"],"score":1.5}'):
    return "".join(line % (i, i) + "\n" for i in range(n))


def long_string(n, text="x"):
    return json.dumps({"s": text * n}) + "\n"


def spec_fields(n):
    return {"fields": {"f%d" % i: {"to": "g%d" % i, "optional": True} for i in range(n)}}


def spec_nested_fields(n):
    return {"fields": {"a.f%d" % i: {"to": "out.g%d" % i, "optional": True} for i in range(n)}}


class Raw(str):
    """A spec written as it is (json.dump writes a str subclass as a JSON string, so the runner checks for it)."""


def nested_mappers(n, extra=""):
    """A spec whose one field's mapper is n arrayOf deep (EXTRA: members added at every level)."""
    return Raw('{"fields":{"a":{"to":"a","via":' + ('{%s"arrayOf":' % extra) * n + '"integer"' + "}" * n + "}}}")


def deep_objects(n, key="k" * 4000):
    """A spec of n object mappings nested in each other, each through a field with a 4 000-byte key."""
    return Raw(('{"fields":{"%s":{"to":"x","via":{"object":' % key) * n + '{"fields":{}}' + "}}}}" * n)


def types_down_a_deep_spec(n):
    """50n types at the top, then n object mappings nested in each other, each declaring a type of its own."""
    types = ",".join('"t%d":"integer"' % i for i in range(50 * n))
    level = '{"types":{"x":"integer"},"fields":{"k":{"to":"x","via":{"object":'
    return Raw('{"types":{%s},"fields":{"k":{"to":"x","via":{"object":' % types + level * n + '{"fields":{}}'
               + "}}}}" * n + "}}}}")


def enum_spec(n):
    return {"fields": {"v": {"to": "v", "via": {"enum": {"k%d" % i: i for i in range(n)}}}}}


def enum_input(n):
    return "".join('{"v":"k%d"}\n' % (i % max(n, 1)) for i in range(200))


def long_path_spec(n):
    return {"fields": {".".join(["a"] * n): "out"}}


def skipped_runs(n, depth=1):
    """Unread members of 60-byte strings between read ones (each a run the stream engine skips ahead of yajl, then
    a new yajl handle), in an object `depth` levels down."""
    members = ",".join('"u%d":"%s","a":%d' % (i, "x" * 60, i) for i in range(n))
    return '{"a":' * (depth - 1) + "{" + members + "}" * depth + "\n"


def duplicate_at_the_bottom(n):
    """A record n levels deep whose innermost object repeats a key: it cannot be copied verbatim, nor can any
    container around it (each try reads to the bottom; a failed try is not repeated inside it)."""
    return '{"a":[' * n + '{"k":1,"k":2}' + "]}" * n + "\n"


def long_members_with_duplicates(n):
    """One record of n members of about 100 bytes, each ending with a repeated key (each copy is tried and fails)."""
    members = ",".join('"m%d":{"pad":"%s","k":1,"k":2}' % (i, "x" * 80) for i in range(n))
    return '{"id":1,%s}\n' % members


def long_elements(n):
    """One record: an array of n objects of about 130 bytes, each copied verbatim (over 256 KB, the record is fed
    to yajl in pieces)."""
    return "[%s]\n" % ",".join('{"pad":"%s","i":%d,"o":{"x":[1,2,3]}}' % ("y" * 100, i) for i in range(n))


def where_spec(expression):
    """A spec that copies the records its `where` (a function of n) keeps."""
    return lambda n: {"mapper": "identity", "where": expression(n)}


# name, engines ("-": no --engine, for the subcommands), args, spec (a function of n, or None), input (a function of
# n), n. `{spec}` in args is the spec file's path.
STREAM_AND_TREE = ("stream", "tree")
CASES = [
    ("key style camel, array of objects", STREAM_AND_TREE, ["--key-style", "camel"], None, objects_array, 3000),
    ("key style camel, wide object", STREAM_AND_TREE, ["--key-style", "camel"], None, wide_object, 6000),
    ("key style snake, deep nesting", STREAM_AND_TREE, ["--key-style", "snake"], None, lambda n: nested(n) * 40, 500),
    ("keys mapper deep, array of objects", STREAM_AND_TREE, ["-s", "{spec}"],
     lambda n: {"mapper": {"keys": "hydrant.camel", "deep": True}}, objects_array, 3000),
    ("keys mapper deep, wide object", STREAM_AND_TREE, ["-s", "{spec}"],
     lambda n: {"mapper": {"keys": "hydrant.camel", "deep": True}}, wide_object, 6000),
    ("key style, many records", STREAM_AND_TREE, ["--key-style", "camel"], None, records, 4000),
    ("key collisions, warnings", STREAM_AND_TREE, ["--key-style", "snake", "--key-collisions", "warn", "-q"], None,
     lambda n: "{%s}\n" % ",".join('"k%dX":%d,"k%d_x":%d' % (i, i, i, i) for i in range(n)), 3000),
    ("unmapped keep, key style, wide object", STREAM_AND_TREE, ["-s", "{spec}"],
     lambda n: {"fields": {"key_number_0": "first"}, "unmapped": {"keys": "camel"}}, wide_object, 6000),
    ("unmapped keep, shadowed keys", STREAM_AND_TREE, ["-s", "{spec}", "-q"],
     lambda n: {"fields": {"id": "user_name"}, "unmapped": "keep"}, records, 4000),
    ("identity, one big record", STREAM_AND_TREE, ["-s", "{spec}"], lambda n: {"mapper": "identity"}, objects_array, 4000),
    ("identity, many records", STREAM_AND_TREE, ["-s", "{spec}"], lambda n: {"mapper": "identity"}, records, 6000),
    ("many errors per record", STREAM_AND_TREE, ["-s", "{spec}", "-q"],
     lambda n: {"fields": {"v": {"to": "v", "via": {"arrayOf": "integer"}}}},
     lambda n: json.dumps({"v": ["x"] * n}) + "\n", 3000),
    ("many warnings per record", STREAM_AND_TREE, ["-s", "{spec}", "--warnings"],
     lambda n: {"fields": {"v": {"to": "v", "via": {"arrayOf": {"nonFatal": "integer", "default": 0}}}}},
     lambda n: json.dumps({"v": ["x"] * n}) + "\n", 3000),
    ("lossy array", STREAM_AND_TREE, ["-s", "{spec}", "-q"],
     lambda n: {"fields": {"v": {"to": "v", "via": {"arrayOf": {"optional": "integer"}}}}},
     lambda n: json.dumps({"v": [i if i % 2 else "x" for i in range(n)]}) + "\n", 3000),
    ("reverse mapping", STREAM_AND_TREE, ["-s", "{spec}", "--reverse"],
     lambda n: {"fields": {"items_list": {"to": "itemsList", "via": {"keys": "hydrant.camel", "deep": True}}}},
     lambda n: json.dumps({"itemsList": [{"itemId": i, "nestedObj": {"innerKey": i}} for i in range(n)]}) + "\n", 3000),
    ("rejects file", STREAM_AND_TREE, ["-s", "{spec}", "--rejects", "{tmp}/rejects.ndjson"],
     lambda n: {"fields": {"id": {"to": "id", "type": "string"}}}, records, 3000),
    ("stderr messages", STREAM_AND_TREE, ["-s", "{spec}"],
     lambda n: {"fields": {"id": {"to": "id", "type": "string"}}}, records, 3000),
    ("verbatim copies, a duplicate key at the bottom", STREAM_AND_TREE, ["-s", "{spec}"], lambda n: {"mapper": "identity"},
     lambda n: duplicate_at_the_bottom(n) * 40, 250),
    ("verbatim copies, long members with duplicate keys", STREAM_AND_TREE, ["-s", "{spec}"],
     lambda n: {"unmapped": "keep", "fields": {"id": {"to": "ID"}}}, long_members_with_duplicates, 2000),
    ("verbatim copies, one big record of long elements", STREAM_AND_TREE, ["-s", "{spec}"],
     lambda n: {"mapper": "identity"}, long_elements, 2000),
    ("deep nesting, identity", STREAM_AND_TREE, ["-s", "{spec}"], lambda n: {"mapper": "identity"}, lambda n: nested(n) * 40, 500),
    ("spec with many fields", STREAM_AND_TREE, ["-s", "{spec}"], spec_fields, lambda n: records(10), 800),
    ("spec with many nested fields", STREAM_AND_TREE, ["-s", "{spec}"], spec_nested_fields, lambda n: records(10), 800),
    ("explain, spec with many fields", ("-",), ["explain", "{spec}"], spec_fields, lambda n: "", 800),
    ("explain, spec with long paths", ("-",), ["explain", "{spec}"], long_path_spec, lambda n: "", 500),
    ("check, spec with many nested fields", ("-",), ["check", "{spec}"], spec_nested_fields, lambda n: "", 800),
    # "Did you mean": unknown names against the spec's own types (check exits 2: the spec is invalid).
    ("check, many unknown types against many declared", ("-",), ["check", "{spec}"],
     lambda n: {"types": {"t%d" % i: "integer" for i in range(n)},
                "fields": {"f%d" % i: {"to": "g%d" % i, "type": "u%dx" % i} for i in range(n)}}, lambda n: "", 1000),
    ("check, a long unknown type against a long declared one", ("-",), ["check", "{spec}"],
     lambda n: {"types": {"a" * n: "integer"}, "fields": {"f": {"to": "g", "type": "a" * (n - 1) + "b"}}}, lambda n: "", 20000),
    # Deep specs: past the nesting limit (the compiler's pointers were quadratic in the depth) and a problem at
    # every level (an error's text was).
    ("check, mappers nested past the limit", ("-",), ["check", "{spec}"], nested_mappers, lambda n: "", 600),
    ("check, long keys down a deep spec", ("-",), ["check", "{spec}"], deep_objects, lambda n: "", 40),
    ("check, nested objects that each declare a type", ("-",), ["check", "{spec}"], types_down_a_deep_spec, lambda n: "", 50),
    ("check, a long path on a long delimiter", ("-",), ["check", "{spec}"],
     lambda n: {"delimiter": "a" * (n // 10) + "b", "fields": {"a" * n: "x"}}, lambda n: "", 20000),
    ("check, a problem at every level", ("-",), ["check", "{spec}"], lambda n: nested_mappers(n, '"x":1,'), lambda n: "", 600),
    ("big enum table", STREAM_AND_TREE, ["-s", "{spec}"], enum_spec, enum_input, 3000),
    ("long path", STREAM_AND_TREE, ["-s", "{spec}"], long_path_spec, lambda n: nested(n, "a"), 500),
    ("skipped members, wide object", STREAM_AND_TREE, ["-s", "{spec}", "-q"], lambda n: {"fields": {"a": "a"}},
     skipped_runs, 3000),
    ("skipped members, deep", STREAM_AND_TREE, ["-s", "{spec}", "-q"], lambda n: long_path_spec(n + 1),
     lambda n: skipped_runs(n, depth=n), 300),
    ("jobs 2, many records", ("stream",), ["--jobs", "2", "--key-style", "camel"], None, records, 6000),
    # A regular file with --jobs is read in ranges by the workers: ranges inside one long line, and lines longer
    # than a range (read on past it, or handed to the reading thread).
    ("jobs 2, one long line", ("stream",), ["--jobs", "2", "--field", "s"], None, long_string, 400000),
    ("jobs 2, lines longer than a range", ("stream",), ["--jobs", "2", "--field", "s", "--batch-bytes", "4096"], None,
     lambda n: "".join(long_string(n // 40 + i) for i in range(40)), 400000),
    ("framing array", ("stream",), ["--framing", "array"], None, lambda n: "[" + records(n).replace("\n", ",")[:-1] + "]", 6000),
    ("framing concat", ("stream",), ["--framing", "concat"], None, lambda n: records(n).replace("\n", " "), 6000),
    ("framing seq", ("stream",), ["--framing", "seq"], None, lambda n: records(n).replace("{", "\x1e{"), 6000),
    ("gzip input, many records", STREAM_AND_TREE, ["--field", "id"], None, lambda n: gzip.compress(records(n).encode(), mtime=0), 6000),
    ("gzip input, a member per record", ("stream",), ["--field", "id", "--jobs", "2"], None,
     lambda n: b"".join(gzip.compress(line.encode(), mtime=0) for line in records(n).splitlines(True)), 3000),
    ("gzip input, one long line", ("stream",), ["-q"], None, lambda n: gzip.compress(long_string(n).encode(), mtime=0), 400000),
    ("zstd output", ("stream",), ["--key-style", "camel", "--compress", "zstd"], None, records, 6000),
    ("csv out, many records", STREAM_AND_TREE, ["--field", "id", "--field", "user_name", "--field", "tags", "--to", "csv"], None,
     records, 6000),
    ("csv out, wide records", STREAM_AND_TREE, ["-s", "{spec}", "--to", "csv"], spec_fields,
     lambda n: ("{%s}\n" % ",".join('"f%d":"v,%d"' % (i, i) for i in range(n))) * 10, 800),
    ("tsv out, long string to quote", ("stream",), ["--field", "s", "--to", "tsv", "--jobs", "2"], None,
     lambda n: long_string(n // 3 or 1, 'a"\t'), 200000),
    # streammap infer: many records, distinct paths past the 10 000 it tracks, deep nesting, arrays of objects,
    # long strings through every date/URL/UUID check, many distinct strings (no enum).
    ("infer, many records", ("-",), ["infer", "--sample", "100000000"], None, records, 6000),
    ("infer, wide object past the path limit", ("-",), ["infer"], None, wide_object, 6000),
    ("infer, deep nesting", ("-",), ["infer"], None, lambda n: nested(n) * 40, 500),
    ("infer, array of objects", ("-",), ["infer"], None, objects_array, 3000),
    ("infer, long date-like string", ("-",), ["infer"], None, lambda n: long_string(n, "2"), 400000),
    ("infer, long URL-like string", ("-",), ["infer"], None, lambda n: json.dumps({"s": "http://" + "x" * n}) + "\n", 400000),
    # where: long and deeply nested expressions (parsed and evaluated without recursion), long `in` lists, paths into
    # deep records, many records.
    ("where, long || chain", STREAM_AND_TREE, ["-s", "{spec}"], where_spec(lambda n: " || ".join("id == %d" % (i + 10 ** 6) for i in range(n)) + " || id == 1"),
     lambda n: records(50), 3000),
    ("where, deep parentheses", STREAM_AND_TREE, ["-s", "{spec}"], where_spec(lambda n: "(" * n + "id == 1" + ")" * n),
     lambda n: records(50), 20000),
    ("where, deep !", STREAM_AND_TREE, ["-s", "{spec}"], where_spec(lambda n: "!" * (2 * n) + "id == 1"), lambda n: records(50), 20000),
    ("where, deep ! and parentheses", STREAM_AND_TREE, ["-s", "{spec}"],
     where_spec(lambda n: "(!" * (2 * n) + "id == 1" + ")" * (2 * n)), lambda n: records(50), 10000),
    ("where, long in list", STREAM_AND_TREE, ["-s", "{spec}"], where_spec(lambda n: "id in [%s]" % ",".join(str(i + 10 ** 6) for i in range(n))),
     lambda n: records(50), 5000),
    ("where, long path into a deep record", STREAM_AND_TREE, ["-s", "{spec}"], where_spec(lambda n: ".".join(["a"] * n) + " == 1"),
     lambda n: nested(n, "a"), 500),
    ("where, many records", STREAM_AND_TREE, ["--where", 'user_name == "u7" || tags.1 == "c"'], None, records, 6000),
    ("where, jobs 2, many records", ("stream",), ["--jobs", "2", "--where", "id >= 100"], None, records, 6000),
    # Computed fields: string functions and regular expressions on one long string, a long chain of operators, a big
    # array, many records, and a pattern that takes exponential time in a backtracking engine.
    ("expr, string functions on a long string", STREAM_AND_TREE,
     ["--set", 't=replace(lower(s), "xx", "y")', "--set", "n=length(split(s, \"x\"))", "--set", 'c=contains(s, "xxxxxxxxxy")'],
     None, long_string, 20000),
    ("expr, pathological regular expressions", STREAM_AND_TREE,
     ["--set", 'a=matches(s, "^(x*)*y$")', "--set", 'b=replaceMatches(s, "(x+)+z", "-")'], None, long_string, 20000),
    ("expr, a long chain of +", STREAM_AND_TREE, ["-s", "{spec}"],
     lambda n: {"fields": {"t": {"expr": " + ".join(["score"] * n)}}}, lambda n: records(20), 4000),
    ("expr, a big array", STREAM_AND_TREE, ["--set", 'j=length(join(a, ","))'], None,
     lambda n: json.dumps({"a": ["ab"] * n}) + "\n", 20000),
    ("expr, many records", STREAM_AND_TREE, ["--field", "id", "--set", "t=score * id / 3", "--set", 'u=upper(user_name) + "!"'],
     None, records, 6000),
    ("where with functions, many records", STREAM_AND_TREE, ["--where", 'startsWith(user_name, "u7") || matches(user_name, "^u1[0-9]+$")'],
     None, records, 6000),
]
for conversion, text in [("url", "a"), ("uuid", "a"), ("stringToNumber", "1"), ("toString", "x"),
                         ({"base64": True, "from": "standard", "to": "url"}, "QUJD"),
                         ({"stringToDate": "iso8601"}, "2"), ({"keys": "camel"}, "x"), ("string", "é")]:
    name = conversion if isinstance(conversion, str) else next(iter(conversion))
    CASES.append(("long string through " + name, STREAM_AND_TREE, ["-s", "{spec}", "-q"],
                  (lambda c: lambda n: {"fields": {"s": {"to": "s", "via": c}}})(conversion),
                  (lambda t: lambda n: long_string(n // len(t) or 1, t))(text), 400000))


def timed(cmd, stdin_path, runs):
    best = None
    # 0 or 1 (records rejected); `check` of an invalid spec: 2.
    allowed = (0, 1, 2) if "check" in cmd[1:2] else (0, 1)
    for _ in range(runs):
        with open(stdin_path, "rb") as f:
            start = time.perf_counter()
            try:
                p = subprocess.run(cmd, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                raise RuntimeError("took more than %d s" % TIMEOUT)
            elapsed = time.perf_counter() - start
        if p.returncode not in allowed:
            raise RuntimeError("%s exited with %d" % (" ".join(cmd), p.returncode))
        best = elapsed if best is None else min(best, elapsed)
    return best


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = os.path.abspath(sys.argv[1])
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="streammap-scaling.") as tmp:
        for name, engines, args, spec, make_input, n in CASES:
            if only not in name:
                continue
            paths = {}
            for size in (n, FACTOR * n):
                data = make_input(size)
                if isinstance(data, bytes):  # compressed input
                    with open(os.path.join(tmp, "in%d" % size), "wb") as f:
                        f.write(data)
                else:
                    with open(os.path.join(tmp, "in%d" % size), "w", encoding="utf-8") as f:
                        f.write(data)
                if spec:
                    with open(os.path.join(tmp, "spec%d.json" % size), "w", encoding="utf-8") as f:
                        document = spec(size)
                        if isinstance(document, Raw):
                            f.write(document)
                        else:
                            json.dump(document, f)
                paths[size] = (os.path.join(tmp, "in%d" % size), os.path.join(tmp, "spec%d.json" % size))
            for engine in engines:
                times = []
                try:
                    for size, runs in ((n, 3), (FACTOR * n, 2)):
                        input_path, spec_path = paths[size]
                        engine_flag = [] if engine == "-" else ["--engine", engine]  # "-": a subcommand
                        cmd = [binary] + engine_flag + [a.replace("{spec}", spec_path).replace("{tmp}", tmp) for a in args]
                        times.append(timed(cmd, input_path, runs))
                except (RuntimeError, OSError) as e:
                    failed += 1
                    print("  FAIL  %-44s %-6s %s" % (name, engine, e))
                    continue
                ratio = times[1] / max(times[0], 1e-4)
                ok = ratio <= LIMIT
                passed += ok
                failed += not ok
                print("  %s %-44s %-6s n=%-7d %7.3f s  16n %7.3f s  x%5.1f" % (
                    "ok   " if ok else "FAIL ", name, engine, n, times[0], times[1], ratio), flush=True)
    print("scaling: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
