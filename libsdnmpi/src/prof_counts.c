/* prof_counts.c -- the profiler's counters: per-phase tx matrices and the (peer, size) histogram.
 * Every MPI call the profiler intercepts ends here, so the common path is a few additions and one
 * open-addressing hash probe. */
#include <stdlib.h>
#include <string.h>

#include "prof.h"

#define HIST_INITIAL 256 /* slots; doubled when half full */

int prof_counts_init(int n)
{
    memset(prof_g.phase, 0, sizeof prof_g.phase);
    prof_g.size = n;
    prof_g.hist.slots = malloc(HIST_INITIAL * sizeof *prof_g.hist.slots);
    if (prof_g.hist.slots == NULL)
        return -1;
    prof_g.hist.cap = HIST_INITIAL;
    prof_g.hist.used = 0;
    for (size_t i = 0; i < prof_g.hist.cap; i++)
        prof_g.hist.slots[i].peer = -1;
    return prof_phase_get(0) == NULL ? -1 : 0;
}

void prof_counts_free(void)
{
    for (int k = 0; k <= SDNMPI_PHASE_MAX; k++) {
        free(prof_g.phase[k].tx_bytes);
        free(prof_g.phase[k].tx_msgs);
        prof_g.phase[k].tx_bytes = prof_g.phase[k].tx_msgs = NULL;
    }
    free(prof_g.hist.slots);
    prof_g.hist.slots = NULL;
    prof_g.hist.cap = prof_g.hist.used = 0;
}

struct prof_phase *prof_phase_get(int k)
{
    struct prof_phase *ph = &prof_g.phase[k];
    if (ph->tx_bytes == NULL) {
        ph->tx_bytes = calloc((size_t)prof_g.size, sizeof *ph->tx_bytes);
        ph->tx_msgs = calloc((size_t)prof_g.size, sizeof *ph->tx_msgs);
        if (ph->tx_bytes == NULL || ph->tx_msgs == NULL) {
            free(ph->tx_bytes);
            free(ph->tx_msgs);
            ph->tx_bytes = ph->tx_msgs = NULL;
            if (!prof_g.failed)
                prof_warn("out of memory for phase %d's counters: no trace will be written", k);
            prof_g.failed = 1;
            return NULL;
        }
    }
    return ph;
}

static size_t slot_of(int32_t peer, uint64_t size, size_t cap)
{
    uint64_t h = (size ^ ((uint64_t)(uint32_t)peer << 40)) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

static int hist_grow(struct prof_hist *hist)
{
    size_t cap = hist->cap * 2;
    struct prof_hist_entry *slots = malloc(cap * sizeof *slots);
    if (slots == NULL)
        return -1;
    for (size_t i = 0; i < cap; i++)
        slots[i].peer = -1;
    for (size_t i = 0; i < hist->cap; i++) {
        struct prof_hist_entry *e = &hist->slots[i];
        if (e->peer < 0)
            continue;
        size_t j = slot_of(e->peer, e->size, cap);
        while (slots[j].peer >= 0)
            j = (j + 1) & (cap - 1);
        slots[j] = *e;
    }
    free(hist->slots);
    hist->slots = slots;
    hist->cap = cap;
    return 0;
}

static void hist_add(int32_t peer, uint64_t size)
{
    struct prof_hist *hist = &prof_g.hist;
    size_t j = slot_of(peer, size, hist->cap);
    while (hist->slots[j].peer >= 0) {
        if (hist->slots[j].peer == peer && hist->slots[j].size == size) {
            hist->slots[j].freq++;
            return;
        }
        j = (j + 1) & (hist->cap - 1);
    }
    if (2 * (hist->used + 1) > hist->cap) {
        if (hist_grow(hist) != 0) {
            if (!prof_g.failed)
                prof_warn("out of memory for the message-size histogram: no trace will be written");
            prof_g.failed = 1;
            return;
        }
        hist_add(peer, size);
        return;
    }
    hist->slots[j].peer = peer;
    hist->slots[j].size = size;
    hist->slots[j].freq = 1;
    hist->used++;
}

void prof_count_send(int peer, uint64_t bytes)
{
    if (!prof_g.active || prof_g.failed || peer < 0 || peer >= prof_g.size)
        return;
    hist_add(peer, bytes);
    if (prof_g.source != PROF_SOURCE_PMPI)
        return;
    prof_g.phase[0].tx_bytes[peer] += bytes;
    prof_g.phase[0].tx_msgs[peer]++;
    int k = sdnmpi_phase_current();
    if (k > 0) {
        struct prof_phase *ph = prof_phase_get(k);
        if (ph != NULL) {
            ph->tx_bytes[peer] += bytes;
            ph->tx_msgs[peer]++;
        }
    }
}

void prof_count_event(void)
{
    if (!prof_g.active)
        return;
    prof_g.phase[0].events++;
    int k = sdnmpi_phase_current();
    if (k > 0 && prof_g.phase[k].tx_bytes != NULL)
        prof_g.phase[k].events++;
}

int prof_counts_add(int k, const uint64_t *bytes, const uint64_t *msgs)
{
    struct prof_phase *ph = prof_phase_get(k);
    if (ph == NULL)
        return -1;
    for (int i = 0; i < prof_g.size; i++) {
        ph->tx_bytes[i] += bytes[i];
        ph->tx_msgs[i] += msgs[i];
    }
    return 0;
}
