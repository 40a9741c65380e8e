/* pnet_env.c - environment directives (PMIX_SET_ENVAR, ...) on an env array */
#include "config.h"
#include "pnet/pnet.h"
#include "core/util/alloc.h"
#include "core/util/hash.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const envar_keys[] = {PMIX_SET_ENVAR,    PMIX_ADD_ENVAR,
                                         PMIX_UNSET_ENVAR,  PMIX_PREPEND_ENVAR,
                                         PMIX_APPEND_ENVAR, PMIX_FIRST_ENVAR};

int rdp_pnet_is_envar_key(const char *key)
{
    for (size_t i = 0; i < sizeof(envar_keys) / sizeof(envar_keys[0]); i++) {
        if (strcmp(key, envar_keys[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The slot of NAME=... in @a env, or -1. */
static int env_slot(char **env, const char *name)
{
    size_t nlen = strlen(name);

    for (int i = 0; env != NULL && env[i] != NULL; i++) {
        if (strncmp(env[i], name, nlen) == 0 && env[i][nlen] == '=') {
            return i;
        }
    }
    return -1;
}

/* The current value of @a name in *@a env (borrowed), or NULL. */
static const char *env_value(char ***env, const char *name)
{
    int slot;

    if (*env == environ) {
        return getenv(name);
    }
    slot = env_slot(*env, name);
    return (slot < 0) ? NULL : strchr((*env)[slot], '=') + 1;
}

static void env_unset(char ***env, const char *name)
{
    int slot;

    if (*env == environ) {
        unsetenv(name);
        return;
    }
    slot = env_slot(*env, name);
    if (slot < 0) {
        return;
    }
    free((*env)[slot]);
    do {
        (*env)[slot] = (*env)[slot + 1];
        slot++;
    } while ((*env)[slot] != NULL);
}

/* "a" + sep + "b" (either may be empty: then no separator) */
static char *join(const char *a, char sep, const char *b)
{
    size_t alen = strlen(a), blen = strlen(b);
    char *s = malloc(alen + blen + 2);

    if (s == NULL) {
        return NULL;
    }
    if (alen == 0 || blen == 0) {
        snprintf(s, alen + blen + 2, "%s%s", a, b);
    } else {
        snprintf(s, alen + blen + 2, "%s%c%s", a, sep, b);
    }
    return s;
}

/* @a old without the elements (split at @a sep) equal to @a value */
static char *without_element(const char *old, char sep, const char *value)
{
    size_t vlen   = strlen(value);
    char *out     = calloc(1, strlen(old) + 1);
    const char *p = old;

    if (out == NULL) {
        return NULL;
    }
    while (*p != '\0') {
        const char *end = strchr(p, sep);
        size_t len      = (end == NULL) ? strlen(p) : (size_t)(end - p);

        if (!(len == vlen && strncmp(p, value, len) == 0)) {
            if (out[0] != '\0') {
                strncat(out, &sep, 1);
            }
            strncat(out, p, len);
        }
        p += len;
        if (*p == sep) {
            p++;
        }
    }
    return out;
}

/* The new value of an envar for PREPEND, APPEND or FIRST */
static char *combined(const char *key, const pmix_envar_t *ev, const char *old)
{
    char *rest, *s;

    if (old == NULL || old[0] == '\0') {
        return strdup(ev->value);
    }
    if (strcmp(key, PMIX_APPEND_ENVAR) == 0) {
        return join(old, ev->separator, ev->value);
    }
    if (strcmp(key, PMIX_PREPEND_ENVAR) == 0) {
        return join(ev->value, ev->separator, old);
    }
    /* FIRST: the value once, in front */
    rest = without_element(old, ev->separator, ev->value);
    if (rest == NULL) {
        return NULL;
    }
    s = join(ev->value, ev->separator, rest);
    free(rest);
    return s;
}

static pmix_status_t apply_envar(const char *key, const pmix_envar_t *ev,
                                 char ***env)
{
    pmix_status_t status;
    char *value;

    if (ev->envar == NULL || ev->envar[0] == '\0' || ev->value == NULL
        || strchr(ev->envar, '=') != NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (strcmp(key, PMIX_SET_ENVAR) == 0) {
        return pmix_setenv(ev->envar, ev->value, true, env);
    }
    if (strcmp(key, PMIX_ADD_ENVAR) == 0) {
        status = pmix_setenv(ev->envar, ev->value, false, env);
        return (status == PMIX_ERR_EXISTS) ? PMIX_SUCCESS : status;
    }
    value = combined(key, ev, env_value(env, ev->envar));
    if (value == NULL) {
        return PMIX_ERR_NOMEM;
    }
    status = pmix_setenv(ev->envar, value, true, env);
    free(value);
    return status;
}

pmix_status_t rdp_pnet_envar_apply(const char *key, const pmix_value_t *val,
                                   char ***env)
{
    if (key == NULL || val == NULL || env == NULL
        || !rdp_pnet_is_envar_key(key)) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (strcmp(key, PMIX_UNSET_ENVAR) == 0) {
        if (val->type != PMIX_STRING || val->data.string == NULL) {
            return PMIX_ERR_BAD_PARAM;
        }
        env_unset(env, val->data.string);
        return PMIX_SUCCESS;
    }
    if (val->type != PMIX_ENVAR) {
        return PMIX_ERR_BAD_PARAM;
    }
    return apply_envar(key, &val->data.envar, env);
}

static void wipe_string(char *s)
{
    if (s != NULL) {
        explicit_bzero(s, strlen(s));
    }
}

void rdp_pnet_wipe_value(pmix_value_t *val)
{
    switch (val->type) {
    case PMIX_STRING:
        wipe_string(val->data.string);
        break;
    case PMIX_ENVAR:
        wipe_string(val->data.envar.value);
        break;
    case PMIX_BYTE_OBJECT:
        if (val->data.bo.bytes != NULL) {
            explicit_bzero(val->data.bo.bytes, val->data.bo.size);
        }
        break;
    default:
        break;
    }
}

/* The project's FNV-1a (hash.c): a label for logs, not a protection of the
 * secret (it shows 32 bits of a hash of it, which cannot give the secret
 * back). */
void rdp_pnet_fingerprint(const void *secret, size_t len, char *buf)
{
    snprintf(buf, 9, "%08x", (unsigned)(rdp_hash_bytes(secret, len) >> 32));
}
