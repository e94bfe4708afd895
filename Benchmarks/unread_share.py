#!/usr/bin/env python3
"""The share of a corpus's bytes that sit inside values no field of a spec reads.

    python3 Benchmarks/unread_share.py CORPUS [--spec Benchmarks/specs/tweets.spec.json] [--large 64]

A member's value is unread when its key is not on any field's source path at that depth (the stream engine's
key filter skips exactly these: `Engines/Stream/ParseSkip.swift`). Objects on a source path are walked member by
member; every other value is measured whole, its raw bytes as they are in the file. Lines that are not JSON
objects (or not JSON) count as read. `--large N` also reports the share in unread values of at least N bytes
(the ones the validating skipper takes over from yajl).

Positions come from the standard library's scanner (`json.decoder.JSONDecoder().scan_once`), so each value is
measured by C code; the line is decoded as UTF-8 first and byte lengths are counted on the encoded slice.
"""
import argparse
import json
import sys

WHITESPACE = " \t\n\r"


def source_tree(spec):
    """The spec's source paths as nested dicts: {"user": {"id": {}, ...}, "id": {}, ...}."""
    tree = {}
    for path in spec.get("fields", {}):
        node = tree
        for step in path.split("."):
            node = node.setdefault(step, {})
    return tree


class Counter:
    def __init__(self, large):
        self.large = large
        self.unread = 0
        self.unread_large = 0
        self.values_large = 0

    def add(self, text, start, end):
        size = len(text[start:end].encode("utf-8", "surrogatepass"))
        self.unread += size
        if size >= self.large:
            self.unread_large += size
            self.values_large += 1


def skip_ws(s, i):
    while i < len(s) and s[i] in WHITESPACE:
        i += 1
    return i


def walk_object(s, i, tree, scan, counter):
    """`s[i]` is '{' of an object on a source path; returns the index after its '}'."""
    i = skip_ws(s, i + 1)
    if s[i] == "}":
        return i + 1
    while True:
        key, i = scan(s, i)
        i = skip_ws(s, i)
        assert s[i] == ":"
        i = skip_ws(s, i + 1)
        start = i
        child = tree.get(key)
        if child and s[i] == "{":
            i = walk_object(s, i, child, scan, counter)
        else:
            _, i = scan(s, i)
            if child is None:
                counter.add(s, start, i)
        i = skip_ws(s, i)
        if s[i] == "}":
            return i + 1
        assert s[i] == ","
        i = skip_ws(s, i + 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus")
    parser.add_argument("--spec", default="Benchmarks/specs/tweets.spec.json")
    parser.add_argument("--large", type=int, default=64)
    args = parser.parse_args()
    with open(args.spec) as f:
        tree = source_tree(json.load(f))
    scan = json.decoder.JSONDecoder().scan_once
    counter = Counter(args.large)
    total = 0
    with open(args.corpus, "rb") as f:
        for raw in f:
            total += len(raw)
            try:
                json.loads(raw)
                line = raw.decode("utf-8")
            except ValueError:
                continue
            i = skip_ws(line, 0)
            if i < len(line) and line[i] == "{":
                walk_object(line, i, tree, scan, counter)
    print(f"{args.corpus}: {total} bytes; inside values no field reads: {counter.unread} "
          f"({100 * counter.unread / total:.1f}%); in such values of >= {args.large} bytes: "
          f"{counter.unread_large} ({100 * counter.unread_large / total:.1f}%, {counter.values_large} values)")


if __name__ == "__main__":
    sys.exit(main())
