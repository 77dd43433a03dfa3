/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * runtime.hugepages: whether EAL gets its memory from hugepages. `auto`
 * (the default) uses them when the machine has enough free ones on a
 * mounted hugetlbfs, and adds --no-huge otherwise, so one topology file runs
 * on a laptop and on a server. No DPDK here: main.c calls it before EAL.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_hugepages.h"

/* Default EAL memory with --no-huge when the topology sets no -m. */
#define HUGE_NOHUGE_MB 512

int
pf_huge_read(const char *meminfo, const char *mounts, struct pf_huge_info *hi)
{
	char line[512];
	uint64_t v;
	FILE *f;

	memset(hi, 0, sizeof(*hi));
	f = fopen(meminfo, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "HugePages_Free: %" SCNu64, &v) == 1)
			hi->free_pages = v;
		else if (sscanf(line, "Hugepagesize: %" SCNu64 " kB", &v) == 1)
			hi->page_kb = v;
	}
	fclose(f);
	f = fopen(mounts, "r");
	if (f != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strstr(line, " hugetlbfs ") != NULL)
				hi->mounted = true;
		fclose(f);
	}
	return 0;
}

/* The -m / --socket-mem size in MB the arguments ask for, 0 if none. */
static uint64_t
mem_mb(char *const *argv, int argc, bool *has_nohuge)
{
	uint64_t mb = 0;
	int i;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--no-huge") == 0)
			*has_nohuge = true;
		if (strcmp(a, "-m") == 0 && i + 1 < argc)
			mb = strtoull(argv[i + 1], NULL, 10);
		else if (strncmp(a, "-m", 2) == 0 && a[2] >= '0' && a[2] <= '9')
			mb = strtoull(a + 2, NULL, 10);
		else if (strncmp(a, "--socket-mem=", 13) == 0)
			mb = strtoull(a + 13, NULL, 10);   /* the first socket's share */
	}
	return mb;
}

int
pf_huge_decide(enum pf_hugepages mode, const struct pf_huge_info *hi, char *const *argv,
	       int argc, struct pf_huge_decision *d)
{
	bool has_nohuge = false;
	uint64_t mb = mem_mb(argv, argc, &has_nohuge), free_mb;

	memset(d, 0, sizeof(*d));
	free_mb = hi->free_pages * hi->page_kb / 1024;
	if (has_nohuge) {
		snprintf(d->why, sizeof(d->why), "--no-huge given: no hugepages");
		return 0;
	}
	if (mode == PF_HUGE_ON) {
		d->huge = true;
		snprintf(d->why, sizeof(d->why), "hugepages: on (%" PRIu64 " MB free)", free_mb);
		return 0;
	}
	/* Enough for what -m asks (EAL's own default when none: it takes what it needs). */
	if (mode == PF_HUGE_AUTO && hi->mounted && free_mb > 0 && free_mb >= mb) {
		d->huge = true;
		snprintf(d->why, sizeof(d->why),
			 "hugepages: auto: %" PRIu64 " free pages of %" PRIu64 " kB: using them",
			 hi->free_pages, hi->page_kb);
		return 0;
	}
	d->add_nohuge = true;
	d->add_mem = mb == 0;
	snprintf(d->mem_arg, sizeof(d->mem_arg), "%u", HUGE_NOHUGE_MB);
	if (mode == PF_HUGE_OFF)
		snprintf(d->why, sizeof(d->why), "hugepages: off: --no-huge");
	else
		snprintf(d->why, sizeof(d->why),
			 "hugepages: auto: %s (%" PRIu64 " MB free%s): --no-huge",
			 !hi->mounted ? "no hugetlbfs mounted" : "not enough free hugepages",
			 free_mb, mb != 0 ? ", -m asks more" : "");
	return 0;
}
