/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the ip4frag stage on hand-built mbufs, through its expand
 * and process_burst as the runtime calls them: fragments byte for byte
 * (lengths, offsets, MF, checksums, L2 header, metadata, payload), an input
 * that is a non-last fragment, the named drops (too many fragments for the
 * output, pools exhausted, DF set) and the made - taken replicas.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_ether.h>
#include <rte_ip.h>

#include "pf_test.h"

#define TOPO \
	"ports:\n" \
	"  p0: { device: net_null0, mac: \"02:00:00:00:00:10\", ipv4: 192.168.0.1/24, mtu: 2000 }\n" \
	"  p1: { device: net_null1, mac: \"02:00:00:00:00:11\", mtu: 576 }\n" \
	"  p2: { device: net_null2, mac: \"02:00:00:00:00:12\", mtu: 68 }\n" \
	"stages:\n" \
	"  rx: { type: rx, ports: [p0, p1, p2], next: { ipv4: lpm, arp: lpm } }\n" \
	"  lpm: { type: lpm, nexthops: { nh: { port: p1, mac: \"02:00:00:00:01:01\" } },\n" \
	"         routes: [ { prefix: 10.0.0.0/8, via: nh } ],\n" \
	"         next: { out: tx, fragment: frag } }\n" \
	"  frag: { type: ip4frag, mbufs: 64, next: tx }\n" \
	"  tx: { type: tx, ports: [p0, p1, p2] }\n" \
	"lcores:\n  1: [rx, lpm, frag, tx]\n"

static const uint8_t l2_out[14] = { 2, 0, 0, 0, 1, 1, 2, 0, 0, 0, 0, 0x11, 0x08, 0x00 };

static int
group_setup(void **state)
{
	char name[32];

	RTE_SET_USED(state);
	/* A prefix of its own: worktrees run this test side by side. */
	snprintf(name, sizeof(name), "ip4frag_%d", (int)getpid());
	return pf_test_eal_init(name);
}

/* A routed UDP datagram of @p tot bytes (IPv4 total length) for @p out_port. */
static struct rte_mbuf *
mk(uint16_t tot, uint16_t out_port, uint16_t frag_field)
{
	static uint8_t f[2048];
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + RTE_ETHER_HDR_LEN);
	struct rte_mbuf *m;
	struct pf_meta *md;
	uint16_t i;

	memcpy(f, l2_out, sizeof(l2_out));
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16(tot);
	ip->packet_id = rte_cpu_to_be_16(0x4242);
	ip->fragment_offset = rte_cpu_to_be_16(frag_field);
	ip->time_to_live = 63;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(0xc0a80009);
	ip->dst_addr = rte_cpu_to_be_32(0x0a010203);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	for (i = RTE_ETHER_HDR_LEN + sizeof(*ip); i < RTE_ETHER_HDR_LEN + tot; i++)
		f[i] = (uint8_t)(i * 7);
	m = pf_test_mbuf(f, RTE_ETHER_HDR_LEN + tot, 0);
	md = pf_meta(m);
	md->cls = PF_CLASS_IPV4;
	md->l2_len = RTE_ETHER_HDR_LEN;
	md->l3_len = sizeof(*ip);
	md->flags = PF_META_L2_LOCAL;
	md->out_port = out_port;
	md->nexthop = 7;
	return m;
}

/* expand as the runtime calls it, checking its contract; returns made. */
static uint16_t
expand(struct pf_stage *st, struct rte_mbuf **in, uint16_t n, uint16_t *taken,
       struct rte_mbuf **out, uint16_t max)
{
	uint16_t made;

	*taken = 0;
	made = st->ops->dp.expand(st, in, n, taken, out, max);
	assert_true(*taken >= 1 && *taken <= n);
	assert_true(made >= *taken && made <= max);
	return made;
}

static void
test_fragments(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = pf_test_stage(TOPO, "frag", &topo);
	struct rte_mbuf *m, *out[8];
	uint8_t orig[1500], got[1500];
	uint16_t taken, made, k, edge[8], off = 0;
	struct pf_gauge g[4];
	/* 1480 payload bytes at MTU 576: 552 + 552 + 376 */
	static const uint16_t want_len[] = { 572, 572, 396 };

	RTE_SET_USED(state);
	m = mk(1500, 1, 0);
	memcpy(orig, rte_pktmbuf_mtod_offset(m, void *, RTE_ETHER_HDR_LEN), sizeof(orig));
	made = expand(st, &m, 1, &taken, out, RTE_DIM(out));
	assert_int_equal(made, 3);
	for (k = 0; k < made; k++) {
		struct rte_ipv4_hdr *ip;
		const void *p;
		uint16_t fo, len;

		assert_int_equal(out[k]->pkt_len, RTE_ETHER_HDR_LEN + want_len[k]);
		assert_memory_equal(rte_pktmbuf_mtod(out[k], void *), l2_out, sizeof(l2_out));
		ip = rte_pktmbuf_mtod_offset(out[k], struct rte_ipv4_hdr *, RTE_ETHER_HDR_LEN);
		fo = rte_be_to_cpu_16(ip->fragment_offset);
		len = rte_be_to_cpu_16(ip->total_length);
		assert_int_equal(len, want_len[k]);
		assert_int_equal(fo & RTE_IPV4_HDR_OFFSET_MASK, off / 8);
		assert_int_equal(!!(fo & RTE_IPV4_HDR_MF_FLAG), k != made - 1);
		assert_int_equal(rte_be_to_cpu_16(ip->packet_id), 0x4242);
		assert_int_equal(ip->time_to_live, 63);
		assert_int_equal(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);
		assert_int_equal(pf_meta(out[k])->out_port, 1);
		assert_int_equal(pf_meta(out[k])->nexthop, 7);
		assert_int_equal(!!(pf_meta(out[k])->flags & PF_META_IP_NONFIRST), k != 0);
		assert_true(pf_meta(out[k])->flags & PF_META_IP_FRAG);
		/* rte_pktmbuf_read copies only what spans segments: copy the rest. */
		p = rte_pktmbuf_read(out[k], RTE_ETHER_HDR_LEN + sizeof(*ip), len - sizeof(*ip),
				     got + off);
		assert_non_null(p);
		memmove(got + off, p, len - sizeof(*ip));
		off += len - sizeof(*ip);
	}
	assert_int_equal(off, 1480);
	assert_memory_equal(got, orig + sizeof(struct rte_ipv4_hdr), 1480);
	pf_test_process(st, out, made, edge);
	for (k = 0; k < made; k++)
		assert_int_equal(edge[k], 1);
	assert_int_equal(pf_test_ctr(st, "fragmented"), 1);
	assert_int_equal(pf_test_ctr(st, "fragments"), 3);
	pf_test_free(out, made);

	/* A middle fragment (MF, offset 100) stays MF on every piece, offsets added. */
	m = mk(1000, 1, RTE_IPV4_HDR_MF_FLAG | 100);
	made = expand(st, &m, 1, &taken, out, RTE_DIM(out));
	assert_int_equal(made, 2);
	for (k = 0; k < made; k++) {
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(out[k], struct rte_ipv4_hdr *,
								  RTE_ETHER_HDR_LEN);
		uint16_t fo = rte_be_to_cpu_16(ip->fragment_offset);

		assert_int_equal(fo, RTE_IPV4_HDR_MF_FLAG | (100 + k * 69));
		assert_true(pf_meta(out[k])->flags & PF_META_IP_NONFIRST);
	}
	pf_test_process(st, out, made, edge);
	pf_test_free(out, made);
	/* Every header and indirect mbuf is back. */
	assert_int_equal(pf_stage_gauges(st, g, RTE_DIM(g)), 2);
	assert_int_equal(g[0].value, 64);
	assert_int_equal(g[1].value, 64);
	pf_stage_destroy(st);
	pf_topo_free(topo);
}

static void
test_drops(void **state)
{
	struct pf_topo *topo;
	struct pf_stage *st = pf_test_stage(TOPO, "frag", &topo);
	struct rte_mbuf *in[2], *out[64], *held[64];
	uint16_t taken, made, edge[64], n_held = 0;

	RTE_SET_USED(state);
	/* Needs 3 fragments, the output holds 2: never fits, a named drop. */
	in[0] = mk(1500, 1, 0);
	made = expand(st, in, 1, &taken, out, 2);
	assert_int_equal(made, 1);
	assert_ptr_equal(out[0], in[0]);
	pf_test_process(st, out, 1, edge);
	assert_int_equal(edge[0], 0);
	assert_int_equal(pf_test_ctr(st, "frag_too_many"), 1);
	pf_test_free(out, 1);

	/* After a packet that fits, one that would not fit what is left waits. */
	in[0] = mk(500, 1, 0);
	in[1] = mk(1500, 1, 0);
	made = expand(st, in, 2, &taken, out, 2);
	assert_int_equal(taken, 1);
	assert_int_equal(made, 1);
	assert_int_equal(pf_test_ctr(st, "unfragmented"), 1);
	pf_test_process(st, out, made, edge);
	assert_int_equal(edge[0], 1);
	pf_test_free(out, made);
	made = expand(st, in + 1, 1, &taken, out, RTE_DIM(out));
	assert_int_equal(made, 3);
	pf_test_process(st, out, made, edge);
	pf_test_free(out, made);

	/* DF set: not cut. */
	in[0] = mk(1500, 1, RTE_IPV4_HDR_DF_FLAG);
	made = expand(st, in, 1, &taken, out, RTE_DIM(out));
	assert_int_equal(made, 1);
	pf_test_process(st, out, 1, edge);
	assert_int_equal(edge[0], 0);
	assert_int_equal(pf_test_ctr(st, "frag_df_set"), 1);
	pf_test_free(out, 1);

	/* MTU 68: 48 bytes a fragment, 31 for 1480; the 64-mbuf pools hold two. */
	in[0] = mk(1500, 2, 0);
	made = expand(st, in, 1, &taken, held, RTE_DIM(held));
	assert_int_equal(made, 31);
	n_held = made;
	in[0] = mk(1500, 2, 0);
	made = expand(st, in, 1, &taken, held + n_held, RTE_DIM(held) - n_held);
	assert_int_equal(made, 31);
	n_held += made;
	in[0] = mk(1500, 2, 0);
	made = expand(st, in, 1, &taken, out, RTE_DIM(out));
	assert_int_equal(made, 1);
	assert_ptr_equal(out[0], in[0]);
	pf_test_process(st, out, 1, edge);
	assert_int_equal(edge[0], 0);
	assert_int_equal(pf_test_ctr(st, "frag_nombuf"), 1);
	/* The original is intact: the L2 header is back in front. */
	assert_memory_equal(rte_pktmbuf_mtod(out[0], void *), l2_out, sizeof(l2_out));
	pf_test_free(out, 1);
	pf_test_free(held, n_held);
	pf_stage_destroy(st);
	pf_topo_free(topo);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fragments),
		cmocka_unit_test(test_drops),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
