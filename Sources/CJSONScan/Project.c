// Projection plans: see include/CJSONScan.h for the contract. The projector itself is in ProjectBody.h,
// compiled with the validating skipper (SkipValue.c) whose walk it shares.

#include "ProjectionPlan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int grow(void **p, size_t *capacity, size_t needed, size_t size) {
    if (needed <= *capacity) return 1;
    size_t c = *capacity ? *capacity : 16;
    while (c < needed) c *= 2;
    void *q = realloc(*p, c * size);
    if (!q) return 0;
    *p = q;
    *capacity = c;
    return 1;
}

cjsonscan_projection *cjsonscan_projection_new(void) {
    return calloc(1, sizeof(cjsonscan_projection));
}

void cjsonscan_projection_free(cjsonscan_projection *plan) {
    if (!plan) return;
    free(plan->bytes);
    free(plan->keys);
    free(plan->key_node);
    free(plan->nodes);
    free(plan->table);
    free(plan);
}

int32_t cjsonscan_projection_add_node(cjsonscan_projection *plan) {
    if (plan->sealed || plan->node_count >= INT32_MAX ||
        !grow((void **)&plan->nodes, &plan->node_capacity, plan->node_count + 1, sizeof(plan_node))) {
        plan->failed = 1;
        return -1;
    }
    memset(&plan->nodes[plan->node_count], 0, sizeof(plan_node));
    return (int32_t)plan->node_count++;
}

int cjsonscan_projection_add_key(cjsonscan_projection *plan, int32_t node, const unsigned char *key, size_t length,
                                 int32_t child, int lifted) {
    size_t key_capacity = plan->key_capacity;
    if (plan->sealed || node < 0 || (size_t)node >= plan->node_count || child < -1 ||
        (child >= 0 && (size_t)child >= plan->node_count) || length > UINT32_MAX ||
        plan->byte_count + length > UINT32_MAX || plan->key_count >= INT32_MAX ||
        !grow((void **)&plan->bytes, &plan->byte_capacity, plan->byte_count + length + 1, 1) ||
        !grow((void **)&plan->key_node, &key_capacity, plan->key_count + 1, sizeof(uint32_t)) ||
        !grow((void **)&plan->keys, &plan->key_capacity, plan->key_count + 1, sizeof(plan_key))) {
        plan->failed = 1;
        return 0;
    }
    if (length) memcpy(plan->bytes + plan->byte_count, key, length);
    plan->keys[plan->key_count] = (plan_key){(uint32_t)plan->byte_count, (uint32_t)length, child, child < 0 && lifted, 0,
                                             (uint32_t)plan->key_count};
    plan->key_node[plan->key_count] = (uint32_t)node;
    plan->byte_count += length;
    plan->key_count++;
    return 1;
}

size_t cjsonscan_projection_key_count(const cjsonscan_projection *plan) { return plan ? plan->key_count : 0; }

int cjsonscan_projection_seal(cjsonscan_projection *plan) {
    if (plan->failed) return 0;
    if (plan->sealed) return 1;
    // Keys grouped by node (a stable counting sort), then one table per node of twice its keys or more.
    size_t nodes = plan->node_count, keys = plan->key_count;
    uint32_t *count = calloc(nodes + 1, sizeof(uint32_t));
    plan_key *sorted = malloc((keys ? keys : 1) * sizeof(plan_key));
    if (!count || !sorted) {
        free(count);
        free(sorted);
        plan->failed = 1;
        return 0;
    }
    for (size_t k = 0; k < keys; k++) count[plan->key_node[k] + 1]++;
    for (size_t i = 0; i < nodes; i++) count[i + 1] += count[i];
    for (size_t i = 0; i < nodes; i++) {
        plan->nodes[i].first_key = count[i];
        plan->nodes[i].key_count = count[i + 1] - count[i];
    }
    for (size_t k = 0; k < keys; k++) {
        plan_key key = plan->keys[k];
        key.prefix = plan_prefix(plan->bytes + key.offset, key.length);
        sorted[count[plan->key_node[k]]++] = key;
    }
    free(count);
    free(plan->keys);
    plan->keys = sorted;
    plan->key_capacity = keys ? keys : 1;
    size_t total = 0;
    for (size_t i = 0; i < nodes; i++) {
        size_t size = 4;
        while (size < 2 * (size_t)plan->nodes[i].key_count) size *= 2;
        plan->nodes[i].table_offset = (uint32_t)total;
        plan->nodes[i].table_mask = (uint32_t)(size - 1);
        total += size;
        if (total > UINT32_MAX) {
            plan->failed = 1;
            return 0;
        }
    }
    plan->table = malloc((total ? total : 1) * sizeof(int32_t));
    if (!plan->table) {
        plan->failed = 1;
        return 0;
    }
    memset(plan->table, 0xff, (total ? total : 1) * sizeof(int32_t));
    plan->table_count = total;
    for (size_t i = 0; i < nodes; i++) {
        plan_node *node = &plan->nodes[i];
        int32_t *table = plan->table + node->table_offset;
        for (int b = 0; b < 64; b++) node->by_bit[b] = -1;
        for (uint32_t k = node->first_key; k < node->first_key + node->key_count; k++) {
            const plan_key *key = &plan->keys[k];
            size_t slot = plan_hash(plan->bytes + key->offset, key->length) & node->table_mask;
            int duplicate = 0;
            while (table[slot] >= 0) {
                const plan_key *other = &plan->keys[table[slot]];
                if (other->length == key->length && memcmp(plan->bytes + other->offset, plan->bytes + key->offset, key->length) == 0) {
                    duplicate = 1;  // the first one added stands
                    break;
                }
                slot = (slot + 1) & node->table_mask;
            }
            unsigned bit = plan_signature_bit(key->prefix, key->length);
            if (!duplicate) {
                table[slot] = (int32_t)k;
                node->by_bit[bit] = node->by_bit[bit] == -1 ? (int32_t)k : -2;
            }
            node->signature |= 1ull << bit;
        }
    }
    plan->sealed = 1;
    return 1;
}

