// The projection plan's layout (built by Project.c, read by the projector in SkipValue.c and ProjectBody.h).
#ifndef CJSONSCAN_PROJECTION_PLAN_H
#define CJSONSCAN_PROJECTION_PLAN_H

#include "CJSONScan.h"

#include <stdint.h>
#include <string.h>

// MARK: The plan

typedef struct {
    uint32_t offset;  // in `bytes`
    uint32_t length;
    int32_t child;    // -1: the member is kept whole; else the node its object value is projected by
    int32_t lifted;   // 1: a string value of the member is lifted out of the projection (child -1 only)
    uint64_t prefix;  // its first 8 bytes, zero-padded (`plan_prefix`; set when the plan is sealed)
    uint32_t id;      // its index in the order keys were added (its entry in `cjsonscan_project`'s slots)
} plan_key;

typedef struct {
    uint32_t first_key;  // in `keys` (a node's keys are contiguous there once sealed)
    uint32_t key_count;
    uint32_t table_offset;  // in `table`
    uint32_t table_mask;
    uint64_t signature;  // bit `plan_signature_bit` of each of its keys: most other keys are turned down by it
    int32_t by_bit[64];  // per signature bit: the one key with that bit, -2 when several share it, -1 none
} plan_node;

struct cjsonscan_projection {
    unsigned char *bytes;
    size_t byte_count, byte_capacity;
    plan_key *keys;
    uint32_t *key_node;  // per key (in insertion order): its node
    size_t key_count, key_capacity;
    plan_node *nodes;
    size_t node_count, node_capacity;
    int32_t *table;  // per node, an open-addressing table of key indices (-1: empty)
    size_t table_count;
    int sealed;
    int failed;  // memory ran out, or a key was added after sealing: the plan projects nothing
};

/// A key's bit in its node's signature: from its length and first 8 bytes (`prefix`, zero-padded).
static inline unsigned plan_signature_bit(uint64_t prefix, size_t n) {
    return (unsigned)(((prefix ^ (uint64_t)n) * 0x9E3779B97F4A7C15ull) >> 58);
}

/// A key's first 8 bytes, zero-padded.
static inline uint64_t plan_prefix(const unsigned char *k, size_t n) {
    uint64_t a = 0;
    memcpy(&a, k, n < 8 ? n : 8);
    return a;
}

/// The final mix of a key's hash (MurmurHash3's 64-bit finalizer).
static inline uint64_t plan_mix(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

/// A key's hash, from all its bytes (keys that share a prefix and a suffix, as a hostile spec's may, still spread).
static inline uint64_t plan_hash(const unsigned char *k, size_t n) {
    uint64_t a = 0, b = 0;
    if (n >= 8) {
        memcpy(&a, k, 8);
        memcpy(&b, k + n - 8, 8);
        for (size_t i = 8; i + 8 < n; i += 8) {  // (the middle of a key longer than 16 bytes)
            uint64_t w;
            memcpy(&w, k + i, 8);
            a = (a ^ w) * 0x9E3779B97F4A7C15ull;
            a ^= a >> 29;
        }
    } else {
        memcpy(&a, k, n);
    }
    return plan_mix(a ^ (b * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)n << 56) ^ n);
}

/// `plan_hash` of a key shorter than 8 bytes, from its `prefix` (the same value: such a key is its prefix).
static inline uint64_t plan_hash_short(uint64_t prefix, size_t n) { return plan_mix(prefix ^ ((uint64_t)n << 56) ^ n); }

/// The key index of `key` in `node`, or -1. `prefix`: the key's first 8 bytes, zero-padded (`plan_prefix`): keys
/// are told apart by it and their length first, so a key of up to 8 bytes is matched without reading it again.
static inline int32_t plan_find(const cjsonscan_projection *plan, int32_t node_index, const unsigned char *key, size_t length,
                                uint64_t prefix) {
    const plan_node *node = &plan->nodes[node_index];
    const int32_t *table = plan->table + node->table_offset;
    size_t slot = (length < 8 ? plan_hash_short(prefix, length) : plan_hash(key, length)) & node->table_mask;
    for (;;) {
        int32_t k = table[slot];
        if (k < 0) return -1;
        const plan_key *candidate = &plan->keys[k];
        if (candidate->length == length && candidate->prefix == prefix &&
            (length <= 8 || memcmp(plan->bytes + candidate->offset + 8, key + 8, length - 8) == 0)) return k;
        slot = (slot + 1) & node->table_mask;
    }
}


/// `plan_find` for a key whose signature bit (`bit`) is set in the node's signature: the one key with that bit is
/// compared straight away (its length, its first 8 bytes, then the rest); a bit that keys share goes to the table.
static inline int32_t plan_lookup(const cjsonscan_projection *plan, int32_t node_index, const unsigned char *key,
                                  size_t length, uint64_t prefix, unsigned bit) {
    int32_t k = plan->nodes[node_index].by_bit[bit];
    if (__builtin_expect(k < 0, 0)) return k == -2 ? plan_find(plan, node_index, key, length, prefix) : -1;
    const plan_key *candidate = &plan->keys[k];
    if (candidate->length != length || candidate->prefix != prefix) return -1;
    if (length <= 8) return k;
    const unsigned char *bytes = plan->bytes + candidate->offset;
    if (length <= 16) {  // (the last 8 bytes: with the first 8, every byte)
        uint64_t a, b;
        memcpy(&a, bytes + length - 8, 8);
        memcpy(&b, key + length - 8, 8);
        return a == b ? k : -1;
    }
    return memcmp(bytes + 8, key + 8, length - 8) == 0 ? k : -1;
}

#endif
