/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the rx parser/classifier (stages/rx.c process_burst).
 *
 * Input: one frame, as received (the whole input is the frame, so replay
 * pcap frames are seeds as they are). The frame lives in a heap buffer of
 * exactly its length, attached to the mbuf as an external buffer: any read
 * past the frame is a heap-buffer-overflow under ASan (libFuzzer builds and
 * the sanitizer build of the regression driver).
 *
 * The frame goes through three rx stages: one with every class wired, one
 * with only ipv4 wired (so unwired classes take the ethertype_unsupported
 * path), and the first again with fast_path: false (the full parser alone),
 * which must agree with it exactly: edge, metadata, frame length and every
 * counter delta. The mbuf carries port 0's id, as a PMD sets it, so the
 * fast path is taken whenever it can be. Invariants checked per stage:
 *   - edge is a valid edge; edge 0 (drop) <=> exactly one drop counter moved,
 *     by exactly 1; a forwarded packet moved no drop counter;
 *   - a forwarded packet's edge is wired, and its metadata fits the frame:
 *     l2_len in {14, 18}, IPv4 l2_len + l3_len <= data_len after trimming,
 *     IPv6 l3_len within 40 .. 40 + PF_IP6_EXT_MAX_LEN and the payload, the
 *     frame trimmed to the payload length, l4_proto not an extension header
 *     (but for a non-first fragment),
 *     a trimmed frame only got shorter.
 * A violation aborts (a crash for libFuzzer, a failure for the driver).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "pf_stage.h"
#include "pf_stages.h"
#include "pf_topo.h"

#define FUZZ_TARGET "fuzz_rx"
#define FUZZ_USE_EAL
#include "fuzz_common.h"

static const char topo_all[] =
	"ports:\n"
	"  p0: { device: net_null0, max_frame: 9018 }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0], next: xc }\n"
	"  xc: { type: xconnect, pairs: { p0: p0 }, next: tx }\n"
	"  tx: { type: tx, ports: [p0] }\n"
	"lcores:\n"
	"  1: [rx, xc, tx]\n";

static const char topo_full[] =
	"ports:\n"
	"  p0: { device: net_null0, max_frame: 9018 }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0], next: xc, fast_path: false }\n"
	"  xc: { type: xconnect, pairs: { p0: p0 }, next: tx }\n"
	"  tx: { type: tx, ports: [p0] }\n"
	"lcores:\n"
	"  1: [rx, xc, tx]\n";

static const char topo_ipv4[] =
	"ports:\n"
	"  p0: { device: net_null0 }\n"
	"stages:\n"
	"  rx: { type: rx, ports: [p0], next: { ipv4: xc } }\n"
	"  xc: { type: xconnect, pairs: { p0: p0 }, next: tx }\n"
	"  tx: { type: tx, ports: [p0] }\n"
	"lcores:\n"
	"  1: [rx, xc, tx]\n";

struct target {
	struct pf_topo *topo;
	struct pf_stage *st;
};

/* What one stage made of a frame, for the fast vs full comparison. */
struct outcome {
	uint16_t edge;
	uint16_t data_len;
	uint32_t pkt_len;
	struct pf_meta md;
	uint64_t delta[64];
};

static struct target targets[3];
static struct rte_mempool *pool;
static struct rte_mbuf_ext_shared_info shinfo;

static void
ext_free(void *addr, void *opaque)
{
	/* The buffer belongs to the caller: nothing to do here. */
}

static void
target_make(struct target *t, const char *yaml)
{
	struct pf_errs errs = { 0 };
	int si;

	if (pf_topo_load_string("fuzz_rx.yaml", yaml, &t->topo, &errs) < 0) {
		pf_errs_print(&errs, stderr);
		abort();
	}
	si = pf_topo_stage_index(t->topo, "rx");
	CHECK(si >= 0);
	if (pf_stage_create(&t->st, &t->topo->stages[si], t->topo, &errs) < 0) {
		pf_errs_print(&errs, stderr);
		abort();
	}
}

static void
setup(void)
{
	fuzz_eal_setup("64");
	pool = rte_pktmbuf_pool_create("fuzz_rx", 63, 0, 0, 0, SOCKET_ID_ANY);
	CHECK(pool != NULL);
	target_make(&targets[0], topo_all);
	target_make(&targets[1], topo_ipv4);
	target_make(&targets[2], topo_full);
}

static uint64_t
drop_sum(const struct pf_stage *st, uint64_t *snap, bool save, int *moved)
{
	uint64_t sum = 0;
	uint16_t k;

	*moved = 0;
	for (k = 0; k < st->ops->n_ctrs; k++) {
		if (st->ops->ctrs[k].kind != PF_CTR_DROP)
			continue;
		if (save)
			snap[k] = st->ctrs[k];
		else if (st->ctrs[k] != snap[k])
			(*moved)++;
		sum += st->ctrs[k];
	}
	return sum;
}

static void
run_one(struct target *t, uint8_t *buf, uint16_t len, struct outcome *out)
{
	struct pf_stage *st = t->st;
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint64_t snap[64], all[64], before, after;
	uint16_t edge = 0xdead, k, verdict;
	int moved;

	CHECK(m != NULL);
	CHECK(st->ops->n_ctrs <= RTE_DIM(snap));
	/* The frame is the whole external buffer: no headroom, no tailroom. */
	rte_mbuf_ext_refcnt_set(&shinfo, 1);
	rte_pktmbuf_attach_extbuf(m, buf, (rte_iova_t)(uintptr_t)buf, len, &shinfo);
	m->data_off = 0;
	m->data_len = len;
	m->pkt_len = len;
	m->port = 0;
	memset(pf_meta(m), 0, sizeof(struct pf_meta));
	pf_meta(m)->in_port = 0;

	memcpy(all, st->ctrs, st->ops->n_ctrs * sizeof(uint64_t));
	before = drop_sum(st, snap, true, &moved);
	verdict = st->ops->dp.process_burst(st, &m, 1, &edge);
	if (verdict != PF_EDGE_MIXED)
		edge = verdict;
	after = drop_sum(st, snap, false, &moved);
	memset(out, 0, sizeof(*out));
	out->edge = edge;
	out->data_len = m->data_len;
	out->pkt_len = m->pkt_len;
	if (edge != PF_EDGE_DROP)
		out->md = *pf_meta(m);
	for (k = 0; k < st->ops->n_ctrs; k++)
		out->delta[k] = st->ctrs[k] - all[k];

	CHECK(edge < st->ops->n_edges);
	if (edge == PF_EDGE_DROP) {
		CHECK(after == before + 1);
		CHECK(moved == 1);
	} else {
		const struct pf_meta *md = pf_meta(m);

		CHECK(after == before);
		CHECK(moved == 0);
		CHECK(st->edge_connected & (1u << edge));
		CHECK(md->l2_len == 14 || md->l2_len == 18);
		CHECK(md->l2_len <= m->data_len);
		CHECK(m->data_len <= len && m->pkt_len == m->data_len);
		if (md->cls == PF_CLASS_IPV4)
			CHECK(md->l3_len >= 20 && md->l2_len + md->l3_len <= m->data_len);
		if (md->cls == PF_CLASS_IPV6) {
			const uint8_t *ip6 = rte_pktmbuf_mtod_offset(m, const uint8_t *, md->l2_len);

			/* The walk stays inside the payload, which is all that is left. */
			CHECK(md->l3_len >= 40 && md->l3_len <= 40 + PF_IP6_EXT_MAX_LEN);
			CHECK(md->l2_len + md->l3_len <= m->data_len);
			CHECK(m->data_len == md->l2_len + 40u + (ip6[4] << 8 | ip6[5]));
			if (md->l3_len == 40)
				CHECK(md->l4_proto == ip6[6]);
			if (!(md->flags & PF_META_IP_NONFIRST))
				CHECK(md->l4_proto != 0 && md->l4_proto != 43 && md->l4_proto != 44 &&
				      md->l4_proto != 60);
		}
	}
	rte_pktmbuf_free(m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	uint8_t *buf;
	uint16_t len = (uint16_t)RTE_MIN(size, (size_t)UINT16_MAX);
	unsigned int i;

	if (!ready) {
		setup();
		shinfo.free_cb = ext_free;
		ready = 1;
	}
	static struct outcome out[RTE_DIM(targets)];

	for (i = 0; i < RTE_DIM(targets); i++) {
		/* A fresh exact-size copy each time: rx may trim, never write past it. */
		buf = malloc(len ? len : 1);
		CHECK(buf != NULL);
		memcpy(buf, data, len);
		run_one(&targets[i], buf, len, &out[i]);
		free(buf);
	}
	/* Fast path and full parser: one verdict (struct pf_meta has no padding). */
	CHECK(memcmp(&out[0], &out[2], sizeof(out[0])) == 0);
	return 0;
}
