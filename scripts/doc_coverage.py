#!/usr/bin/env python3
"""Lists the library's public symbols that have no doc comment, from a symbol graph
(`swift package dump-symbol-graph --minimum-access-level public`), and exits 1 if there is any.

Not counted: members the compiler synthesized, and witnesses of a protocol requirement that is documented where
the protocol is (Equatable's ==, CustomStringConvertible's description, Codable, AsyncSequence, and this
library's own protocols): DocC shows the requirement's documentation on them.

    python3 scripts/doc_coverage.py .build/x86_64-unknown-linux-gnu/symbolgraph/StreamMap.symbols.json
"""
import json
import sys

# Requirements of the standard library's and Foundation's protocols that types here conform to.
STANDARD_WITNESSES = {
    "==(_:_:)", "<(_:_:)", "hash(into:)", "hashValue", "description", "debugDescription",
    "init(from:)", "encode(to:)", "makeAsyncIterator()", "next()", "next(isolation:)", "makeIterator()",
    "init(stringLiteral:)", "init(arrayLiteral:)", "init(integerLiteral:)", "init(floatLiteral:)",
    "init(booleanLiteral:)", "init(nilLiteral:)", "init(dictionaryLiteral:)", "init(unicodeScalarLiteral:)",
    "init(extendedGraphemeClusterLiteral:)", "rawValue", "init(rawValue:)", "allCases", "Element", "Failure",
    "AsyncIterator", "Iterator", "stringValue", "intValue", "init(stringValue:)", "init(intValue:)",
    "codingPath", "userInfo", "errorDescription", "localizedDescription",
}


def main(path):
    graph = json.load(open(path))
    symbols = {s["identifier"]["precise"]: s for s in graph["symbols"]}
    # This library's protocol requirements, by protocol, and the protocols each type conforms to.
    requirements, conformances, parent = {}, {}, {}
    for r in graph["relationships"]:
        if r["kind"] == "requirementOf" and r["source"] in symbols:
            requirements.setdefault(r["target"], set()).add(symbols[r["source"]]["names"]["title"])
        elif r["kind"] == "conformsTo":
            conformances.setdefault(r["source"], set()).add(r["target"])
        elif r["kind"] == "memberOf":
            parent[r["source"]] = r["target"]
    missing = []
    for ident, s in symbols.items():
        if s.get("accessLevel") not in ("public", "open") or s.get("docComment") or "::SYNTHESIZED::" in ident:
            continue
        title = s["names"]["title"]
        if title in STANDARD_WITNESSES:
            continue
        owner = parent.get(ident)
        if owner and any(title in requirements.get(p, ()) for p in conformances.get(owner, ())):
            continue
        missing.append("%s %s" % (s["kind"]["identifier"].replace("swift.", ""), ".".join(s["pathComponents"])))
    for line in sorted(missing):
        print(line)
    print("%d public symbols without a doc comment" % len(missing), file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
