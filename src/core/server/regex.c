/* regex.c - rdpmix node-map and proc-map strings (generate and parse) */
#include "config.h"
#include "core/server/regex.h"
#include "core/util/alloc.h"
#include "core/util/log.h"
#include "core/util/status.h"

#include <pmix.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* numbers in names and ranges: at most 9 digits, so they fit a uint32 */
#define MAX_DIGITS 9
#define MAX_NUMBER 999999999u

/* ---- a small growing string ---- */

typedef struct sbuf {
    char *s;
    size_t len;
    size_t cap;
    bool failed;
} sbuf_t;

static void sb_append(sbuf_t *sb, const char *data, size_t n)
{
    if (sb->failed) {
        return;
    }
    if (sb->len + n + 1 > sb->cap) {
        size_t cap = sb->cap == 0 ? 64 : sb->cap;
        char *p;

        while (cap < sb->len + n + 1) {
            cap *= 2;
        }
        p = rdp_realloc(sb->s, cap);
        if (p == NULL) {
            sb->failed = true;
            return;
        }
        sb->s   = p;
        sb->cap = cap;
    }
    memcpy(sb->s + sb->len, data, n);
    sb->len += n;
    sb->s[sb->len] = '\0';
}

static void sb_puts(sbuf_t *sb, const char *str)
{
    sb_append(sb, str, strlen(str));
}

static void sb_putu(sbuf_t *sb, unsigned width, uint32_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "%0*u", (int)width, (unsigned)v);

    sb_append(sb, tmp, (size_t)n);
}

/* Hand the string to the caller, or report NOMEM. */
static pmix_status_t sb_finish(sbuf_t *sb, char **out_p)
{
    if (sb->failed || sb->s == NULL) {
        rdp_free(sb->s);
        return PMIX_ERR_NOMEM;
    }
    *out_p = sb->s;
    return PMIX_SUCCESS;
}

/* Append "a" or "a-b" for a run of consecutive values. */
static void sb_put_run(sbuf_t *sb, unsigned width, uint32_t lo, uint32_t hi)
{
    sb_putu(sb, width, lo);
    if (hi != lo) {
        sb_append(sb, "-", 1);
        sb_putu(sb, width, hi);
    }
}

/* ---- number parsing ---- */

/* Parse 1..MAX_DIGITS decimal digits at *pp (no sign, no spaces). */
static bool parse_number(const char **pp, const char *end, uint32_t *v_p,
                         size_t *ndigits_p)
{
    const char *p = *pp;
    uint32_t v    = 0;
    size_t n      = 0;

    while (p < end && *p >= '0' && *p <= '9') {
        if (n == MAX_DIGITS) {
            return false;
        }
        v = v * 10 + (uint32_t)(*p - '0');
        n++;
        p++;
    }
    if (n == 0) {
        return false;
    }
    *pp  = p;
    *v_p = v;
    if (ndigits_p != NULL) {
        *ndigits_p = n;
    }
    return true;
}

static bool name_char_ok(char c)
{
    /* separators of our format and control characters never appear in a
     * host name */
    return c != ',' && c != '[' && c != ']' && c != ';'
           && (unsigned char)c > 0x20 && c != 0x7f;
}

/* ---- node map generation ---- */

typedef struct name_split {
    const char *name; /* start of the name in the input */
    size_t len;       /* whole name length */
    size_t plen;      /* prefix length (name without numeric suffix) */
    size_t ndigits;   /* 0 when the name has no usable numeric suffix */
    uint32_t num;
} name_split_t;

static pmix_status_t split_name(const char *name, size_t len, name_split_t *ns)
{
    size_t i = len;

    if (len == 0 || len > RDP_REGEX_MAX_NAME) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t k = 0; k < len; k++) {
        if (!name_char_ok(name[k])) {
            return PMIX_ERR_BAD_PARAM;
        }
    }
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') {
        i--;
    }
    ns->name    = name;
    ns->len     = len;
    ns->plen    = i;
    ns->ndigits = len - i;
    ns->num     = 0;
    if (ns->ndigits == 0 || ns->ndigits > MAX_DIGITS) {
        ns->plen    = len;
        ns->ndigits = 0;
        return PMIX_SUCCESS;
    }
    for (size_t k = i; k < len; k++) {
        ns->num = ns->num * 10 + (uint32_t)(name[k] - '0');
    }
    return PMIX_SUCCESS;
}

/* True if printing @a b's number with @a width digits gives back @a b. */
static bool fits_group(const name_split_t *first, unsigned width,
                       const name_split_t *b)
{
    size_t natural = 1;

    if (b->ndigits == 0 || b->plen != first->plen
        || memcmp(b->name, first->name, first->plen) != 0) {
        return false;
    }
    for (uint32_t v = b->num; v >= 10; v /= 10) {
        natural++;
    }
    /* printf("%0*u") gives max(width, natural) digits */
    return b->ndigits == (natural > width ? natural : width);
}

static void emit_group(sbuf_t *sb, const name_split_t *items, size_t n,
                       unsigned width)
{
    size_t i = 0;

    sb_append(sb, items[0].name, items[0].plen);
    sb_append(sb, "[", 1);
    sb_putu(sb, 0, width);
    sb_append(sb, ":", 1);
    while (i < n) {
        size_t j = i;

        while (j + 1 < n && items[j].num != MAX_NUMBER
               && items[j + 1].num == items[j].num + 1) {
            j++;
        }
        if (i > 0) {
            sb_append(sb, ",", 1);
        }
        sb_put_run(sb, 0, items[i].num, items[j].num);
        i = j + 1;
    }
    sb_append(sb, "]", 1);
}

pmix_status_t rdp_server_regex_generate(const char *input, char **regex_p)
{
    name_split_t *items = NULL;
    size_t nitems = 0, cap = 0;
    const char *p;
    sbuf_t sb = {0};
    pmix_status_t status;
    size_t inlen;

    if (input == NULL || regex_p == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    inlen = strlen(input);
    if (inlen == 0 || inlen > RDP_REGEX_MAX_LEN) {
        rdp_log_error(SERVER, "node list of %zu bytes rejected", inlen);
        return PMIX_ERR_BAD_PARAM;
    }
    for (p = input;;) {
        const char *comma = strchr(p, ',');
        size_t len        = comma == NULL ? strlen(p) : (size_t)(comma - p);

        if (nitems == cap) {
            size_t ncap      = cap == 0 ? 16 : cap * 2;
            name_split_t *n2 = rdp_realloc(items, ncap * sizeof(*items));

            if (n2 == NULL) {
                status = PMIX_ERR_NOMEM;
                goto out;
            }
            items = n2;
            cap   = ncap;
        }
        status = split_name(p, len, &items[nitems]);
        if (status != PMIX_SUCCESS) {
            rdp_log_error(SERVER,
                          "invalid node name at offset %zu in node "
                          "list",
                          (size_t)(p - input));
            goto out;
        }
        nitems++;
        if (nitems > RDP_REGEX_MAX_NODES) {
            rdp_log_error(SERVER, "node list has more than %u names",
                          RDP_REGEX_MAX_NODES);
            status = PMIX_ERR_BAD_PARAM;
            goto out;
        }
        if (comma == NULL) {
            break;
        }
        p = comma + 1;
    }

    sb_puts(&sb, RDP_REGEX_PREFIX);
    for (size_t i = 0; i < nitems;) {
        size_t j       = i + 1;
        unsigned width = (unsigned)items[i].ndigits;

        if (i > 0) {
            sb_append(&sb, ",", 1);
        }
        if (items[i].ndigits > 0) {
            while (j < nitems && fits_group(&items[i], width, &items[j])) {
                j++;
            }
        }
        if (j - i >= 2) {
            emit_group(&sb, &items[i], j - i, width);
        } else {
            sb_append(&sb, items[i].name, items[i].len);
        }
        i = j;
    }
    status = sb_finish(&sb, regex_p);
    sb.s   = NULL;
out:
    rdp_free(sb.s);
    rdp_free(items);
    return status;
}

/* ---- node map parsing ---- */

typedef struct name_list {
    char **names;
    size_t n;
    size_t cap;
} name_list_t;

static void name_list_free(name_list_t *nl)
{
    for (size_t i = 0; i < nl->n; i++) {
        rdp_free(nl->names[i]);
    }
    rdp_free(nl->names);
    nl->names = NULL;
    nl->n = nl->cap = 0;
}

/* Take ownership of @a name (freed on failure). */
static pmix_status_t name_list_add(name_list_t *nl, char *name)
{
    if (name == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (nl->n + 1 >= nl->cap) {
        size_t ncap = nl->cap == 0 ? 16 : nl->cap * 2;
        char **p    = rdp_realloc(nl->names, ncap * sizeof(char *));

        if (p == NULL) {
            rdp_free(name);
            return PMIX_ERR_NOMEM;
        }
        nl->names = p;
        nl->cap   = ncap;
    }
    nl->names[nl->n++] = name;
    nl->names[nl->n]   = NULL;
    return PMIX_SUCCESS;
}

static char *dup_range(const char *s, size_t len)
{
    char *d = rdp_malloc(len + 1);

    if (d != NULL) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

/* Parse "N" or "N-M" ranges separated by ',' in [p, end); call @a fn per
 * range. Rejects empty ranges and N > M. */
typedef pmix_status_t (*range_fn_t)(uint32_t lo, uint32_t hi, void *arg);

static pmix_status_t parse_ranges(const char *p, const char *end, range_fn_t fn,
                                  void *arg)
{
    while (p < end) {
        uint32_t lo, hi;
        pmix_status_t status;

        if (!parse_number(&p, end, &lo, NULL)) {
            return PMIX_ERR_BAD_PARAM;
        }
        hi = lo;
        if (p < end && *p == '-') {
            p++;
            if (!parse_number(&p, end, &hi, NULL) || hi < lo) {
                return PMIX_ERR_BAD_PARAM;
            }
        }
        status = fn(lo, hi, arg);
        if (status != PMIX_SUCCESS) {
            return status;
        }
        if (p < end) {
            if (*p != ',' || p + 1 == end) {
                return PMIX_ERR_BAD_PARAM;
            }
            p++;
        }
    }
    return PMIX_SUCCESS;
}

typedef struct group_ctx {
    name_list_t *nl;
    const char *prefix;
    size_t plen;
    unsigned width;
} group_ctx_t;

static pmix_status_t group_range(uint32_t lo, uint32_t hi, void *arg)
{
    group_ctx_t *g = arg;

    if ((uint64_t)hi - lo + 1 + g->nl->n > RDP_REGEX_MAX_NODES) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (uint64_t v = lo; v <= hi; v++) {
        char tmp[32];
        int n = snprintf(tmp, sizeof(tmp), "%0*u", (int)g->width, (unsigned)v);
        char *name = rdp_malloc(g->plen + (size_t)n + 1);
        pmix_status_t status;

        if (name != NULL) {
            memcpy(name, g->prefix, g->plen);
            memcpy(name + g->plen, tmp, (size_t)n + 1);
        }
        status = name_list_add(g->nl, name);
        if (status != PMIX_SUCCESS) {
            return status;
        }
    }
    return PMIX_SUCCESS;
}

/* One item: a plain name or prefix[width:ranges]. */
static pmix_status_t parse_item(name_list_t *nl, const char *p, const char *end)
{
    const char *open = memchr(p, '[', (size_t)(end - p));
    group_ctx_t g;
    uint32_t width;

    if (open == NULL) {
        if (p == end || (size_t)(end - p) > RDP_REGEX_MAX_NAME) {
            return PMIX_ERR_BAD_PARAM;
        }
        for (const char *q = p; q < end; q++) {
            if (!name_char_ok(*q)) {
                return PMIX_ERR_BAD_PARAM;
            }
        }
        if (nl->n + 1 > RDP_REGEX_MAX_NODES) {
            return PMIX_ERR_BAD_PARAM;
        }
        return name_list_add(nl, dup_range(p, (size_t)(end - p)));
    }
    if ((size_t)(open - p) > RDP_REGEX_MAX_NAME || end[-1] != ']'
        || end - open < 4) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (const char *q = p; q < open; q++) {
        if (!name_char_ok(*q)) {
            return PMIX_ERR_BAD_PARAM;
        }
    }
    g.nl     = nl;
    g.prefix = p;
    g.plen   = (size_t)(open - p);
    p        = open + 1;
    end      = end - 1; /* drop ']' */
    if (!parse_number(&p, end, &width, NULL) || width < 1 || width > MAX_DIGITS
        || p >= end || *p != ':') {
        return PMIX_ERR_BAD_PARAM;
    }
    p++;
    if (p == end) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (const char *q = p; q < end; q++) {
        if (!((*q >= '0' && *q <= '9') || *q == ',' || *q == '-')) {
            return PMIX_ERR_BAD_PARAM;
        }
    }
    g.width = width;
    return parse_ranges(p, end, group_range, &g);
}

pmix_status_t rdp_server_regex_parse(const char *regex, char ***names_p,
                                     size_t *n_p)
{
    name_list_t nl = {0};
    const char *p, *end;
    pmix_status_t status;
    size_t len;

    if (regex == NULL || names_p == NULL || n_p == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    len = strnlen(regex, RDP_REGEX_MAX_LEN + 1);
    if (len > RDP_REGEX_MAX_LEN) {
        return PMIX_ERR_BAD_PARAM;
    }
    p   = regex;
    end = regex + len;
    if (strncmp(p, RDP_REGEX_PREFIX, strlen(RDP_REGEX_PREFIX)) == 0) {
        p += strlen(RDP_REGEX_PREFIX);
    }
    if (p == end) {
        return PMIX_ERR_BAD_PARAM;
    }
    while (p < end) {
        const char *q = p;
        int depth     = 0;

        /* an item ends at a ',' outside brackets */
        while (q < end && (depth > 0 || *q != ',')) {
            if (*q == '[') {
                if (depth++ > 0) {
                    status = PMIX_ERR_BAD_PARAM;
                    goto err;
                }
            } else if (*q == ']') {
                if (depth-- == 0) {
                    status = PMIX_ERR_BAD_PARAM;
                    goto err;
                }
            }
            q++;
        }
        if (depth != 0) {
            status = PMIX_ERR_BAD_PARAM;
            goto err;
        }
        status = parse_item(&nl, p, q);
        if (status != PMIX_SUCCESS) {
            goto err;
        }
        if (q < end) {
            q++; /* the ',' */
            if (q == end) {
                status = PMIX_ERR_BAD_PARAM;
                goto err;
            }
        }
        p = q;
    }
    *names_p = nl.names;
    *n_p     = nl.n;
    return PMIX_SUCCESS;

err:
    if (status == PMIX_ERR_BAD_PARAM) {
        rdp_log_debug(SERVER, "malformed node map near offset %zu",
                      (size_t)(p - regex));
    }
    name_list_free(&nl);
    return status;
}

/* ---- proc map ---- */

typedef struct rank_vec {
    pmix_rank_t *r;
    size_t n;
    size_t cap;
} rank_vec_t;

static pmix_status_t rank_range(uint32_t lo, uint32_t hi, void *arg)
{
    rank_vec_t *rv = arg;
    size_t add     = (size_t)hi - lo + 1;

    if (rv->n + add > RDP_PPN_MAX_RANKS) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (rv->n + add > rv->cap) {
        size_t cap = rv->cap == 0 ? 64 : rv->cap;
        pmix_rank_t *p;

        while (cap < rv->n + add) {
            cap *= 2;
        }
        p = rdp_realloc(rv->r, cap * sizeof(*p));
        if (p == NULL) {
            return PMIX_ERR_NOMEM;
        }
        rv->r   = p;
        rv->cap = cap;
    }
    for (uint64_t v = lo; v <= hi; v++) {
        rv->r[rv->n++] = (pmix_rank_t)v;
    }
    return PMIX_SUCCESS;
}

pmix_status_t rdp_server_ppn_parse(const char *str, rdp_server_ppn_t *ppn)
{
    rank_vec_t rv = {0};
    size_t *first = NULL;
    size_t nnodes = 0, fcap = 0;
    const char *p, *end;
    pmix_status_t status;
    size_t len;

    if (str == NULL || ppn == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    len = strnlen(str, RDP_REGEX_MAX_LEN + 1);
    if (len > RDP_REGEX_MAX_LEN) {
        return PMIX_ERR_BAD_PARAM;
    }
    p   = str;
    end = str + len;
    if (strncmp(p, RDP_PPN_PREFIX, strlen(RDP_PPN_PREFIX)) == 0) {
        p += strlen(RDP_PPN_PREFIX);
    }
    for (const char *q = p; q < end; q++) {
        if (!((*q >= '0' && *q <= '9') || *q == ',' || *q == '-'
              || *q == ';')) {
            rdp_log_debug(SERVER,
                          "proc map has an invalid character at "
                          "offset %zu",
                          (size_t)(q - str));
            return PMIX_ERR_BAD_PARAM;
        }
    }
    for (;;) {
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *gend = semi == NULL ? end : semi;

        if (nnodes + 2 > fcap) {
            size_t ncap = fcap == 0 ? 16 : fcap * 2;
            size_t *f2  = rdp_realloc(first, ncap * sizeof(*f2));

            if (f2 == NULL) {
                status = PMIX_ERR_NOMEM;
                goto err;
            }
            first = f2;
            fcap  = ncap;
        }
        if (nnodes >= RDP_REGEX_MAX_NODES) {
            status = PMIX_ERR_BAD_PARAM;
            goto err;
        }
        first[nnodes++] = rv.n;
        status          = parse_ranges(p, gend, rank_range, &rv);
        if (status != PMIX_SUCCESS) {
            goto err;
        }
        if (semi == NULL) {
            break;
        }
        p = semi + 1;
    }
    first[nnodes] = rv.n;
    for (size_t i = 0; i < rv.n; i++) {
        if (rv.r[i] >= PMIX_RANK_VALID) {
            status = PMIX_ERR_BAD_PARAM;
            goto err;
        }
    }
    ppn->nnodes = nnodes;
    ppn->nranks = rv.n;
    ppn->first  = first;
    ppn->ranks  = rv.r;
    return PMIX_SUCCESS;

err:
    rdp_log_debug(SERVER, "malformed proc map: %s", rdp_status_name(status));
    rdp_free(first);
    rdp_free(rv.r);
    return status;
}

void rdp_server_ppn_cleanup(rdp_server_ppn_t *ppn)
{
    if (ppn == NULL) {
        return;
    }
    rdp_free(ppn->first);
    rdp_free(ppn->ranks);
    memset(ppn, 0, sizeof(*ppn));
}

pmix_status_t rdp_server_ppn_generate(const char *input, char **ppn_p)
{
    rdp_server_ppn_t ppn;
    sbuf_t sb = {0};
    pmix_status_t status;

    if (input == NULL || ppn_p == NULL || *input == '\0') {
        return PMIX_ERR_BAD_PARAM;
    }
    if (strncmp(input, RDP_PPN_PREFIX, strlen(RDP_PPN_PREFIX)) == 0) {
        return PMIX_ERR_BAD_PARAM; /* already generated */
    }
    status = rdp_server_ppn_parse(input, &ppn);
    if (status != PMIX_SUCCESS) {
        rdp_log_error(SERVER, "invalid proc map input: %s",
                      rdp_status_name(status));
        return status;
    }
    sb_puts(&sb, RDP_PPN_PREFIX);
    for (size_t node = 0; node < ppn.nnodes; node++) {
        size_t i = ppn.first[node], end = ppn.first[node + 1];

        if (node > 0) {
            sb_append(&sb, ";", 1);
        }
        while (i < end) {
            size_t j = i;

            while (j + 1 < end && ppn.ranks[j + 1] == ppn.ranks[j] + 1) {
                j++;
            }
            if (i > ppn.first[node]) {
                sb_append(&sb, ",", 1);
            }
            sb_put_run(&sb, 0, ppn.ranks[i], ppn.ranks[j]);
            i = j + 1;
        }
    }
    rdp_server_ppn_cleanup(&ppn);
    return sb_finish(&sb, ppn_p);
}
