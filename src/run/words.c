/* words.c - shell words: a --launch-agent command, a command for ssh */
#include "config.h"
#include "run/words.h"
#include "run/ctl.h"
#include "core/util/alloc.h"

#include <string.h>

/* append @a c to the word being built */
static int word_add(char **w, size_t *len, char c)
{
    char *v = rdp_realloc(*w, *len + 2);

    if (v == NULL) {
        return -1;
    }
    v[(*len)++] = c;
    v[*len]     = '\0';
    *w          = v;
    return 0;
}

/* append the finished word to the vector */
static int words_push(char ***v, size_t *n, char *w)
{
    char **nv = rdp_realloc(*v, (*n + 2) * sizeof(*nv));

    if (nv == NULL) {
        return -1;
    }
    nv[(*n)++] = w;
    nv[*n]     = NULL;
    *v         = nv;
    return 0;
}

pmix_status_t rdp_run_words_split(const char *cmd, char ***words_p)
{
    char **v = NULL, *w = NULL;
    size_t n = 0, len = 0;
    int in_word          = 0;
    pmix_status_t status = PMIX_ERR_NOMEM;

    for (const char *p = cmd; *p != '\0'; p++) {
        if (*p == ' ' || *p == '\t' || *p == '\n') {
            if (in_word) {
                if (words_push(&v, &n, w) != 0) {
                    goto err;
                }
                w       = NULL;
                len     = 0;
                in_word = 0;
            }
            continue;
        }
        in_word = 1;
        if (w == NULL) {
            w = rdp_strdup("");
            if (w == NULL) {
                goto err;
            }
        }
        if (*p == '\'') {
            const char *end = strchr(p + 1, '\'');

            if (end == NULL) {
                status = PMIX_ERR_BAD_PARAM;
                goto err;
            }
            for (p++; p < end; p++) {
                if (word_add(&w, &len, *p) != 0) {
                    goto err;
                }
            }
        } else if (*p == '"') {
            for (p++; *p != '"'; p++) {
                if (*p == '\0') {
                    status = PMIX_ERR_BAD_PARAM;
                    goto err;
                }
                if (*p == '\\' && p[1] != '\0' && strchr("\"\\$`\n", p[1])) {
                    p++;
                }
                if (word_add(&w, &len, *p) != 0) {
                    goto err;
                }
            }
        } else {
            if (*p == '\\' && p[1] != '\0') {
                p++;
            }
            if (word_add(&w, &len, *p) != 0) {
                goto err;
            }
        }
    }
    if (in_word && words_push(&v, &n, w) != 0) {
        goto err;
    }
    w = NULL;
    if (n == 0) {
        status = PMIX_ERR_BAD_PARAM;
        goto err;
    }
    *words_p = v;
    return PMIX_SUCCESS;

err:
    rdp_free(w);
    rdp_ctl_strv_free(v);
    return status;
}

static int safe_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || (c >= '0' && c <= '9') || strchr("%+,-./:=@_", c) != NULL;
}

char *rdp_run_words_quote(char *const *words)
{
    size_t len = 1;
    char *out, *q;

    for (size_t i = 0; words[i] != NULL; i++) {
        /* worst case: every character a quote ('\'' is 4), plus 2 quotes
         * and a separator */
        len += 4 * strlen(words[i]) + 3;
    }
    out = rdp_malloc(len);
    if (out == NULL) {
        return NULL;
    }
    q = out;
    for (size_t i = 0; words[i] != NULL; i++) {
        const char *w = words[i];
        int plain     = w[0] != '\0';

        for (const char *c = w; *c != '\0' && plain; c++) {
            plain = safe_char(*c);
        }
        if (i > 0) {
            *q++ = ' ';
        }
        if (plain) {
            size_t wl = strlen(w);

            memcpy(q, w, wl);
            q += wl;
            continue;
        }
        *q++ = '\'';
        for (const char *c = w; *c != '\0'; c++) {
            if (*c == '\'') {
                memcpy(q, "'\\''", 4);
                q += 4;
            } else {
                *q++ = *c;
            }
        }
        *q++ = '\'';
    }
    *q = '\0';
    return out;
}
