/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rx: poll port queues, parse L2/L3 once, classify.
 * Edges: drop, ipv4, ipv6, arp, other (any other EtherType; for bridging), ip6_error
 *   (optional: IPv6 to our MAC whose extension headers deserve an ICMPv6 Parameter Problem).
 * Counters: one drop reason per malformed case (eth_truncated, ip4_bad_checksum,
 *   ...), see foreach_rx_ctr; info: rx_runt, vlan_tagged, ip4_options_seen.
 * Params: ports (list, required), queue (rx queue on every port, default 0;
 *   with instances: N, instance k reads queue + k), queues (explicit list, one
 *   queue per instance), affine (instance k feeds instance k of the next stages:
 *   RSS already spread the flows),
 *   pace_pps (replay pacing: at most this many packets per second, 0 = off),
 *   fast_path (default true; false runs every frame through the full parser).
 *
 * The parser reads only the first segment and never past data_len: every
 * length is checked before the bytes it covers are touched.
 *
 * Two paths, one verdict. The fast path takes the common frame (untagged,
 * unicast destination, at least 60 bytes; IPv4 with IHL 5, no fragment,
 * total length equal to what arrived, or IPv6 with the payload length equal
 * to what arrived and no extension header) with a few loads and one
 * combined test per family;
 * every other frame, and every frame that fails any part of that test, goes
 * to rx_parse_full(), the complete parser with every drop reason. A frame
 * the fast path accepts is one the full parser accepts with the same
 * metadata and counters (test_rx checks both on every case; fast_path: false
 * runs the full parser alone).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf_dyn.h>
#include <rte_prefetch.h>
#include <rte_vect.h>

#include "pf_ownmac.h"
#include "pf_stage.h"

#define foreach_rx_ctr(_)									\
	_(RX_CTR_ETH_TRUNCATED, eth_truncated, DROP, "frame shorter than its Ethernet/VLAN header")	\
	_(RX_CTR_ETH_OVERSIZE, eth_oversize, DROP, "frame longer than the port's max_frame")		\
	_(RX_CTR_ETH_MULTISEG, eth_multiseg_unsupported, DROP, "multi-segment frame (not supported)")	\
	_(RX_CTR_L2_INVALID_SRC, l2_invalid_src_mac, DROP, "source MAC is zero, broadcast or multicast") \
	_(RX_CTR_L2_OWN_SRC, l2_src_is_own_mac, DROP, "source MAC is one of pipefwd's port MACs (spoof or loop)") \
	_(RX_CTR_VLAN_UNKNOWN, vlan_unknown, DROP, "802.1Q VID 4095 (reserved)")			\
	_(RX_CTR_VLAN_TOO_DEEP, vlan_too_deep, DROP, "QinQ or more than one VLAN tag")		\
	_(RX_CTR_BAD_LLC_LENGTH, bad_llc_length, DROP, "802.3 length field larger than the payload")	\
	_(RX_CTR_IP4_TOO_SHORT, ip4_too_short, DROP, "IPv4: under 20 bytes, or total length < header") \
	_(RX_CTR_IP4_BAD_VERSION, ip4_bad_version, DROP, "IPv4 EtherType with version != 4")		\
	_(RX_CTR_IP4_HDR_TOO_SHORT, ip4_hdr_too_short, DROP, "IPv4 IHL < 5")				\
	_(RX_CTR_IP4_BAD_LENGTH, ip4_bad_length, DROP, "IPv4 total length or IHL beyond the frame")	\
	_(RX_CTR_IP4_BAD_CHECKSUM, ip4_bad_checksum, DROP, "IPv4 header checksum wrong")		\
	_(RX_CTR_IP6_TOO_SHORT, ip6_too_short, DROP, "IPv6: under 40 bytes")				\
	_(RX_CTR_IP6_BAD_VERSION, ip6_bad_version, DROP, "IPv6 EtherType with version != 6")		\
	_(RX_CTR_IP6_BAD_LENGTH, ip6_bad_length, DROP, "IPv6 payload length beyond the frame")	\
	_(RX_CTR_IP6_EXT_TRUNCATED, ip6_ext_truncated, DROP,					\
	  "IPv6 extension header running past the payload length")				\
	_(RX_CTR_IP6_EXT_TOO_MANY, ip6_ext_too_many, DROP, "IPv6: more than 8 extension headers")	\
	_(RX_CTR_IP6_EXT_TOO_LONG, ip6_ext_too_long, DROP,					\
	  "IPv6 extension headers longer than 208 bytes in all")				\
	_(RX_CTR_IP6_HBH_NOT_FIRST, ip6_hbh_not_first, DROP,					\
	  "IPv6 Hop-by-Hop Options header not right after the IPv6 header (RFC 8200 4.1)")	\
	_(RX_CTR_IP6_FRAG_INCOMPLETE, ip6_frag_incomplete_chain, DROP,				\
	  "IPv6 first fragment without the whole header chain (RFC 7112)")			\
	_(RX_CTR_ARP_TOO_SHORT, arp_too_short, DROP, "ARP shorter than 28 bytes")			\
	_(RX_CTR_ETHERTYPE_UNSUPPORTED, ethertype_unsupported, DROP,					\
	  "class with no next stage wired (e.g. IPv6 in an IPv4-only pipeline)")		\
	_(RX_CTR_RX_RUNT, rx_runt, INFO, "frame under 60 bytes, forwarded (software ports do not pad)") \
	_(RX_CTR_VLAN_TAGGED, vlan_tagged, INFO, "frames with one 802.1Q tag")				\
	_(RX_CTR_IP4_OPTIONS, ip4_options_seen, INFO, "IPv4 headers with options (forwarded)")	\
	_(RX_CTR_IP4_TRIMMED, ip4_trailer_trimmed, INFO, "IPv4 frames whose Ethernet padding was trimmed") \
	_(RX_CTR_IP6_EXT_SEEN, ip6_ext_seen, INFO, "IPv6 packets with extension headers (walked)")	\
	_(RX_CTR_IP6_TRIMMED, ip6_trailer_trimmed, INFO, "IPv6 frames whose Ethernet padding was trimmed") \
	_(RX_CTR_IP6_PARAM_PROBLEM, ip6_ext_to_icmp, INFO,					\
	  "IPv6 with extension headers over a limit, HBH not first or an incomplete first "	\
	  "fragment, to our MAC: sent to the ip6_error edge (Parameter Problem)")

PF_CTR_ENUM(rx, foreach_rx_ctr);
PF_CTR_DESCS(rx, foreach_rx_ctr);

enum rx_edge { RX_EDGE_DROP, RX_EDGE_IPV4, RX_EDGE_IPV6, RX_EDGE_ARP, RX_EDGE_OTHER,
	       RX_EDGE_IP6_ERROR, RX_EDGE_MAX };
static const char *const rx_edges[] = { "drop", "ipv4", "ipv6", "arp", "other", "ip6_error" };
static const uint16_t rx_carries[] = { 0, PF_CARRY_IPV4, PF_CARRY_IPV6, PF_CARRY_ARP,
	PF_CARRY_OTHER, PF_CARRY_ICMP6 };
static const char *const rx_keys[] = { "ports", "queue", "queues", "pace_pps", "fast_path",
				       "affine", NULL };

/* The fast path reads the first 60 bytes without checking each length. */
#define RX_FAST_MIN_LEN 60
/*
 * The fast path's header test on bytes 0-15 in one register: the bytes
 * under the family's mask equal its pattern (one ptest). IPv4: the group bit of
 * both MACs clear, EtherType 0x0800 and version/IHL 0x45; IPv6: the group
 * bits, 0x86dd and version 6. (The lengths vary by frame and stay scalar,
 * with IPv4's MF and fragment offset: bytes 20-21 under RX_IP4_FRAG_MASK.)
 */
#define RX_V4_MASK _mm_setr_epi8(1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, -1, -1, -1, 0)
#define RX_V4_PAT _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0, 0x45, 0)
#define RX_V6_MASK _mm_setr_epi8(1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, -1, -1, (char)0xf0, 0)
#define RX_V6_PAT _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (char)0x86, (char)0xdd, 0x60, 0)
/* The destination MAC (bytes 0-5) moved to bytes 8-13, the rest zero (pshufb). */
#define RX_V_DST_HI _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 2, 3, 4, 5, -1, -1)
/* PF_META_L2_LOCAL in metadata bytes 0-15 (flags: byte 9). */
#define RX_V_LOCAL _mm_set_epi64x(PF_META_L2_LOCAL << 8, 0)
/* MF and the fragment offset, as they lie in bytes 20-21 (network order). */
#define RX_IP4_FRAG_MASK RTE_BE16(0x3fff)
/* own_last[] values: above every bit the header test and its other terms set. */
#define RX_SRC_OWN (1ull << 62)
#define RX_SRC_ZERO (1ull << 63)
/*
 * The rearm word of a one-segment frame from DPDK port @p pid at the
 * standard headroom, as the PMD's rx wrote it (its data then starts at
 * buf_addr + RTE_PKTMBUF_HEADROOM: no data_off load). RX_REARM_SEGS_PORT
 * masks the part any fast frame must match (rx_other's retry).
 */
#define RX_REARM(pid) (RTE_PKTMBUF_HEADROOM | 1ull << 16 | 1ull << 32 | (uint64_t)(pid) << 48)
#define RX_REARM_SEGS_PORT 0xffffffff00000000ull
/* Total length (bytes 16-17) and MF plus offset (20-21) in the word at byte 16. */
#define RX_IP4_LEN_FRAG_MASK (0xffffull | (uint64_t)RX_IP4_FRAG_MASK << 32)
/*
 * x % 0xffff == 0 as one multiply and compare (0xffff is odd: times its
 * inverse mod 2^64, the multiples are exactly the products up to
 * (2^64 - 1) / 0xffff). The fast path reads both as memory operands
 * (rx_priv.fast_sum_inv, fast_sum_lim).
 */
#define IP4_SUM_INV 0xfffefffefffeffffull
#define IP4_SUM_LIM 0x0001000100010001ull
/* in_port of an mbuf from a port this stage does not poll (an index, so tables need no test). */
#define RX_PORT_UNKNOWN PF_MAX_PORTS

/*
 * What the fast path needs of one port, taken once per burst (by the first
 * frame's mbuf->port) instead of once per frame. A frame from another port
 * fails the rearm test with a multi-segment one and is looked up on its own
 * (rx_other).
 */
struct rx_port_fast {
	/* The mbuf's rearm word (bytes 16-23: data_off, refcnt, nb_segs, port) of
	 * a frame the fast path takes: headroom, 1, 1 and this DPDK port id. */
	uint64_t rearm;
	uint64_t meta_w0;    /* metadata bytes 0-7 but l3_len: in_port, out_port NONE, l2_len 14 */
	uint32_t span;       /* fast_span of the port; 0 (never fast) when not polled */
	bool hw_cksum;       /* RX IPv4 checksum offload on: read the verdict, else sum */
	/* rx_fast_k's vectors, made once: metadata bytes 0-15 per family, the MAC. */
	uint64_t md4[2], md6[2], macv[2];
};

struct rx_cfg {
	uint32_t pace_pps;
	bool slow_only;                     /* fast_path: false */
};

/*
 * The ports one rx stage polls. Ports added or removed live (rx_ports) fill
 * the copy not in use and publish it by pointer: the other one is free again
 * after the change's grace period, before the next change can come.
 */
struct rx_poll {
	uint16_t n;
	bool one;                           /* rx_rx's plain case: one port, nothing else to do */
	uint32_t set_port;                  /* bit k: id[k]'s PMD leaves mbuf->port unset */
	uint16_t idx[PF_MAX_PORTS];         /* pipefwd port index */
	uint16_t id[PF_MAX_PORTS];          /* DPDK port id */
};

struct rx_priv {
	const struct rx_poll *poll;         /* one of polls[], read once per burst */
	uint16_t next_port;                 /* round-robin start, for fairness */
	bool fast_path;
	/*
	 * mbuf->port (a DPDK port id, < RTE_MAX_ETHPORTS) to pipefwd port index,
	 * or RX_PORT_UNKNOWN for a port this stage does not poll. Twice the
	 * size, indexed by a mask: RTE_MBUF_PORT_INVALID (hand-built mbufs in
	 * tests and fuzzers) lands on an unknown slot without a compare.
	 */
	uint16_t in_port_of[2 * RTE_MAX_ETHPORTS];
	/* By port index; RX_PORT_UNKNOWN's max_frame 0 sends it to the full parser. */
	uint16_t max_frame[PF_MAX_PORTS + 1];
	/*
	 * The fast path's frame lengths: len - RX_FAST_MIN_LEN below this
	 * (max_frame - 59, 0 for RX_PORT_UNKNOWN or a max_frame under 60).
	 */
	uint32_t fast_span[PF_MAX_PORTS + 1];
	uint64_t port_mac[PF_MAX_PORTS + 1]; /* own MAC (pf_mac_u64), ~0 if none */
	/* By mbuf->port, masked as in_port_of: the fast path's per-port constants. */
	struct rx_port_fast port_fast[2 * RTE_MAX_ETHPORTS];
	uint16_t queue;
	bool ip6_error;                     /* edge ip6_error wired */
	int ts_offset;                      /* rx timestamp dynfield, -1 if none */
	uint64_t ts_flag;
	bool pcap_clock;
	struct pf_own_macs own;             /* the ports' MACs: never a valid source */
	/*
	 * By a source's last byte, what the fast path must rule out: RX_SRC_OWN
	 * when some own MAC ends in it (the full parser decides), RX_SRC_ZERO
	 * for 0x00 (zero is tested only then). Bits no header word uses.
	 */
	uint64_t own_last[256];
	/*
	 * The fast path's constants, read as memory operands: in registers
	 * they would spill, as immediates each is a movabs per frame.
	 */
	uint64_t fast_sum_inv, fast_sum_lim;  /* IP4_SUM_INV, IP4_SUM_LIM */
	uint64_t fast_len_frag;               /* RX_IP4_LEN_FRAG_MASK */
	/* The last burst mixed both families on the fast path: store edges as they go. */
	bool eager;
	/* Pacing: a token bucket in units of packets * tsc_hz. */
	uint64_t pace_pps;
	uint64_t hz;
	uint64_t credit;
	uint64_t last_tsc;
	struct rx_poll polls[2];
};

/*
 * The queue this stage (instance) polls on every port: `queue` + instance,
 * or `queues[instance]` (one per instance).
 */
static int
rx_parse_queue(const struct pf_stage_conf *sc, uint32_t *q, struct pf_errs *errs)
{
	const struct pf_node *v = pf_map_get(sc->node, "queue"), *l = pf_map_get(sc->node, "queues");
	char path[PF_CONF_PATH_MAX];

	*q = 0;
	if (v != NULL && l != NULL)
		return pf_node_err(errs, l, "stages.%s: give queue or queues, not both", sc->name);
	if (l != NULL) {
		snprintf(path, sizeof(path), "stages.%s.queues", sc->name);
		if (pf_node_expect(l, PF_NODE_SEQ, path, errs) < 0)
			return -EINVAL;
		if (l->n != sc->n_instances)
			return pf_node_err(errs, l, "%s: %u queues for %u instances (one each)",
					   path, (unsigned int)l->n, sc->n_instances);
		snprintf(path, sizeof(path), "stages.%s.queues[%u]", sc->name, sc->instance);
		return pf_node_u32(l->items[sc->instance], path, 0, 15, q, errs);
	}
	snprintf(path, sizeof(path), "stages.%s.queue", sc->name);
	if (v != NULL && pf_node_u32(v, path, 0, 15, q, errs) < 0)
		return -EINVAL;
	if (*q + sc->n_instances - 1 > 15)
		return pf_node_err(errs, v != NULL ? v : sc->node,
				   "%s: instance %u would read queue %u (at most 15)", path,
				   sc->n_instances - 1, *q + sc->n_instances - 1);
	*q += sc->instance;
	return 0;
}

static int
rx_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs)
{
	const struct pf_node *v;
	char path[PF_CONF_PATH_MAX];
	struct rx_cfg *cfg;
	uint32_t q = 0;

	snprintf(path, sizeof(path), "stages.%s", sc->name);
	v = pf_map_get(sc->node, "ports");
	if (v == NULL)
		return pf_node_err(errs, sc->node, "%s: missing required key 'ports'", path);
	/* The queue first: a bad one leaves no ports to clash with another instance's. */
	if (rx_parse_queue(sc, &q, errs) < 0)
		return -EINVAL;
	sc->rx_queue = (uint16_t)q;
	snprintf(path, sizeof(path), "stages.%s.ports", sc->name);
	if (pf_stage_port_list(env, v, path, sc->rx_ports, PF_MAX_PORTS, &sc->n_rx_ports, errs) < 0)
		return -EINVAL;
	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return -ENOMEM;
	sc->cfg = cfg;
	if ((v = pf_map_get(sc->node, "pace_pps")) != NULL &&
	    pf_node_u32(v, "pace_pps", 0, 1000000000, &cfg->pace_pps, errs) < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "stages.%s.affine", sc->name);
	if ((v = pf_map_get(sc->node, "affine")) != NULL && pf_node_bool(v, path, &sc->affine, errs) < 0)
		return -EINVAL;
	if ((v = pf_map_get(sc->node, "fast_path")) != NULL) {
		bool fast;

		snprintf(path, sizeof(path), "stages.%s.fast_path", sc->name);
		if (pf_node_bool(v, path, &fast, errs) < 0)
			return -EINVAL;
		cfg->slow_only = !fast;
	}
	return 0;
}

/*
 * PMDs known to set mbuf->port on receive. Any other (net_ring hands over
 * whatever mbuf was enqueued) gets it written by rx_rx.
 */
static bool
rx_pmd_sets_port(uint16_t port_id)
{
	static const char *const known[] = { "net_pcap", "net_null", "net_tap", "net_af_packet" };
	struct rte_eth_dev_info info;
	size_t k;

	if (!rte_eth_dev_is_valid_port(port_id) || rte_eth_dev_info_get(port_id, &info) != 0 ||
	    info.driver_name == NULL)
		return false;
	for (k = 0; k < RTE_DIM(known); k++)
		if (strcmp(info.driver_name, known[k]) == 0)
			return true;
	return false;
}

/* Whether @p port_id was configured with rx queue @p q (true outside a runtime: tests). */
static bool
rx_queue_exists(uint16_t port_id, uint16_t q)
{
	struct rte_eth_dev_info info;

	if (!rte_eth_dev_is_valid_port(port_id) || rte_eth_dev_info_get(port_id, &info) != 0 ||
	    info.nb_rx_queues == 0)
		return true;
	return q < info.nb_rx_queues;
}

static void
rx_cfg_free(void *cfg)
{
	free(cfg);
}

/* Port index @p p's limits and MAC (rx_init, and a port added live: rx_ports). */
static void
rx_port_fill(struct rx_priv *rx, const struct pf_stage_env *env, uint16_t p)
{
	const struct pf_port_conf *pc = &env->ports[p];

	rx->max_frame[p] = pc->max_frame;
	rx->fast_span[p] = pc->max_frame >= RX_FAST_MIN_LEN ? pc->max_frame - RX_FAST_MIN_LEN + 1u :
			   0;
	rx->port_mac[p] = pc->has_mac ? pf_mac_u64(pc->mac) : UINT64_MAX;
}

/* The fast path's constants for frames whose mbuf->port is @p i (masked). */
static void
rx_fast_fill(struct rx_priv *rx, const struct pf_stage_env *env, uint16_t i)
{
	uint16_t idx = rx->in_port_of[i];
	struct rx_port_fast *pf = &rx->port_fast[i];

	pf->rearm = RX_REARM(i);
	pf->meta_w0 = idx | (uint64_t)PF_PORT_NONE << 16 | (uint64_t)RTE_ETHER_HDR_LEN << 48;
	pf->span = rx->fast_span[idx];
	/* No offload: the mbuf carries no verdict worth a load, so the fast
	 * path sums. Not set up by a runtime (tests): read the verdict. */
	pf->hw_cksum = idx >= env->n_ports || !pf_env_rx_cksum_off(env, idx);
	pf->md4[0] = pf->meta_w0 | 20ull << 56;
	pf->md4[1] = PF_CLASS_IPV4;
	pf->md6[0] = pf->meta_w0 | 40ull << 56;
	pf->md6[1] = PF_CLASS_IPV6;
	pf->macv[0] = 0;
	pf->macv[1] = rx->port_mac[idx];   /* own MAC (pf_mac_u64), ~0 if none */
}

/* The ports of st->conf this instance polls but @p skip, into @p pl; notes their DPDK ids. */
static void
rx_poll_build(struct pf_stage *st, struct rx_poll *pl, uint32_t skip)
{
	struct rx_priv *rx = st->priv;
	const struct pf_stage_conf *sc = st->conf;
	uint16_t i;

	memset(pl, 0, sizeof(*pl));
	for (i = 0; i < sc->n_rx_ports; i++) {
		uint16_t k = pl->n, pid = pf_env_port_id(st->env, sc->rx_ports[i]);

		if ((skip >> sc->rx_ports[i]) & 1)
			continue;
		/* A device without RSS got one queue (app/runtime/port.c said so): skip the rest. */
		if (!rx_queue_exists(pid, rx->queue))
			continue;
		pl->idx[k] = sc->rx_ports[i];
		pl->id[k] = pid;
		if (!rx_pmd_sets_port(pid))
			pl->set_port |= 1u << k;
		pl->n++;
	}
	pl->one = pl->n == 1 && pl->set_port == 0 && rx->pace_pps == 0 &&
		  !(rx->pcap_clock && rx->ts_offset >= 0);
}

/* Map the DPDK ids of @p pl to their port index, with their fast-path constants. */
static void
rx_poll_ids(struct rx_priv *rx, const struct pf_stage_env *env, const struct rx_poll *pl)
{
	uint16_t k;

	for (k = 0; k < pl->n; k++)
		if (pl->id[k] < RTE_MAX_ETHPORTS) {
			rx->in_port_of[pl->id[k]] = pl->idx[k];
			rx_fast_fill(rx, env, pl->id[k]);
		}
}

/* A port's MAC is never a valid source: add those of ports added live. */
static void
rx_own_add(struct rx_priv *rx, const struct pf_stage_env *env, uint32_t ports)
{
	struct pf_own_macs own;
	uint16_t i;

	pf_own_macs_init(&own, env);
	/* Append only, count last: a reader sees the old list or the longer one. */
	for (i = 0; i < own.n; i++)
		rx->own_last[own.mac[i] >> 40] = RX_SRC_OWN;
	if (ports != 0)
		pf_own_macs_merge(&rx->own, &own);
}

static int
rx_init(struct pf_stage *st, struct pf_errs *errs)
{
	struct rx_priv *rx = st->priv;
	const struct pf_stage_conf *sc = st->conf;
	uint16_t i;

	rx->queue = sc->rx_queue;
	rx->fast_path = !((const struct rx_cfg *)sc->cfg)->slow_only;
	rx->pcap_clock = st->env->clock == PF_CLOCK_PCAP;
	rx->pace_pps = ((const struct rx_cfg *)sc->cfg)->pace_pps;
	rx->ts_offset = rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, NULL);
	if (rx->ts_offset >= 0) {
		int bit = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, NULL);

		rx->ts_flag = bit >= 0 ? 1ull << bit : 0;
	}
	for (i = 0; i < RTE_DIM(rx->in_port_of); i++)
		rx->in_port_of[i] = RX_PORT_UNKNOWN;
	for (i = 0; i < RTE_DIM(rx->port_mac); i++)
		rx->port_mac[i] = UINT64_MAX;
	for (i = 0; i < st->env->n_ports; i++)
		rx_port_fill(rx, st->env, i);
	rx_poll_build(st, &rx->polls[0], 0);
	for (i = 0; i < rx->polls[0].n; i++)
		if (rx->polls[0].id[i] < RTE_MAX_ETHPORTS)
			rx->in_port_of[rx->polls[0].id[i]] = rx->polls[0].idx[i];
	for (i = 0; i < RTE_DIM(rx->port_fast); i++)
		rx_fast_fill(rx, st->env, i);
	rx->poll = &rx->polls[0];
	rx->ip6_error = (st->edge_connected & (1u << RX_EDGE_IP6_ERROR)) != 0;
	/* Port MACs are final here: configured, or read from the devices at start. */
	pf_own_macs_init(&rx->own, st->env);
	/* A source ending in 0x00 may be zero: the fast path looks only then. */
	rx->own_last[0] = RX_SRC_ZERO;
	rx->fast_sum_inv = IP4_SUM_INV;
	rx->fast_sum_lim = IP4_SUM_LIM;
	rx->fast_len_frag = RX_IP4_LEN_FRAG_MASK;
	for (i = 0; i < rx->own.n; i++)
		rx->own_last[rx->own.mac[i] >> 40] = RX_SRC_OWN;
	rx->hz = rte_get_tsc_hz();
	rx->last_tsc = rte_rdtsc();
	return 0;
}

/*
 * Ports added or removed live, or this stage's `ports:` changed (ctl.ports):
 * the added ports' constants first (no frame of theirs is read yet), then
 * the new poll list, published by pointer. First (not @p drained) without
 * the added ports: a removed port is no longer polled after that call's
 * grace period, and what it received drains through the tables it was
 * received under; then (drained, the new tables published) with them.
 */
static void
rx_ports(struct pf_stage *st, uint32_t added, uint32_t gone, bool drained)
{
	struct rx_priv *rx = st->priv;
	struct rx_poll *pl = rx->poll == &rx->polls[0] ? &rx->polls[1] : &rx->polls[0];
	uint32_t m = added;

	while (m != 0) {
		uint16_t p = (uint16_t)__builtin_ctz(m);

		m &= m - 1;
		rx_port_fill(rx, st->env, p);
	}
	RTE_SET_USED(gone);
	rx_own_add(rx, st->env, added);
	rx_poll_build(st, pl, drained ? 0 : added);
	rx_poll_ids(rx, st->env, pl);
	__atomic_store_n(&rx->poll, pl, __ATOMIC_RELEASE);
}

static __rte_noinline uint16_t
rx_rx_many(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t max)
{
	struct rx_priv *rx = st->priv;
	const struct rx_poll *pl = __atomic_load_n(&rx->poll, __ATOMIC_ACQUIRE);
	uint16_t n = 0, k, i, p, got;

	if (unlikely(rx->pace_pps != 0)) {
		uint64_t now = rte_rdtsc(), elapsed = RTE_MIN(now - rx->last_tsc, rx->hz);

		rx->last_tsc = now;
		rx->credit = RTE_MIN(rx->credit + elapsed * rx->pace_pps, (uint64_t)max * rx->hz);
		max = (uint16_t)(rx->credit / rx->hz);
		if (max == 0)
			return 0;
	}
	if (unlikely(pl->n == 0))
		return 0;
	/* Round robin by compare and subtract: a division costs tens of cycles
	 * (the start clamped: the list may have shrunk live). */
	for (k = 0, p = rx->next_port < pl->n ? rx->next_port : 0; k < pl->n && n < max;
	     k++, p++) {
		if (p >= pl->n)
			p = (uint16_t)(p - pl->n);
		got = rte_eth_rx_burst(pl->id[p], rx->queue, pkts + n, max - n);
		/* process_burst finds in_port from mbuf->port (no pass here for it). */
		if (unlikely(pl->set_port & (1u << p)))
			for (i = n; i < n + got; i++)
				pkts[i]->port = pl->id[p];
		st->port_rx[pl->idx[p]] += got;
		n += got;
	}
	rx->next_port = rx->next_port + 1u < pl->n ? (uint16_t)(rx->next_port + 1u) : 0;
	/* Pacing spends what was asked, not what came back: a frame the PMD read
	 * but could not deliver (rx_nombuf) still used its slot, as on a wire. */
	if (rx->pace_pps != 0)
		rx->credit -= (uint64_t)max * rx->hz;
	if (rx->pcap_clock && rx->ts_offset >= 0) {
		/* net_pcap stamps each packet with its capture time in microseconds. */
		for (i = 0; i < n; i++)
			if (pkts[i]->ol_flags & rx->ts_flag)
				pf_clock_advance_ns(*RTE_MBUF_DYNFIELD(pkts[i], rx->ts_offset,
								       uint64_t *) * 1000);
	}
	return n;
}

static uint16_t
rx_rx(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t max)
{
	const struct rx_priv *rx = st->priv;
	const struct rx_poll *pl = __atomic_load_n(&rx->poll, __ATOMIC_ACQUIRE);
	uint16_t got;

	/* One port, no pacing, no port to stamp, no pcap clock: one call. */
	if (likely(pl->one)) {
		got = rte_eth_rx_burst(pl->id[0], rx->queue, pkts, max);
		st->port_rx[pl->idx[0]] += got;
		return got;
	}
	return rx_rx_many(st, pkts, max);
}

/*
 * One's complement sum of the header is 0xffff when the checksum is right,
 * i.e. the plain sum of its 32-bit words is a non-zero multiple of 0xffff
 * (2^16 = 1 mod 0xffff, in either byte order). The 20-byte header is five
 * loads, four adds and one modulo by a constant; options take the generic
 * path. (memcpy: the header may be unaligned; it compiles to plain loads.)
 */
/* The 20-byte header's sum, wrapped to 64 bits (a multiple of 0xffff when right). */
static __rte_always_inline uint64_t
ip4_sum20(const void *ip)
{
	uint64_t a, b, c32;
	uint32_t c;

	memcpy(&a, ip, 8);
	memcpy(&b, (const uint8_t *)ip + 8, 8);
	memcpy(&c, (const uint8_t *)ip + 16, 4);
	c32 = c;
	/*
	 * Carries wrap around (2^64 = 1 mod 0xffff): add, adc, adc 0 (the
	 * last cannot carry: the second sum is then below 2^32). Written out:
	 * GCC makes the chain of __builtin_add_overflow two instructions longer.
	 */
	__asm__("add %[b], %[s]\n\tadc %[c], %[s]\n\tadc $0, %[s]"
		: [s] "+&r"(a) : [b] "rm"(b), [c] "r"(c32) : "cc");
	return a;
}


static __rte_always_inline bool
ip4_cksum_ok(const void *ip, uint32_t ihl)
{
	if (unlikely(ihl != 20))
		return rte_raw_cksum(ip, ihl) == 0xffff;
	/* Version 4 makes the sum non-zero: 0 cannot pass as a multiple. */
	return ip4_sum20(ip) % 0xffff == 0;
}

/*
 * The port's RX checksum offload decides when it has one: BAD drops, GOOD
 * skips the sum. UNKNOWN (every vdev) and NONE are verified here (RFC 1812
 * 5.2.2: a router checks the header checksum).
 */
static __rte_always_inline bool
ip4_cksum_good(const struct rte_mbuf *m, const void *ip, uint32_t ihl)
{
	uint64_t f = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;

	if (f == RTE_MBUF_F_RX_IP_CKSUM_GOOD)
		return true;
	if (f == RTE_MBUF_F_RX_IP_CKSUM_BAD)
		return false;
	return ip4_cksum_ok(ip, ihl);
}

/* Next Header values of the extension headers rx walks (RFC 8200 4). */
#define IP6_NH_HBH 0
#define IP6_NH_ROUTING 43
#define IP6_NH_FRAGMENT 44
#define IP6_NH_DSTOPTS 60

/* Non-zero for the Next Header values above: the fast path leaves those to the walk. */
static const uint8_t rx_ip6_ext_hdr[256] = {
	[IP6_NH_HBH] = 1, [IP6_NH_ROUTING] = 1, [IP6_NH_FRAGMENT] = 1, [IP6_NH_DSTOPTS] = 1,
};

/* ICMPv6 Parameter Problem codes (RFC 4443, RFC 7112, RFC 8883). */
#define IP6_PP_NEXT_HEADER 1
#define IP6_PP_INCOMPLETE_CHAIN 3
#define IP6_PP_CHAIN_TOO_LONG 7
#define IP6_PP_TOO_MANY 8

/*
 * An IPv6 packet whose extension headers a router answers with a Parameter
 * Problem: to the ip6_error edge when it is wired and the frame was sent to
 * our MAC (the error in md->nexthop, the padding trimmed so none is
 * quoted), else the drop @p ctr.
 */
static __rte_noinline uint16_t
rx_ip6_bad(const struct rx_priv *rx, uint64_t *ctrs, struct rte_mbuf *m, struct pf_meta *md,
	   uint32_t ctr, uint8_t code, uint32_t ptr, uint32_t tot, uint32_t avail)
{
	if (!rx->ip6_error || !(md->flags & PF_META_L2_LOCAL)) {
		ctrs[ctr]++;
		return RX_EDGE_DROP;
	}
	if (tot < avail)
		rte_pktmbuf_trim(m, (uint16_t)(avail - tot));
	md->l3_len = 40;
	md->l4_proto = 0;
	md->cls = PF_CLASS_IPV6;
	md->flags &= (uint8_t)~(PF_META_IP_FRAG | PF_META_IP_NONFIRST);
	md->nexthop = PF_META_ICMP(4, code, ptr);
	md->out_port = md->in_port;
	ctrs[RX_CTR_IP6_PARAM_PROBLEM]++;
	return RX_EDGE_IP6_ERROR;
}

/*
 * IPv6: version, payload length against the frame, then a bounded walk of
 * the extension headers (at most PF_IP6_EXT_MAX_HDRS headers and
 * PF_IP6_EXT_MAX_LEN bytes) to the upper-layer protocol. Every header must
 * lie within the payload length. A fragment header sets the fragment flags;
 * a non-first fragment ends the walk (what follows is fragment data). A
 * first fragment must carry the whole chain and the upper-layer header's
 * first bytes (RFC 7112): 20 for TCP, 8 for UDP, 4 for ICMPv6.
 */
static __rte_always_inline uint16_t
rx_ip6(const struct rx_priv *rx, uint64_t *ctrs, struct rte_mbuf *m, struct pf_meta *md,
       const uint8_t *ip6, uint32_t avail)
{
	uint32_t tot, off = 40, n = 0, hl, need, nh_at = 6;
	uint8_t nh;

	if (unlikely(avail < 40)) {
		ctrs[RX_CTR_IP6_TOO_SHORT]++;
		return RX_EDGE_DROP;
	}
	if (unlikely((ip6[0] >> 4) != 6)) {
		ctrs[RX_CTR_IP6_BAD_VERSION]++;
		return RX_EDGE_DROP;
	}
	tot = 40u + (uint32_t)(ip6[4] << 8 | ip6[5]);
	if (unlikely(tot > avail)) {
		ctrs[RX_CTR_IP6_BAD_LENGTH]++;
		return RX_EDGE_DROP;
	}
	nh = ip6[6];
	while (nh == IP6_NH_HBH || nh == IP6_NH_ROUTING || nh == IP6_NH_FRAGMENT ||
	       nh == IP6_NH_DSTOPTS) {
		const uint8_t *h = ip6 + off;

		/* The pointer: the Next Header field that named HBH (RFC 8200 4). */
		if (unlikely(nh == IP6_NH_HBH && n != 0))
			return rx_ip6_bad(rx, ctrs, m, md, RX_CTR_IP6_HBH_NOT_FIRST,
					  IP6_PP_NEXT_HEADER, nh_at, tot, avail);
		if (unlikely(++n > PF_IP6_EXT_MAX_HDRS))
			return rx_ip6_bad(rx, ctrs, m, md, RX_CTR_IP6_EXT_TOO_MANY,
					  IP6_PP_TOO_MANY, off, tot, avail);
		/* Every extension header has 8 bytes at least: next header and length first. */
		if (unlikely(off + 8 > tot)) {
			ctrs[RX_CTR_IP6_EXT_TRUNCATED]++;
			return RX_EDGE_DROP;
		}
		hl = nh == IP6_NH_FRAGMENT ? 8u : (h[1] + 1u) * 8u;
		if (unlikely(off + hl > tot)) {
			ctrs[RX_CTR_IP6_EXT_TRUNCATED]++;
			return RX_EDGE_DROP;
		}
		if (unlikely(off + hl - 40 > PF_IP6_EXT_MAX_LEN))
			return rx_ip6_bad(rx, ctrs, m, md, RX_CTR_IP6_EXT_TOO_LONG,
					  IP6_PP_CHAIN_TOO_LONG, off, tot, avail);
		nh_at = off;
		off += hl;
		if (nh == IP6_NH_FRAGMENT && ((h[2] << 8 | h[3]) & 0xfff9) != 0) {
			/* Offset (13 bits) or M: a real fragment, not an atomic one (RFC 6946). */
			md->flags |= PF_META_IP_FRAG;
			if ((h[2] << 8 | h[3]) & 0xfff8) {
				md->flags |= PF_META_IP_NONFIRST;
				nh = h[0];
				break;
			}
		}
		nh = h[0];
	}
	if (n != 0)
		ctrs[RX_CTR_IP6_EXT_SEEN]++;
	if ((md->flags & (PF_META_IP_FRAG | PF_META_IP_NONFIRST)) == PF_META_IP_FRAG) {
		need = nh == IPPROTO_TCP ? 20 : nh == IPPROTO_UDP ? 8 : nh == IPPROTO_ICMPV6 ? 4 : 0;
		if (unlikely(off + need > tot))
			return rx_ip6_bad(rx, ctrs, m, md, RX_CTR_IP6_FRAG_INCOMPLETE,
					  IP6_PP_INCOMPLETE_CHAIN, 0, tot, avail);
	}
	/* Ethernet padding must not leak out (Etherleak): trim it. */
	if (unlikely(tot < avail)) {
		rte_pktmbuf_trim(m, (uint16_t)(avail - tot));
		ctrs[RX_CTR_IP6_TRIMMED]++;
	}
	md->l3_len = (uint8_t)off;
	md->l4_proto = nh;
	md->cls = PF_CLASS_IPV6;
	return RX_EDGE_IPV6;
}

/*
 * The full parser: every frame the fast path does not take. Writes the whole
 * metadata, returns the edge (class) or drops with a reason.
 */
static __rte_always_inline uint16_t
rx_parse_one(const struct rx_priv *rx, uint64_t *ctrs, struct rte_mbuf *m, struct pf_meta *md,
	     uint16_t in_port)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), avail, ihl, tot;
	uint16_t et, l2 = RTE_ETHER_HDR_LEN, max_frame;

	*md = (struct pf_meta){ .in_port = in_port, .out_port = PF_PORT_NONE };
	if (unlikely(m->nb_segs > 1)) {
		ctrs[RX_CTR_ETH_MULTISEG]++;
		return RX_EDGE_DROP;
	}
	if (unlikely(len < RTE_ETHER_HDR_LEN)) {
		ctrs[RX_CTR_ETH_TRUNCATED]++;
		return RX_EDGE_DROP;
	}
	/* Source: never zero or a group address (also keeps them out of any FIB). */
	if (unlikely((d[6] & 1) || (d[6] | d[7] | d[8] | d[9] | d[10] | d[11]) == 0)) {
		ctrs[RX_CTR_L2_INVALID_SRC]++;
		return RX_EDGE_DROP;
	}
	/* Our own MAC as a source: a spoof, or our own frame looped back. */
	if (unlikely(pf_own_mac(&rx->own, d + 6))) {
		ctrs[RX_CTR_L2_OWN_SRC]++;
		return RX_EDGE_DROP;
	}
	if (d[0] & 1) {
		md->flags |= PF_META_L2_MCAST;
		if ((d[0] & d[1] & d[2] & d[3] & d[4] & d[5]) == 0xff)
			md->flags |= PF_META_L2_BCAST;
	} else if (in_port < PF_MAX_PORTS && pf_mac_u64(d) == rx->port_mac[in_port]) {
		md->flags |= PF_META_L2_LOCAL;
	}
	et = (uint16_t)(d[12] << 8 | d[13]);
	max_frame = rx->max_frame[in_port];
	if (et == RTE_ETHER_TYPE_VLAN) {
		if (unlikely(len < RTE_ETHER_HDR_LEN + 4)) {
			ctrs[RX_CTR_ETH_TRUNCATED]++;
			return RX_EDGE_DROP;
		}
		md->vlan_tci = (uint16_t)(d[14] << 8 | d[15]);
		et = (uint16_t)(d[16] << 8 | d[17]);
		l2 += 4;
		max_frame += 4;
		if (unlikely((md->vlan_tci & 0xfff) == 0xfff)) {
			ctrs[RX_CTR_VLAN_UNKNOWN]++;
			return RX_EDGE_DROP;
		}
		if (unlikely(et == RTE_ETHER_TYPE_VLAN || et == RTE_ETHER_TYPE_QINQ)) {
			ctrs[RX_CTR_VLAN_TOO_DEEP]++;
			return RX_EDGE_DROP;
		}
		/* VID 0 is priority tagging only: forward as untagged traffic. */
		if ((md->vlan_tci & 0xfff) != 0)
			md->flags |= PF_META_VLAN;
		ctrs[RX_CTR_VLAN_TAGGED]++;
	} else if (unlikely(et == RTE_ETHER_TYPE_QINQ)) {
		ctrs[RX_CTR_VLAN_TOO_DEEP]++;
		return RX_EDGE_DROP;
	}
	if (unlikely(m->pkt_len > max_frame)) {
		ctrs[RX_CTR_ETH_OVERSIZE]++;
		return RX_EDGE_DROP;
	}
	md->l2_len = (uint8_t)l2;
	avail = len - l2;

	if (likely(et == RTE_ETHER_TYPE_IPV4)) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(d + l2);

		if (unlikely(avail < sizeof(*ip))) {
			ctrs[RX_CTR_IP4_TOO_SHORT]++;
			return RX_EDGE_DROP;
		}
		if (unlikely((ip->version_ihl >> 4) != 4)) {
			ctrs[RX_CTR_IP4_BAD_VERSION]++;
			return RX_EDGE_DROP;
		}
		ihl = (ip->version_ihl & 0xf) * 4u;
		if (unlikely(ihl < 20)) {
			ctrs[RX_CTR_IP4_HDR_TOO_SHORT]++;
			return RX_EDGE_DROP;
		}
		if (unlikely(ihl > avail)) {
			ctrs[RX_CTR_IP4_BAD_LENGTH]++;
			return RX_EDGE_DROP;
		}
		tot = rte_be_to_cpu_16(ip->total_length);
		if (unlikely(tot < ihl)) {
			ctrs[RX_CTR_IP4_TOO_SHORT]++;
			return RX_EDGE_DROP;
		}
		if (unlikely(tot > avail)) {
			ctrs[RX_CTR_IP4_BAD_LENGTH]++;
			return RX_EDGE_DROP;
		}
		/* The checksum covers the whole header, options included. */
		if (unlikely(!ip4_cksum_good(m, ip, ihl))) {
			ctrs[RX_CTR_IP4_BAD_CHECKSUM]++;
			return RX_EDGE_DROP;
		}
		if (unlikely(ihl > 20)) {
			md->flags |= PF_META_IP_OPTIONS;
			ctrs[RX_CTR_IP4_OPTIONS]++;
		}
		if (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG |
							   RTE_IPV4_HDR_OFFSET_MASK)) {
			md->flags |= PF_META_IP_FRAG;
			if (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_OFFSET_MASK))
				md->flags |= PF_META_IP_NONFIRST;
		}
		/* Ethernet padding must not leak out (Etherleak): trim it. */
		if (unlikely(tot < avail)) {
			rte_pktmbuf_trim(m, (uint16_t)(avail - tot));
			ctrs[RX_CTR_IP4_TRIMMED]++;
		}
		md->l3_len = (uint8_t)ihl;
		md->l4_proto = ip->next_proto_id;
		md->cls = PF_CLASS_IPV4;
		return RX_EDGE_IPV4;
	}
	if (et == RTE_ETHER_TYPE_IPV6)
		return rx_ip6(rx, ctrs, m, md, d + l2, avail);
	if (et == RTE_ETHER_TYPE_ARP) {
		if (unlikely(avail < 28)) {
			ctrs[RX_CTR_ARP_TOO_SHORT]++;
			return RX_EDGE_DROP;
		}
		md->cls = PF_CLASS_ARP;
		return RX_EDGE_ARP;
	}
	/* 802.3 length field: it must fit in what we received. */
	if (et < RTE_ETHER_TYPE_IPV4 && et <= 1500 && unlikely(et > avail)) {
		ctrs[RX_CTR_BAD_LLC_LENGTH]++;
		return RX_EDGE_DROP;
	}
	md->cls = PF_CLASS_OTHER;
	return RX_EDGE_OTHER;
}

/*
 * The rare cases, out of line: full parse, then the checks on the class
 * (its edge wired?) and on runts that the fast path never sees.
 */
static __rte_noinline uint16_t
rx_parse_full(const struct rx_priv *rx, uint64_t *ctrs, uint32_t connected, struct rte_mbuf *m,
	      struct pf_meta *md, uint16_t in_port)
{
	uint16_t e, len0 = rte_pktmbuf_data_len(m);

	/* Not from a port this stage polls: a hand-built mbuf keeps its in_port. */
	if (unlikely(in_port == RX_PORT_UNKNOWN))
		in_port = md->in_port;
	e = rx_parse_one(rx, ctrs, m, md, in_port);
	if (unlikely(e != RX_EDGE_DROP && !(connected & (1u << e)))) {
		ctrs[RX_CTR_ETHERTYPE_UNSUPPORTED]++;
		e = RX_EDGE_DROP;
	}
	/* Runts that pass the checks are forwarded: software ports do not pad. */
	if (unlikely(e != RX_EDGE_DROP && len0 < 60))
		ctrs[RX_CTR_RX_RUNT]++;
	return e;
}

/*
 * The fast path's per-burst constants, in vector registers (the loop's
 * general registers are all taken): the port's MAC, and metadata bytes
 * 0-15 per family (in_port, out_port NONE, vlan_tci 0, l2_len 14, l3_len;
 * class, flags 0, bd 0, flood_mask 0).
 */
struct rx_fast_k {
	__m128i mac;         /* pf_mac_u64 in bytes 8-13 (~0 if none), bytes 0-7 zero */
	__m128i md4, md6;
	uint64_t rearm;      /* the port's rearm word (rx_port_fast) */
	uint64_t span;       /* and its span */
};

static __rte_always_inline struct rx_fast_k
rx_fast_k(const struct rx_port_fast *pf)
{
	RTE_BUILD_BUG_ON(offsetof(struct pf_meta, l3_len) != 7 ||
			 offsetof(struct pf_meta, cls) != 8 || offsetof(struct pf_meta, flags) != 9);
	return (struct rx_fast_k){
		.mac = _mm_loadu_si128((const __m128i *)pf->macv),
		.md4 = _mm_loadu_si128((const __m128i *)pf->md4),
		.md6 = _mm_loadu_si128((const __m128i *)pf->md6),
		.rearm = pf->rearm,
		.span = pf->span,
	};
}

/*
 * The fast path's metadata in two stores (no field read back, nothing left
 * stale): @p md01 (bytes 0-15 of the family, rx_fast_k) with
 * PF_META_L2_LOCAL when the destination (bytes 0-5 of @p x) is @p mac,
 * then l4_proto @p proto, rsvd 0, nexthop 0.
 */
static __rte_always_inline void
rx_meta_fast(struct pf_meta *md, __m128i md01, __m128i x, __m128i mac, uint8_t proto)
{
	uint64_t w2 = proto;
	/* Quadword 1 (flags') all ones when the destination is ours (0 is 0 in quadword 0). */
	__m128i local = _mm_cmpeq_epi64(_mm_shuffle_epi8(x, RX_V_DST_HI), mac);

	RTE_BUILD_BUG_ON(sizeof(*md) != 24 || offsetof(struct pf_meta, l4_proto) != 16 ||
			 offsetof(struct pf_meta, nexthop) != 20);
	md01 = _mm_or_si128(md01, _mm_and_si128(local, RX_V_LOCAL));
	_mm_storeu_si128((__m128i *)md, md01);
	memcpy((uint8_t *)md + 16, &w2, 8);
}

/*
 * Whether the fast path's header test failed on something the full parser
 * must see: anything but a source ending in 0x00 that is not all zero.
 * The source is read from @p d only then.
 */
static __rte_always_inline bool
rx_fast_bad(uint64_t bad, const uint8_t *d)
{
	uint64_t w0, w1;

	if (likely(bad == 0))
		return false;
	memcpy(&w0, d, 8);
	memcpy(&w1, d + 8, 8);
	return bad != RX_SRC_ZERO || ((w0 >> 48) | (w1 & 0xffffffff)) == 0;
}

/* The IPv4 checksum on a port with RX checksum offload: its verdict, or the sum. */
static __rte_always_inline bool
rx_fast_cksum_hw(const struct rte_mbuf *m, const uint8_t *d)
{
	uint64_t ck = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;

	return ck == RTE_MBUF_F_RX_IP_CKSUM_GOOD ||
	       ((ck == RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN || ck == RTE_MBUF_F_RX_IP_CKSUM_NONE) &&
		ip4_cksum_ok(d + 14, 20));
}

/* 16 bits at @p p as they lie (network order). */
static __rte_always_inline uint32_t
rx_ld16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

/*
 * @p v (below 2^16) in network order, in a 64-bit register: one rotate
 * (rte_cpu_to_be_16 costs a zero-extension more).
 */
static __rte_always_inline uint64_t
rx_be16_len(uint64_t v)
{
	__asm__("rolw $8, %w0" : "+r"(v) : : "cc");
	return v;
}

/* 64 bits at @p p as they lie. */
static __rte_always_inline uint64_t
rx_ld64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/*
 * One frame of a burst whose first frame came from the port of @p k: its edge
 * when the fast path takes it, else RX_EDGE_DROP (rx_other decides). The
 * test: the mbuf's rearm word is @p k's (one segment, same port and, with
 * @p room, the standard headroom and one reference: one load and compare
 * for all), 60 bytes (so the header loads need no further length check)
 * up to the port's max_frame; unicast destination, a source that is
 * neither a group address nor possibly ours (its last byte in own_last)
 * nor zero; then by family (@p v4, @p v6: its edge wired). IPv4: 0x45, no
 * MF and no offset, total length exactly what arrived, and the checksum
 * (@p hw: the offload verdict, else the sum). IPv6: version 6, payload
 * length exactly what arrived, and a Next Header that is no extension
 * header the full parser walks. Without @p room (rx_other) data_off is
 * read and only nb_segs and port must match.
 */
static __rte_always_inline uint16_t
rx_fast(const struct rx_priv *rx, intptr_t off, struct rte_mbuf *m, const struct rx_fast_k k, uint16_t *edge, uint16_t *n6, const bool v4, const bool v6,
	const bool hw, const bool room, const bool eager)
{
	uint64_t l2, bad, rearm;
	const uint8_t *d;
	uint32_t len = rte_pktmbuf_data_len(m);
	__m128i y;

	/* data_off, refcnt, nb_segs, port: one little-endian word (DPDK's rearm_data). */
	RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, data_off) != 16 ||
			 offsetof(struct rte_mbuf, refcnt) != 18 ||
			 offsetof(struct rte_mbuf, nb_segs) != 20 ||
			 offsetof(struct rte_mbuf, port) != 22);
	rearm = rx_ld64((const uint8_t *)m + offsetof(struct rte_mbuf, data_off)) ^ k.rearm;
	if (!room)
		rearm &= RX_REARM_SEGS_PORT;
	/*
	 * Before any frame byte is read (with @p room, where the frame starts
	 * depends on it): then 60 bytes to max_frame in one compare. With one
	 * segment pkt_len is data_len (an mbuf invariant,
	 * rte_mbuf_sanity_check), so this is the full parser's oversize test too.
	 */
	if (unlikely(rearm != 0))
		return RX_EDGE_DROP;
	if (unlikely(len - RX_FAST_MIN_LEN >= k.span))
		return RX_EDGE_DROP;
	d = room ? (const uint8_t *)m->buf_addr + RTE_PKTMBUF_HEADROOM :
		   rte_pktmbuf_mtod(m, const uint8_t *);
	l2 = rx->own_last[d[11]];                             /* maybe ours, or zero */
	/*
	 * Masked bytes equal to the pattern: (x ^ pattern) & mask is zero (one
	 * ptest). The patterns' bytes 0-11 are zero, so y keeps both MACs.
	 */
	y = _mm_xor_si128(_mm_loadu_si128((const __m128i *)d), RX_V4_PAT);
	/* The frame's bytes are not needed again: GCC would copy them first. */
	__asm__("" : "+x"(y));
	if (v4 && likely(_mm_testz_si128(y, RX_V4_MASK))) {
		/* Total length and MF/offset from one word (bytes 16-23). */
		bad = l2 | ((rx_ld64(d + 16) ^ rx_be16_len(len - RTE_ETHER_HDR_LEN)) & rx->fast_len_frag);
		if (unlikely(rx_fast_bad(bad, d)))
			return RX_EDGE_DROP;
		/* Offload: GOOD skips the sum, BAD is the parser's, no verdict sums. */
		if (likely(!hw ? ip4_sum20(d + 14) * rx->fast_sum_inv <= rx->fast_sum_lim :
			   rx_fast_cksum_hw(m, d))) {
			rx_meta_fast((struct pf_meta *)((uintptr_t)m + off), k.md4, y, k.mac, d[23]);
			if (eager)
				*edge = RX_EDGE_IPV4;
			return RX_EDGE_IPV4;
		}
		return RX_EDGE_DROP;
	}
	y = _mm_xor_si128(y, _mm_xor_si128(RX_V4_PAT, RX_V6_PAT));
	if (v6 && likely(_mm_testz_si128(y, RX_V6_MASK))) {
		/* rx_be16_len, not rte_cpu_to_be_16: GCC's byte swap wants a
		 * register with a high byte and copies len into one per frame. */
		bad = l2 | (rx_ld16(d + 18) ^                                  /* payload */
			    rx_be16_len(len - RTE_ETHER_HDR_LEN - 40)) |
		      rx_ip6_ext_hdr[d[20]];
		if (unlikely(rx_fast_bad(bad, d)))
			return RX_EDGE_DROP;
		rx_meta_fast((struct pf_meta *)((uintptr_t)m + off), k.md6, y, k.mac, d[20]);
		if (eager)
			*edge = RX_EDGE_IPV6;
		if (n6 != NULL)
			(*n6)++;
		return RX_EDGE_IPV6;
	}
	return RX_EDGE_DROP;
}

/*
 * The frames of a burst the fast path did not take: their edges OR-ed
 * (any) and AND-ed (all), how many, and where (the fast path's frames are
 * the rest).
 */
struct rx_acc {
	uint16_t any, all, n_slow;
	uint16_t slow_at[PF_BURST_MAX];
};

/*
 * A frame the burst's fast path did not take (or any, with fast_path:
 * false), frame @p i of its burst: the fast path again with its own
 * port's constants when it came from another port than the burst's first
 * frame, else (or when that fails too) the full parser. Its edge is
 * folded into @p acc. Out of line, so the fast path's loop keeps its
 * registers.
 */
static __rte_noinline uint16_t
rx_other(const struct pf_stage *st, struct rte_mbuf *m, struct rx_acc *acc, unsigned int i,
	 uint64_t burst_rearm, uint64_t burst_mask, bool v4, bool v6)
{
	const struct rx_priv *rx = st->priv;
	const struct rx_port_fast *pf = &rx->port_fast[m->port & (2 * RTE_MAX_ETHPORTS - 1)];
	uint16_t e = RX_EDGE_DROP;

	/* Another port (or, in a burst at the standard headroom, another
	 * headroom or reference count) than the burst's fast path took. */
	if ((v4 || v6) &&
	    ((rx_ld64((const uint8_t *)m + offsetof(struct rte_mbuf, data_off)) ^ burst_rearm) & burst_mask))
		e = pf->hw_cksum ?
			rx_fast(rx, pf_meta_off(), m, rx_fast_k(pf), NULL, NULL, v4, v6, true, false, false) :
			rx_fast(rx, pf_meta_off(), m, rx_fast_k(pf), NULL, NULL, v4, v6, false, false, false);
	if (e == RX_EDGE_DROP)
		e = rx_parse_full(rx, st->ctrs, st->edge_connected, m, pf_meta(m),
				  rx->in_port_of[m->port & (2 * RTE_MAX_ETHPORTS - 1)]);
	acc->any |= e;
	acc->all &= e;
	acc->slow_at[acc->n_slow++] = (uint16_t)i;
	return e;
}

/*
 * Frame @p i. Only rx_other's verdicts feed @p acc; the fast path's frames
 * are the rest, of which @p n6 counts the IPv6 ones when both families are
 * wired. The fast path stores its edge only when @p eager (else
 * rx_fast_edges writes them, if the burst turns out mixed).
 */
static __rte_always_inline void
rx_one(const struct pf_stage *st, const struct rx_priv *rx, intptr_t off, const struct rx_fast_k k, struct rte_mbuf *m, unsigned int i, uint16_t *edge, struct rx_acc *acc,
       uint16_t *n6, const bool f4, const bool f6, const bool hw, const bool room, const bool eager)
{
	if ((f4 || f6) &&
	    likely(rx_fast(rx, off, m, k, &edge[i], f4 && f6 ? n6 : NULL, f4, f6, hw, room,
			   eager) != RX_EDGE_DROP))
		return;
	edge[i] = rx_other(st, m, acc, i, k.rearm, room ? UINT64_MAX : RX_REARM_SEGS_PORT, f4, f6);
}

/*
 * A mixed burst whose fast-path frames left edge[] alone: their edges now,
 * every frame but those in @p acc's list. @p mixed: both families took the
 * fast path (each frame's class says which), else @p e is every one's edge.
 */
static __rte_noinline void
rx_fast_edges(struct rte_mbuf **pkts, uint16_t n, uint16_t *edge, const struct rx_acc *acc,
	      bool mixed, uint16_t e)
{
	intptr_t off = pf_meta_off();
	uint16_t i, j = 0;

	for (i = 0; i < n; i++) {
		if (j < acc->n_slow && acc->slow_at[j] == i) {
			j++;
			continue;
		}
		edge[i] = !mixed ? e :
			  pf_meta_at(pkts[i], off)->cls == PF_CLASS_IPV4 ? RX_EDGE_IPV4 : RX_EDGE_IPV6;
	}
}

/*
 * The frame's first line where a PMD puts it in an mbuf of pipefwd's pools
 * (no private area: the buffer follows the mbuf, rte_pktmbuf_init, and rx
 * leaves the standard headroom): no load at all, where rte_pktmbuf_mtod
 * takes two. A frame elsewhere (an external buffer, another headroom) only
 * misses the prefetch; the parse reads buf_addr.
 */
#define RX_PREFETCH_OFF (sizeof(struct rte_mbuf) + RTE_PKTMBUF_HEADROOM)

static __rte_always_inline void
rx_prefetch(const struct rte_mbuf *m)
{
	rte_prefetch0((const uint8_t *)m + RX_PREFETCH_OFF);
}

/*
 * The burst: packet data prefetched 4 ahead (as DPDK's lib/node), one
 * verdict per packet, and the burst's edge when all agree. The mbufs
 * themselves are not prefetched: the PMD's rx burst has just written them.
 * The port constants come from the first frame (@p pfp, @p hw its
 * checksum offload): a burst is one port's in the common case (one rx
 * burst per port, or one port per stage).
 */
static __rte_always_inline uint16_t
rx_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge,
	 const struct rx_port_fast *pfp, const bool f4, const bool f6, const bool hw, const bool room,
	 const bool eager)
{
	struct rx_priv *rx = st->priv;
	/* Pointer-sized, its range hidden: GCC would keep the int and sign-extend it per frame. */
	intptr_t off = pf_meta_off();
	struct rx_acc acc;
	uint16_t n6 = 0, fast = 0, n_fast, all;
	struct rx_fast_k k = rx_fast_k(pfp);
	unsigned int i;

	/* Hidden from the optimiser: else it re-makes each constant per frame
	 * (movabs) or reloads it. */
	__asm__("" : "+r"(off), "+r"(k.rearm), "+r"(k.span));

	acc.any = 0;
	acc.all = UINT16_MAX;
	acc.n_slow = 0;
	for (i = 0; i < n && i < 4; i++)
		rx_prefetch(pkts[i]);
	/* Four at a time: one loop test per four frames. */
	for (i = 0; i + 8 <= n; i += 4) {
		rx_prefetch(pkts[i + 4]);
		rx_prefetch(pkts[i + 5]);
		rx_prefetch(pkts[i + 6]);
		rx_prefetch(pkts[i + 7]);
		rx_one(st, rx, off, k, pkts[i], i, edge, &acc, &n6, f4, f6, hw, room, eager);
		rx_one(st, rx, off, k, pkts[i + 1], i + 1, edge, &acc, &n6, f4, f6, hw, room, eager);
		rx_one(st, rx, off, k, pkts[i + 2], i + 2, edge, &acc, &n6, f4, f6, hw, room, eager);
		rx_one(st, rx, off, k, pkts[i + 3], i + 3, edge, &acc, &n6, f4, f6, hw, room, eager);
	}
	for (; i + 4 < n; i++) {
		rx_prefetch(pkts[i + 4]);
		rx_one(st, rx, off, k, pkts[i], i, edge, &acc, &n6, f4, f6, hw, room, eager);
	}
	for (; i < n; i++)
		rx_one(st, rx, off, k, pkts[i], i, edge, &acc, &n6, f4, f6, hw, room, eager);
	/*
	 * Every frame on the fast path came from the first one's port (the
	 * rearm test): the in-port hint, so xconnect need not look per frame.
	 */
	st->in_burst_in_port = acc.n_slow == 0 ? PF_BURST_PORT((uint16_t)pfp->meta_w0) : 0;
	/* The fast path's edges, from the counts. */
	n_fast = (uint16_t)(n - acc.n_slow);
	if (!f4)
		n6 = n_fast;
	if (n6 != 0)
		fast |= RX_EDGE_IPV6;
	if (f4 && n_fast != n6)
		fast |= RX_EDGE_IPV4;
	/* Both families wired: the next burst's fast path stores its edges
	 * when this one mixed them (dual-stack traffic), else it leaves them. */
	if (f4 && f6)
		rx->eager = fast == (RX_EDGE_IPV4 | RX_EDGE_IPV6);
	if (fast != 0) {
		acc.any |= fast;
		acc.all &= fast;
	}
	/* Every bit set in one edge is set in all: they are all the same edge
	 * (ipv4 | ipv6 is arp's value: both fast families never pass). */
	all = fast != (RX_EDGE_IPV4 | RX_EDGE_IPV6) && acc.any == acc.all ? acc.any : PF_EDGE_MIXED;
	if (!eager && all == PF_EDGE_MIXED && n_fast != 0)
		rx_fast_edges(pkts, n, edge, &acc, fast == (RX_EDGE_IPV4 | RX_EDGE_IPV6), fast);
	return all;
}

/*
 * The burst loop for the wired families and the port's checksum offload
 * (constants of the loop); @p room: the first frame at the standard
 * headroom (the frames' data found without reading data_off).
 */
static __rte_always_inline uint16_t
rx_burst_wired(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge,
	       const struct rx_port_fast *pf, const bool room)
{
	/* A family whose edge is unwired needs the full parser (ethertype_unsupported). */
	switch (st->edge_connected & (1u << RX_EDGE_IPV4 | 1u << RX_EDGE_IPV6)) {
	case 1u << RX_EDGE_IPV4 | 1u << RX_EDGE_IPV6:
		if (unlikely(((const struct rx_priv *)st->priv)->eager))
			return pf->hw_cksum ? rx_burst(st, pkts, n, edge, pf, true, true, true, room, true) :
					      rx_burst(st, pkts, n, edge, pf, true, true, false, room, true);
		return pf->hw_cksum ? rx_burst(st, pkts, n, edge, pf, true, true, true, room, false) :
				      rx_burst(st, pkts, n, edge, pf, true, true, false, room, false);
	case 1u << RX_EDGE_IPV4:
		return pf->hw_cksum ? rx_burst(st, pkts, n, edge, pf, true, false, true, room, false) :
				      rx_burst(st, pkts, n, edge, pf, true, false, false, room, false);
	case 1u << RX_EDGE_IPV6:
		return rx_burst(st, pkts, n, edge, pf, false, true, false, room, false);
	default:
		return rx_burst(st, pkts, n, edge, pf, false, false, false, room, false);
	}
}

/* A PMD that leaves another headroom (af_xdp, say): data_off read per frame. */
static __rte_noinline uint16_t
rx_burst_any_room(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge,
		  const struct rx_port_fast *pf)
{
	return rx_burst_wired(st, pkts, n, edge, pf, false);
}

static uint16_t
rx_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	const struct rx_priv *rx = st->priv;
	const struct rx_port_fast *pf;

	if (n == 0) {
		st->in_burst_in_port = 0;
		return PF_EDGE_MIXED;
	}
	pf = &rx->port_fast[pkts[0]->port & (2 * RTE_MAX_ETHPORTS - 1)];
	if (unlikely(!rx->fast_path))
		return rx_burst(st, pkts, n, edge, pf, false, false, false, false, false);
	if (unlikely(pkts[0]->data_off != RTE_PKTMBUF_HEADROOM))
		return rx_burst_any_room(st, pkts, n, edge, pf);
	return rx_burst_wired(st, pkts, n, edge, pf, true);
}

const struct pf_stage_ops pf_rx_ops = {
	.type = "rx",
	.summary = "poll ports, parse and classify (ipv4, ipv6, arp, other, ip6_error)",
	.flags = PF_STAGE_SOURCE | PF_STAGE_NEXT_ALL,
	.priv_size = sizeof(struct rx_priv),
	.n_edges = RX_EDGE_MAX,
	.edge_names = rx_edges,
	.default_edge = RX_EDGE_IPV4,
	.next_all_skip = 1u << RX_EDGE_IP6_ERROR,
	.n_ctrs = rx_ctr_max,
	.ctrs = rx_ctrs,
	.dp = {
		.rx = rx_rx,
		.process_burst = rx_process_burst,
	},
	.ctl = {
		.param_keys = rx_keys,
		.takes = 0,
		.edge_carries = rx_carries,
		.parse = rx_parse,
		.cfg_free = rx_cfg_free,
		.init = rx_init,
		.ports = rx_ports,
	},
};
