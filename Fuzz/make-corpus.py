#!/usr/bin/env python3
"""Writes the fuzz seed corpus (Fuzz/corpus/): small inputs in the fuzz target's format (see
Sources/StreamMapTestSupport/EngineFuzzing.swift): an 8-byte seed, a mode byte, a piece byte, then records, one per
line. Records come from Examples/ and the sample records in Samples/seed/ (trimmed), plus malformed, hostile and deep ones.

    python3 Fuzz/make-corpus.py [SEED_DATA_DIR]    # default Samples/seed in this repository
"""
import json, os, struct, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = os.path.join(root, 'Fuzz', 'corpus')
seed_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, 'Samples', 'seed')
os.makedirs(out, exist_ok=True)
for f in os.listdir(out):
    os.remove(os.path.join(out, f))
n = 0

def put(name, seed, mode, piece, records):
    global n
    data = struct.pack('<Q', seed) + bytes([mode, piece])
    data += b'\n'.join(r if isinstance(r, bytes) else r.encode() for r in records)
    assert len(data) <= 8192, (name, len(data))
    n += 1
    with open(os.path.join(out, f'{n:02d}-{name}'), 'wb') as f:
        f.write(data)

def trim(obj):
    """Keeps records small: at most 12 keys, 3 elements, 60 characters."""
    if isinstance(obj, dict):
        return {k: trim(v) for k, v in list(obj.items())[:12]}
    if isinstance(obj, list):
        return [trim(v) for v in obj[:3]]
    if isinstance(obj, str):
        return obj[:60]
    return obj

def line(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(',', ':'))

def lines(path):
    with open(os.path.join(root, path), 'rb') as f:
        return f.read().rstrip(b'\n').split(b'\n')

# Examples/ with their specs (mode 2: fixed spec number `seed`; the first also padded, bits 5+6).
put('people-person-spec', 0, 0x62, 3, lines('Examples/people.ndjson'))
put('cats-spec', 1, 2, 7, lines('Examples/cats.ndjson'))
put('events-spec', 2, 2, 1, lines('Examples/events.ndjson'))

# The sample records, trimmed.
with open(os.path.join(seed_dir, 'gh_events.ndjson'), encoding='utf-8') as f:
    gh = [json.loads(l) for l in f.read().splitlines()[:6]]
put('gh-events-spec', 2, 2, 9, [line(trim(o)) for o in gh[:2]])
put('gh-events-keep', 3, 2, 4, [line(trim(o)) for o in gh[2:4]])
put('gh-events-generated', 0x1234, 0, 5, [line(trim(o)) for o in gh[4:5]])
with open(os.path.join(seed_dir, 'tweets.ndjson'), encoding='utf-8') as f:
    tw = [json.loads(l) for l in f.read().splitlines()[:3]]
put('tweets-spec', 5, 2, 2, [line(trim(tw[0]))])
put('tweets-deepkeys', 6, 2, 8, [line(trim(tw[1]))])
put('tweets-identity', 4, 2, 11, [line(trim(tw[2]))])
with open(os.path.join(seed_dir, 'canada_points.json'), encoding='utf-8') as f:
    canada = json.load(f)
put('canada-arrays', 7, 2, 6, [line(trim(canada))])
put('canada-generated-spec', 0xC0FFEE, 1, 13, [line(trim(canada))])

# Generated mappers with generated records (mode bit 2): values, spec files, reverses.
for i, (seed, mode) in enumerate([(0x5EED, 0x04), (0xBADC0DE, 0x05), (0xFEED, 0x07), (0x1, 0x04), (0xABCDEF0123, 0x05), (0x77, 0x06)]):
    put(f'generated-{i}', seed, mode, i * 37 % 256, [b'{"id":1,"name":"x","user":{"name":"y"},"data":[1,2]}'])

# Malformed JSON, one class per file, one case per line; mode bit 4: also cut at every offset; bits 5+6: also after
# 300 000 spaces (past the size the stream engine collects before parsing).
put('malformed-structure', 0, 0x12, 17, [b'{"a":1,}', b'[1 2]', b'{"a" 1}', b'{a:1}', b'{"a":1}}', b'[1,,2]', b'{"a":}'])
put('malformed-strings-escapes', 3, 0x72, 19, [b'"abc', b'"tab\there"', b'"\x01"', b'"\\x"', b'"\\u12G4"', b'"\\u12"',
                                            b'"\\uD800"', b'"\\uDC00"', b'"\\uD888\\u1234"'])
put('malformed-numbers-literals', 4, 0x12, 23, [b'01', b'1.', b'.5', b'-', b'1e+', b'+1', b'0x10', b'-01', b'NaN', b'1e400',
                                             b'tru', b'nul', b'True', b'falsey'])
put('malformed-trailing-truncated', 0x42, 0x10, 29, [b'{} x', b'[] []', b'1 2', b'{"a":1} //c', b'{"a":[1,2', b'{"a":"b', b'[[[['])
put('whitespace-ff-vt-cr', 3, 0x12, 31, [b'{"a":\x0c1}', b'{"a":\x0b1}', b'\x0c{}', b'{"id":1}\r', b' \t{"id":2} '])
put('bom', 3, 0x72, 5, [b'\xef\xbb\xbf{"id":1}', b'{"id":\xef\xbb\xbf2}', b'{"id":3}\xef\xbb\xbf', b'"\xef\xbb\xbf"'])
put('nul-bytes', 3, 0x12, 3, [b'{"id":1,\x00"a":2}', b'\x00', b'{"id":"a\x00b"}', b'{"id":"\\u0000"}'])
put('invalid-utf8', 3, 0x72, 2, [b'{"id":"\xc0\xaf"}', b'{"id":"\xe0\x80\x80"}', b'{"id":"\xed\xa0\x80"}',
                               b'{"id":"\xf4\x90\x80\x80"}', b'{"\xf5\x80":1}', b'{"id":"\xff"}', b'{"id":"\xc3"}',
                               b'{"k\xe2\x82":1}'])
put('invalid-utf8-skipped', 0x99, 1, 4, [b'{"skip":{"x":"\xed\xa0\x80"},"id":1}',
                                         b'{"skip":["\\ud83d\\ude00","\xf0\x9f\x98\x80"]}'])
put('escapes-valid', 0, 0x12, 255, [b'{"first_name":"J\\u00f6rg \\ud83d\\ude00","last_name":"D\\"o\\\\e\\/\\b\\f\\n\\r\\t",'
                                 b'"homepage":"http:\\/\\/x.y","age":1,"children":[]}'])
put('numbers-exotic', 4, 2, 12, [b'[123456789012345678901234567890,-0,-0.0,1E+2,1e-400,0.1e1,9007199254740993]'])
put('duplicate-keys', 3, 2, 40, [b'{"id":1,"user":{"name":"a"},"id":2,"user":{"name":"b","name":"c"},"x":1,"x":[2]}'])

# Deep nesting: closed and unclosed, arrays and objects, with the default limit and a small one (mode bit 3).
put('deep-arrays-300', 4, 2, 6, [b'[' * 300 + b']' * 300])
put('deep-objects-200', 6, 2, 7, [b'{"a":' * 200 + b'1' + b'}' * 200])
put('deep-unclosed', 0x55, 0, 8, [b'[' * 500, b'{"a":' * 300])
put('deep-small-limit', 3, 0x6A, 10, [b'{"id":' + b'[' * 12 + b']' * 12 + b'}', b'{"skip":' + b'{"k":' * 11 + b'1' + b'}' * 12])
put('deep-generated-small-limit', 0xD33, 0x08, 20, [b'[{"a":[{"a":[{"a":[{"a":[1]}]}]}]}]'])
put('empty-and-blank', 0, 2, 0, [b'', b' ', b'\r', b'{}', b'null'])
put('header-only', 0xAB, 0x03, 1, [])
print(f'{n} files in {out}')
