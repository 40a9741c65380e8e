/* iof.c - launcher side of rank output: pass-through or tagged lines */
#include "config.h"
#include "run/iof.h"
#include "run/ctl.h"
#include "core/util/alloc.h"

#include <stdio.h>
#include <string.h>

typedef struct partial {
    char *buf;
    size_t len;
    size_t cap;
} partial_t;

struct rdp_run_iof {
    uint32_t nranks;
    int tag;
    rdp_run_iof_write_fn_t write_fn;
    void *arg;
    partial_t *parts; /* 2 per rank: stdout, stderr */
    char *line;       /* scratch for prefix + line */
    size_t line_cap;
};

pmix_status_t rdp_run_iof_create(uint32_t nranks, int tag,
                                 rdp_run_iof_write_fn_t write_fn, void *arg,
                                 rdp_run_iof_t **iof_p)
{
    rdp_run_iof_t *iof = rdp_calloc(1, sizeof(*iof));

    if (iof == NULL) {
        return PMIX_ERR_NOMEM;
    }
    iof->nranks   = nranks;
    iof->tag      = tag;
    iof->write_fn = write_fn;
    iof->arg      = arg;
    if (tag && nranks > 0) {
        iof->parts = rdp_calloc((size_t)nranks * 2, sizeof(*iof->parts));
        if (iof->parts == NULL) {
            rdp_free(iof);
            return PMIX_ERR_NOMEM;
        }
    }
    *iof_p = iof;
    return PMIX_SUCCESS;
}

void rdp_run_iof_destroy(rdp_run_iof_t *iof)
{
    if (iof == NULL) {
        return;
    }
    for (size_t i = 0; iof->parts != NULL && i < (size_t)iof->nranks * 2; i++) {
        rdp_free(iof->parts[i].buf);
    }
    rdp_free(iof->parts);
    rdp_free(iof->line);
    rdp_free(iof);
}

/* Write "[rank] " + a + b (+ "\n" if @a add_nl) as one unit. */
static void emit(rdp_run_iof_t *iof, uint32_t rank, int channel, const char *a,
                 size_t alen, const char *b, size_t blen, int add_nl)
{
    char prefix[24];
    int plen    = snprintf(prefix, sizeof(prefix), "[%u] ", rank);
    size_t need = (size_t)plen + alen + blen + 1;

    if (need > iof->line_cap) {
        char *p = rdp_realloc(iof->line, need);

        if (p == NULL) {
            /* no memory for one unit: degrade to separate writes */
            iof->write_fn(channel, prefix, (size_t)plen, iof->arg);
            if (alen > 0) {
                iof->write_fn(channel, a, alen, iof->arg);
            }
            if (blen > 0) {
                iof->write_fn(channel, b, blen, iof->arg);
            }
            if (add_nl) {
                iof->write_fn(channel, "\n", 1, iof->arg);
            }
            return;
        }
        iof->line     = p;
        iof->line_cap = need;
    }
    memcpy(iof->line, prefix, (size_t)plen);
    if (alen > 0) {
        memcpy(iof->line + plen, a, alen);
    }
    if (blen > 0) {
        memcpy(iof->line + plen + alen, b, blen);
    }
    need = (size_t)plen + alen + blen;
    if (add_nl) {
        iof->line[need++] = '\n';
    }
    iof->write_fn(channel, iof->line, need, iof->arg);
}

static partial_t *part_of(rdp_run_iof_t *iof, uint32_t rank, int channel)
{
    return &iof->parts[(size_t)rank * 2 + (channel == RDP_CTL_STDERR)];
}

pmix_status_t rdp_run_iof_input(rdp_run_iof_t *iof, uint32_t rank, int channel,
                                const void *data, size_t len)
{
    const char *p = data;
    partial_t *part;

    if (rank >= iof->nranks
        || (channel != RDP_CTL_STDOUT && channel != RDP_CTL_STDERR)
        || len == 0) {
        return PMIX_SUCCESS;
    }
    if (!iof->tag) {
        iof->write_fn(channel, data, len, iof->arg);
        return PMIX_SUCCESS;
    }
    part = part_of(iof, rank, channel);
    while (len > 0) {
        const char *nl = memchr(p, '\n', len);
        size_t n;

        if (nl == NULL) {
            break;
        }
        n = (size_t)(nl - p) + 1;
        emit(iof, rank, channel, part->buf, part->len, p, n, 0);
        part->len = 0;
        p += n;
        len -= n;
    }
    if (len == 0) {
        return PMIX_SUCCESS;
    }
    if (part->len + len > RDP_RUN_IOF_MAX_PARTIAL) {
        /* an endless line: write what we have as a line of its own */
        emit(iof, rank, channel, part->buf, part->len, p, len, 1);
        part->len = 0;
        return PMIX_SUCCESS;
    }
    if (part->len + len > part->cap) {
        size_t cap = part->cap ? part->cap : 256;
        char *nb;

        while (cap < part->len + len) {
            cap *= 2;
        }
        nb = rdp_realloc(part->buf, cap);
        if (nb == NULL) {
            emit(iof, rank, channel, part->buf, part->len, p, len, 1);
            part->len = 0;
            return PMIX_ERR_NOMEM;
        }
        part->buf = nb;
        part->cap = cap;
    }
    memcpy(part->buf + part->len, p, len);
    part->len += len;
    return PMIX_SUCCESS;
}

void rdp_run_iof_flush(rdp_run_iof_t *iof, uint32_t rank, int channel)
{
    partial_t *part;

    if (!iof->tag || rank >= iof->nranks
        || (channel != RDP_CTL_STDOUT && channel != RDP_CTL_STDERR)) {
        return;
    }
    part = part_of(iof, rank, channel);
    if (part->len > 0) {
        emit(iof, rank, channel, part->buf, part->len, NULL, 0, 1);
        part->len = 0;
    }
}

void rdp_run_iof_flush_all(rdp_run_iof_t *iof)
{
    for (uint32_t r = 0; iof->tag && r < iof->nranks; r++) {
        rdp_run_iof_flush(iof, r, RDP_CTL_STDOUT);
        rdp_run_iof_flush(iof, r, RDP_CTL_STDERR);
    }
}
