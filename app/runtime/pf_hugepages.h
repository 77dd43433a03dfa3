/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * runtime.hugepages (auto, on, off): the EAL memory arguments pipefwd adds
 * before rte_eal_init. Pure functions of /proc data, unit-tested on fixtures.
 */
#ifndef PF_HUGEPAGES_H
#define PF_HUGEPAGES_H

#include <stdbool.h>
#include <stdint.h>

#include "pf_topo.h"

struct pf_huge_info {
	uint64_t free_pages;   /**< HugePages_Free (default page size) */
	uint64_t page_kb;      /**< Hugepagesize */
	bool mounted;          /**< a hugetlbfs mount exists */
};

struct pf_huge_decision {
	bool huge;             /**< EAL uses hugepages */
	bool add_nohuge;       /**< add --no-huge */
	bool add_mem;          /**< also add -m mem_arg (the arguments set no size) */
	char mem_arg[16];
	char why[160];         /**< one line for the startup log */
};

/** Read @p meminfo (/proc/meminfo) and @p mounts (/proc/mounts). Returns 0 or -1. */
int pf_huge_read(const char *meminfo, const char *mounts, struct pf_huge_info *hi);

/**
 * Decide from @p mode, the machine (@p hi) and the EAL arguments so far:
 * an explicit --no-huge always wins; `auto` uses hugepages when a hugetlbfs
 * is mounted with at least -m's worth free; otherwise --no-huge (and -m 512
 * when no size was given). Returns 0.
 */
int pf_huge_decide(enum pf_hugepages mode, const struct pf_huge_info *hi, char *const *argv,
		   int argc, struct pf_huge_decision *d);

#endif /* PF_HUGEPAGES_H */
