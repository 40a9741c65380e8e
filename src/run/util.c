/* util.c - small helpers shared by rdpmix-run and rdpmixd */
#include "config.h"
#include "run/util.h"
#include "core/util/alloc.h"
#include "core/util/log.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

pmix_status_t rdp_run_random(void *buf, size_t len)
{
    uint8_t *p = buf;

    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            rdp_log_error(RUN, "getrandom failed: %m");
            return PMIX_ERR_IN_ERRNO;
        }
        p += n;
        len -= (size_t)n;
    }
    return PMIX_SUCCESS;
}

void rdp_run_hex_encode(const uint8_t *data, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < len; i++) {
        out[2 * i]     = digits[data[i] >> 4];
        out[2 * i + 1] = digits[data[i] & 0xf];
    }
    out[2 * len] = '\0';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

int rdp_run_hex_decode(const char *hex, uint8_t *out, size_t len)
{
    if (strlen(hex) != 2 * len) {
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        int hi = hexval(hex[2 * i]);
        int lo = hexval(hex[2 * i + 1]);

        if (hi < 0 || lo < 0) {
            return -1;
        }
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

int rdp_run_secret_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
    volatile uint8_t diff = 0;

    for (size_t i = 0; i < len; i++) {
        diff |= a[i] ^ b[i];
    }
    return diff == 0;
}

pmix_status_t rdp_run_exe_dir(char **dir_p)
{
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    char *slash;
    size_t len;

    if (n <= 0) {
        rdp_log_error(RUN, "cannot read /proc/self/exe: %m");
        return PMIX_ERR_NOT_FOUND;
    }
    path[n] = '\0';
    slash   = strrchr(path, '/');
    if (slash == NULL) {
        return PMIX_ERR_NOT_FOUND;
    }
    *slash = '\0';
    len    = strlen(path);
    if (len >= 6 && strcmp(path + len - 6, "/.libs") == 0) {
        path[len - 6] = '\0';
    }
    if (path[0] == '\0') {
        strcpy(path, "/");
    }
    *dir_p = rdp_strdup(path);
    return *dir_p == NULL ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

static int rm_entry(const char *path, const struct stat *sb, int type,
                    struct FTW *ftw)
{
    int rc = (type == FTW_DP) ? rmdir(path) : unlink(path);

    if (rc != 0 && errno != ENOENT) {
        rdp_log_debug(RUN, "cannot remove %s: %m", path);
        return -1;
    }
    return 0;
}

int rdp_run_rmtree(const char *path)
{
    return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

int rdp_run_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;

    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int rdp_run_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *v_p)
{
    char *end;
    unsigned long long v;

    if (s == NULL || *s < '0' || *s > '9') {
        return -1;
    }
    errno = 0;
    v     = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max) {
        return -1;
    }
    *v_p = (uint32_t)v;
    return 0;
}

void rdp_run_signal_desc(int signo, char *buf, size_t len)
{
    const char *name = strsignal(signo);

    snprintf(buf, len, "%d (%s)", signo, name != NULL ? name : "unknown");
}

int rdp_run_set_cloexec(int fd)
{
    int flags = fcntl(fd, F_GETFD);

    if (flags < 0) {
        return -1;
    }
    return fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

int rdp_run_set_nonblock(int fd)
{
    int flags = fcntl(fd, F_GETFL);

    if (flags < 0) {
        return -1;
    }
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* @a len bytes at @a off of @a fd into a new buffer, or NULL */
static void *read_at(int fd, uint64_t off, uint64_t len)
{
    void *buf;

    if (len == 0 || len > (16u << 20)) {
        return NULL;
    }
    buf = rdp_malloc(len);
    if (buf != NULL && pread(fd, buf, len, (off_t)off) != (ssize_t)len) {
        rdp_free(buf);
        buf = NULL;
    }
    return buf;
}

/* DT_NEEDED of the dynamic section @a dyn (@a n entries) against the
 * string table @a str (@a nstr bytes) */
static int dyn_needs(const Elf64_Dyn *dyn, size_t n, const char *str,
                     size_t nstr, const char *prefix)
{
    size_t plen = strlen(prefix);

    for (size_t i = 0; i < n && dyn[i].d_tag != DT_NULL; i++) {
        if (dyn[i].d_tag == DT_NEEDED && dyn[i].d_un.d_val < nstr
            && strnlen(str + dyn[i].d_un.d_val, nstr - dyn[i].d_un.d_val)
                   >= plen
            && strncmp(str + dyn[i].d_un.d_val, prefix, plen) == 0) {
            return 1;
        }
    }
    return 0;
}

int rdp_run_elf_needs(const char *path, const char *prefix)
{
    Elf64_Ehdr eh;
    Elf64_Shdr *sh = NULL;
    Elf64_Dyn *dyn = NULL;
    char *str      = NULL;
    int fd, found = 0;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh)
        || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0
        || eh.e_ident[EI_CLASS] != ELFCLASS64
        || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0) {
        goto out;
    }
    sh = read_at(fd, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(*sh));
    if (sh == NULL) {
        goto out;
    }
    for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
        const Elf64_Shdr *ds = &sh[i];

        if (ds->sh_type != SHT_DYNAMIC || ds->sh_link >= eh.e_shnum) {
            continue;
        }
        dyn = read_at(fd, ds->sh_offset, ds->sh_size);
        str = read_at(fd, sh[ds->sh_link].sh_offset, sh[ds->sh_link].sh_size);
        if (dyn != NULL && str != NULL) {
            found = dyn_needs(dyn, ds->sh_size / sizeof(*dyn), str,
                              sh[ds->sh_link].sh_size, prefix);
        }
        rdp_free(dyn);
        rdp_free(str);
        dyn = NULL;
        str = NULL;
    }
out:
    rdp_free(sh);
    close(fd);
    return found;
}

/* the heap's limits of rdp_run_malloc_keep_freed (glibc's maximum for
 * the mapping threshold on 64-bit is 32 MiB) */
#define RUN_HEAP_MMAP_MIN (32 << 20)
#define RUN_HEAP_TRIM_MIN (64 << 20)

void rdp_run_malloc_keep_freed(void)
{
    (void)mallopt(M_MMAP_THRESHOLD, RUN_HEAP_MMAP_MIN);
    (void)mallopt(M_TRIM_THRESHOLD, RUN_HEAP_TRIM_MIN);
}
