/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rx: poll port queues, parse L2/L3 once, classify.
 * Edges: drop, ipv4, ipv6, arp, other (any other EtherType; for bridging).
 * Counters: one drop reason per malformed case (eth_truncated, ip4_bad_checksum,
 *   ...), see foreach_rx_ctr; info: rx_runt, vlan_tagged, ip4_options_seen.
 * Params: ports (list, required), queue (rx queue on every port, default 0),
 *   pace_pps (replay pacing: at most this many packets per second, 0 = off),
 *   fast_path (default true; false runs every frame through the full parser).
 *
 * The parser reads only the first segment and never past data_len: every
 * length is checked before the bytes it covers are touched.
 *
 * Two paths, one verdict. The fast path takes the common frame (untagged,
 * unicast destination, IPv4 with IHL 5, no fragment, total length equal to
 * what arrived, at least 60 bytes) with a few loads and one combined test;
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
	_(RX_CTR_IP6_TRIMMED, ip6_trailer_trimmed, INFO, "IPv6 frames whose Ethernet padding was trimmed")

PF_CTR_ENUM(rx, foreach_rx_ctr);
PF_CTR_DESCS(rx, foreach_rx_ctr);

enum rx_edge { RX_EDGE_DROP, RX_EDGE_IPV4, RX_EDGE_IPV6, RX_EDGE_ARP, RX_EDGE_OTHER, RX_EDGE_MAX };
static const char *const rx_edges[] = { "drop", "ipv4", "ipv6", "arp", "other" };
static const char *const rx_keys[] = { "ports", "queue", "pace_pps", "fast_path", NULL };

/* The fast path reads the first 60 bytes without checking each length. */
#define RX_FAST_MIN_LEN 60
#define RX_MAC_MASK 0xffffffffffffull
/*
 * The fast path's header test on little-endian words of bytes 0-7, 8-15 and
 * 16-23: the group bit of both MACs clear; EtherType 0x0800 and version/IHL
 * 0x45; MF and fragment offset zero, total length (tested against the frame).
 */
#define RX_W0_GROUP_BITS 0x0001000000000001ull
#define RX_W1_MASK 0x00ffffff00000000ull
#define RX_W1_IPV4 0x0045000800000000ull
#define RX_W2_MASK 0x0000ff3f0000ffffull
/* in_port of an mbuf from a port this stage does not poll (an index, so tables need no test). */
#define RX_PORT_UNKNOWN PF_MAX_PORTS

struct rx_cfg {
	uint32_t pace_pps;
	bool slow_only;                     /* fast_path: false */
};

struct rx_priv {
	uint16_t n_ports;
	uint16_t next_port;                 /* round-robin start, for fairness */
	uint16_t port_idx[PF_MAX_PORTS];    /* pipefwd port index */
	uint16_t port_id[PF_MAX_PORTS];     /* DPDK port id */
	uint32_t set_port;                  /* bit k: port_id[k]'s PMD leaves mbuf->port unset */
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
	uint64_t port_mac[PF_MAX_PORTS + 1]; /* own MAC (pf_mac_u64), ~0 if none */
	uint16_t queue;
	int ts_offset;                      /* rx timestamp dynfield, -1 if none */
	uint64_t ts_flag;
	bool pcap_clock;
	struct pf_own_macs own;             /* the ports' MACs: never a valid source */
	uint8_t own_last[256];              /* 1: some own MAC ends in this byte (fast path) */
	/* Pacing: a token bucket in units of packets * tsc_hz. */
	uint64_t pace_pps;
	uint64_t hz;
	uint64_t credit;
	uint64_t last_tsc;
};

static int
rx_parse(struct pf_stage_conf *sc, const struct pf_topo *topo, struct pf_errs *errs)
{
	const struct pf_node *v;
	char path[PF_CONF_PATH_MAX];
	struct rx_cfg *cfg;
	uint32_t q = 0;

	snprintf(path, sizeof(path), "stages.%s", sc->name);
	v = pf_map_get(sc->node, "ports");
	if (v == NULL)
		return pf_node_err(errs, sc->node, "%s: missing required key 'ports'", path);
	snprintf(path, sizeof(path), "stages.%s.ports", sc->name);
	if (pf_topo_port_list(topo, v, path, sc->rx_ports, PF_MAX_PORTS, &sc->n_rx_ports, errs) < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "stages.%s.queue", sc->name);
	if ((v = pf_map_get(sc->node, "queue")) != NULL &&
	    pf_node_u32(v, path, 0, 15, &q, errs) < 0)
		return -EINVAL;
	sc->rx_queue = (uint16_t)q;
	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return -ENOMEM;
	sc->cfg = cfg;
	if ((v = pf_map_get(sc->node, "pace_pps")) != NULL &&
	    pf_node_u32(v, "pace_pps", 0, 1000000000, &cfg->pace_pps, errs) < 0)
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

static void
rx_cfg_free(void *cfg)
{
	free(cfg);
}

static int
rx_init(struct pf_stage *st, struct pf_errs *errs)
{
	struct rx_priv *rx = st->priv;
	const struct pf_stage_conf *sc = st->conf;
	uint16_t i;

	rx->n_ports = sc->n_rx_ports;
	rx->queue = sc->rx_queue;
	rx->fast_path = !((const struct rx_cfg *)sc->cfg)->slow_only;
	for (i = 0; i < RTE_DIM(rx->in_port_of); i++)
		rx->in_port_of[i] = RX_PORT_UNKNOWN;
	for (i = 0; i < sc->n_rx_ports; i++) {
		rx->port_idx[i] = sc->rx_ports[i];
		rx->port_id[i] = st->topo->ports[sc->rx_ports[i]].port_id;
		if (rx->port_id[i] < RTE_MAX_ETHPORTS)
			rx->in_port_of[rx->port_id[i]] = sc->rx_ports[i];
		if (!rx_pmd_sets_port(rx->port_id[i]))
			rx->set_port |= 1u << i;
	}
	for (i = 0; i < RTE_DIM(rx->port_mac); i++)
		rx->port_mac[i] = UINT64_MAX;
	for (i = 0; i < st->topo->n_ports; i++) {
		rx->max_frame[i] = st->topo->ports[i].max_frame;
		if (st->topo->ports[i].has_mac)
			rx->port_mac[i] = pf_mac_u64(st->topo->ports[i].mac);
	}
	rx->pcap_clock = st->topo->clock == PF_CLOCK_PCAP;
	/* Port MACs are final here: configured, or read from the devices at start. */
	pf_own_macs_init(&rx->own, st->topo);
	for (i = 0; i < rx->own.n; i++)
		rx->own_last[rx->own.mac[i] >> 40] = 1;
	/* The zero source ends in 0x00: the full parser takes (and drops) it. */
	rx->own_last[0] = 1;
	rx->pace_pps = ((const struct rx_cfg *)sc->cfg)->pace_pps;
	rx->hz = rte_get_tsc_hz();
	rx->last_tsc = rte_rdtsc();
	rx->ts_offset = rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, NULL);
	if (rx->ts_offset >= 0) {
		int bit = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, NULL);

		rx->ts_flag = bit >= 0 ? 1ull << bit : 0;
	}
	return 0;
}

static uint16_t
rx_rx(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t max)
{
	struct rx_priv *rx = st->priv;
	uint16_t n = 0, k, i, p, got;

	if (unlikely(rx->pace_pps != 0)) {
		uint64_t now = rte_rdtsc(), elapsed = RTE_MIN(now - rx->last_tsc, rx->hz);

		rx->last_tsc = now;
		rx->credit = RTE_MIN(rx->credit + elapsed * rx->pace_pps, (uint64_t)max * rx->hz);
		max = (uint16_t)(rx->credit / rx->hz);
		if (max == 0)
			return 0;
	}
	for (k = 0; k < rx->n_ports && n < max; k++) {
		p = (uint16_t)((rx->next_port + k) % rx->n_ports);
		got = rte_eth_rx_burst(rx->port_id[p], rx->queue, pkts + n, max - n);
		/* process_burst finds in_port from mbuf->port (no pass here for it). */
		if (unlikely(rx->set_port & (1u << p)))
			for (i = n; i < n + got; i++)
				pkts[i]->port = rx->port_id[p];
		st->port_rx[rx->port_idx[p]] += got;
		n += got;
	}
	rx->next_port = (uint16_t)((rx->next_port + 1) % rx->n_ports);
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

/*
 * One's complement sum of the header is 0xffff when the checksum is right,
 * i.e. the plain sum of its 32-bit words is a non-zero multiple of 0xffff
 * (2^16 = 1 mod 0xffff, in either byte order). The 20-byte header is five
 * loads, four adds and one modulo by a constant; options take the generic
 * path. (memcpy: the header may be unaligned; it compiles to plain loads.)
 */
static __rte_always_inline bool
ip4_cksum_ok(const void *ip, uint32_t ihl)
{
	uint64_t a, b, sum;
	uint32_t c;
	bool cy1, cy2;

	if (unlikely(ihl != 20))
		return rte_raw_cksum(ip, ihl) == 0xffff;
	memcpy(&a, ip, 8);
	memcpy(&b, (const uint8_t *)ip + 8, 8);
	memcpy(&c, (const uint8_t *)ip + 16, 4);
	/* Carries wrap around (2^64 = 1 mod 0xffff); the last add cannot carry. */
	cy1 = __builtin_add_overflow(a, b, &sum);
	cy2 = __builtin_add_overflow(sum, (uint64_t)c + cy1, &sum);
	sum += cy2;
	/* Version 4 makes the sum non-zero: 0 cannot pass as a multiple. */
	return sum % 0xffff == 0;
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
rx_ip6(uint64_t *ctrs, struct rte_mbuf *m, struct pf_meta *md, const uint8_t *ip6,
       uint32_t avail)
{
	uint32_t tot, off = 40, n = 0, hl, need;
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

		if (unlikely(nh == IP6_NH_HBH && n != 0)) {
			ctrs[RX_CTR_IP6_HBH_NOT_FIRST]++;
			return RX_EDGE_DROP;
		}
		if (unlikely(++n > PF_IP6_EXT_MAX_HDRS)) {
			ctrs[RX_CTR_IP6_EXT_TOO_MANY]++;
			return RX_EDGE_DROP;
		}
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
		if (unlikely(off + hl - 40 > PF_IP6_EXT_MAX_LEN)) {
			ctrs[RX_CTR_IP6_EXT_TOO_LONG]++;
			return RX_EDGE_DROP;
		}
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
		if (unlikely(off + need > tot)) {
			ctrs[RX_CTR_IP6_FRAG_INCOMPLETE]++;
			return RX_EDGE_DROP;
		}
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
		return rx_ip6(ctrs, m, md, d + l2, avail);
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
 * The fast path's metadata in three stores (no field read back, nothing left
 * stale): in_port, out_port NONE, vlan_tci 0, l2_len 14, l3_len 20 | class
 * IPv4, flags, bd 0, flood_mask 0 | nexthop 0, l4_proto, rsvd 0.
 */
static __rte_always_inline void
rx_meta_ipv4(struct pf_meta *md, uint16_t in_port, uint8_t flags, uint8_t proto)
{
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
	uint64_t w0 = in_port | (uint64_t)PF_PORT_NONE << 16 |
		      (uint64_t)RTE_ETHER_HDR_LEN << 48 | (uint64_t)20 << 56;
	uint64_t w1 = PF_CLASS_IPV4 | (uint64_t)flags << 8;
	uint64_t w2 = (uint64_t)proto << 32;

	RTE_BUILD_BUG_ON(sizeof(*md) != 24 || offsetof(struct pf_meta, l3_len) != 7 ||
			 offsetof(struct pf_meta, cls) != 8 || offsetof(struct pf_meta, bd) != 10 ||
			 offsetof(struct pf_meta, nexthop) != 16 ||
			 offsetof(struct pf_meta, l4_proto) != 20);
	memcpy(md, &w0, 8);
	memcpy((uint8_t *)md + 8, &w1, 8);
	memcpy((uint8_t *)md + 16, &w2, 8);
#else
	*md = (struct pf_meta){ .in_port = in_port, .out_port = PF_PORT_NONE,
				.l2_len = RTE_ETHER_HDR_LEN, .l3_len = 20,
				.cls = PF_CLASS_IPV4, .flags = flags, .l4_proto = proto };
#endif
}

/*
 * One frame. The fast path's test: 60 bytes or more (so the header loads
 * need no further length check), then from the mbuf and four header loads,
 * one word that is zero only for a single segment from a polled port, no
 * oversize, unicast destination, a source that is neither a group address nor
 * possibly ours or zero (its last byte in own_last),
 * EtherType IPv4 with 0x45, no MF and no offset, and total length exactly
 * what arrived; then the checksum (offload verdict or the sum). Anything
 * else, the full parser decides.
 */
static __rte_always_inline bool
rx_fast(const struct rx_priv *rx, int off, struct rte_mbuf *m)
{
	struct pf_meta *md = pf_meta_at(m, off);
	uint16_t in_port = rx->in_port_of[m->port & (2 * RTE_MAX_ETHPORTS - 1)];
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);

	if (likely(len >= RX_FAST_MIN_LEN)) {
		uint64_t w0, w1, w2, bad, ck = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;

		/* Bytes 0-7, 8-15, 16-23 (little-endian words). */
		memcpy(&w0, d, 8);
		memcpy(&w1, d + 8, 8);
		memcpy(&w2, d + 16, 8);
		bad = (w0 & RX_W0_GROUP_BITS) |                        /* dst or src group */
		      ((w1 & RX_W1_MASK) ^ RX_W1_IPV4) |               /* 0x0800, 0x45 */
		      ((w2 & RX_W2_MASK) ^                             /* MF, offset, length */
		       rte_cpu_to_be_16((uint16_t)(len - RTE_ETHER_HDR_LEN))) |
		      (m->nb_segs ^ 1u) |
		      ((uint64_t)((int64_t)rx->max_frame[in_port] - m->pkt_len) >> 63) |
		      rx->own_last[d[11]];                             /* maybe ours, or zero */
		if (likely(bad == 0) &&
		    likely(ck == RTE_MBUF_F_RX_IP_CKSUM_GOOD ||
			   (ck != RTE_MBUF_F_RX_IP_CKSUM_BAD && ip4_cksum_ok(d + 14, 20)))) {
			rx_meta_ipv4(md, in_port, (w0 & RX_MAC_MASK) == rx->port_mac[in_port] ?
							  PF_META_L2_LOCAL : 0, (uint8_t)(w2 >> 56));
			return true;
		}
	}
	return false;
}

/* Any frame the fast path did not take (or all, with fast_path: false). */
static __rte_noinline uint16_t
rx_slow(const struct rx_priv *rx, uint64_t *ctrs, uint32_t connected, int off,
	struct rte_mbuf *m)
{
	return rx_parse_full(rx, ctrs, connected, m, pf_meta_at(m, off),
			     rx->in_port_of[m->port & (2 * RTE_MAX_ETHPORTS - 1)]);
}

/*
 * One frame. Only the full parser's verdicts feed the burst's any/all: a
 * fast-path frame is always ipv4, added once at the end.
 */
static __rte_always_inline void
rx_one(const struct rx_priv *rx, uint64_t *ctrs, uint32_t connected, int off,
       struct rte_mbuf *m, uint16_t *edge, uint16_t *any, uint16_t *all, uint16_t *n_slow,
       const bool fast)
{
	uint16_t e;

	if (fast && likely(rx_fast(rx, off, m))) {
		*edge = RX_EDGE_IPV4;
		return;
	}
	*edge = e = rx_slow(rx, ctrs, connected, off, m);
	*any |= e;
	*all &= e;
	(*n_slow)++;
}

/*
 * The burst: mbufs prefetched 8 ahead, their data 4 ahead (as DPDK's
 * lib/node), one verdict per packet, and the burst's edge when all agree.
 */
static __rte_always_inline uint16_t
rx_burst(const struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge,
	 const bool fast)
{
	const struct rx_priv *rx = st->priv;
	uint64_t *ctrs = st->ctrs;
	uint32_t connected = st->edge_connected;
	int off = pf_meta_off();
	uint16_t any = 0, all = UINT16_MAX, n_slow = 0;
	unsigned int i;

	if (n == 0)
		return PF_EDGE_MIXED;
	for (i = 0; i < n && i < 8; i++)
		rte_prefetch0(pkts[i]);
	for (i = 0; i < n && i < 4; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	for (i = 0; i + 8 < n; i++) {
		rte_prefetch0(pkts[i + 8]);
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void *));
		rx_one(rx, ctrs, connected, off, pkts[i], &edge[i], &any, &all, &n_slow, fast);
	}
	for (; i < n; i++) {
		if (i + 4 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void *));
		rx_one(rx, ctrs, connected, off, pkts[i], &edge[i], &any, &all, &n_slow, fast);
	}
	if (n_slow != n) {
		any |= RX_EDGE_IPV4;
		all &= RX_EDGE_IPV4;
	}
	/* Every bit set in one edge is set in all: they are all the same edge. */
	return any == all ? any : PF_EDGE_MIXED;
}

static uint16_t
rx_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	const struct rx_priv *rx = st->priv;

	/* The fast path's only edge is ipv4: unwired, every frame needs the full parser. */
	if (likely(rx->fast_path && (st->edge_connected & (1u << RX_EDGE_IPV4))))
		return rx_burst(st, pkts, n, edge, true);
	return rx_burst(st, pkts, n, edge, false);
}

const struct pf_stage_ops pf_rx_ops = {
	.type = "rx",
	.summary = "poll ports, parse and classify (ipv4, ipv6, arp, other)",
	.flags = PF_STAGE_SOURCE | PF_STAGE_NEXT_ALL,
	.priv_size = sizeof(struct rx_priv),
	.n_edges = RX_EDGE_MAX,
	.edge_names = rx_edges,
	.default_edge = RX_EDGE_IPV4,
	.n_ctrs = rx_ctr_max,
	.ctrs = rx_ctrs,
	.param_keys = rx_keys,
	.parse = rx_parse,
	.cfg_free = rx_cfg_free,
	.init = rx_init,
	.rx = rx_rx,
	.process_burst = rx_process_burst,
};
