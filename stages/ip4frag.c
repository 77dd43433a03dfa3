/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ip4frag: IPv4 fragmentation (RFC 791) off the fast path, with rte_ip_frag.
 * Edges: drop, out (the fragments, to tx; md->out_port as the router decided).
 * Counters: drop: frag_df_set, frag_too_many, frag_nombuf, frag_unsupported;
 *   info: fragmented (datagrams cut), fragments (packets made), unfragmented.
 * Params: mbufs (64..1048576, default 2048): the size of each of its two pools.
 *
 * Fed by lpm's optional "fragment" edge with datagrams longer than the
 * egress port's MTU and DF clear, already routed: TTL decremented, L2 header
 * rewritten, md->out_port set. The stage cuts each into fragments of at most
 * the egress MTU (max_frame - 14, as lpm's 3/4) with rte_ipv4_fragment_packet
 * (zero copy: every fragment is a direct mbuf from the stage's header pool,
 * holding the IPv4 header, chained to indirect mbufs from its second pool
 * that point into the original's payload), then puts the L2 header back in
 * front of each, computes each header checksum (rte_ip_frag leaves it 0) and
 * copies the metadata. rte_ip_frag keeps MF and the offset of an input that
 * is itself a fragment, and puts in non-first fragments only the options
 * whose copied flag is set (RFC 791 3.1).
 *
 * It emits more packets than it takes: expand() makes the fragments (and
 * frees the original's own reference), the runtime counts the extra ones as
 * replicas and runs process_burst on them, which drops with a named reason
 * the originals expand() could not cut (verdict per output packet).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_ip_frag.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>

#include "pf_log.h"
#include "pf_stage.h"

#define foreach_frag_ctr(_)									\
	_(FRAG_CTR_DF_SET, frag_df_set, DROP,							\
	  "DF set: not to be fragmented (wiring mistake: lpm sends those to icmp)")		\
	_(FRAG_CTR_TOO_MANY, frag_too_many, DROP,						\
	  "would make more fragments than a burst holds (256)")					\
	_(FRAG_CTR_NOMBUF, frag_nombuf, DROP, "the stage's header or indirect pool ran out")	\
	_(FRAG_CTR_UNSUPPORTED, frag_unsupported, DROP,						\
	  "not routed IPv4, or an egress MTU under 68 or under the IPv4 header length")	\
	_(FRAG_CTR_FRAGMENTED, fragmented, INFO, "datagrams cut into fragments")		\
	_(FRAG_CTR_FRAGMENTS, fragments, INFO, "fragments made (replicas: fragments - fragmented)") \
	_(FRAG_CTR_UNFRAGMENTED, unfragmented, INFO,						\
	  "datagrams that fit the egress MTU: sent on unchanged")

PF_CTR_ENUM(frag, foreach_frag_ctr);
PF_CTR_DESCS(frag, foreach_frag_ctr);

enum { FRAG_EDGE_DROP, FRAG_EDGE_OUT, FRAG_EDGE_MAX };
static const char *const frag_edges[] = { "drop", "out" };
static const uint16_t frag_carries[] = { 0, PF_CARRY_ROUTED };
static const char *const frag_keys[] = { "mbufs", NULL };

/* Verdict of an output packet, from expand to process_burst. */
#define FRAG_OK UINT8_MAX

/* Largest L2 header lpm leaves: Ethernet (a priority tag is stripped). */
#define FRAG_L2_MAX (RTE_ETHER_HDR_LEN + 4)

struct frag_cfg {
	uint32_t mbufs;
};

struct frag_priv {
	struct rte_mempool *direct;     /* one header mbuf per fragment */
	struct rte_mempool *indirect;   /* payload references into the original */
	uint16_t mtu[PF_MAX_PORTS];     /* egress IP MTU by port */
	uint16_t n_ports;
	uint64_t ts_flag;               /* rx timestamp dynflag, kept on fragments */
	uint8_t verdict[PF_BURST_MAX];  /* per packet of the last expand's output */
};

static int
frag_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs)
{
	struct frag_cfg *cfg = calloc(1, sizeof(*cfg));
	char path[PF_CONF_PATH_MAX];
	const struct pf_node *v;

	RTE_SET_USED(env);
	if (cfg == NULL)
		return -ENOMEM;
	sc->cfg = cfg;
	cfg->mbufs = 2048;
	snprintf(path, sizeof(path), "stages.%s.mbufs", sc->name);
	if ((v = pf_map_get(sc->node, "mbufs")) != NULL &&
	    pf_node_u32(v, path, 64, 1048576, &cfg->mbufs, errs) < 0)
		return -EINVAL;
	return 0;
}

static void
frag_cfg_free(void *cfg)
{
	free(cfg);
}

/* Each port's IP MTU (init, and ports added or removed live: ctl.ports). */
static void
frag_ports(struct pf_stage *st, uint32_t added, uint32_t gone, bool drained)
{
	struct frag_priv *fp = st->priv;
	uint16_t i;

	for (i = 0; i < st->env->n_ports; i++) {
		uint16_t mf = st->env->ports[i].max_frame;

		/* A port that goes keeps its MTU while what was routed to it drains. */
		if (!pf_port_present(&st->env->ports[i]))
			continue;
		fp->mtu[i] = mf > RTE_ETHER_HDR_LEN ? mf - RTE_ETHER_HDR_LEN : 0;
	}
	/* The count last: a new port's MTU is there before a packet may use it. */
	__atomic_store_n(&fp->n_ports, st->env->n_ports, __ATOMIC_RELEASE);
}

static int
frag_init(struct pf_stage *st, struct pf_errs *errs)
{
	static uint32_t seq;   /* pool names are global: one pair per stage made */
	const struct frag_cfg *cfg = st->conf->cfg;
	struct frag_priv *fp = st->priv;
	char name[RTE_MEMPOOL_NAMESIZE];
	uint32_t id = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);
	int bit;

	RTE_SET_USED(errs);
	frag_ports(st, 0, 0, true);
	bit = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, NULL);
	fp->ts_flag = bit >= 0 ? 1ull << bit : 0;
	/* Header mbufs: headroom for the L2 header, room for IPv4 with options. */
	snprintf(name, sizeof(name), "pf_frag%u_h", id);
	fp->direct = rte_pktmbuf_pool_create(name, cfg->mbufs, 0, 0,
					     RTE_PKTMBUF_HEADROOM + 64, SOCKET_ID_ANY);
	snprintf(name, sizeof(name), "pf_frag%u_i", id);
	fp->indirect = rte_pktmbuf_pool_create(name, cfg->mbufs, 0, 0, 0, SOCKET_ID_ANY);
	if (fp->direct == NULL || fp->indirect == NULL)
		return pf_err_add(errs, NULL, 0, 0,
				  "stages.%s: cannot create two pools of %u mbufs: %s (raise EAL -m)",
				  st->conf->name, cfg->mbufs, rte_strerror(rte_errno));
	return 0;
}

static void
frag_free(struct pf_stage *st)
{
	struct frag_priv *fp = st->priv;

	if (fp == NULL)
		return;
	rte_mempool_free(fp->direct);
	rte_mempool_free(fp->indirect);
	fp->direct = NULL;
	fp->indirect = NULL;
}

/* Fragments a datagram of @p tot bytes with an @p hl byte header needs at @p mtu. */
static uint32_t
frag_count(uint32_t tot, uint32_t hl, uint32_t mtu)
{
	uint32_t size = RTE_ALIGN_FLOOR(mtu - hl, 8);

	return (tot - hl + size - 1) / size;
}

/*
 * Finish fragment @p f of @p m: the L2 header @p l2 (@p l2_len bytes) in
 * front, the header checksum, the metadata and the rx timestamp.
 */
static void
frag_finish(const struct frag_priv *fp, struct rte_mbuf *f, const struct rte_mbuf *m,
	    const uint8_t *l2, uint8_t l2_len)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(f, struct rte_ipv4_hdr *);
	uint16_t fo = rte_be_to_cpu_16(ip->fragment_offset);
	struct pf_meta *md;

	ip->hdr_checksum = rte_ipv4_cksum(ip);
	/* The header mbuf has RTE_PKTMBUF_HEADROOM: prepend cannot fail. */
	memcpy(rte_pktmbuf_prepend(f, l2_len), l2, l2_len);
	/* Every dynfield: pf_meta, the rx timestamp, whatever else rides along. */
	memcpy(f->dynfield1, m->dynfield1, sizeof(f->dynfield1));
	f->ol_flags |= m->ol_flags & fp->ts_flag;
	f->port = m->port;
	md = pf_meta(f);
	md->l3_len = (uint8_t)rte_ipv4_hdr_len(ip);
	md->flags &= (uint8_t)~(PF_META_IP_NONFIRST | PF_META_IP_OPTIONS);
	md->flags |= PF_META_IP_FRAG;
	if (fo & RTE_IPV4_HDR_OFFSET_MASK)
		md->flags |= PF_META_IP_NONFIRST;
	if (md->l3_len > sizeof(*ip))
		md->flags |= PF_META_IP_OPTIONS;
}

/*
 * Cut @p m into out[0..room); returns the fragments made (@p m itself with
 * *@p why FRAG_CTR_UNFRAGMENTED when it fits), or 0 with the drop in *@p why.
 */
static uint16_t
frag_one(const struct frag_priv *fp, struct rte_mbuf *m, struct rte_mbuf **out, uint16_t room,
	 uint8_t *why)
{
	const struct pf_meta *md = pf_meta(m);
	uint8_t l2[FRAG_L2_MAX], l2_len = md->l2_len;
	const struct rte_ipv4_hdr *ip;
	uint32_t tot, hl, mtu, n;
	int rc;
	uint16_t k;

	if (md->cls != PF_CLASS_IPV4 || md->out_port >= fp->n_ports || l2_len > FRAG_L2_MAX ||
	    m->data_len < l2_len + sizeof(*ip)) {
		*why = FRAG_CTR_UNSUPPORTED;
		return 0;
	}
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, l2_len);
	tot = rte_be_to_cpu_16(ip->total_length);
	hl = rte_ipv4_hdr_len(ip);
	mtu = fp->mtu[md->out_port];
	if (tot < hl || m->pkt_len < l2_len + tot) {
		*why = FRAG_CTR_UNSUPPORTED;
		return 0;
	}
	/* Fits already (a wiring without lpm in front): on unchanged. */
	if (tot <= mtu) {
		*why = FRAG_CTR_UNFRAGMENTED;
		out[0] = m;
		return 1;
	}
	if (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG)) {
		*why = FRAG_CTR_DF_SET;
		return 0;
	}
	if (mtu < RTE_ETHER_MIN_MTU || mtu < hl + 8) {
		*why = FRAG_CTR_UNSUPPORTED;
		return 0;
	}
	n = frag_count(tot, hl, mtu);
	if (n > room) {
		*why = FRAG_CTR_TOO_MANY;
		return 0;
	}
	memcpy(l2, rte_pktmbuf_mtod(m, void *), l2_len);
	/* rte_ip_frag takes the datagram from its IPv4 header to its last byte. */
	if (m->pkt_len > l2_len + tot)
		rte_pktmbuf_trim(m, (uint16_t)(m->pkt_len - l2_len - tot));
	rte_pktmbuf_adj(m, l2_len);
	rc = rte_ipv4_fragment_packet(m, out, (uint16_t)n, (uint16_t)mtu, fp->direct,
				      fp->indirect);
	if (rc <= 0) {
		rte_pktmbuf_prepend(m, l2_len);
		*why = rc == -ENOMEM ? FRAG_CTR_NOMBUF : FRAG_CTR_UNSUPPORTED;
		return 0;
	}
	for (k = 0; k < rc; k++)
		frag_finish(fp, out[k], m, l2, l2_len);
	*why = FRAG_CTR_FRAGMENTED;
	/* The fragments hold the data by reference now; drop the original's own. */
	rte_pktmbuf_free(m);
	return (uint16_t)rc;
}

static uint16_t
frag_expand(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *taken,
	    struct rte_mbuf **out, uint16_t max)
{
	struct frag_priv *fp = st->priv;
	uint16_t i, k = 0, made;
	uint8_t why = 0;

	for (i = 0; i < n && k < max; i++) {
		made = frag_one(fp, pkts[i], out + k, max - k, &why);
		if (made != 0) {
			memset(&fp->verdict[k], FRAG_OK, made);
			k += made;
			if (why == FRAG_CTR_UNFRAGMENTED) {
				st->ctrs[FRAG_CTR_UNFRAGMENTED]++;
				continue;
			}
			st->ctrs[FRAG_CTR_FRAGMENTED]++;
			st->ctrs[FRAG_CTR_FRAGMENTS] += made;
			continue;
		}
		/* Too many for what is left of this output: next call, unless it never fits. */
		if (why == FRAG_CTR_TOO_MANY && k != 0)
			break;
		fp->verdict[k] = why;
		out[k++] = pkts[i];
	}
	*taken = i;
	return k;
}

static uint16_t
frag_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	const struct frag_priv *fp = st->priv;
	uint16_t i, dropped = 0;

	RTE_SET_USED(pkts);
	for (i = 0; i < n; i++) {
		if (likely(fp->verdict[i] == FRAG_OK)) {
			edge[i] = FRAG_EDGE_OUT;
			continue;
		}
		PF_DROP(edge, i, st->ctrs, fp->verdict[i]);
		dropped++;
	}
	return dropped == 0 ? FRAG_EDGE_OUT : PF_EDGE_MIXED;
}

static void
frag_gauges(const struct pf_stage *st, struct pf_sink *out)
{
	const struct frag_priv *fp = st->priv;

	if (fp->direct == NULL || fp->indirect == NULL)
		return;
	pf_sink_u64(out, "header_mbufs_free", rte_mempool_avail_count(fp->direct));
	pf_sink_u64(out, "indirect_mbufs_free", rte_mempool_avail_count(fp->indirect));
}

const struct pf_stage_ops pf_ip4frag_ops = {
	.type = "ip4frag",
	.summary = "slow path: fragment IPv4 datagrams longer than the egress MTU (RFC 791)",
	.priv_size = sizeof(struct frag_priv),
	.n_edges = FRAG_EDGE_MAX,
	.edge_names = frag_edges,
	.default_edge = FRAG_EDGE_OUT,
	.n_ctrs = frag_ctr_max,
	.ctrs = frag_ctrs,
	.dp = {
		.expand = frag_expand,
		.process_burst = frag_process_burst,
	},
	.ctl = {
		.param_keys = frag_keys,
		.takes = PF_CARRY_FRAG4,
		.edge_carries = frag_carries,
		.parse = frag_parse,
		.cfg_free = frag_cfg_free,
		.init = frag_init,
		.ports = frag_ports,
		.free = frag_free,
	},
	.obs = {
		.gauges = frag_gauges,
	},
};
