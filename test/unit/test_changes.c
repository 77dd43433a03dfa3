/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live table changes applied at load (pf_topo_load_edited and the stages'
 * edit ops): each change lands in the parsed table, bad ones are refused with
 * a message naming the problem, and every change says where it belongs in
 * the files (what `pipefwd-ctl changes --save` writes). Runs without EAL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pf_test.h"
#include "pf_topo.h"

#include "../../stages/acl_rules.h"
#include "../../stages/l2fib.h"
#include "../../stages/lpm.h"
#include "../../stages/lpm6.h"

static char dir[64], topo_path[128], routes_path[128], via_path[128], v6_path[128], r6_path[128];
static char v6via_path[128];
static const char *load_from = topo_path;   /* the topology load() reads */

/* An lpm6 with an inline route and a route file. */
static const char v6_text[] =
	"eal: [--no-huge, -m, \"512\", --no-pci]\n"                          /* 1 */
	"ports:\n"
	"  p0: { device: net_null0, mac: \"02:00:00:00:00:10\", ipv6: \"2001:db8::1/64\" }\n"
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", ipv6: \"2001:db8:1::1/64\" }\n"
	"stages:\n"                                                            /* 5 */
	"  rx: { type: rx, ports: [p0, p1], next: { ipv6: lpm6 } }\n"
	"  lpm6:\n"
	"    type: lpm6\n"
	"    nexthops:\n"
	"      n1: { port: p1, mac: \"02:00:00:00:01:01\" }\n"                  /* 10 */
	"    routes:\n"
	"      - { prefix: \"2001:db8:9::/48\", via: n1 }\n"
	"    routes_file: routes6.txt\n"
	"    next: tx\n"
	"  tx: { type: tx, ports: [p0, p1] }\n"                                /* 15 */
	"lcores:\n"
	"  1: [rx, lpm6, tx]\n";

/* An lpm6 with its neigh edge wired: next hops by IPv6 address resolve. */
static const char v6via_text[] =
	"eal: [--no-huge, -m, \"512\", --no-pci]\n"
	"ports:\n"
	"  p0: { device: net_null0, mac: \"02:00:00:00:00:10\", ipv6: \"2001:db8::1/64\" }\n"
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", ipv6: \"2001:db8:1::1/64\" }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0, p1], next: { ipv6: lpm6 } }\n"
	"  lpm6:\n"
	"    type: lpm6\n"
	"    nexthops:\n"
	"      n1: { port: p1, mac: \"02:00:00:00:01:01\" }\n"
	"    routes:\n"
	"      - { prefix: \"2001:db8:9::/48\", via: \"2001:db8:1::7\" }\n"
	"    next: { out: tx, neigh: nb }\n"
	"  nb: { type: neigh, next: tx }\n"
	"  tx: { type: tx, ports: [p0, p1] }\n"
	"lcores:\n"
	"  1: [rx, lpm6, nb, tx]\n";

/* An lpm with its neigh edge wired: next hops by address resolve. */
static const char via_text[] =
	"eal: [--no-huge, -m, \"512\", --no-pci]\n"                          /* 1 */
	"ports:\n"
	"  p0: { device: net_null0, mac: \"02:00:00:00:00:10\", ipv4: 10.0.0.1/24 }\n"
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", ipv4: 10.1.0.1/24 }\n"
	"stages:\n"                                                            /* 5 */
	"  rx: { type: rx, ports: [p0, p1], next: { ipv4: lpm, arp: nb } }\n"
	"  lpm:\n"
	"    type: lpm\n"
	"    nexthops:\n"
	"      n1: { port: p1, mac: \"02:00:00:00:01:01\" }\n"                  /* 10 */
	"      gw: { via: 10.1.0.7 }\n"
	"    routes:\n"
	"      - { prefix: 10.9.0.0/16, via: 10.0.0.9 }\n"
	"    routes_file: routes.txt\n"
	"    next: { out: tx, neigh: nb }\n"                                   /* 15 */
	"  nb: { type: neigh, next: tx }\n"
	"  tx: { type: tx, ports: [p0, p1] }\n"
	"lcores:\n"
	"  1: [rx, lpm, nb, tx]\n";

/* Line numbers below refer to this text. */
static const char topo_text[] =
	"eal: [--no-huge, -m, \"512\", --no-pci]\n"                          /* 1 */
	"ports:\n"
	"  p0: { device: net_null0, mac: \"02:00:00:00:00:10\", ipv4: 10.0.0.1/24 }\n"
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", ipv4: 10.1.0.1/24 }\n"
	"  p2: { device: net_null2 }\n"                                       /* 5 */
	"  p3: { device: net_null3 }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0], next: { ipv4: acl } }\n"
	"  acl:\n"
	"    type: acl\n"                                                     /* 10 */
	"    rules:\n"
	"      - \"permit proto udp\"\n"
	"      - \"deny proto tcp\"\n"
	"    next: lpm\n"
	"  lpm:\n"                                                            /* 15 */
	"    type: lpm\n"
	"    nexthops:\n"
	"      n1: { port: p1, mac: \"02:00:00:00:01:01\" }\n"
	"    routes:\n"
	"      - { prefix: 10.9.0.0/16, via: n1 }\n"                          /* 20 */
	"    routes_file: routes.txt\n"
	"    next: tx\n"
	"  tx: { type: tx, ports: [p0, p1] }\n"
	"  rx2: { type: rx, ports: [p2], next: { ipv4: l2 } }\n"
	"  l2:\n"                                                             /* 25 */
	"    type: l2fib\n"
	"    ports: [p2, p3]\n"
	"    next: tx2\n"
	"  tx2: { type: tx, ports: [p2, p3] }\n"
	"lcores:\n"                                                           /* 30 */
	"  1: [rx, acl, lpm, tx, rx2, l2, tx2]\n";

static int
setup(void **state)
{
	FILE *f;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/pf_changes_XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(topo_path, sizeof(topo_path), "%s/t.yaml", dir);
	snprintf(routes_path, sizeof(routes_path), "%s/routes.txt", dir);
	snprintf(via_path, sizeof(via_path), "%s/v.yaml", dir);
	snprintf(v6_path, sizeof(v6_path), "%s/v6.yaml", dir);
	snprintf(r6_path, sizeof(r6_path), "%s/routes6.txt", dir);
	snprintf(v6via_path, sizeof(v6via_path), "%s/v6via.yaml", dir);
	f = fopen(v6via_path, "w");
	fputs(v6via_text, f);
	fclose(f);
	f = fopen(v6_path, "w");
	fputs(v6_text, f);
	fclose(f);
	f = fopen(r6_path, "w");
	fputs("# routes\n2001:db8:20::/48 n1\n2001:db8:30::/48 n1\n", f);
	fclose(f);
	f = fopen(topo_path, "w");
	fputs(topo_text, f);
	fclose(f);
	f = fopen(via_path, "w");
	fputs(via_text, f);
	fclose(f);
	f = fopen(routes_path, "w");
	fputs("# routes\n10.20.0.0/16 n1\n10.30.0.0/16 n1\n", f);
	fclose(f);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(topo_path);
	unlink(via_path);
	unlink(v6_path);
	unlink(v6via_path);
	unlink(r6_path);
	unlink(routes_path);
	rmdir(dir);
	return 0;
}

static struct pf_change
change(const char *stage, const char *table, bool del, const char *entry)
{
	struct pf_change ch;

	memset(&ch, 0, sizeof(ch));
	snprintf(ch.stage, sizeof(ch.stage), "%s", stage);
	snprintf(ch.table, sizeof(ch.table), "%s", table);
	ch.del = del;
	snprintf(ch.entry, sizeof(ch.entry), "%s", entry);
	return ch;
}

/* Load with @p ch; returns the topology, or NULL with the first error in @p msg. */
static struct pf_topo *
load(struct pf_change *ch, unsigned int n, char *msg, size_t len)
{
	struct pf_errs errs = { 0 };
	struct pf_topo *t = NULL;

	msg[0] = '\0';
	if (pf_topo_load_edited(load_from, ch, n, NULL, &t, &errs) < 0) {
		assert_true(errs.n > 0);
		snprintf(msg, len, "%s", errs.e[0].msg);
		return NULL;
	}
	return t;
}

static const struct pf_stage_conf *
stage(const struct pf_topo *t, const char *name)
{
	int i = pf_topo_stage_index(t, name);

	assert_true(i >= 0);
	return &t->stages[i];
}

static bool
has_route(const struct pf_rconf *cfg, uint32_t prefix, uint8_t len)
{
	uint32_t i;

	for (i = 0; i < cfg->n_routes; i++)
		if (pf_rconf_ip4(pf_rconf_route(cfg, i)->prefix) == prefix &&
		    pf_rconf_route(cfg, i)->len == len)
			return true;
	return false;
}

static void
test_routes(void **state)
{
	struct pf_change ch[3];
	const struct pf_rconf *cfg;
	struct pf_topo *t;
	char msg[PF_ERR_MSG_MAX];

	(void)state;
	ch[0] = change("lpm", "routes", false, "10.50.0.0/16  n1");
	ch[1] = change("lpm", "routes", true, "10.30.0.0/16");      /* line 3 of the file */
	ch[2] = change("lpm", "routes", true, "10.9.0.0/16");       /* inline, line 20 */
	t = load(ch, 3, msg, sizeof(msg));
	assert_non_null(t);
	cfg = &((const struct lpm_cfg *)stage(t, "lpm")->cfg)->rt;
	assert_int_equal(cfg->n_routes, 2);
	assert_true(has_route(cfg, 0x0a320000, 16));
	assert_true(has_route(cfg, 0x0a140000, 16));
	assert_false(has_route(cfg, 0x0a1e0000, 16));
	assert_false(has_route(cfg, 0x0a090000, 16));
	/* normalised, and where each goes when saved */
	assert_string_equal(ch[0].entry, "10.50.0.0/16 n1");
	assert_string_equal(ch[0].file, routes_path);
	assert_int_equal(ch[0].col, 0);
	assert_string_equal(ch[1].file, routes_path);
	assert_int_equal(ch[1].line, 3);
	assert_int_equal(ch[1].col, 0);
	assert_string_equal(ch[2].file, topo_path);
	assert_int_equal(ch[2].line, 20);
	assert_int_equal(ch[2].col, 9);           /* the item's '{' after "- " */
	assert_true(stage(t, "lpm")->edits != 0);
	assert_int_equal(stage(t, "acl")->edits, 0);
	pf_topo_free(t);
}

static void
test_refusals(void **state)
{
	static const struct {
		const char *stage, *table, *entry;
		bool del;
		const char *want;
	} bad[] = {
		{ "lpm", "routes", "10.50.0.1/16 n1", false, "host bits set" },
		{ "lpm", "routes", "10.50.0.0/33 n1", false, "prefix length > 32" },
		{ "lpm", "routes", "10.50.0.0/16 n9", false, "unknown next hop 'n9'" },
		{ "lpm", "routes", "10.20.0.0/16 n1", false, "exists (via n1)" },
		{ "lpm", "routes", "10.60.0.0/16", true, "no route 10.60.0.0/16" },
		{ "lpm", "routes", "10.60.0.0/16", false, "expected 'PREFIX/LEN NEXTHOP|ADDRESS'" },
		{ "lpm", "routes", "10.60.0.0/16 10.1.0.9", false, "has no neigh edge" },
		{ "lpm", "routes", "10.60.0.0/16 via 10.1.0.9", false, "has no neigh edge" },
		{ "acl", "rules", "deny dst 10.0.0.0/33", false, "bad rule" },
		{ "acl", "rules", "permit proto udp", false, "rule 1 is the same rule" },
		{ "acl", "rules", "permit proto icmp", true, "no rule" },
		{ "l2", "macs", "02:00:00:00:aa:05 zz", false, "unknown port 'zz'" },
		{ "l2", "macs", "01:00:5e:00:00:01 p3", false, "group address" },
		{ "l2", "macs", "02:00:00:00:aa:05", true, "no static entry" },
		{ "tx", "macs", "02:00:00:00:aa:05 p3", false, "has no live changes" },
	};
	struct pf_change ch;
	char msg[PF_ERR_MSG_MAX];
	unsigned int i;

	(void)state;
	for (i = 0; i < RTE_DIM(bad); i++) {
		ch = change(bad[i].stage, bad[i].table, bad[i].del, bad[i].entry);
		if (load(&ch, 1, msg, sizeof(msg)) != NULL)
			fail_msg("%s %s '%s' was accepted", bad[i].stage, bad[i].table, bad[i].entry);
		if (strstr(msg, bad[i].want) == NULL)
			fail_msg("%s %s '%s': got '%s', want '%s'", bad[i].stage, bad[i].table,
				 bad[i].entry, msg, bad[i].want);
	}
}

static void
test_rules_and_macs(void **state)
{
	struct pf_change ch[4];
	const struct acl_cfg *acl;
	const struct l2_cfg *l2;
	struct pf_topo *t;
	char msg[PF_ERR_MSG_MAX];

	(void)state;
	ch[0] = change("acl", "rules", false, "deny dst 10.60.0.0/16 priority 10");
	ch[1] = change("acl", "rules", true, "deny   proto tcp");   /* same rule, other blanks */
	ch[2] = change("l2", "macs", false, "02:00:00:00:AA:05 p3");
	ch[3] = change("l2", "macs", false, "02:00:00:00:aa:06 p2 default");
	t = load(ch, 4, msg, sizeof(msg));
	if (t == NULL)
		fail_msg("%s", msg);
	acl = stage(t, "acl")->cfg;
	assert_int_equal(acl->n_rules, 2);
	assert_int_equal(acl->rules[1].priority, 10);
	assert_int_equal(acl->rules[1].action, ACL_DENY);
	/* an add after the last inline item (line 13, column 9), quoted */
	assert_string_equal(ch[0].file, topo_path);
	assert_int_equal(ch[0].line, 13);
	assert_int_equal(ch[0].col, 9);
	assert_string_equal(ch[0].item, "\"deny dst 10.60.0.0/16 priority 10\"");
	assert_int_equal(ch[1].line, 13);
	assert_int_equal(ch[1].col, 9);
	l2 = stage(t, "l2")->cfg;
	assert_int_equal(l2->n_static, 2);
	assert_string_equal(ch[2].entry, "02:00:00:00:aa:05 p3 default");
	assert_string_equal(ch[2].key, "02:00:00:00:aa:05 default");
	/* no static list yet: a new key before the stage's first key (line 26, col 5) */
	assert_int_equal(ch[2].line, 26);
	assert_int_equal(ch[2].col, -5);
	assert_string_equal(ch[2].item, "{ mac: \"02:00:00:00:aa:05\", port: p3, domain: default }");
	pf_topo_free(t);

	/* an add then a delete of the same MAC: the delete finds the live entry */
	ch[3] = change("l2", "macs", true, "02:00:00:00:aa:05");
	t = load(&ch[2], 2, msg, sizeof(msg));
	assert_non_null(t);
	assert_int_equal(((const struct l2_cfg *)stage(t, "l2")->cfg)->n_static, 0);
	pf_topo_free(t);
}

/* Next hops by address (`via: ADDRESS` in the topology) on a stage with a neigh edge. */
static void
test_routes_via(void **state)
{
	static const struct {
		const char *entry, *want;
	} bad[] = {
		{ "10.70.0.0/16 10.5.0.9", "10.5.0.9 is on no port's subnet" },
		{ "10.70.0.0/16 10.1.0.300", "unknown next hop '10.1.0.300'" },
		{ "10.70.0.0/16 via", "unknown next hop 'via' (a name under nexthops: or an IPv4" },
		{ "10.9.0.0/16 10.1.0.9", "exists (via 10.0.0.9)" },
	};
	const struct pf_rconf *cfg;
	struct pf_change ch[5];
	struct pf_topo *t;
	char msg[PF_ERR_MSG_MAX];
	uint32_t i, k;

	(void)state;
	load_from = via_path;
	ch[0] = change("lpm", "routes", false, "10.50.0.0/16 10.1.0.9");
	ch[1] = change("lpm", "routes", false, "10.51.0.0/16 via 10.1.0.9");  /* same next hop */
	ch[2] = change("lpm", "routes", false, "10.52.0.0/16 10.0.0.9");      /* the inline one's */
	ch[3] = change("lpm", "routes", false, "10.53.0.0/16 gw");            /* named, by address */
	ch[4] = change("lpm", "routes", true, "10.9.0.0/16");
	t = load(ch, 5, msg, sizeof(msg));
	if (t == NULL)
		fail_msg("%s", msg);
	cfg = &((const struct lpm_cfg *)stage(t, "lpm")->cfg)->rt;
	assert_int_equal(cfg->n_routes, 6);            /* 2 from the file, 4 added, 1 deleted */
	assert_int_equal(cfg->n_nh, 4);                /* n1, gw, 10.0.0.9, 10.1.0.9 */
	for (i = 0; i < cfg->n_routes; i++) {
		const struct pf_rconf_route *r = pf_rconf_route(cfg, i);
		const struct pf_rconf_nh *nh = &cfg->nh[r->nh];

		switch (pf_rconf_ip4(r->prefix)) {
		case 0x0a320000: case 0x0a330000:
			assert_string_equal(nh->name, "10.1.0.9");
			assert_int_equal(pf_rconf_ip4(nh->gw), 0x0a010009);
			assert_int_equal(nh->port, 1);
			break;
		case 0x0a340000:
			assert_int_equal(pf_rconf_ip4(nh->gw), 0x0a000009);
			assert_int_equal(nh->port, 0);
			break;
		case 0x0a350000:
			assert_string_equal(nh->name, "gw");
			break;
		}
	}
	for (k = 0; k < 2; k++) {
		/* by address: normalised, saved inline (a route file names next hops only) */
		assert_string_equal(ch[k].entry, k == 0 ? "10.50.0.0/16 10.1.0.9" :
				    "10.51.0.0/16 10.1.0.9");
		assert_string_equal(ch[k].file, via_path);
		assert_int_equal(ch[k].line, 13);
		assert_int_equal(ch[k].col, 9);
	}
	assert_string_equal(ch[0].item, "{ prefix: 10.50.0.0/16, via: 10.1.0.9 }");
	assert_string_equal(ch[2].file, via_path);
	assert_string_equal(ch[3].file, routes_path);   /* a named next hop: the file */
	assert_string_equal(ch[3].entry, "10.53.0.0/16 gw");
	pf_topo_free(t);

	for (i = 0; i < RTE_DIM(bad); i++) {
		ch[0] = change("lpm", "routes", false, bad[i].entry);
		if (load(ch, 1, msg, sizeof(msg)) != NULL)
			fail_msg("'%s' was accepted", bad[i].entry);
		if (strstr(msg, bad[i].want) == NULL)
			fail_msg("'%s': got '%s', want '%s'", bad[i].entry, msg, bad[i].want);
	}
	load_from = topo_path;
}

static bool
has_route6(const struct pf_rconf *cfg, uint8_t b4, uint8_t b5, uint8_t len)
{
	uint8_t want[16] = { 0x20, 0x01, 0x0d, 0xb8, b4, b5 };
	uint32_t i;

	for (i = 0; i < cfg->n_routes; i++)
		if (memcmp(pf_rconf_route(cfg, i)->prefix, want, 16) == 0 &&
		    pf_rconf_route(cfg, i)->len == len)
			return true;
	return false;
}

/* lpm6 routes live: the same entries, refusals and save locations as lpm's. */
static void
test_routes6(void **state)
{
	static const struct {
		const char *entry;
		bool del;
		const char *want;
	} bad[] = {
		{ "2001:db8:50::1/48 n1", false, "host bits" },
		{ "2001:db8:50::/129 n1", false, "bad prefix" },
		{ "10.0.0.0/8 n1", false, "bad prefix" },
		{ "2001:db8:50::/48 n9", false, "unknown next hop 'n9'" },
		{ "2001:db8:20::/48 n1", false, "route 2001:db8:20::/48 exists (via n1)" },
		{ "2001:db8:60::/48", true, "no route 2001:db8:60::/48" },
		{ "2001:db8:60::/48", false, "expected 'PREFIX/LEN NEXTHOP" },
		{ "2001:db8:60::/48 2001:db8:1::7", false, "has no neigh edge to resolve it" },
	};
	const struct pf_rconf *cfg;
	struct pf_change ch[4];
	struct pf_topo *t;
	char msg[PF_ERR_MSG_MAX];
	uint32_t i;

	(void)state;
	load_from = v6_path;
	ch[0] = change("lpm6", "routes", false, "2001:DB8:50:0::/48   via n1");
	ch[1] = change("lpm6", "routes", true, "2001:db8:30::/48");      /* line 3 of the file */
	ch[2] = change("lpm6", "routes", true, "2001:db8:9::/48");       /* inline, line 12 */
	ch[3] = change("lpm6", "routes", false, "2001:db8:9::/48 n1");   /* back, inline */
	t = load(ch, 4, msg, sizeof(msg));
	if (t == NULL)
		fail_msg("%s", msg);
	cfg = &((const struct lpm6_cfg *)stage(t, "lpm6")->cfg)->rt;
	assert_int_equal(cfg->n_routes, 3);
	assert_true(has_route6(cfg, 0, 0x50, 48));
	assert_true(has_route6(cfg, 0, 0x20, 48));
	assert_true(has_route6(cfg, 0, 0x09, 48));
	assert_false(has_route6(cfg, 0, 0x30, 48));
	for (i = 1; i < cfg->n_routes; i++)
		assert_true(memcmp(pf_rconf_route(cfg, i - 1)->prefix, pf_rconf_route(cfg, i)->prefix,
				   16) < 0);
	assert_string_equal(ch[0].entry, "2001:db8:50::/48 n1");
	assert_string_equal(ch[0].file, r6_path);
	assert_int_equal(ch[0].col, 0);
	assert_string_equal(ch[1].file, r6_path);
	assert_int_equal(ch[1].line, 3);
	assert_string_equal(ch[2].file, v6_path);
	assert_int_equal(ch[2].line, 12);
	assert_int_equal(ch[2].col, 9);
	assert_true(stage(t, "lpm6")->edits != 0);
	pf_topo_free(t);

	for (i = 0; i < RTE_DIM(bad); i++) {
		ch[0] = change("lpm6", "routes", bad[i].del, bad[i].entry);
		if (load(ch, 1, msg, sizeof(msg)) != NULL)
			fail_msg("'%s' was accepted", bad[i].entry);
		if (strstr(msg, bad[i].want) == NULL)
			fail_msg("'%s': got '%s', want '%s'", bad[i].entry, msg, bad[i].want);
	}
	load_from = topo_path;
}

/* lpm6 routes live with a next hop by address, resolved by the neigh stage. */
static void
test_routes6_via(void **state)
{
	static const struct {
		const char *entry, *want;
	} bad[] = {
		{ "2001:db8:70::/48 2001:db8:5::9", "is on no port's ipv6 prefix" },
		{ "2001:db8:70::/48 ff02::1", "is not a unicast address" },
		{ "2001:db8:70::/48 2001:db8:1::7%p9", "unknown port" },
		{ "2001:db8:70::/48 gw9", "unknown next hop 'gw9' (a name under nexthops: or an IPv6" },
	};
	static const uint8_t gw7[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 7 };
	static const uint8_t gw9[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 9 };
	const struct pf_rconf *cfg;
	struct pf_change ch[3];
	struct pf_topo *t;
	char msg[PF_ERR_MSG_MAX];
	uint32_t i;

	(void)state;
	load_from = v6via_path;
	ch[0] = change("lpm6", "routes", false, "2001:db8:50::/48 2001:db8:1::9");
	ch[1] = change("lpm6", "routes", false, "2001:db8:51::/48 via 2001:db8:1:0::9");
	ch[2] = change("lpm6", "routes", false, "2001:db8:52::/48 2001:db8:1::7"); /* inline's */
	t = load(ch, 3, msg, sizeof(msg));
	if (t == NULL)
		fail_msg("%s", msg);
	cfg = &((const struct lpm6_cfg *)stage(t, "lpm6")->cfg)->rt;
	assert_int_equal(cfg->n_routes, 4);
	assert_int_equal(cfg->n_nh, 3);                /* n1, 2001:db8:1::7, 2001:db8:1::9 */
	for (i = 0; i < cfg->n_routes; i++) {
		const struct pf_rconf_route *r = pf_rconf_route(cfg, i);
		uint32_t k = r->nh;

		assert_int_equal(cfg->nh[k].port, 1);
		if (r->prefix[5] == 0x50 || r->prefix[5] == 0x51)
			assert_memory_equal(cfg->nh[k].gw, gw9, 16);
		else
			assert_memory_equal(cfg->nh[k].gw, gw7, 16);
	}
	assert_string_equal(ch[0].entry, "2001:db8:50::/48 2001:db8:1::9");
	assert_string_equal(ch[1].entry, "2001:db8:51::/48 2001:db8:1::9");
	assert_string_equal(ch[0].file, v6via_path);    /* inline, after the inline route */
	assert_int_equal(ch[0].line, 12);
	assert_string_equal(ch[0].item, "{ prefix: \"2001:db8:50::/48\", via: \"2001:db8:1::9\" }");
	pf_topo_free(t);

	for (i = 0; i < RTE_DIM(bad); i++) {
		ch[0] = change("lpm6", "routes", false, bad[i].entry);
		if (load(ch, 1, msg, sizeof(msg)) != NULL)
			fail_msg("'%s' was accepted", bad[i].entry);
		if (strstr(msg, bad[i].want) == NULL)
			fail_msg("'%s': got '%s', want '%s'", bad[i].entry, msg, bad[i].want);
	}
	load_from = topo_path;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_rules_and_macs),
		cmocka_unit_test(test_routes_via),
		cmocka_unit_test(test_routes6),
		cmocka_unit_test(test_routes6_via),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
