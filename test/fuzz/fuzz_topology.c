/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the topology loader (YAML -> validated struct pf_topo).
 *
 * Input: the bytes of a topology file (up to the first NUL). Seeds are the
 * shipped topologies, the replay cases' topologies and the config fixtures.
 * Invariants: no crash, no leak (LeakSanitizer), and errors well formed:
 *   - success <=> no error recorded <=> a topology is returned;
 *   - every error has a non-empty one-line message (no control characters)
 *     and a line/col >= 0 (col 0 iff line 0); it may name the topology or a
 *     table file it refers to;
 *   - a loaded topology passes its own invariants (counts within limits,
 *     every stage mapped to an lcore, rings connect existing stages).
 * The loader never touches DPDK, so no EAL is needed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_err.h"
#include "pf_topo.h"

#define FUZZ_TARGET "fuzz_topology"
#include "fuzz_common.h"

#define NAME "fuzz.yaml"

static void
check_topo(const struct pf_topo *t)
{
	uint16_t i, j;

	CHECK(t->n_ports <= PF_MAX_PORTS && t->n_stages <= PF_MAX_STAGES);
	CHECK(t->n_rings <= PF_MAX_RINGS && t->n_lcores <= PF_MAX_LCORES);
	CHECK(t->n_stages > 0);
	for (i = 0; i < t->n_stages; i++) {
		CHECK(t->stages[i].ops != NULL);
		CHECK(t->stages[i].lcore >= 0);
		for (j = 0; j < PF_MAX_EDGES; j++)
			CHECK(t->stages[i].next[j] == PF_NONE || t->stages[i].next[j] < t->n_stages);
	}
	for (i = 0; i < t->n_rings; i++) {
		CHECK(t->rings[i].from < t->n_stages && t->rings[i].to < t->n_stages);
		CHECK(t->rings[i].size >= 2 && (t->rings[i].size & (t->rings[i].size - 1)) == 0);
		CHECK(t->rings[i].burst >= 1 && t->rings[i].burst <= PF_BURST_MAX);
	}
	CHECK(t->mbufs >= t->mbufs_required);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pf_errs *errs = calloc(1, sizeof(*errs));
	struct pf_topo *topo = NULL;
	char *text = malloc(size + 1);
	int rc;

	CHECK(errs != NULL && text != NULL);
	memcpy(text, data, size);
	text[size] = '\0';
	rc = pf_topo_load_string(NAME, text, &topo, errs);
	if (rc == 0) {
		CHECK(topo != NULL);
		CHECK(errs->n == 0);
		check_topo(topo);
	} else {
		CHECK(rc < 0);
		CHECK(topo == NULL);
		CHECK(errs->n > 0);
	}
	fuzz_check_errors(errs, 1);
	pf_topo_free(topo);
	free(text);
	free(errs);
	return 0;
}
