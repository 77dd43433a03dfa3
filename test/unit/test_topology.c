/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Topology loader and validator: every bad fixture gives exactly the errors
 * its "# expect: L:C: message" header lists (count, order, position, text);
 * every ok fixture loads and means what it says. Runs without EAL.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pf_conf.h"
#include "pf_test.h"
#include "pf_topo.h"

#define FIXDIR "fixtures/"
#define MAX_EXPECT 32

/* Every fixture is listed here; test_table_complete checks none is forgotten. */
static const char *const bad_fixtures[] = {
	"bad_acl_icmp_family.yaml",
	"bad_alias.yaml",
	"bad_backpressure.yaml",
	"bad_burst_capacity.yaml",
	"bad_burst_stage.yaml",
	"bad_burst_zero.yaml",
	"bad_control_chars.yaml",
	"bad_cycle.yaml",
	"bad_duplicate_key.yaml",
	"bad_duplicate_names.yaml",
	"bad_eal_args.yaml",
	"bad_eal_lcores.yaml",
	"bad_eal_values.yaml",
	"bad_edge_to_source.yaml",
	"bad_edge_unknown_name.yaml",
	"bad_edge_unknown_stage.yaml",
	"bad_empty.yaml",
	"bad_empty_doc.yaml",
	"bad_failsafe.yaml",
	"bad_instances_edge.yaml",
	"bad_instances_lcore.yaml",
	"bad_instances_name.yaml",
	"bad_instances_queues.yaml",
	"bad_instances_range.yaml",
	"bad_instances_source.yaml",
	"bad_int_range.yaml",
	"bad_ipv6.yaml",
	"bad_lcore_main.yaml",
	"bad_lcore_main0.yaml",
	"bad_lcore_range.yaml",
	"bad_long_names.yaml",
	"bad_long_strings.yaml",
	"bad_lpm6_neigh_unwired.yaml",
	"bad_lpm6_nexthop_via.yaml",
	"bad_lpm_neigh.yaml",
	"bad_lpm_neigh_unwired.yaml",
	"bad_lpm_via_route.yaml",
	"bad_many.yaml",
	"bad_mapped_twice.yaml",
	"bad_mempool.yaml",
	"bad_missing_required.yaml",
	"bad_missing_sections.yaml",
	"bad_neigh_no_arp.yaml",
	"bad_no_input.yaml",
	"bad_not_mapped.yaml",
	"bad_not_mapping.yaml",
	"bad_port_addrs.yaml",
	"bad_port_values.yaml",
	"bad_ring_size.yaml",
	"bad_ring_size_big.yaml",
	"bad_rx_pcap.yaml",
	"bad_rx_pcap_dir.yaml",
	"bad_rxq_twice.yaml",
	"bad_stage_port_name.yaml",
	"bad_stage_type.yaml",
	"bad_table_files.yaml",
	"bad_unknown_key.yaml",
	"bad_unknown_stage_key.yaml",
	"bad_vdev_driver.yaml",
	"bad_wiring_family.yaml",
	"bad_wrong_type.yaml",
	"bad_yaml11.yaml",
	"bad_yaml_tab.yaml",
	"bad_yaml_tag.yaml",
	"bad_yaml_unclosed.yaml",
};

static const char *const ok_fixtures[] = {
	"ok_full.yaml",
	"ok_instances.yaml",
	"ok_flow_picked.yaml",
	"ok_minimal.yaml",
	"ok_yaml_names.yaml",
};

struct expect {
	int line, col;
	char msg[PF_ERR_MSG_MAX];
};

/* Read the "# expect: L:C: message" header lines of @p path. */
static int
read_expect(const char *path, struct expect *ex, int max)
{
	char buf[1024];
	int n = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	while (fgets(buf, sizeof(buf), f) != NULL && strncmp(buf, "# expect: ", 10) == 0) {
		int off = 0;

		assert_true(n < max);
		buf[strcspn(buf, "\n")] = '\0';
		if (sscanf(buf + 10, "%d:%d: %n", &ex[n].line, &ex[n].col, &off) != 2 || off == 0)
			fail_msg("%s: bad expect header '%s'", path, buf);
		snprintf(ex[n].msg, sizeof(ex[n].msg), "%s", buf + 10 + off);
		n++;
	}
	fclose(f);
	return n;
}

static void
dump_errs(const char *what, const struct pf_errs *errs)
{
	char line[PF_ERR_MSG_MAX + 300];
	unsigned int i;

	fprintf(stderr, "%s: got %u errors:\n", what, errs->n);
	for (i = 0; i < errs->n && i < PF_ERRS_MAX; i++) {
		pf_err_format(&errs->e[i], line, sizeof(line));
		fprintf(stderr, "  %s\n", line);
	}
}

static void
check_bad(const char *name)
{
	struct expect ex[MAX_EXPECT];
	struct pf_errs errs = { 0 };
	struct pf_topo *topo = (struct pf_topo *)1;
	char path[256];
	int n, i;

	snprintf(path, sizeof(path), FIXDIR "%s", name);
	n = read_expect(path, ex, MAX_EXPECT);
	if (n == 0)
		fail_msg("%s: no '# expect:' header", path);
	/* As main reads them: what needs the command line's EAL arguments too comes after. */
	if (pf_topo_load(path, &topo, &errs) == 0) {
		assert_int_equal(pf_topo_check_eal(topo, &errs), -EINVAL);
		pf_topo_free(topo);
		topo = NULL;
	}
	assert_null(topo);
	if (errs.n != (unsigned int)n) {
		dump_errs(path, &errs);
		fail_msg("%s: expected %d errors, got %u", path, n, errs.n);
	}
	for (i = 0; i < n; i++) {
		const struct pf_err *e = &errs.e[i];

		if (e->line != ex[i].line || e->col != ex[i].col || strcmp(e->msg, ex[i].msg) != 0) {
			dump_errs(path, &errs);
			fail_msg("%s: error %d: expected %d:%d: %s", path, i + 1, ex[i].line,
				 ex[i].col, ex[i].msg);
		}
		assert_string_equal(e->file, path);
	}
}

static void
test_bad_fixtures(void **state)
{
	size_t i;

	for (i = 0; i < RTE_DIM(bad_fixtures); i++)
		check_bad(bad_fixtures[i]);
}

static struct pf_topo *
load_ok(const char *name)
{
	struct pf_errs errs = { 0 };
	struct pf_topo *topo = NULL;
	char path[256];

	snprintf(path, sizeof(path), FIXDIR "%s", name);
	if (pf_topo_load(path, &topo, &errs) != 0) {
		dump_errs(path, &errs);
		fail_msg("%s: rejected", path);
	}
	assert_int_equal(errs.n, 0);
	assert_non_null(topo);
	return topo;
}

static void
test_ok_fixtures(void **state)
{
	size_t i;

	for (i = 0; i < RTE_DIM(ok_fixtures); i++)
		pf_topo_free(load_ok(ok_fixtures[i]));
}

static bool
listed(const char *name, const char *const *table, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(table[i], name) == 0)
			return true;
	return false;
}

/* A fixture file that no table names would silently test nothing. */
static void
test_table_complete(void **state)
{
	struct dirent *de;
	DIR *d = opendir(FIXDIR);
	size_t len;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 5, ".yaml") != 0)
			continue;
		if (strncmp(de->d_name, "bad_", 4) == 0 &&
		    !listed(de->d_name, bad_fixtures, RTE_DIM(bad_fixtures)))
			fail_msg("fixture %s is not in bad_fixtures[]", de->d_name);
		if (strncmp(de->d_name, "ok_", 3) == 0 &&
		    !listed(de->d_name, ok_fixtures, RTE_DIM(ok_fixtures)))
			fail_msg("fixture %s is not in ok_fixtures[]", de->d_name);
	}
	closedir(d);
}

/* ok_full.yaml sets nearly every key: check each one landed where it belongs. */
static void
test_ok_full_values(void **state)
{
	struct pf_topo *t = load_ok("ok_full.yaml");
	static const uint8_t mac0[6] = { 2, 0, 0, 0, 0, 0x10 };
	int rx0, rx1, xc, tx, r;

	assert_int_equal(t->main_lcore, 2);
	assert_false(t->eal_has_lcores);
	assert_int_equal(t->eal_argc, 6);
	assert_string_equal(t->eal_argv[0], "--no-huge");
	assert_string_equal(t->eal_argv[5], "2");

	assert_int_equal(t->n_ports, 2);
	assert_string_equal(t->ports[0].device, "net_ring0");
	assert_true(t->ports[0].is_vdev);
	assert_true(t->ports[0].has_mac);
	assert_memory_equal(t->ports[0].mac, mac0, 6);
	assert_true(t->ports[0].has_ipv4);
	assert_int_equal(t->ports[0].ipv4, 0xc0a80001);
	assert_int_equal(t->ports[0].ipv4_len, 24);
	assert_int_equal(t->ports[0].rxd, 512);
	assert_int_equal(t->ports[0].txd, 256);
	assert_int_equal(t->ports[0].max_frame, 9018);
	assert_int_equal(t->ports[1].rxd, 1024);
	assert_int_equal(t->ports[1].max_frame, 1514);
	/* rx0 polls p0 queue 0, rx1 polls p0 and p1 queue 1: p0 needs two rx queues. */
	assert_int_equal(t->ports[0].n_rxq, 2);
	assert_int_equal(t->ports[1].n_rxq, 2);
	assert_int_equal(t->ports[0].n_txq, 1);

	assert_int_equal(t->n_stages, 4);
	rx0 = pf_topo_stage_index(t, "rx0");
	rx1 = pf_topo_stage_index(t, "rx1");
	xc = pf_topo_stage_index(t, "xc");
	tx = pf_topo_stage_index(t, "tx");
	assert_true(rx0 >= 0 && rx1 >= 0 && xc >= 0 && tx >= 0);
	assert_int_equal(t->stages[rx0].burst, 64);
	assert_int_equal(t->stages[rx1].burst, 16);     /* from rings.default */
	assert_int_equal(t->stages[rx1].rx_queue, 1);
	assert_int_equal(t->stages[rx0].next[1], xc);  /* ipv4 */
	assert_int_equal(t->stages[rx0].next[4], PF_NONE); /* other: not wired */
	assert_int_equal(t->stages[rx1].next[1], PF_NONE);
	assert_int_equal(t->stages[rx1].next[4], xc);
	assert_int_equal(t->stages[xc].n_inputs, 2);
	assert_int_equal(t->stages[rx0].lcore, 1);
	assert_int_equal(t->stages[rx1].lcore, 1);
	assert_int_equal(t->stages[xc].lcore, 3);
	assert_int_equal(t->stages[tx].lcore, 4);
	assert_int_equal(t->n_lcores, 3);

	assert_int_equal(t->n_rings, 3);
	r = pf_topo_ring_index(t, (uint16_t)rx0, (uint16_t)xc);
	assert_true(r >= 0);
	assert_int_equal(t->rings[r].size, 4096);
	assert_int_equal(t->rings[r].burst, 64);
	r = pf_topo_ring_index(t, (uint16_t)rx1, (uint16_t)xc);
	assert_true(r >= 0);
	assert_string_equal(t->rings[r].name, "rx1->xc");
	assert_int_equal(t->rings[r].size, 512);
	assert_int_equal(t->rings[r].burst, 16);
	r = pf_topo_ring_index(t, (uint16_t)xc, (uint16_t)tx);
	assert_int_equal(t->rings[r].size, 128);
	assert_int_equal(t->rings[r].burst, 1);
	assert_int_equal(pf_topo_ring_index(t, (uint16_t)tx, (uint16_t)xc), -1);

	assert_int_equal(t->mbufs, 65536);
	assert_true(t->mbufs_required <= t->mbufs);
	assert_int_equal(t->mbuf_data_size, 2176);
	assert_int_equal(t->tx_flush_us, 50);
	assert_int_equal(t->clock, PF_CLOCK_PCAP);
	assert_true(t->backpressure);
	pf_topo_free(t);
}

static int
ring_of(const struct pf_topo *t, const char *from, const char *to)
{
	int f = pf_topo_stage_index(t, from), d = pf_topo_stage_index(t, to);

	assert_true(f >= 0 && d >= 0);
	return pf_topo_ring_index(t, (uint16_t)f, (uint16_t)d);
}

/* Ring @p from -> @p to: carries (1) or never (0, pf_topo_ring_unused). */
static int
ring_used(const struct pf_topo *t, const char *from, const char *to)
{
	int r = ring_of(t, from, to);

	assert_true(r >= 0);
	return !pf_topo_ring_unused(t, (uint16_t)r);
}

/*
 * A stage whose every input fans out by flow hash, and which keeps the flow
 * key, sends instance k to instance k (no second hash); a stage that builds
 * packets fans out again; an affine input makes a stage affine or, mixed
 * with a hashed one, neither (ok_flow_picked.yaml).
 */
static void
test_flow_picked(void **state)
{
	struct pf_topo *t = load_ok("ok_flow_picked.yaml");
	const struct pf_stage_conf *lpm = &t->stages[pf_topo_group_index(t, "lpm")];
	const struct pf_stage_conf *icmp = &t->stages[pf_topo_group_index(t, "icmp")];
	const struct pf_stage_conf *a = &t->stages[pf_topo_group_index(t, "a")];
	const struct pf_stage_conf *m = &t->stages[pf_topo_group_index(t, "m")];
	const struct pf_stage_conf *rx = &t->stages[pf_topo_group_index(t, "rx")];

	assert_true(lpm->flow_picked && !lpm->affine);
	assert_false(rx->flow_picked);                  /* a source: its queue, not the hash */
	assert_true(icmp->flow_picked);                 /* fed straight from lpm.k */
	assert_true(a->affine && !a->flow_picked);
	assert_false(m->affine || m->flow_picked);
	/* The fan-out itself: both ways. */
	assert_true(ring_used(t, "rx.0", "lpm.1") && ring_used(t, "rx.1", "lpm.0"));
	/* lpm keeps the key: instance k to instance k, on every edge. */
	assert_true(pf_topo_same_instance_edge(t, (uint16_t)pf_topo_stage_index(t, "lpm.1"),
					       (uint16_t)pf_topo_stage_index(t, "tx.0")));
	assert_true(ring_used(t, "lpm.0", "tx.0") && ring_used(t, "lpm.1", "icmp.1"));
	assert_false(ring_used(t, "lpm.0", "tx.1") || ring_used(t, "lpm.1", "tx.0"));
	assert_false(ring_used(t, "lpm.0", "icmp.1") || ring_used(t, "lpm.1", "icmp.0"));
	/* icmp builds its errors: they hash apart, so it fans out. */
	assert_false(pf_topo_same_instance_edge(t, (uint16_t)pf_topo_stage_index(t, "icmp.0"),
						(uint16_t)pf_topo_stage_index(t, "tx.0")));
	assert_true(ring_used(t, "icmp.0", "tx.1") && ring_used(t, "icmp.1", "tx.0"));
	/* Affine: as before. Mixed affine and hashed inputs: m fans out. */
	assert_false(ring_used(t, "a.0", "m.1"));
	assert_true(ring_used(t, "m.0", "tx.1") && ring_used(t, "m.1", "tx.0"));
	pf_topo_free(t);
}

/* instances: N expands into N confs "<name>.k", with a ring per instance pair. */
static void
test_ok_instances(void **state)
{
	struct pf_topo *t = load_ok("ok_instances.yaml");
	static const char *const xc[] = { "xc.0", "xc.1", "xc.2" };
	int x0, one, r, k, j;

	assert_int_equal(t->n_stages, 8);
	assert_int_equal(pf_topo_stage_index(t, "xc"), -1);
	x0 = pf_topo_group_index(t, "xc");
	assert_int_equal(x0, pf_topo_stage_index(t, "xc.0"));
	for (k = 0; k < 3; k++) {
		const struct pf_stage_conf *sc = &t->stages[x0 + k];

		assert_string_equal(sc->name, xc[k]);
		assert_string_equal(sc->group, "xc");
		assert_int_equal(sc->instance, k);
		assert_int_equal(sc->n_instances, 3);
		assert_int_equal(sc->first, x0);
		assert_ptr_equal(sc->node, t->stages[x0].node);
		/* Edges lead to instance 0 of the target; each instance has its own config. */
		assert_int_equal(sc->next[1], pf_topo_stage_index(t, "tx.0"));
		assert_non_null(sc->cfg);
		assert_true(k == 0 || sc->cfg != t->stages[x0].cfg);
		assert_int_equal(sc->n_inputs, 1);
	}
	/* instances: 1 is a plain stage. */
	one = pf_topo_stage_index(t, "one");
	assert_true(one >= 0);
	assert_int_equal(t->stages[one].n_instances, 1);
	assert_string_equal(t->stages[one].group, "one");
	assert_true(pf_topo_stage_index(t, "rx2") >= 0);
	/* rx->xc.k (3), xc.k->tx.j (6), one->tx.j (2), rx2->one (1). */
	assert_int_equal(t->n_rings, 12);
	r = ring_of(t, "rx", "xc.0");
	assert_string_equal(t->rings[r].name, "rx->xc.0");
	assert_int_equal(t->rings[r].size, 4096);                       /* group key */
	assert_int_equal(t->rings[ring_of(t, "rx", "xc.1")].size, 256); /* exact key wins */
	assert_int_equal(t->rings[ring_of(t, "rx", "xc.2")].size, 4096);
	for (k = 0; k < 3; k++)
		for (j = 0; j < 2; j++) {
			char from[8], to[8];

			snprintf(from, sizeof(from), "xc.%d", k);
			snprintf(to, sizeof(to), "tx.%d", j);
			r = ring_of(t, from, to);
			assert_true(r >= 0);
			assert_int_equal(t->rings[r].burst, 16);
			assert_int_equal(t->rings[r].size, PF_RING_SIZE_DEFAULT);
		}
	assert_true(ring_of(t, "one", "tx.1") >= 0);
	assert_int_equal(t->stages[pf_topo_stage_index(t, "tx.0")].n_inputs, 4);
	/* Every tx instance has its own tx queue on each port. */
	assert_int_equal(t->ports[0].n_txq, 2);
	assert_int_equal(t->ports[1].n_txq, 2);
	assert_int_equal(t->stages[pf_topo_stage_index(t, "tx.1")].tx_queue[0], 1);
	assert_int_equal(t->stages[pf_topo_stage_index(t, "xc.2")].lcore, 3);
	pf_topo_free(t);
}

/* Defaults: ring 1024/32, main lcore 0, derived mempool with headroom. */
static void
test_ok_minimal_defaults(void **state)
{
	struct pf_topo *t = load_ok("ok_minimal.yaml");
	uint16_t i;

	assert_int_equal(t->main_lcore, 0);
	assert_int_equal(t->eal_argc, 0);
	assert_int_equal(t->n_rings, 2);
	for (i = 0; i < t->n_rings; i++) {
		assert_int_equal(t->rings[i].size, PF_RING_SIZE_DEFAULT);
		assert_int_equal(t->rings[i].burst, PF_BURST_DEFAULT);
	}
	assert_true(t->mbufs >= t->mbufs_required);
	assert_int_equal(t->clock, PF_CLOCK_WALL);
	assert_false(t->backpressure);
	assert_int_equal(t->tx_flush_us, 100);
	assert_int_equal(t->n_lcores, 1);
	assert_int_equal(t->lcores[0].id, 1);
	assert_int_equal(t->lcores[0].n_stages, 3);
	pf_topo_free(t);
}

/* YAML 1.1 would read on/no/yes/off/true as booleans: names stay strings. */
static void
test_ok_yaml_names(void **state)
{
	struct pf_topo *t = load_ok("ok_yaml_names.yaml");

	assert_int_equal(pf_topo_port_index(t, "on"), 0);
	assert_int_equal(pf_topo_port_index(t, "no"), 1);
	assert_true(pf_topo_stage_index(t, "yes") >= 0);
	assert_true(pf_topo_stage_index(t, "off") >= 0);
	assert_true(pf_topo_stage_index(t, "true") >= 0);
	assert_true(pf_topo_ring_index(t, (uint16_t)pf_topo_stage_index(t, "off"),
				       (uint16_t)pf_topo_stage_index(t, "true")) >= 0);
	pf_topo_free(t);
}

/*
 * What a stage sees of the topology (pf_stage_env): its ports, clock,
 * flush interval and file, and the one wiring question (pf_stage_fed_by).
 */
static void
test_stage_env(void **state)
{
	static const char text[] =
		"ports:\n"
		"  p0: { device: net_null0, mac: \"02:00:00:00:00:10\", ipv4: 192.168.0.1/24 }\n"
		"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", ipv4: 10.20.0.1/16 }\n"
		"runtime: { clock: pcap, tx_flush_us: 250 }\n"
		"stages:\n"
		"  rx: { type: rx, ports: [p0, p1], next: { ipv4: lpm, arp: neigh } }\n"
		"  lpm: { type: lpm, routes: [ { prefix: 172.16.0.0/12, via: 10.20.30.9 } ],"
		" next: { out: tx, neigh: neigh } }\n"
		"  neigh: { type: neigh, next: tx }\n"
		"  tx: { type: tx, ports: [p0, p1] }\n"
		"lcores:\n"
		"  1: [rx, lpm, neigh, tx]\n";
	struct pf_errs errs = { 0 };
	struct pf_topo *t = NULL;
	const struct pf_stage_env *env;
	const struct pf_stage_conf *neigh, *lpm;

	(void)state;
	if (pf_topo_load_string("env.yaml", text, &t, &errs) < 0)
		pf_errs_print(&errs, stderr);
	assert_non_null(t);
	env = &t->env;
	assert_string_equal(env->file, "env.yaml");
	assert_int_equal(env->n_ports, 2);
	assert_ptr_equal(env->ports, t->ports);
	assert_string_equal(env->ports[1].name, "p1");
	assert_int_equal(env->clock, PF_CLOCK_PCAP);
	assert_int_equal(env->tx_flush_us, 250);
	assert_int_equal(pf_stage_port_index(env, "p1"), 1);
	assert_int_equal(pf_stage_port_index(env, "p2"), -1);
	neigh = &t->stages[pf_topo_stage_index(t, "neigh")];
	lpm = &t->stages[pf_topo_stage_index(t, "lpm")];
	/* rx's arp edge and lpm's neigh edge reach neigh; nothing's arp edge reaches lpm. */
	assert_true(pf_stage_fed_by(env, neigh, "arp", NULL));
	assert_true(pf_stage_fed_by(env, neigh, "arp", "rx"));
	assert_false(pf_stage_fed_by(env, neigh, "arp", "lpm"));
	assert_true(pf_stage_fed_by(env, neigh, "neigh", "lpm"));
	assert_false(pf_stage_fed_by(env, neigh, "neigh", "lpm6"));
	assert_false(pf_stage_fed_by(env, lpm, "arp", NULL));
	assert_true(pf_stage_fed_by(env, lpm, "ipv4", "rx"));
	pf_topo_free(t);
}

static const char minimal[] =
	"ports:\n"
	"  p0: { device: net_null0 }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0], next: tx }\n"
	"  tx: { type: tx, ports: [p0] }\n"
	"lcores:\n"
	"  1: [rx, tx]\n";

/* Write @p body padded with a comment to exactly @p size bytes. */
static void
write_padded(const char *path, const char *body, size_t size)
{
	FILE *f = fopen(path, "w");
	size_t i, blen = strlen(body);

	assert_non_null(f);
	assert_true(size > blen + 2);
	fputs(body, f);
	fputc('#', f);
	for (i = blen + 1; i < size - 1; i++)
		fputc('x', f);
	fputc('\n', f);
	fclose(f);
}

static void
test_file_size_limit(void **state)
{
	char path[] = "/tmp/ftests_topo_XXXXXX";
	struct pf_errs errs = { 0 };
	struct pf_topo *topo = NULL;
	char *big;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	/* Exactly the limit is accepted. */
	write_padded(path, minimal, PF_CONF_MAX_BYTES);
	assert_int_equal(pf_topo_load(path, &topo, &errs), 0);
	pf_topo_free(topo);
	/* One byte more is refused before parsing, with the whole file as position. */
	write_padded(path, minimal, PF_CONF_MAX_BYTES + 1);
	/* As main reads them: what needs the command line's EAL arguments too comes after. */
	if (pf_topo_load(path, &topo, &errs) == 0) {
		assert_int_equal(pf_topo_check_eal(topo, &errs), -EINVAL);
		pf_topo_free(topo);
		topo = NULL;
	}
	assert_null(topo);
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.e[0].file, path);
	assert_int_equal(errs.e[0].line, 0);
	assert_string_equal(errs.e[0].msg, "config file exceeds 1048576 bytes");
	unlink(path);

	/* The same limit holds for text loaded from memory (reload, fuzzing). */
	big = malloc(PF_CONF_MAX_BYTES + 2);
	assert_non_null(big);
	memset(big, '#', PF_CONF_MAX_BYTES + 1);
	big[PF_CONF_MAX_BYTES + 1] = '\0';
	memset(&errs, 0, sizeof(errs));
	assert_int_equal(pf_topo_load_string("big.yaml", big, &topo, &errs), -EINVAL);
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.e[0].msg, "config file exceeds 1048576 bytes");
	free(big);
}

static void
test_unreadable_file(void **state)
{
	struct pf_errs errs = { 0 };
	struct pf_topo *topo = NULL;

	assert_int_equal(pf_topo_load(FIXDIR "no_such_file.yaml", &topo, &errs), -EINVAL);
	assert_int_equal(errs.n, 1);
	assert_int_equal(errs.e[0].line, 0);
	assert_string_equal(errs.e[0].msg, "cannot open: No such file or directory");
	memset(&errs, 0, sizeof(errs));
	assert_int_equal(pf_topo_load(FIXDIR, &topo, &errs), -EINVAL);
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.e[0].msg, "is a directory, not a regular file");
}

/* More errors than pf_errs keeps: all are counted, the first PF_ERRS_MAX kept in order. */
static void
test_many_errors_counted(void **state)
{
	struct pf_errs errs = { 0 };
	struct pf_topo *topo = NULL;
	size_t cap = sizeof(minimal) + 100 * 16, len;
	char *text = malloc(cap);
	int i;

	assert_non_null(text);
	len = (size_t)snprintf(text, cap, "%s", minimal);
	for (i = 0; i < 100; i++)
		len += (size_t)snprintf(text + len, cap - len, "bogus%d: 1\n", i);
	assert_int_equal(pf_topo_load_string("many.yaml", text, &topo, &errs), -EINVAL);
	assert_int_equal(errs.n, 100);
	assert_string_equal(errs.e[0].msg, "unknown key 'bogus0'");
	assert_int_equal(errs.e[0].line, 8);
	assert_string_equal(errs.e[PF_ERRS_MAX - 1].msg, "unknown key 'bogus63'");
	assert_int_equal(errs.e[PF_ERRS_MAX - 1].line, 8 + PF_ERRS_MAX - 1);
	free(text);
}

/* The only booleans are YAML 1.2's: "on", "yes" and quoted "true" are refused. */
static void
test_bool_yaml11(void **state)
{
	static const char text[] = "a: on\nb: yes\nc: \"true\"\nd: true\ne: false\n";
	struct pf_errs errs = { 0 };
	struct pf_doc *doc = NULL;
	bool v = false;

	assert_int_equal(pf_conf_load_string("b.yaml", text, strlen(text), &doc, &errs), 0);
	assert_int_equal(pf_node_bool(pf_map_get(doc->root, "a"), "x.a", &v, &errs), -EINVAL);
	assert_int_equal(pf_node_bool(pf_map_get(doc->root, "b"), "x.b", &v, &errs), -EINVAL);
	assert_int_equal(pf_node_bool(pf_map_get(doc->root, "c"), "x.c", &v, &errs), -EINVAL);
	assert_int_equal(errs.n, 3);
	assert_string_equal(errs.e[0].msg, "x.a: expected true or false, got 'on'");
	assert_int_equal(errs.e[0].line, 1);
	assert_int_equal(errs.e[0].col, 4);
	assert_string_equal(errs.e[1].msg, "x.b: expected true or false, got 'yes'");
	assert_string_equal(errs.e[2].msg, "x.c: expected true or false, got 'true'");
	assert_int_equal(pf_node_bool(pf_map_get(doc->root, "d"), "x.d", &v, &errs), 0);
	assert_true(v);
	assert_int_equal(pf_node_bool(pf_map_get(doc->root, "e"), "x.e", &v, &errs), 0);
	assert_false(v);
	pf_conf_free(doc);
}

/* Loading the same file twice gives the same errors: no hidden state. */
static void
test_repeatable(void **state)
{
	struct pf_errs a = { 0 }, b = { 0 };
	struct pf_topo *topo = NULL;
	unsigned int i;

	pf_topo_load(FIXDIR "bad_many.yaml", &topo, &a);
	pf_topo_load(FIXDIR "bad_many.yaml", &topo, &b);
	assert_int_equal(a.n, b.n);
	for (i = 0; i < a.n; i++)
		assert_memory_equal(&a.e[i], &b.e[i], sizeof(a.e[i]));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_complete),
		cmocka_unit_test(test_bad_fixtures),
		cmocka_unit_test(test_ok_fixtures),
		cmocka_unit_test(test_ok_full_values),
		cmocka_unit_test(test_ok_minimal_defaults),
		cmocka_unit_test(test_ok_instances),
		cmocka_unit_test(test_flow_picked),
		cmocka_unit_test(test_ok_yaml_names),
		cmocka_unit_test(test_stage_env),
		cmocka_unit_test(test_file_size_limit),
		cmocka_unit_test(test_unreadable_file),
		cmocka_unit_test(test_many_errors_counted),
		cmocka_unit_test(test_bool_yaml11),
		cmocka_unit_test(test_repeatable),
	};

	return cmocka_run_group_tests_name("topology", tests, NULL, NULL);
}
