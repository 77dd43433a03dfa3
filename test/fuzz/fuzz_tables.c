/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the table-file parsers (lpm routes_file, acl rules_file,
 * l2fib static file).
 *
 * Input: the bytes of a table file. The target writes them to a private
 * temporary file and loads three topologies that read it, one per stage
 * type. Seeds: the shipped and replay table files.
 * Invariants: no crash, no leak (LeakSanitizer); success <=> no error; every
 * error is one non-empty line with a sane position (the table file's
 * file:line:col or the topology's). The parsers never touch DPDK.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pf_err.h"
#include "pf_topo.h"

#define FUZZ_TARGET "fuzz_tables"
#include "fuzz_common.h"

static const char *const topologies[] = {
	"ports:\n"
	"  p0: { device: net_null0, mac: \"02:00:00:00:00:10\", ipv4: 192.168.0.1/24 }\n"
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", ipv4: 10.0.0.1/8 }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0, p1], next: { ipv4: t, arp: t } }\n"
	"  t:\n"
	"    type: lpm\n"
	"    nexthops: { a: { port: p0, mac: \"02:00:00:00:00:0a\" },"
	" b: { port: p1, mac: \"02:00:00:00:00:0b\" } }\n"
	"    routes_file: %s\n"
	"    next: tx\n"
	"  tx: { type: tx, ports: [p0, p1] }\n"
	"lcores: { 1: [rx, t, tx] }\n",

	"ports:\n"
	"  p0: { device: net_null0 }\n"
	"  p1: { device: net_null1 }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0, p1], next: { ipv4: t } }\n"
	"  t: { type: acl, rules_file: %s, default: deny, next: xc }\n"
	"  xc: { type: xconnect, pairs: { p0: p1, p1: p0 }, next: tx }\n"
	"  tx: { type: tx, ports: [p0, p1] }\n"
	"lcores: { 1: [rx, t, xc, tx] }\n",

	"ports:\n"
	"  p0: { device: net_null0 }\n"
	"  p1: { device: net_null1 }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0, p1], next: t }\n"
	"  t: { type: l2fib, ports: [p0, p1], table_size: 1024, static: %s, next: tx }\n"
	"  tx: { type: tx, ports: [p0, p1] }\n"
	"lcores: { 1: [rx, t, tx] }\n",
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	struct pf_errs *errs = calloc(1, sizeof(*errs));
	char *yaml = malloc(4096);
	struct pf_topo *topo;
	unsigned int i;
	FILE *f;
	int rc;

	CHECK(errs != NULL && yaml != NULL);
	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/pipefwd-fuzz-tables-%d.txt", (int)getpid());
	f = fopen(path, "wb");
	CHECK(f != NULL);
	CHECK(fwrite(data, 1, size, f) == size);
	CHECK(fclose(f) == 0);
	for (i = 0; i < sizeof(topologies) / sizeof(topologies[0]); i++) {
		memset(errs, 0, sizeof(*errs));
		topo = NULL;
		snprintf(yaml, 4096, topologies[i], path);
		rc = pf_topo_load_string("fuzz.yaml", yaml, &topo, errs);
		CHECK((rc == 0) == (errs->n == 0));
		CHECK((rc == 0) == (topo != NULL));
		fuzz_check_errors(errs, 0);
		pf_topo_free(topo);
	}
	unlink(path);
	free(yaml);
	free(errs);
	return 0;
}
