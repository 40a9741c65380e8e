/* util.h - small helpers shared by rdpmix-run and rdpmixd */
#ifndef RDP_RUN_UTIL_H
#define RDP_RUN_UTIL_H

#include <pmix_common.h>

#include <stddef.h>
#include <stdint.h>

/** Fill @a buf with @a len bytes from the kernel's CSPRNG. */
pmix_status_t rdp_run_random(void *buf, size_t len);

/** Lower-case hex of @a len bytes into @a out (2 * len + 1 bytes). */
void rdp_run_hex_encode(const uint8_t *data, size_t len, char *out);
/** Exactly 2 * @a len hex digits from @a hex into @a out; -1 if malformed. */
int rdp_run_hex_decode(const char *hex, uint8_t *out, size_t len);

/** Constant-time comparison; 1 if equal. */
int rdp_run_secret_equal(const uint8_t *a, const uint8_t *b, size_t len);

/**
 * Directory of the running executable (/proc/self/exe), with a trailing
 * libtool "/.libs" removed.  *dir_p is malloc'ed.
 */
pmix_status_t rdp_run_exe_dir(char **dir_p);

/** Remove @a path and everything below it without following symlinks.
 * Returns 0, or -1 with errno set if something could not be removed. */
int rdp_run_rmtree(const char *path);

/** write() all of @a data, retrying on EINTR and short writes (blocking
 * fds).  Returns 0 or -1 with errno set. */
int rdp_run_write_all(int fd, const void *data, size_t len);

/** Parse a decimal unsigned in [min, max]; the whole string must match. */
int rdp_run_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *v_p);


/** "11 (Segmentation fault)" into @a buf. */
void rdp_run_signal_desc(int signo, char *buf, size_t len);

/**
 * Whether the 64-bit ELF file @a path names a shared library whose name
 * starts with @a prefix (e.g. "libmpi.so") in its DT_NEEDED entries: its
 * own dependencies, not theirs.  0 for no, for a file that is not such an
 * ELF file (a script, another class) and when it cannot be read.
 */
int rdp_run_elf_needs(const char *path, const char *prefix);

/**
 * The daemon's malloc keeps what it frees for its next allocations: blocks
 * up to 32 MiB come from the heap, not from mappings of their own, and
 * the heap is not trimmed below 64 MiB of free top.  A large block freed
 * (an exchange's own contribution, once sent) then holds pages the next
 * one (the other server's block, assembled by UCP) writes without a fault
 * each: in a one-shot modex every fresh 4 KiB page costs ~1-1.5 us here
 * (docs/design.md).  For rdpmixd only; its ranks' malloc is theirs.
 */
void rdp_run_malloc_keep_freed(void);

/** Close-on-exec / nonblocking on @a fd; 0 or -1 with errno set. */
int rdp_run_set_cloexec(int fd);
int rdp_run_set_nonblock(int fd);

#endif
