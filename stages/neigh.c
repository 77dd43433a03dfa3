/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * neigh: the slow path of neighbour resolution by ARP (RFC 826) and IPv6 Neighbour
 *   Discovery (RFC 4861), the only writer of the neighbour table (stages/lib/pf_neigh.h) that
 *   forwarding stages read without locks.
 * Edges: drop, out (ARP replies and requests, NSs and NAs, released packets: md->out_port
 *   set), icmp (optional: held IPv4 packets whose neighbour failed, as Destination Unreachable
 *   host, 3/1), fragment (optional, to ip4frag), icmp6 (optional: held IPv6 packets whose
 *   neighbour failed, as Destination Unreachable address unreachable, 1/3).
 * Counters: drop: arp_* (malformed, not for us, consumed), neigh_hold_overflow,
 *   neigh_hold_timeout, neigh_table_full, neigh_hold_stopped; info: arp_reply, arp_request,
 *   neigh_resolved, neigh_failed, neigh_held, neigh_released, ...
 * Params: size, queue, reachable_ms, retrans_ms, probes, stale_gc_ms (Linux's neigh defaults).
 *
 * Fed by rx's "arp" edge (every ARP frame), by lpm's "neigh" edge: IPv4
 * packets to a next hop (md->nexthop, host order) on md->out_port whose MAC
 * the table does not have, and by lpm6's: IPv6 packets likewise (md->nexthop
 * names the neighbour, stages/lib/pf_neigh.h) and the NSs and NAs lpm6
 * validated (RFC 4861 7.1), which teach a MAC as ARP does. Such a packet
 * is held in its entry (a bounded queue), a request goes out (broadcast ARP
 * or multicast NS), and when the reply comes the held
 * packets are rewritten (TTL, MACs) and sent before the MAC is published,
 * so later packets of the same flow cannot overtake them on this lcore.
 * Held and made packets leave through ops->dp.emit, which the owning lcore
 * calls after every pass; timers (retransmit, failure, aging) run in
 * housekeep. Entries are learned from replies and from requests aimed at
 * the router, and updated by gratuitous ARP; a sender MAC that is a group
 * address or zero is never learned or answered.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "lpm.h"
#include "nd6.h"
#include "pf_conf.h"
#include "pf_ip6.h"
#include "pf_neigh.h"
#include "pf_stage.h"

#define foreach_neigh_ctr(_) \
	_(NEIGH_CTR_PROTO, neigh_proto_unsupported, DROP, \
	  "not ARP, IPv4 from lpm, IPv6 from lpm6 or ND, or for a port without an address " \
	  "of its family (wiring mistake)") \
	_(NEIGH_CTR_FRAG_UNWIRED, neigh_frag_unwired, DROP, \
	  "a held DF-clear datagram over the egress MTU, with no fragment edge wired") \
	_(NEIGH_CTR_ARP_UNSUPPORTED, arp_unsupported, DROP, \
	  "ARP not for Ethernet/IPv4 (htype, ptype, hlen, plen)") \
	_(NEIGH_CTR_ARP_VLAN, arp_vlan_unknown, DROP, \
	  "ARP in an 802.1Q frame (routed ports are untagged)") \
	_(NEIGH_CTR_ARP_MAC_MISMATCH, arp_mac_mismatch, DROP, \
	  "ARP frame to a unicast MAC other than the ingress port's") \
	_(NEIGH_CTR_ARP_BAD_SHA, arp_bad_sender_mac, DROP, \
	  "ARP sender MAC is a group address or zero: never learned or answered") \
	_(NEIGH_CTR_ARP_NO_ADDR, arp_no_port_addr, DROP, "ARP on a port without an ipv4 address") \
	_(NEIGH_CTR_ARP_FROM_US, arp_sender_is_us, DROP, \
	  "ARP sender address is the port's own address") \
	_(NEIGH_CTR_ARP_NOT_FOR_US, arp_not_for_us, DROP, \
	  "ARP request for another address (learned from if the sender is known)") \
	_(NEIGH_CTR_ARP_CONSUMED, arp_consumed, DROP, \
	  "ARP reply or gratuitous ARP: learned from, then it ends here") \
	_(NEIGH_CTR_HOLD_OVERFLOW, neigh_hold_overflow, DROP, \
	  "packet for an unresolved neighbour whose queue was full") \
	_(NEIGH_CTR_HOLD_TIMEOUT, neigh_hold_timeout, DROP, \
	  "held packet whose neighbour failed to resolve (icmp edge not wired)") \
	_(NEIGH_CTR_TABLE_FULL, neigh_table_full, DROP, "packet for a new neighbour, table full") \
	_(NEIGH_CTR_HOLD_STOPPED, neigh_hold_stopped, DROP, "held when pipefwd stopped") \
	_(NEIGH_CTR_ARP_REPLY, arp_reply, INFO, "ARP requests for a port's address answered") \
	_(NEIGH_CTR_ARP_REQUEST, arp_request, INFO, "ARP requests sent (made here)") \
	_(NEIGH_CTR_ARP_NOMBUF, arp_request_nombuf, INFO, "ARP request not sent: no mbuf") \
	_(NEIGH_CTR_LEARNED, neigh_learned, INFO, "entries created from a request aimed at us") \
	_(NEIGH_CTR_UPDATED, neigh_updated, INFO, \
	  "entries whose MAC changed (gratuitous ARP, ...)") \
	_(NEIGH_CTR_RESOLVED, neigh_resolved, INFO, "unresolved entries that got their MAC") \
	_(NEIGH_CTR_FAILED, neigh_failed, INFO, "entries that failed (no answer to the requests)") \
	_(NEIGH_CTR_HELD, neigh_held, INFO, "packets held for an unresolved neighbour") \
	_(NEIGH_CTR_RELEASED, neigh_released, INFO, "held packets sent once resolved") \
	_(NEIGH_CTR_TO_ICMP, neigh_unresolved_to_icmp, INFO, \
	  "held packets whose neighbour failed: sent to the icmp edge (Host Unreachable)") \
	_(NEIGH_CTR_FWD, neigh_forwarded, INFO, \
	  "packets from lpm sent at once (resolved meanwhile)") \
	_(NEIGH_CTR_ND_INVALID, nd_invalid, DROP, \
	  "NS or NA from lpm6 that does not parse (wiring mistake: lpm6 validates them)") \
	_(NEIGH_CTR_NA_UNKNOWN, nd_na_unknown, DROP, \
	  "NA for an address with no entry: nothing to update (RFC 4861 7.2.5)") \
	_(NEIGH_CTR_NA_CONSUMED, nd_na_consumed, DROP, "NA learned from, then it ends here") \
	_(NEIGH_CTR_NA_NO_TLLA, nd_na_no_tlla, DROP, \
	  "NA without a target link-layer option for an unresolved entry (RFC 4861 7.2.5)") \
	_(NEIGH_CTR_NA_FOR_US, nd_na_target_is_us, DROP, \
	  "NA for one of the port's own addresses (another node claims it)") \
	_(NEIGH_CTR_ND_BAD_LLA, nd_bad_lla, DROP, \
	  "NS/NA link-layer option is a group address or zero: never learned or answered") \
	_(NEIGH_CTR_NS_NO_ROOM, nd_ns_no_room, DROP, \
	  "no tailroom to build the NA answering an NS") \
	_(NEIGH_CTR_NA_SENT, nd_na_sent, INFO, "NSs for a port's address answered (solicited NA)") \
	_(NEIGH_CTR_NS_SENT, nd_ns_sent, INFO, "Neighbour Solicitations sent (made here)") \
	_(NEIGH_CTR_NS_NOMBUF, nd_ns_nombuf, INFO, "NS not sent: no mbuf, or too many waiting") \
	_(NEIGH_CTR_TO_ICMP6, neigh_unresolved_to_icmp6, INFO, \
	  "held IPv6 packets whose neighbour failed: sent to the icmp6 edge (Address Unreachable)") \
	_(NEIGH_CTR_TO_HOST, neigh_to_host, INFO, \
	  "ARP reply or NA to the router learned from, then given to its host interface")

PF_CTR_ENUM(neigh, foreach_neigh_ctr);
PF_CTR_DESCS(neigh, foreach_neigh_ctr);

enum {
	NEIGH_EDGE_DROP, NEIGH_EDGE_OUT, NEIGH_EDGE_ICMP, NEIGH_EDGE_FRAG, NEIGH_EDGE_ICMP6,
	NEIGH_EDGE_HOST, NEIGH_EDGE_MAX
};
static const char *const neigh_edges[] = { "drop", "out", "icmp", "fragment", "icmp6", "host" };
static const uint16_t neigh_carries[] = { 0, PF_CARRY_ROUTED, PF_CARRY_ICMP4, PF_CARRY_FRAG4,
	PF_CARRY_ICMP6, PF_CARRY_HOST };
static const char *const neigh_keys[] = { "size", "queue", "reachable_ms", "retrans_ms",
					  "probes", "stale_gc_ms", NULL };

#define NEIGH_MS 1000000ull
/* Requests made and not yet emitted: a burst's worth. */
#define NEIGH_REQ_MAX 64
/* Entries the timer sweep visits per housekeep call (about once a millisecond). */
#define NEIGH_SWEEP 256

struct neigh_cfg {
	uint32_t size;
	uint32_t queue;
	uint32_t reachable_ms;
	uint32_t retrans_ms;
	uint32_t probes;
	uint32_t stale_gc_ms;
};

struct neigh_priv {
	struct pf_neigh_table *t;
	struct rte_mempool *pool;              /* where requests come from: the packets' pool */
	struct rte_ether_addr port_mac[PF_MAX_PORTS];
	uint32_t port_ip[PF_MAX_PORTS];        /* host order */
	uint32_t port_mask[PF_MAX_PORTS];
	uint32_t port_ok;                      /* bit per port: has ipv4 and mac */
	uint32_t port_ok6;                     /* bit per port: has a mac (and so a link-local) */
	uint8_t n_addr6[PF_MAX_PORTS];         /* addr6[p][0] is the link-local */
	uint8_t addr6[PF_MAX_PORTS][PF_PORT_IPV6_MAX + 1][16];
	uint8_t len6[PF_MAX_PORTS][PF_PORT_IPV6_MAX + 1];
	bool icmp;
	bool icmp6;
	bool frag;                             /* edge fragment wired (to ip4frag) */
	bool host;                             /* edge host wired: the kernel hears its answers */
	uint16_t max_frame[PF_MAX_PORTS];      /* egress limit, untagged frame */
	bool pcap_clock;                       /* timers also run per burst, on packet time */
	uint64_t reachable_ns, retrans_ns, stale_gc_ns;
	uint32_t queue, probes;
	/* writer state */
	uint32_t cursor;                       /* timer sweep position */
	uint32_t n_rel;
	struct pf_neigh **rel;                 /* entries with packets to release */
	uint16_t n_req;
	struct rte_mbuf *req[NEIGH_REQ_MAX];   /* requests made, not yet emitted */
	uint64_t held;                         /* packets held now (in_flight) */
};

/* ---- configuration ---------------------------------------------------------- */

/*
 * Does some stage send its "arp" edge to @p sc, or an lpm6 its "neigh" edge
 * (which carries the NAs)?
 */
static bool
neigh_gets_arp(const struct pf_stage_conf *sc, const struct pf_stage_env *env)
{
	return pf_stage_fed_by(env, sc, "arp", NULL) || pf_stage_fed_by(env, sc, "neigh", "lpm6");
}

static int
neigh_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs)
{
	static const struct { const char *key; uint32_t min, max; size_t off; } keys[] = {
		{ "size", 64, 1u << 20, offsetof(struct neigh_cfg, size) },
		{ "queue", 1, PF_NEIGH_HOLD_MAX, offsetof(struct neigh_cfg, queue) },
		{ "reachable_ms", 1, 3600000, offsetof(struct neigh_cfg, reachable_ms) },
		{ "retrans_ms", 1, 60000, offsetof(struct neigh_cfg, retrans_ms) },
		{ "probes", 1, 255, offsetof(struct neigh_cfg, probes) },
		{ "stale_gc_ms", 1, 86400000, offsetof(struct neigh_cfg, stale_gc_ms) },
	};
	struct neigh_cfg *cfg = calloc(1, sizeof(*cfg));
	char path[PF_CONF_PATH_MAX];
	const struct pf_node *v;
	unsigned int i;
	int rc = 0;

	if (cfg == NULL)
		return -ENOMEM;
	sc->cfg = cfg;
	/* Linux: gc_thresh-ish size, unres_qlen small, base_reachable_time 30 s,
	 * retrans_time 1 s, mcast_solicit 3, gc_stale_time 60 s. */
	*cfg = (struct neigh_cfg){ 1024, 8, 30000, 1000, 3, 60000 };
	for (i = 0; i < RTE_DIM(keys); i++) {
		snprintf(path, sizeof(path), "stages.%s.%s", sc->name, keys[i].key);
		if ((v = pf_map_get(sc->node, keys[i].key)) != NULL &&
		    pf_node_u32(v, path, keys[i].min, keys[i].max,
				(uint32_t *)((uint8_t *)cfg + keys[i].off), errs) < 0)
			rc = -EINVAL;
	}
	if (sc->n_instances > 1)
		rc = pf_node_err(errs, sc->node,
				 "stages.%s: instances: the neighbour table has one writer", sc->name);
	else if (!neigh_gets_arp(sc, env))
		rc = pf_node_err(errs, sc->node,
				 "stages.%s: no ARP comes in: wire rx's arp edge here (next: { arp: %s }) or lpm6's neigh edge, or replies are never seen",
				 sc->name, sc->name);
	return rc;
}

static void
neigh_cfg_free(void *cfg)
{
	free(cfg);
}

/*
 * The ports' MACs and addresses (init, and ports added or removed live:
 * ctl.ports). An added port's entries are written before its bits are
 * set; a kept port's are rewritten with what they hold. The neighbours of
 * a removed port go with the timer sweep (neigh_timer).
 */
static void
neigh_ports(struct pf_stage *st, uint32_t added, uint32_t gone, bool drained)
{
	struct neigh_priv *np = st->priv;
	uint32_t ok = 0, ok6 = 0;
	uint16_t i, j;

	for (i = 0; i < st->env->n_ports; i++) {
		const struct pf_port_conf *pc = &st->env->ports[i];

		/* A port that goes keeps what it had while what was routed to it drains. */
		if (!pf_port_present(pc))
			continue;
		np->max_frame[i] = pc->max_frame;
		if (!pc->has_mac)
			continue;
		memcpy(np->port_mac[i].addr_bytes, pc->mac, 6);
		if (pc->has_ipv4) {
			np->port_ip[i] = pc->ipv4;
			np->port_mask[i] = pc->ipv4_len == 0 ? 0 : ~0u << (32 - pc->ipv4_len);
			ok |= 1u << i;
		}
		pf_ip6_linklocal(pc->mac, np->addr6[i][0]);
		np->len6[i][0] = 64;
		for (j = 0; j < pc->n_ipv6; j++) {
			memcpy(np->addr6[i][j + 1], pc->ipv6[j], 16);
			np->len6[i][j + 1] = pc->ipv6_len[j];
		}
		np->n_addr6[i] = (uint8_t)(pc->n_ipv6 + 1);
		ok6 |= 1u << i;
	}
	if (!drained) {
		ok |= np->port_ok & gone;
		ok6 |= np->port_ok6 & gone;
	}
	__atomic_store_n(&np->port_ok, ok, __ATOMIC_RELEASE);
	__atomic_store_n(&np->port_ok6, ok6, __ATOMIC_RELEASE);
}

static int
neigh_init(struct pf_stage *st, struct pf_errs *errs)
{
	const struct neigh_cfg *cfg = st->conf->cfg;
	struct neigh_priv *np = st->priv;
	int rc;

	neigh_ports(st, 0, 0, true);
	np->icmp = (st->edge_connected & (1u << NEIGH_EDGE_ICMP)) != 0;
	np->icmp6 = (st->edge_connected & (1u << NEIGH_EDGE_ICMP6)) != 0;
	np->frag = (st->edge_connected & (1u << NEIGH_EDGE_FRAG)) != 0;
	np->host = (st->edge_connected & (1u << NEIGH_EDGE_HOST)) != 0;
	np->pcap_clock = st->env->clock == PF_CLOCK_PCAP;
	np->queue = cfg->queue;
	np->probes = cfg->probes;
	np->reachable_ns = cfg->reachable_ms * NEIGH_MS;
	np->retrans_ns = cfg->retrans_ms * NEIGH_MS;
	np->stale_gc_ns = cfg->stale_gc_ms * NEIGH_MS;
	np->rel = rte_zmalloc("pf_neigh_rel", sizeof(np->rel[0]) * (cfg->size + 1), 0);
	if (np->rel == NULL)
		return pf_err_add(errs, NULL, 0, 0, "stage %s: out of memory", st->conf->name);
	rc = pf_neigh_table_create(&np->t, cfg->size, st->socket, errs);
	if (rc < 0)
		return rc;
	return 0;
}

/* The forwarding stages fed to this one resolve next hops in its table. */
static void *
neigh_export_table(struct pf_stage *st)
{
	struct neigh_priv *np = st->priv;

	return np->t;
}

static void
neigh_free(struct pf_stage *st)
{
	struct neigh_priv *np = st->priv;
	uint16_t i;

	if (np == NULL)
		return;
	for (i = 0; i < np->n_req; i++)
		rte_pktmbuf_free(np->req[i]);
	np->n_req = 0;
	pf_neigh_table_destroy(np->t);
	np->t = NULL;
	rte_free(np->rel);
	np->rel = NULL;
}

/* ---- ARP frames ------------------------------------------------------------- */

/* Make an ARP request for @p tip (host order) out of @p port; to @p dst (NULL: broadcast). */
static void
neigh_request(struct pf_stage *st, uint16_t port, uint32_t tip, const uint8_t *dst)
{
	struct neigh_priv *np = st->priv;
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;
	struct pf_meta *md;
	struct rte_mbuf *m;

	if (np->pool == NULL || np->n_req == NEIGH_REQ_MAX ||
	    (m = rte_pktmbuf_alloc(np->pool)) == NULL) {
		st->ctrs[NEIGH_CTR_ARP_NOMBUF]++;
		return;
	}
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, sizeof(*eth) + sizeof(*arp));
	arp = (struct rte_arp_hdr *)(eth + 1);
	if (dst != NULL)
		memcpy(eth->dst_addr.addr_bytes, dst, 6);
	else
		memset(eth->dst_addr.addr_bytes, 0xff, 6);
	eth->src_addr = np->port_mac[port];
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	arp->arp_data.arp_sha = np->port_mac[port];
	arp->arp_data.arp_sip = rte_cpu_to_be_32(np->port_ip[port]);
	memset(&arp->arp_data.arp_tha, 0, sizeof(arp->arp_data.arp_tha));
	arp->arp_data.arp_tip = rte_cpu_to_be_32(tip);
	md = pf_meta(m);
	memset(md, 0, sizeof(*md));
	md->in_port = port;
	md->out_port = port;
	md->l2_len = RTE_ETHER_HDR_LEN;
	md->cls = PF_CLASS_ARP;
	np->req[np->n_req++] = m;
	st->replicas++;   /* a packet made here: the invariant's extra */
	st->ctrs[NEIGH_CTR_ARP_REQUEST]++;
}

static uint32_t
neigh_ip4(const struct pf_neigh *n)
{
	return (uint32_t)n->key.addr[0] << 24 | (uint32_t)n->key.addr[1] << 16 |
	       (uint32_t)n->key.addr[2] << 8 | n->key.addr[3];
}

/*
 * The source of an NS for @p target out of port @p p (RFC 4861 7.2.2): the
 * port's address whose prefix holds the target, else its link-local one.
 */
static const uint8_t *
neigh_ns_src(const struct neigh_priv *np, uint16_t p, const uint8_t *target)
{
	uint32_t i;

	for (i = 1; i < np->n_addr6[p]; i++)
		if (pf_ip6_in_prefix(target, np->addr6[p][i], np->len6[p][i]))
			return np->addr6[p][i];
	return np->addr6[p][0];
}

/* Make an NS for @p n's address out of its port; to @p dst (NULL: solicited-node multicast). */
static void
neigh_ns(struct pf_stage *st, const struct pf_neigh *n, const uint8_t *dst)
{
	struct neigh_priv *np = st->priv;
	uint16_t p = n->key.port;
	struct pf_meta *md;
	struct rte_mbuf *m;
	uint8_t *f;

	if (np->pool == NULL || np->n_req == NEIGH_REQ_MAX ||
	    (m = rte_pktmbuf_alloc(np->pool)) == NULL) {
		st->ctrs[NEIGH_CTR_NS_NOMBUF]++;
		return;
	}
	f = (uint8_t *)rte_pktmbuf_append(m, ND6_NS_FRAME_LEN);
	nd6_ns_build(f, np->port_mac[p].addr_bytes, neigh_ns_src(np, p, n->key.addr),
		     n->key.addr, dst);
	md = pf_meta(m);
	memset(md, 0, sizeof(*md));
	md->in_port = p;
	md->out_port = p;
	md->l2_len = RTE_ETHER_HDR_LEN;
	md->l3_len = 40;
	md->cls = PF_CLASS_IPV6;
	md->l4_proto = IPPROTO_ICMPV6;
	np->req[np->n_req++] = m;
	st->replicas++;   /* a packet made here: the invariant's extra */
	st->ctrs[NEIGH_CTR_NS_SENT]++;
}

/* Ask for @p n's MAC: an ARP request or an NS, to @p dst (NULL: broadcast / multicast). */
static void
neigh_solicit(struct pf_stage *st, const struct pf_neigh *n, const uint8_t *dst)
{
	if (n->key.af == PF_NEIGH_AF_INET6)
		neigh_ns(st, n, dst);
	else
		neigh_request(st, n->key.port, neigh_ip4(n), dst);
}

/* Queue @p n's held packets for release (resolved: with @p state once sent; else failed). */
static void
neigh_release(struct neigh_priv *np, struct pf_neigh *n, uint8_t rel, uint8_t state)
{
	if (n->n_held == 0) {
		if (rel == 1)
			pf_neigh_publish(n, state, NULL);
		return;
	}
	n->rel_state = state;
	if (n->rel == 0)
		np->rel[np->n_rel++] = n;
	n->rel = rel;
}

/*
 * What an ARP frame says about its sender, Linux's arp_process() rules: a
 * request to us creates or refreshes the entry (STALE, as Linux: a request
 * is no proof the path works both ways); a reply to us confirms it
 * (REACHABLE); anything else only updates an entry that exists (a
 * gratuitous ARP or a MAC change), never creates one (arp_accept=0).
 */
static void
neigh_learn(struct pf_stage *st, const struct pf_neigh_key *k, const uint8_t *sha, bool to_us,
	    bool reply, uint64_t now)
{
	struct neigh_priv *np = st->priv;
	struct pf_neigh *n;
	uint8_t state;

	if (unlikely(st->dry_run))
		return;   /* trace inject: the table stays as it is */
	n = pf_neigh_find(np->t, k);
	if (n == NULL) {
		if (!to_us || reply)
			return;
		n = pf_neigh_add(np->t, k);
		if (n == NULL)
			return;
		st->ctrs[NEIGH_CTR_LEARNED]++;
		n->updated_ns = now;
		memcpy(n->mac, sha, 6);
		pf_neigh_publish(n, PF_NEIGH_STALE, NULL);
		n->next_ns = now + np->stale_gc_ns;
		return;
	}
	if (n->state == PF_NEIGH_PERMANENT)
		return;
	state = to_us && reply ? PF_NEIGH_REACHABLE : PF_NEIGH_STALE;
	if (state == PF_NEIGH_REACHABLE)
		n->confirmed_ns = now;
	if (n->rel != 0)
		return;   /* its packets are on their way (resolved or failed) */
	if (n->state == PF_NEIGH_INCOMPLETE || n->state == PF_NEIGH_FAILED) {
		memcpy(n->mac, sha, 6);
		n->updated_ns = now;
		n->next_ns = now + (state == PF_NEIGH_REACHABLE ? np->reachable_ns :
				    np->stale_gc_ns);
		n->n_resolved++;
		st->ctrs[NEIGH_CTR_RESOLVED]++;
		neigh_release(np, n, 1, state);
		return;
	}
	if (memcmp(n->mac, sha, 6) == 0 && state != PF_NEIGH_REACHABLE)
		return;   /* nothing new */
	if (memcmp(n->mac, sha, 6) != 0)
		st->ctrs[NEIGH_CTR_UPDATED]++;
	n->updated_ns = now;
	n->probes = 0;
	n->next_ns = now + (state == PF_NEIGH_REACHABLE ? np->reachable_ns : np->stale_gc_ns);
	pf_neigh_publish(n, state, sha);
}

/* Bytes, not rte_ether_addr: an ND option's address sits at any alignment. */
static bool
neigh_mac_ok(const void *mac)
{
	const uint8_t *a = mac;

	return !(a[0] & 1) && (a[0] | a[1] | a[2] | a[3] | a[4] | a[5]) != 0;
}

/* One ARP frame: learn, answer a request for the port's address in place. */
static uint16_t
neigh_arp(struct pf_stage *st, struct rte_mbuf *m, struct pf_meta *md, uint64_t now)
{
	struct neigh_priv *np = st->priv;
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_arp_hdr *arp = rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *, md->l2_len);
	struct rte_arp_ipv4 *d = &arp->arp_data;
	uint16_t p = md->in_port;
	struct pf_neigh_key k;
	uint32_t sip, tip;
	bool req, to_us;

	if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) || arp->arp_hlen != 6 ||
	    arp->arp_plen != 4 ||
	    (arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) &&
	     arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REPLY)))
		return NEIGH_CTR_ARP_UNSUPPORTED;
	if (md->flags & PF_META_VLAN)
		return NEIGH_CTR_ARP_VLAN;
	if (!(md->flags & (PF_META_L2_MCAST | PF_META_L2_LOCAL)))
		return NEIGH_CTR_ARP_MAC_MISMATCH;
	if (!neigh_mac_ok(&d->arp_sha))
		return NEIGH_CTR_ARP_BAD_SHA;
	if (!(np->port_ok & (1u << p)))
		return NEIGH_CTR_ARP_NO_ADDR;
	sip = rte_be_to_cpu_32(d->arp_sip);
	tip = rte_be_to_cpu_32(d->arp_tip);
	if (sip == np->port_ip[p])
		return NEIGH_CTR_ARP_FROM_US;
	req = arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	to_us = tip == np->port_ip[p] && (req || (md->flags & PF_META_L2_LOCAL));
	/* 0.0.0.0 is an address probe (RFC 5227): nothing to learn. */
	if (sip != 0) {
		pf_neigh_key_ip4(&k, p, sip);
		neigh_learn(st, &k, d->arp_sha.addr_bytes, to_us, !req, now);
	}
	if (!req)
		return NEIGH_CTR_ARP_CONSUMED;
	if (!to_us)
		return sip == tip ? NEIGH_CTR_ARP_CONSUMED : NEIGH_CTR_ARP_NOT_FOR_US;
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	d->arp_tha = d->arp_sha;
	d->arp_tip = d->arp_sip;
	d->arp_sha = np->port_mac[p];
	d->arp_sip = rte_cpu_to_be_32(np->port_ip[p]);
	eth->dst_addr = d->arp_tha;
	eth->src_addr = np->port_mac[p];
	md->out_port = p;
	st->ctrs[NEIGH_CTR_ARP_REPLY]++;
	return neigh_ctr_max;
}

/* ---- packets to hold -------------------------------------------------------- */

/* Rewrite a packet lpm routed to a neighbour whose MAC is @p mac: what lpm_fwd does. */
static void
neigh_rewrite(const struct neigh_priv *np, struct rte_mbuf *m, const uint8_t *mac)
{
	struct pf_meta *md = pf_meta(m);
	uint8_t *eth = rte_pktmbuf_mtod(m, uint8_t *);

	if (md->cls == PF_CLASS_IPV6)
		eth[RTE_ETHER_HDR_LEN + offsetof(struct rte_ipv6_hdr, hop_limits)]--;
	else
		lpm_ttl_dec_fwd(eth + RTE_ETHER_HDR_LEN);
	memcpy(eth, mac, 6);
	memcpy(eth + 6, np->port_mac[md->out_port].addr_bytes, 6);
}

/*
 * The edge of a rewritten packet: out, or fragment when lpm found it over the
 * egress MTU with DF clear (DF-set ones went to lpm's icmp edge) and it
 * waited here for the neighbour.
 */
static uint16_t
neigh_out_edge(struct pf_stage *st, struct rte_mbuf *m)
{
	const struct neigh_priv *np = st->priv;

	/* lpm6 sends Packet Too Big before a packet comes here: IPv6 always fits. */
	if (likely(rte_pktmbuf_pkt_len(m) <= np->max_frame[pf_meta(m)->out_port]) ||
	    pf_meta(m)->cls == PF_CLASS_IPV6)
		return NEIGH_EDGE_OUT;
	if (np->frag)
		return NEIGH_EDGE_FRAG;
	st->ctrs[NEIGH_CTR_FRAG_UNWIRED]++;
	return NEIGH_EDGE_DROP;
}

/* Start (or restart) resolving @p n: INCOMPLETE, first broadcast request now. */
static void
neigh_resolve_start(struct pf_stage *st, struct pf_neigh *n, uint64_t now)
{
	struct neigh_priv *np = st->priv;

	pf_neigh_publish(n, PF_NEIGH_INCOMPLETE, NULL);
	n->updated_ns = now;
	n->probes = 1;
	n->next_ns = now + np->retrans_ns;
	neigh_solicit(st, n, NULL);
}

/*
 * neigh_hold in a dry run (trace inject): sent when the neighbour is
 * resolved, else "held" (the counter that would fire) with nothing added,
 * kept or asked.
 */
static __rte_noinline uint16_t
neigh_hold_dry(struct pf_stage *st, struct rte_mbuf *m, const struct pf_neigh_key *k)
{
	const struct neigh_priv *np = st->priv;
	const struct pf_neigh *n = pf_neigh_find(np->t, k);

	if (n != NULL && n->rel == 0 && n->state != PF_NEIGH_INCOMPLETE &&
	    n->state != PF_NEIGH_FAILED) {
		neigh_rewrite(np, m, n->mac);
		st->ctrs[NEIGH_CTR_FWD]++;
		return neigh_ctr_max;
	}
	if (n != NULL && n->n_held >= np->queue)
		return NEIGH_CTR_HOLD_OVERFLOW;
	st->ctrs[NEIGH_CTR_HELD]++;
	return neigh_ctr_max + 1;
}

/* A packet from lpm or lpm6 for neighbour @p k: send it, or hold it and ask. */
static uint16_t
neigh_hold(struct pf_stage *st, struct rte_mbuf *m, const struct pf_neigh_key *k, uint64_t now)
{
	struct neigh_priv *np = st->priv;
	struct pf_neigh *n;

	if (unlikely(st->dry_run))
		return neigh_hold_dry(st, m, k);
	if (np->pool == NULL)
		np->pool = m->pool;
	n = pf_neigh_find(np->t, k);
	if (n == NULL) {
		n = pf_neigh_add(np->t, k);
		if (n == NULL)
			return NEIGH_CTR_TABLE_FULL;
		neigh_resolve_start(st, n, now);
	} else if (n->rel == 0 && n->state != PF_NEIGH_INCOMPLETE &&
		   n->state != PF_NEIGH_FAILED) {
		/* Resolved since lpm looked: send it now. */
		neigh_rewrite(np, m, n->mac);
		st->ctrs[NEIGH_CTR_FWD]++;
		return neigh_ctr_max;
	} else if (n->state == PF_NEIGH_FAILED && n->rel == 0) {
		neigh_resolve_start(st, n, now);
	}
	if (n->n_held >= np->queue)
		return NEIGH_CTR_HOLD_OVERFLOW;
	n->held[n->n_held++] = m;
	np->held++;
	st->ctrs[NEIGH_CTR_HELD]++;
	return neigh_ctr_max + 1;
}

/* An IPv4 packet from lpm for next hop md->nexthop on md->out_port. */
static uint16_t
neigh_ip(struct pf_stage *st, struct rte_mbuf *m, struct pf_meta *md, uint64_t now)
{
	struct neigh_priv *np = st->priv;
	struct pf_neigh_key k;

	if (md->out_port >= PF_MAX_PORTS || !(np->port_ok & (1u << md->out_port)))
		return NEIGH_CTR_PROTO;
	pf_neigh_key_ip4(&k, md->out_port, md->nexthop);
	return neigh_hold(st, m, &k, now);
}

/* An IPv6 packet from lpm6 for the neighbour md->nexthop names on md->out_port. */
static uint16_t
neigh_ip6(struct pf_stage *st, struct rte_mbuf *m, struct pf_meta *md, uint64_t now)
{
	struct neigh_priv *np = st->priv;
	const uint8_t *a;
	struct pf_neigh_key k;

	if (md->out_port >= PF_MAX_PORTS || !(np->port_ok6 & (1u << md->out_port)) ||
	    md->l2_len != RTE_ETHER_HDR_LEN)
		return NEIGH_CTR_PROTO;
	if (md->nexthop == PF_NEIGH_ND6_DST)
		a = rte_pktmbuf_mtod_offset(m, const uint8_t *, RTE_ETHER_HDR_LEN +
					    offsetof(struct rte_ipv6_hdr, dst_addr));
	else
		a = pf_neigh_gw6(np->t, md->nexthop - 1);
	if (a == NULL)
		return NEIGH_CTR_PROTO;
	pf_neigh_key_ip6(&k, md->out_port, a);
	return neigh_hold(st, m, &k, now);
}

/* Is @p a one of port @p p's IPv6 addresses (link-local or `ipv6:`)? */
static bool
neigh_port_addr6(const struct neigh_priv *np, uint16_t p, const uint8_t *a)
{
	return pf_ip6_in_list((const uint8_t (*)[16])np->addr6[p], np->n_addr6[p], a);
}

/*
 * An NA (RFC 4861 7.2.5): updates an entry that exists, never creates one.
 * INCOMPLETE (or FAILED): needs the target link-layer option; the MAC is
 * taken, REACHABLE if Solicited else STALE, held packets released. Else: a
 * different MAC without Override only makes a REACHABLE entry STALE; with
 * Override (or the same MAC, or none given) the MAC is taken and Solicited
 * confirms (REACHABLE), a changed MAC without it is STALE; the same MAC
 * without Solicited changes nothing.
 */
static uint16_t
neigh_na(struct pf_stage *st, const struct nd6_msg *na, uint16_t p, uint64_t now)
{
	struct neigh_priv *np = st->priv;
	bool sol = (na->flags & ND6_NA_SOLICITED) != 0, same;
	struct pf_neigh_key k;
	struct pf_neigh *n;
	uint8_t state;

	if (neigh_port_addr6(np, p, na->target))
		return NEIGH_CTR_NA_FOR_US;
	pf_neigh_key_ip6(&k, p, na->target);
	n = pf_neigh_find(np->t, &k);
	if (n == NULL)
		return NEIGH_CTR_NA_UNKNOWN;
	if (n->state == PF_NEIGH_PERMANENT || n->rel != 0 || unlikely(st->dry_run))
		return NEIGH_CTR_NA_CONSUMED;
	if (n->state == PF_NEIGH_INCOMPLETE || n->state == PF_NEIGH_FAILED) {
		if (!na->has_lla)
			return NEIGH_CTR_NA_NO_TLLA;
		/* neigh_learn's "reply to us" is REACHABLE, a "request to us" STALE. */
		neigh_learn(st, &k, na->lla, true, sol, now);
		return NEIGH_CTR_NA_CONSUMED;
	}
	same = !na->has_lla || memcmp(na->lla, n->mac, 6) == 0;
	if (!(na->flags & ND6_NA_OVERRIDE) && !same) {
		if (n->state == PF_NEIGH_REACHABLE) {
			pf_neigh_publish(n, PF_NEIGH_STALE, NULL);
			n->updated_ns = now;
		}
		return NEIGH_CTR_NA_CONSUMED;
	}
	if (same && !sol)
		return NEIGH_CTR_NA_CONSUMED;   /* nothing new: the state stays, timers too */
	if (!same)
		st->ctrs[NEIGH_CTR_UPDATED]++;
	if (sol) {
		state = PF_NEIGH_REACHABLE;
		n->confirmed_ns = now;
	} else {
		state = PF_NEIGH_STALE;
	}
	n->updated_ns = now;
	if (state == PF_NEIGH_REACHABLE)
		n->probes = 0;
	n->next_ns = now + (state == PF_NEIGH_REACHABLE ? np->reachable_ns : np->stale_gc_ns);
	pf_neigh_publish(n, state, na->has_lla ? na->lla : NULL);
	return NEIGH_CTR_NA_CONSUMED;
}

/*
 * An NS or NA lpm6 validated (its checksum, RFC 4861 7.1): an NS for one of
 * the port's addresses teaches the sender's MAC (7.2.3: a new entry is
 * STALE) and is answered in place; an NA updates an entry (neigh_na).
 */
static uint16_t
neigh_nd(struct pf_stage *st, struct rte_mbuf *m, struct pf_meta *md, uint64_t now)
{
	struct neigh_priv *np = st->priv;
	uint16_t p = md->in_port;
	struct rte_ipv6_hdr *ip;
	struct nd6_msg msg;
	struct pf_neigh_key k;
	uint8_t *l4, to[6];
	uint32_t l4len;

	if (p >= PF_MAX_PORTS || !(np->port_ok6 & (1u << p)))
		return NEIGH_CTR_PROTO;
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, md->l2_len);
	l4 = (uint8_t *)ip + md->l3_len;
	l4len = rte_be_to_cpu_16(ip->payload_len) + 40u - md->l3_len;
	if (nd6_parse(ip, md->l3_len, l4, l4len, &msg) < 0)
		return NEIGH_CTR_ND_INVALID;
	if (msg.has_lla && !neigh_mac_ok(msg.lla))
		return NEIGH_CTR_ND_BAD_LLA;
	if (msg.type == ND6_NA)
		return neigh_na(st, &msg, p, now);
	if (!neigh_port_addr6(np, p, msg.target))
		return NEIGH_CTR_ND_INVALID;
	if (msg.has_lla && pf_ip6_zero_or_loopback(ip->src_addr) != 0) {
		pf_neigh_key_ip6(&k, p, ip->src_addr);
		neigh_learn(st, &k, msg.lla, true, false, now);
	}
	memcpy(to, msg.has_lla ? msg.lla : rte_pktmbuf_mtod(m, uint8_t *) + 6, 6);
	if (!neigh_mac_ok(to))
		return NEIGH_CTR_ND_BAD_LLA;
	if (nd6_na_reply(m, md, np->port_mac[p].addr_bytes, msg.target, to) < 0)
		return NEIGH_CTR_NS_NO_ROOM;
	st->ctrs[NEIGH_CTR_NA_SENT]++;
	return neigh_ctr_max;
}

static void neigh_sweep(struct pf_stage *st, uint64_t now, uint32_t max);

static uint16_t
neigh_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	struct neigh_priv *np = st->priv;
	uint64_t now = pf_now_ns();
	uint16_t i, c;

	/* Replay (clock: pcap): timers follow the packets, not the wall clock. */
	if (unlikely(np->pcap_clock) && !st->dry_run)
		neigh_sweep(st, now, UINT32_MAX);
	for (i = 0; i < n; i++) {
		struct pf_meta *md = pf_meta(pkts[i]);

		if (md->cls == PF_CLASS_ARP) {
			if (np->pool == NULL && !st->dry_run)
				np->pool = pkts[i]->pool;
			c = neigh_arp(st, pkts[i], md, now);
		} else if (md->cls == PF_CLASS_IPV4) {
			c = neigh_ip(st, pkts[i], md, now);
		} else if (md->cls == PF_CLASS_IPV6 && md->nexthop == PF_NEIGH_ND6_MSG) {
			if (np->pool == NULL && !st->dry_run)
				np->pool = pkts[i]->pool;
			c = neigh_nd(st, pkts[i], md, now);
		} else if (md->cls == PF_CLASS_IPV6) {
			c = neigh_ip6(st, pkts[i], md, now);
		} else {
			c = NEIGH_CTR_PROTO;
		}
		if (c == neigh_ctr_max) {
			edge[i] = neigh_out_edge(st, pkts[i]);
		} else if (np->host && (c == NEIGH_CTR_NA_CONSUMED || c == NEIGH_CTR_NA_UNKNOWN ||
					(c == NEIGH_CTR_ARP_CONSUMED &&
					 (md->flags & PF_META_L2_LOCAL)))) {
			/* Learned from; the host interface's kernel learns too: an
			 * answer to its own request (pipefwd answers the others). */
			st->ctrs[NEIGH_CTR_TO_HOST]++;
			edge[i] = NEIGH_EDGE_HOST;
		} else if (c == neigh_ctr_max + 1) {
			edge[i] = PF_EDGE_HELD;
		} else {
			PF_DROP(edge, i, st->ctrs, c);
		}
	}
	return PF_EDGE_MIXED;
}

/* ---- timers ----------------------------------------------------------------- */

static void
neigh_fail(struct pf_stage *st, struct pf_neigh *n, uint64_t now)
{
	struct neigh_priv *np = st->priv;

	st->ctrs[NEIGH_CTR_FAILED]++;
	pf_neigh_publish(n, PF_NEIGH_FAILED, NULL);
	n->updated_ns = now;
	n->next_ns = now + np->stale_gc_ns;
	if (n->n_held != 0)
		neigh_release(np, n, 2, PF_NEIGH_FAILED);
}

/* One entry's timer: Linux's neigh_timer_handler, without the DELAY state. */
static void
neigh_timer(struct pf_stage *st, struct pf_neigh *n, uint64_t now)
{
	struct neigh_priv *np = st->priv;
	const uint8_t *dst = NULL;

	if (n->rel != 0)
		return;
	/* Its port was removed live: what it holds fails (counted), then it goes. */
	if (n->key.port >= PF_MAX_PORTS ||
	    !(((np->port_ok | np->port_ok6) >> n->key.port) & 1)) {
		if (n->n_held != 0)
			neigh_fail(st, n, now);
		else
			pf_neigh_del(np->t, n);
		return;
	}
	switch (n->state) {
	case PF_NEIGH_INCOMPLETE:
	case PF_NEIGH_PROBE:
		if (now < n->next_ns)
			return;
		if (n->probes >= np->probes) {
			neigh_fail(st, n, now);
			return;
		}
		if (n->state == PF_NEIGH_PROBE)
			dst = n->mac;   /* unicast probes first, as Linux's ucast_probes */
		n->probes++;
		n->next_ns = now + np->retrans_ns;
		neigh_solicit(st, n, dst);
		return;
	case PF_NEIGH_REACHABLE:
		if (now >= n->confirmed_ns + np->reachable_ns) {
			pf_neigh_publish(n, PF_NEIGH_STALE, NULL);
			n->updated_ns = now;
		}
		return;
	case PF_NEIGH_STALE:
		if (__atomic_load_n(&n->used, __ATOMIC_RELAXED)) {
			/* Used while stale: check it again. */
			pf_neigh_publish(n, PF_NEIGH_PROBE, NULL);
			n->updated_ns = now;
			n->probes = 1;
			n->next_ns = now + np->retrans_ns;
			neigh_solicit(st, n, n->mac);
		} else if (now >= n->updated_ns + np->stale_gc_ns) {
			pf_neigh_del(np->t, n);
		}
		return;
	case PF_NEIGH_FAILED:
		if (n->n_held == 0 && now >= n->updated_ns + np->stale_gc_ns)
			pf_neigh_del(np->t, n);
		return;
	default:
		return;
	}
}

/* Visit @p max entries from the cursor on (all of them at most). */
static void
neigh_sweep(struct pf_stage *st, uint64_t now, uint32_t max)
{
	struct neigh_priv *np = st->priv;
	struct pf_neigh *n;
	uint32_t k, size = np->t->size + 1;

	for (k = 0; k < max && k < size; k++) {
		n = pf_neigh_at(np->t, np->cursor);
		if (n != NULL)
			neigh_timer(st, n, now);
		np->cursor = np->cursor + 1 >= size ? 0 : np->cursor + 1;
	}
	pf_neigh_reclaim(np->t);
}

static void
neigh_housekeep(struct pf_stage *st, uint64_t now)
{
	neigh_sweep(st, now, NEIGH_SWEEP);
}

/* ---- handing packets back ---------------------------------------------------- */

/* Held packets of released entries, in order; publish each entry once it is empty. */
static uint16_t
neigh_emit_released(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t max, uint16_t *edge)
{
	struct neigh_priv *np = st->priv;
	uint16_t out = 0, k, take;
	uint32_t i = 0, j = 0;

	for (i = 0; i < np->n_rel; i++) {
		struct pf_neigh *n = np->rel[i];

		take = RTE_MIN((uint16_t)(max - out), (uint16_t)n->n_held);
		for (k = 0; k < take; k++) {
			struct rte_mbuf *m = n->held[k];
			struct pf_meta *md = pf_meta(m);

			pkts[out] = m;
			if (n->rel == 1) {
				neigh_rewrite(np, m, n->mac);
				edge[out] = neigh_out_edge(st, m);
				st->ctrs[NEIGH_CTR_RELEASED]++;
			} else if (md->cls == PF_CLASS_IPV6 && np->icmp6) {
				md->nexthop = PF_META_ICMP(1, 3, 0);   /* address unreachable */
				md->out_port = md->in_port;
				edge[out] = NEIGH_EDGE_ICMP6;
				st->ctrs[NEIGH_CTR_TO_ICMP6]++;
			} else if (md->cls == PF_CLASS_IPV6) {
				PF_DROP(edge, out, st->ctrs, NEIGH_CTR_HOLD_TIMEOUT);
			} else if (np->icmp) {
				md->nexthop = PF_META_ICMP(PF_ICMP_DEST_UNREACH, 1, 0);
				md->out_port = md->in_port;
				edge[out] = NEIGH_EDGE_ICMP;
				st->ctrs[NEIGH_CTR_TO_ICMP]++;
			} else {
				PF_DROP(edge, out, st->ctrs, NEIGH_CTR_HOLD_TIMEOUT);
			}
			out++;
		}
		memmove(n->held, n->held + take, (n->n_held - take) * sizeof(n->held[0]));
		n->n_held -= take;
		np->held -= take;
		if (n->n_held != 0) {
			np->rel[j++] = n;   /* the rest next time */
			continue;
		}
		if (n->rel == 1)
			pf_neigh_publish(n, n->rel_state, NULL);
		n->rel = 0;
	}
	np->n_rel = j;
	return out;
}

/* Stopping: every held packet is dropped under its own name. */
static uint16_t
neigh_emit_stopped(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t max, uint16_t *edge)
{
	struct neigh_priv *np = st->priv;
	uint32_t i, size = np->t->size + 1;
	uint16_t out = 0;

	for (i = 0; i < size && out < max && np->held != 0; i++) {
		struct pf_neigh *n = pf_neigh_at(np->t, i);

		while (n != NULL && n->n_held != 0 && out < max) {
			pkts[out] = n->held[--n->n_held];
			np->held--;
			PF_DROP(edge, out, st->ctrs, NEIGH_CTR_HOLD_STOPPED);
			out++;
		}
	}
	return out;
}

static uint16_t
neigh_emit(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t max, uint16_t *edge,
	   bool draining)
{
	struct neigh_priv *np = st->priv;
	uint16_t out = 0, k;

	if (likely(np->n_req == 0 && np->n_rel == 0 && !(draining && np->held != 0)))
		return 0;
	k = RTE_MIN(max, np->n_req);
	for (out = 0; out < k; out++) {
		pkts[out] = np->req[out];
		edge[out] = NEIGH_EDGE_OUT;
	}
	memmove(np->req, np->req + k, (np->n_req - k) * sizeof(np->req[0]));
	np->n_req -= k;
	if (out < max && np->n_rel != 0)
		out += neigh_emit_released(st, pkts + out, max - out, edge + out);
	if (draining && out < max && np->n_rel == 0)
		out += neigh_emit_stopped(st, pkts + out, max - out, edge + out);
	return out;
}

static bool
neigh_busy(const struct pf_stage *st)
{
	const struct neigh_priv *np = st->priv;

	return __atomic_load_n(&np->held, __ATOMIC_RELAXED) != 0 ||
	       __atomic_load_n(&np->n_req, __ATOMIC_RELAXED) != 0;
}

static void
neigh_gauges(const struct pf_stage *st, struct pf_sink *out)
{
	const struct neigh_priv *np = st->priv;
	const struct { const char *name; uint64_t v; } g[] = {
		{ "entries", np->t != NULL ? __atomic_load_n(&np->t->n, __ATOMIC_RELAXED) : 0 },
		{ "in_flight", __atomic_load_n(&np->held, __ATOMIC_RELAXED) +
			       __atomic_load_n(&np->n_req, __ATOMIC_RELAXED) },
	};
	uint16_t i;

	for (i = 0; i < RTE_DIM(g); i++)
		pf_sink_u64(out, g[i].name, g[i].v);
}

/* ---- /pipefwd/table,STAGE,neighbors ------------------------------------------ */

static const struct pf_show_col neigh_cols[] = {
	{ "address", PF_SHOW_STR }, { "port", PF_SHOW_STR }, { "mac", PF_SHOW_STR },
	{ "state", PF_SHOW_STR }, { "held", PF_SHOW_U64 }, { "probes", PF_SHOW_U64 },
};

/*
 * Runs on the telemetry thread beside the writer: the published word is
 * read atomically (MAC and state together), the key does not change while
 * the slot is in use; held and probes are the writer's, shown as seen.
 */
static int
neigh_show(const struct pf_stage *st, const char *what, const struct pf_show_req *req,
	   struct pf_sink *d)
{
	const struct neigh_priv *np = st->priv;
	union pf_show_val v[RTE_DIM(neigh_cols)];
	char addr[INET6_ADDRSTRLEN], mac[18];
	struct pf_show *sh;
	uint32_t i;

	if (strcmp(what, "neighbors") != 0)
		return -ENOENT;
	sh = pf_show_start(d, req, neigh_cols, RTE_DIM(neigh_cols));
	if (sh == NULL)
		return -ENOMEM;
	for (i = 0; np->t != NULL && i <= np->t->size; i++) {
		const struct pf_neigh *n = pf_neigh_at(np->t, i);
		uint64_t pub;
		uint8_t state;

		if (n == NULL || (req->port >= 0 && n->key.port != req->port))
			continue;
		pub = __atomic_load_n(&n->pub, __ATOMIC_ACQUIRE);
		state = PF_NEIGH_PUB_STATE(pub);
		if (state == PF_NEIGH_NONE)
			continue;
		if (n->key.af == PF_NEIGH_AF_INET6)
			inet_ntop(AF_INET6, n->key.addr, addr, sizeof(addr));
		else
			snprintf(addr, sizeof(addr), "%u.%u.%u.%u", n->key.addr[0],
				 n->key.addr[1], n->key.addr[2], n->key.addr[3]);
		if ((pub & 0xffffffffffffull) != 0)
			pf_show_mac(mac, (const uint8_t *)&pub);
		else
			snprintf(mac, sizeof(mac), "-");
		v[0].s = addr;
		v[1].s = n->key.port < st->env->n_ports ? st->env->ports[n->key.port].name : "?";
		v[2].s = mac;
		v[3].s = pf_neigh_state_name(state);
		v[4].u = n->n_held;
		v[5].u = n->probes;
		pf_show_row(sh, v);
	}
	pf_show_end(sh);
	return 0;
}

static const char *const neigh_show_tables[] = { "neighbors", NULL };

const struct pf_stage_ops pf_neigh_ops = {
	.type = "neigh",
	.summary = "slow path: ARP and IPv6 ND neighbour resolution, holds packets until resolved",
	.flags = PF_STAGE_UPSTREAM_READS,
	.priv_size = sizeof(struct neigh_priv),
	.n_edges = NEIGH_EDGE_MAX,
	.edge_names = neigh_edges,
	.default_edge = NEIGH_EDGE_OUT,
	.n_ctrs = neigh_ctr_max,
	.ctrs = neigh_ctrs,
	.dp = {
		.process_burst = neigh_process_burst,
		.emit = neigh_emit,
		.housekeep = neigh_housekeep,
	},
	.ctl = {
		.param_keys = neigh_keys,
		.takes = PF_CARRY_ARP | PF_CARRY_NEIGH4 | PF_CARRY_NEIGH6,
		.edge_carries = neigh_carries,
		.parse = neigh_parse,
		.cfg_free = neigh_cfg_free,
		.init = neigh_init,
		.ports = neigh_ports,
		.export_table = neigh_export_table,
		.free = neigh_free,
	},
	.obs = {
		.busy = neigh_busy,
		.gauges = neigh_gauges,
		.show = neigh_show,
		.show_tables = neigh_show_tables,
	},
};
