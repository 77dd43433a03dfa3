/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Differential test of the acl stage: random rule sets (1 to 10,000 rules,
 * overlapping prefixes and port ranges, random priorities) and random
 * packets, classified by the stage (rte_acl, every algorithm in turn) and by
 * the plain linear matcher below, which shares no code with the stage: it
 * works from the generator's own rule structs, the stage from their text.
 * Every packet's verdict and every rule's hit count must agree. Rules and
 * packets are IPv4 or IPv6 (a rule written without addresses is both), in
 * the same bursts.
 *
 * Environment: ACL_DIFF_PACKETS (total, default 200000), ACL_DIFF_SEED,
 * ACL_DIFF_MAXRULES (default 10000). docs/stages/acl.md has a larger run.
 */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "acl_test_pkt.h"

struct rrule {
	uint32_t src, smask, dst, dmask;
	uint32_t src6[4], smask6[4], dst6[4], dmask6[4];   /* host-order words */
	int v6;                         /* generated as IPv6 */
	int fam;                        /* as written: 0 no address (both), 4, 6 */
	int proto;                      /* -1: any */
	uint16_t splo, sphi, dplo, dphi;
	int permit;
	uint32_t prio;
};

static uint64_t rng_state;

static uint64_t
rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static uint32_t
rn(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

static uint32_t
len_mask(unsigned int len)
{
	return len == 0 ? 0 : ~0u << (32 - len);
}

static uint64_t
env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? strtoull(v, NULL, 0) : def;
}

/* ---- generator ---------------------------------------------------------- */

static uint32_t bases[8];

static uint32_t bases6[8][4];

/* An IPv6 prefix near one of bases6 (so they nest and overlap), as words. */
static void
gen_prefix6(uint32_t *addr, uint32_t *mask)
{
	static const unsigned int lens[] = { 0, 16, 32, 48, 56, 64, 64, 96, 112, 120, 127, 128,
					     128 };
	unsigned int len = lens[rn(RTE_DIM(lens))], w, b = rn(8);

	for (w = 0; w < 4; w++) {
		mask[w] = len_mask(len >= 32 * (w + 1) ? 32 : len <= 32 * w ? 0 : len - 32 * w);
		addr[w] = bases6[b][w];
		if (rn(2))
			addr[w] ^= (uint32_t)rnd() & (w == 3 ? ~0u : 0xffu);
		addr[w] &= mask[w];
	}
}

static bool
any6(const uint32_t *mask)
{
	return (mask[0] | mask[1] | mask[2] | mask[3]) == 0;
}

static void
gen_prefix(uint32_t *addr, uint32_t *mask)
{
	static const unsigned int lens[] = { 0, 8, 12, 16, 20, 24, 24, 28, 30, 32, 32, 32 };
	unsigned int len = lens[rn(RTE_DIM(lens))];

	*mask = len_mask(len);
	*addr = (bases[rn(8)] | (uint32_t)rnd()) & *mask;
	/* Keep the host part small so prefixes nest and overlap. */
	if (len < 32 && rn(2))
		*addr = (bases[rn(8)] & len_mask(16)) & *mask;
}

static uint16_t
gen_port_edge(void)
{
	static const uint16_t pool[] = { 0, 1, 53, 80, 443, 1023, 1024, 8080, 32768, 65534, 65535 };

	return rn(3) ? pool[rn(RTE_DIM(pool))] : (uint16_t)rnd();
}

static void
gen_range(uint16_t *lo, uint16_t *hi)
{
	uint16_t a = gen_port_edge(), b = rn(3) ? gen_port_edge() : a;

	*lo = RTE_MIN(a, b);
	*hi = RTE_MAX(a, b);
}

static void
gen_rule(struct rrule *r, bool prios)
{
	static const int protos[] = { -1, -1, -1, 6, 6, 6, 17, 17, 17, 1, 132 };

	memset(r, 0, sizeof(*r));
	r->v6 = rn(2);
	if (rn(20) == 0)
		r->src = r->smask = 0;
	else if (r->v6)
		gen_prefix6(r->src6, r->smask6);
	else
		gen_prefix(&r->src, &r->smask);
	if (rn(10) == 0)
		r->dst = r->dmask = 0;
	else if (r->v6)
		gen_prefix6(r->dst6, r->dmask6);
	else
		gen_prefix(&r->dst, &r->dmask);
	r->proto = protos[rn(RTE_DIM(protos))];
	/* ICMP is protocol 58 under IPv6: an IPv6 rule with proto 1 is refused. */
	if (r->v6 && r->proto == 1)
		r->proto = 58;
	r->sphi = r->dphi = 65535;
	if (r->proto != 1 && r->proto != 58) {
		if (rn(2))
			gen_range(&r->splo, &r->sphi);
		if (rn(3))
			gen_range(&r->dplo, &r->dphi);
	}
	r->permit = (int)rn(2);
	r->prio = prios ? rn(4) : 0;
}

static int
mask_len(uint32_t m)
{
	return m == 0 ? 0 : 32 - __builtin_ctz(m);
}

static void
write_prefix6(FILE *f, const char *key, const uint32_t *a, const uint32_t *m)
{
	int w, len = 0;

	for (w = 0; w < 4; w++)
		len += mask_len(m[w]);
	fprintf(f, " %s %x:%x:%x:%x:%x:%x:%x:%x/%d", key, a[0] >> 16, a[0] & 0xffff, a[1] >> 16,
		a[1] & 0xffff, a[2] >> 16, a[2] & 0xffff, a[3] >> 16, a[3] & 0xffff, len);
}

/*
 * The text the stage reads; fields equal to "any" are left out or spelled
 * out at random (as 0.0.0.0/0 or ::/0, which makes the rule that family's;
 * left out on both sides, it is both families'): r->fam says which.
 */
static void
write_rule(FILE *f, struct rrule *r)
{
	fprintf(f, "%s", r->permit ? "permit" : "deny");
	r->fam = 0;
	if (r->v6) {
		if (!any6(r->smask6) || rn(4) == 0) {
			write_prefix6(f, "src", r->src6, r->smask6);
			r->fam = 6;
		}
		if (!any6(r->dmask6) || rn(4) == 0) {
			write_prefix6(f, "dst", r->dst6, r->dmask6);
			r->fam = 6;
		}
	}
	if (!r->v6 && (r->smask != 0 || rn(4) == 0)) {
		fprintf(f, " src %u.%u.%u.%u/%d", r->src >> 24, (r->src >> 16) & 255,
			(r->src >> 8) & 255, r->src & 255, mask_len(r->smask));
		r->fam = 4;
	}
	if (!r->v6 && (r->dmask != 0 || rn(4) == 0)) {
		fprintf(f, " dst %u.%u.%u.%u/%d", r->dst >> 24, (r->dst >> 16) & 255,
			(r->dst >> 8) & 255, r->dst & 255, mask_len(r->dmask));
		r->fam = 4;
	}
	/* Ports need a protocol (rn() first: the same random stream either way). */
	if (r->proto >= 0)
		fprintf(f, " proto %d", r->proto);
	else if (rn(4) == 0 || r->splo != 0 || r->sphi != 65535 || r->dplo != 0 ||
		 r->dphi != 65535)
		fprintf(f, " proto any");
	if (r->splo != 0 || r->sphi != 65535)
		fprintf(f, " sport %u-%u", r->splo, r->sphi);
	if (r->dplo != 0 || r->dphi != 65535)
		fprintf(f, r->dplo == r->dphi ? " dport %u" : " dport %u-%u", r->dplo, r->dphi);
	if (r->prio != 0)
		fprintf(f, " priority %u", r->prio);
	fprintf(f, "\n");
}

/* Bytes of an address in prefix @p a / @p m, the host part random. */
static void
gen_addr6(uint8_t *out, const uint32_t *a, const uint32_t *m)
{
	uint32_t w, v;

	for (w = 0; w < 4; w++) {
		v = a[w] | ((uint32_t)rnd() & ~m[w]);
		/* Mostly the low bits only: near the rules' own addresses. */
		if (rn(4) && m[w] != ~0u)
			v = a[w] | ((uint32_t)rn(4) & ~m[w]);
		out[4 * w] = (uint8_t)(v >> 24), out[4 * w + 1] = (uint8_t)(v >> 16);
		out[4 * w + 2] = (uint8_t)(v >> 8), out[4 * w + 3] = (uint8_t)v;
	}
}

static void
gen_packet(struct tpkt *t, const struct rrule *rules, uint32_t n)
{
	static const uint8_t protos[] = { 6, 17, 1, 132, 47 };
	const struct rrule *r;

	memset(t, 0, sizeof(*t));
	t->l4_len = -1;
	if (rn(10) < 7) {
		r = &rules[rn(n)];
		t->v6 = r->fam == 6 || (r->fam == 0 && rn(2));
		t->src = r->src | ((uint32_t)rnd() & ~r->smask);
		t->dst = r->dst | ((uint32_t)rnd() & ~r->dmask);
		gen_addr6(t->src6, r->src6, r->smask6);
		gen_addr6(t->dst6, r->dst6, r->dmask6);
		t->proto = r->proto >= 0 ? (uint8_t)r->proto : protos[rn(RTE_DIM(protos))];
		t->sport = (uint16_t)(r->splo + rn((uint32_t)(r->sphi - r->splo) + 1));
		t->dport = (uint16_t)(r->dplo + rn((uint32_t)(r->dphi - r->dplo) + 1));
		/* Near misses: one bit of an address off, or a port just outside. */
		switch (rn(8)) {
		case 0:
			t->src ^= 1u << rn(32);
			t->src6[rn(16)] ^= (uint8_t)(1u << rn(8));
			break;
		case 1:
			t->dst ^= 1u << rn(32);
			t->dst6[rn(16)] ^= (uint8_t)(1u << rn(8));
			break;
		case 2:
			t->sport = rn(2) ? (uint16_t)(r->splo - 1) : (uint16_t)(r->sphi + 1);
			break;
		case 3:
			t->dport = rn(2) ? (uint16_t)(r->dplo - 1) : (uint16_t)(r->dphi + 1);
			break;
		default:
			break;
		}
	} else {
		static const uint32_t none[4];

		t->v6 = rn(2);
		t->src = bases[rn(8)] | (uint32_t)rn(1u << 16);
		t->dst = rn(4) ? bases[rn(8)] | (uint32_t)rn(1u << 16) : (uint32_t)rnd();
		gen_addr6(t->src6, bases6[rn(8)], none);
		gen_addr6(t->dst6, bases6[rn(8)], none);
		t->src6[15] = (uint8_t)rn(4);
		t->proto = protos[rn(RTE_DIM(protos))];
		t->sport = gen_port_edge();
		t->dport = gen_port_edge();
	}
	switch (rn(25)) {
	case 0:
	case 1:
		t->frag_off = (uint16_t)(1 + rn(1000));   /* non-first fragment */
		break;
	case 2:
		t->mf = true;                               /* first fragment: has ports */
		break;
	case 3:
		if (t->proto == 6 || t->proto == 17 || t->proto == 132)
			t->l4_len = (int)rn(t->proto == 6 ? 20 : t->proto == 17 ? 8 : 12);
		break;
	case 4:
		if (t->proto == 6)
			t->tcp_doff = (uint8_t)rn(5);
		break;
	default:
		break;
	}
}

/* ---- the reference: a plain linear scan --------------------------------- */

struct rpkt {
	uint32_t src, dst;
	uint32_t src6[4], dst6[4];
	int fam;
	int proto;
	int sport, dport;               /* -1: the packet has no ports */
	bool nonfirst;
};

static struct rpkt
ref_view(const struct tpkt *t)
{
	struct rpkt p = { .src = t->src, .dst = t->dst, .proto = t->proto, .sport = -1,
			  .dport = -1, .nonfirst = t->frag_off != 0, .fam = t->v6 ? 6 : 4 };
	int w, need = t->proto == 6 ? 20 : t->proto == 17 ? 8 : t->proto == 132 ? 12 : -1;
	int have = t->l4_len >= 0 ? t->l4_len : need;
	int doff = t->tcp_doff ? t->tcp_doff : 5;

	for (w = 0; w < 4; w++) {
		p.src6[w] = (uint32_t)t->src6[4 * w] << 24 | (uint32_t)t->src6[4 * w + 1] << 16 |
			    (uint32_t)t->src6[4 * w + 2] << 8 | t->src6[4 * w + 3];
		p.dst6[w] = (uint32_t)t->dst6[4 * w] << 24 | (uint32_t)t->dst6[4 * w + 1] << 16 |
			    (uint32_t)t->dst6[4 * w + 2] << 8 | t->dst6[4 * w + 3];
	}
	if (p.nonfirst || need < 0 || have < need)
		return p;
	if (t->proto == 6 && (doff < 5 || doff * 4 > have))
		return p;
	p.sport = t->sport;
	p.dport = t->dport;
	return p;
}

static bool
in6(const uint32_t *a, const uint32_t *net, const uint32_t *mask)
{
	int w;

	for (w = 0; w < 4; w++)
		if ((a[w] & mask[w]) != net[w])
			return false;
	return true;
}

/* Index of the winning rule, or -1. */
static int
ref_match(const struct rrule *rules, uint32_t n, const struct rpkt *p, bool proto_only)
{
	int best = -1;
	uint32_t i;

	for (i = 0; i < n; i++) {
		const struct rrule *r = &rules[i];
		bool ports = r->splo != 0 || r->sphi != 65535 || r->dplo != 0 || r->dphi != 65535;

		if (r->fam != 0 && r->fam != p->fam)
			continue;
		if (p->fam == 4 && r->fam == 4 &&
		    ((p->src & r->smask) != r->src || (p->dst & r->dmask) != r->dst))
			continue;
		if (p->fam == 6 && r->fam == 6 && !(in6(p->src6, r->src6, r->smask6) &&
						     in6(p->dst6, r->dst6, r->dmask6)))
			continue;
		if (r->proto >= 0 && r->proto != p->proto)
			continue;
		if (ports) {
			if (p->nonfirst && proto_only)
				; /* VPP: L4 rules match non-first fragments on the protocol */
			else if (p->sport < 0 || p->sport < r->splo || p->sport > r->sphi ||
				 p->dport < r->dplo || p->dport > r->dphi)
				continue;
		}
		if (best < 0 || r->prio > rules[best].prio)
			best = (int)i;
	}
	return best;
}

/* ---- the test ----------------------------------------------------------- */

static int
group_setup(void **state)
{
	return pf_test_eal_init("acl_diff");
}

static uint64_t
run_set(uint32_t n_rules, uint32_t n_pkts, int set, uint64_t *hits_checked)
{
	static const char *const algs[] = { "default", "scalar", "sse", "avx2" };
	struct rrule *rules = calloc(n_rules, sizeof(*rules));
	uint64_t *ref_hits = calloc(n_rules, sizeof(uint64_t)), bad = 0, ref_default = 0;
	struct pf_gauge *g = calloc(n_rules + 16, sizeof(*g));
	bool prios = rn(3) == 0, proto_only = rn(4) == 0, def_permit = rn(2);
	char path[] = "/tmp/acl_diff_XXXXXX", params[512];
	struct rte_mbuf *m[64];
	struct tpkt t[64];
	int want[64], wrule[64], fd, k;
	struct pf_topo *topo;
	struct pf_stage *st;
	uint16_t edge[64], ng, i;
	uint32_t done, b, r;
	FILE *f;

	for (r = 0; r < 8; r++) {
		bases[r] = (uint32_t)rnd() & len_mask(8 + rn(9));
		bases6[r][0] = 0x20010db8;
		bases6[r][1] = (uint32_t)rnd() & len_mask(rn(33));
		bases6[r][2] = rn(2) ? 0 : (uint32_t)rnd();
		bases6[r][3] = (uint32_t)rn(4);
	}
	for (r = 0; r < n_rules; r++)
		gen_rule(&rules[r], prios);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "# random rule set %d, %u rules\n", set, n_rules);
	for (r = 0; r < n_rules; r++)
		write_rule(f, &rules[r]);
	fclose(f);
	snprintf(params, sizeof(params),
		 "    rules_file: %s\n    default: %s\n    algorithm: %s\n"
		 "    nonfirst_fragments: %s\n", path, def_permit ? "permit" : "deny",
		 algs[set % RTE_DIM(algs)], proto_only ? "protocol-only" : "ports-unknown");
	st = acl_stage(params, &topo);
	unlink(path);

	for (done = 0; done < n_pkts; done += b) {
		b = RTE_MIN(1 + rn(64), n_pkts - done);
		for (i = 0; i < b; i++) {
			struct rpkt rp;

			gen_packet(&t[i], rules, n_rules);
			rp = ref_view(&t[i]);
			k = ref_match(rules, n_rules, &rp, proto_only);
			if (k >= 0)
				ref_hits[k]++;
			else
				ref_default++;
			want[i] = k >= 0 ? rules[k].permit : def_permit;
			wrule[i] = k + 1;
			m[i] = tpkt_mbuf(&t[i]);
		}
		pf_test_process(st, m, (uint16_t)b, edge);
		for (i = 0; i < b; i++)
			if (edge[i] != want[i] && bad++ < 10)
				print_message("MISMATCH set %d (%u rules, %s): v6 %d src %08x dst %08x proto %u "
					      "sport %u dport %u frag %u mf %d l4 %d doff %u: stage %u, "
					      "reference %d (rule %d)\n", set, n_rules,
					      algs[set % RTE_DIM(algs)], t[i].v6, t[i].src, t[i].dst,
					      t[i].proto, t[i].sport, t[i].dport, t[i].frag_off,
					      t[i].mf, t[i].l4_len, t[i].tcp_doff, edge[i], want[i],
					      wrule[i]);
		pf_test_free(m, (uint16_t)b);
	}
	/* Which rule matched: the per-rule hit counters must equal the reference's. */
	ng = pf_stage_gauges(st, g, (uint16_t)RTE_MIN(n_rules + 16, 65535u));
	for (i = 0; i < ng; i++) {
		if (strncmp(g[i].name, "rule.", 5) != 0)
			continue;
		r = (uint32_t)strtoul(g[i].name + 5, NULL, 10) - 1;
		assert_true(r < n_rules);
		if (g[i].value != ref_hits[r] && bad++ < 10)
			print_message("HITS set %d rule %u: stage %" PRIu64 ", reference %" PRIu64 "\n",
				      set, r + 1, g[i].value, ref_hits[r]);
		ref_hits[r] = 0;
		(*hits_checked)++;
	}
	for (r = 0; r < n_rules && n_rules + 16 <= 65535; r++)
		if (ref_hits[r] != 0 && bad++ < 10)
			print_message("HITS set %d rule %u: stage 0, reference %" PRIu64 "\n", set,
				      r + 1, ref_hits[r]);
	if (pf_test_ctr(st, "default_permit") + pf_test_ctr(st, "default_deny") != ref_default &&
	    bad++ < 10)
		print_message("DEFAULT set %d: stage %" PRIu64 ", reference %" PRIu64 "\n", set,
			      pf_test_ctr(st, "default_permit") + pf_test_ctr(st, "default_deny"),
			      ref_default);
	pf_stage_destroy(st);
	pf_topo_free(topo);
	free(rules);
	free(ref_hits);
	free(g);
	return bad;
}

static void
test_differential(void **state)
{
	static const uint32_t sizes[] = { 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000,
					  10000 };
	uint64_t total = env_u64("ACL_DIFF_PACKETS", 200000);
	uint64_t seed = env_u64("ACL_DIFF_SEED", 20240601);
	uint64_t max_rules = env_u64("ACL_DIFF_MAXRULES", 10000), bad = 0, pkts = 0, hits = 0;
	uint32_t n_sets = 0, per, s;
	uint64_t t0 = rte_rdtsc();

	rng_state = seed ? seed : 1;
	for (s = 0; s < RTE_DIM(sizes); s++)
		n_sets += sizes[s] <= max_rules;
	per = (uint32_t)(total / n_sets);
	for (s = 0; s < RTE_DIM(sizes) && sizes[s] <= max_rules; s++) {
		bad += run_set(sizes[s], per, (int)s, &hits);
		pkts += per;
	}
	print_message("acl_diff: seed %" PRIu64 ", %u rule sets (1..%u rules), %" PRIu64
		      " packets, %" PRIu64 " rule hit counters compared, %" PRIu64
		      " disagreements, %.1f s\n", seed, n_sets, sizes[n_sets - 1], pkts, hits, bad,
		      (double)(rte_rdtsc() - t0) / (double)rte_get_tsc_hz());
	assert_int_equal(bad, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_differential),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
