/* iof.h - launcher side of rank output: pass-through or tagged lines */
#ifndef RDP_RUN_IOF_H
#define RDP_RUN_IOF_H

#include <pmix_common.h>

#include <stddef.h>
#include <stdint.h>

/*
 * Output chunks of each rank arrive in order per (rank, channel).  Without
 * tagging they are written as they come.  With tagging each complete line
 * is written as one unit prefixed with "[<rank>] ", so lines of different
 * ranks never mix within a line; a partial line waits for its end (or for
 * end of file, or RDP_RUN_IOF_MAX_PARTIAL bytes), and is then written
 * with a newline added.
 */
typedef struct rdp_run_iof rdp_run_iof_t;

#define RDP_RUN_IOF_MAX_PARTIAL (1u << 20)

/** Write @a len bytes to @a channel (RDP_CTL_STDOUT/STDERR) as one unit.
 * @param [in] data  borrowed for the call */
typedef void (*rdp_run_iof_write_fn_t)(int channel, const void *data,
                                       size_t len, void *arg);

pmix_status_t rdp_run_iof_create(uint32_t nranks, int tag,
                                 rdp_run_iof_write_fn_t write_fn, void *arg,
                                 rdp_run_iof_t **iof_p);
/** Flushes nothing; call rdp_run_iof_flush_all first. Accepts NULL. */
void rdp_run_iof_destroy(rdp_run_iof_t *iof);

/** Bytes from @a rank's @a channel; out-of-range rank/channel ignored.
 * Returns PMIX_ERR_NOMEM if a partial line could not be kept (it is then
 * written at once instead). */
pmix_status_t rdp_run_iof_input(rdp_run_iof_t *iof, uint32_t rank, int channel,
                                const void *data, size_t len);
/** Write out a pending partial line of (@a rank, @a channel). */
void rdp_run_iof_flush(rdp_run_iof_t *iof, uint32_t rank, int channel);
void rdp_run_iof_flush_all(rdp_run_iof_t *iof);

#endif
