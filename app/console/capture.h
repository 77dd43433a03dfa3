/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the capture files of the console share (capture.c: commands and
 * arming; capture_writer.c: the writer thread; capture_file.c: where files
 * may be written). The data-path half is app/runtime/tap.c.
 */
#ifndef PF_CAPTURE_PRIV_H
#define PF_CAPTURE_PRIV_H

/* rte_pcapng is experimental in DPDK 22.11 (stable from 23.11 on). */
#define ALLOW_EXPERIMENTAL_API 1

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_pcapng.h>

#include "pf_runtime.h"
#include "pf_tap.h"

#define CAP_Q_SIZE 4096                      /* copies waiting for the writer */
#define CAP_POOL_SIZE (CAP_Q_SIZE + 1023)     /* + copies being made on lcores */
#define CAP_WRITE_BURST 64
#define CAP_FMT_POOL_SIZE (2 * CAP_WRITE_BURST)
#define CAP_MAX_COUNT 1000000000ull
#define CAP_IDLE_US 200                      /* writer poll period when idle */
#define CAP_STR 128                          /* RTE_TEL_MAX_STRING_LEN */
#define CAP_COMMENT_ROOM 128                 /* a drop's EPB comment option, padded */

enum cap_state { CAP_IDLE, CAP_RUNNING, CAP_DONE, CAP_STOPPED, CAP_FAILED };
extern const char *const cap_state_names[];

struct cap_slot {
	struct pf_tap_sink sink;             /* what the lcores read and count */
	/* the writer thread */
	uint64_t written __rte_cache_aligned;
	uint64_t lost;                       /* copies the writer could not write */
	int stop;
	bool write_failed;
	int write_errno;
	struct rte_mempool *fmt_mp;
	rte_pcapng_t *png;
	pthread_t writer;
	bool joinable;
	struct pf_tap_set taps;              /* the runtime points at them while armed */
	/* status: the writer's end of a capture under lock, the rest under the console's */
	pthread_mutex_t lock;
	uint64_t id;
	enum cap_state state;
	char target[CAP_STR];
	char stages[CAP_STR];
	char file[PATH_MAX];
	char error[CAP_STR];
	char comment[2048];
	uint16_t isb_port;                   /* DPDK port of the closing statistics */
	uint64_t start_ns, end_ns;           /* wall clock */
	uint64_t start_tsc, end_tsc;
};

/* The one capture slot (capture.c). */
extern struct cap_slot cap;

/* capture_writer.c: the writer thread (arg: the runtime), and the wall clock. */
void *cap_writer(void *arg);
uint64_t cap_wall_ns(void);

/* capture_file.c */
/** Where captures may be written: --capture-dir, or NULL for the default. */
void cap_dir_set(const char *dir);
/** The capture directory in use (after EAL init for the default). */
const char *cap_dir(void);
/**
 * Open @p path for a capture beneath the capture directory: no "..", no
 * symlink, never blocking, never replacing a file that is not a capture
 * pipefwd wrote (unless @p overwrite and it is one). Returns the fd, or
 * -EINVAL with the reason in @p err.
 */
int cap_file_open(const char *path, bool overwrite, bool *created, char *err, size_t len);

#endif /* PF_CAPTURE_PRIV_H */
