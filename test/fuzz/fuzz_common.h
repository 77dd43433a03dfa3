/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the fuzz targets. Define FUZZ_TARGET (the target's name, a string)
 * before including; define FUZZ_USE_EAL too for a target that needs DPDK.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pf_err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant: abort (a crash for libFuzzer, a failure for the driver). */
#define CHECK(cond) do {								\
	if (!(cond)) {									\
		fprintf(stderr, FUZZ_TARGET ": invariant broken: %s (%s:%d)\n", #cond,	\
			__FILE__, __LINE__);						\
		abort();								\
	}										\
} while (0)

/*
 * Every recorded error is one non-empty line (no control characters) with a
 * position >= 0; with @col_iff_line also col 0 exactly when line 0.
 */
static inline void
fuzz_check_errors(const struct pf_errs *errs, int col_iff_line)
{
	unsigned int i, n = errs->n < PF_ERRS_MAX ? errs->n : PF_ERRS_MAX;
	const char *c;

	for (i = 0; i < n; i++) {
		const struct pf_err *e = &errs->e[i];

		CHECK(e->msg[0] != '\0');
		for (c = e->msg; *c != '\0'; c++)
			CHECK((unsigned char)*c >= 0x20 && *c != 0x7f);
		CHECK(e->line >= 0 && e->col >= 0);
		if (col_iff_line)
			CHECK((e->line == 0) == (e->col == 0));
	}
}

#ifdef FUZZ_USE_EAL
#include <limits.h>
#include <unistd.h>

#include <rte_eal.h>

#include "pf_meta.h"

/* No runtime directory left behind, however many runs. */
static inline void
fuzz_eal_teardown(void)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	rmdir(dir);
}

/*
 * EAL on one lcore with @mem_mb MB of plain memory and the packet metadata
 * registered; torn down at exit. Unique prefix, no shared config: parallel
 * fuzzers never collide.
 */
static inline void
fuzz_eal_setup(const char *mem_mb)
{
	char prefix[64];
	char *argv[] = { (char *)FUZZ_TARGET, (char *)"--no-huge", (char *)"-m", (char *)mem_mb,
			 (char *)"--no-pci", (char *)"--no-shconf", (char *)"--no-telemetry",
			 (char *)"--log-level=lib.eal:error", (char *)"--lcores=0@0", prefix, NULL };

	snprintf(prefix, sizeof(prefix), "--file-prefix=%s_%d", FUZZ_TARGET, (int)getpid());
	if (rte_eal_init(RTE_DIM(argv) - 1, argv) < 0 || pf_meta_register() < 0)
		abort();
	atexit(fuzz_eal_teardown);
}
#endif

#endif
