/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * host: the router's host interfaces, so a routing daemon (FRR, BIRD) sees
 * the router's ports and talks through them: one kernel TAP per port, in
 * the network namespace the topology names, with the port's MAC, MTU and
 * addresses, its carrier following the port's link. Packets for the router
 * that pipefwd does not answer itself arrive on this stage's input (lpm's,
 * lpm6's and neigh's `host` edges) and go unchanged to the ingress port's
 * TAP, rate-limited per class; frames the kernel sends on a TAP leave the
 * paired port unchanged (no TTL rewrite: GTSM works).
 * Edges: drop, out (to tx: the kernel's frames).
 * Counters: host_ratelimited_{arp,nd,icmp,tcp,udp,mcast,other},
 * host_no_interface, host_queue_full, host_write_failed (drop); host_delivered,
 * host_injected, host_oversize, host_nombuf, host_carrier_changes (info).
 * Params: namespace, ports, names, rate (per class, and burst).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pf_log.h"
#include "pf_nl.h"
#include "pf_stage.h"

/* Traffic classes a punt is rate-limited by. */
#define foreach_host_class(_) \
	_(ARP, arp) _(ND, nd) _(ICMP, icmp) _(TCP, tcp) _(UDP, udp) _(MCAST, mcast) _(OTHER, other)
#define HOST_CLASS_ENUM(u, l) HOST_CLASS_##u,
enum { foreach_host_class(HOST_CLASS_ENUM) HOST_CLASS_MAX };
#define HOST_CLASS_NAME(u, l) #l,
static const char *const host_class_names[] = { foreach_host_class(HOST_CLASS_NAME) };

#define foreach_host_ctr(_)									\
	_(HOST_CTR_RL_ARP, host_ratelimited_arp, DROP, "ARP to the host over its rate")	\
	_(HOST_CTR_RL_ND, host_ratelimited_nd, DROP, "Neighbour Discovery to the host over its rate") \
	_(HOST_CTR_RL_ICMP, host_ratelimited_icmp, DROP, "ICMP/ICMPv6 to the host over its rate") \
	_(HOST_CTR_RL_TCP, host_ratelimited_tcp, DROP, "TCP to the host over its rate")	\
	_(HOST_CTR_RL_UDP, host_ratelimited_udp, DROP, "UDP to the host over its rate")	\
	_(HOST_CTR_RL_MCAST, host_ratelimited_mcast, DROP,					\
	  "link-local multicast to the host over its rate")					\
	_(HOST_CTR_RL_OTHER, host_ratelimited_other, DROP, "other packets to the host over their rate") \
	_(HOST_CTR_NO_IF, host_no_interface, DROP, "punted from a port without a host interface") \
	_(HOST_CTR_QUEUE_FULL, host_queue_full, DROP,						\
	  "punted while the queue to the host interfaces was full")				\
	_(HOST_CTR_WRITE_FAILED, host_write_failed, DROP,					\
	  "the host interface refused the frame (its queue full, or down)")			\
	_(HOST_CTR_DELIVERED, host_delivered, INFO, "frames written to a host interface")	\
	_(HOST_CTR_INJECTED, host_injected, INFO,						\
	  "frames the kernel sent on a host interface, sent on its port unchanged")		\
	_(HOST_CTR_OVERSIZE, host_oversize, INFO,						\
	  "frames the kernel sent over the port's largest frame: not sent")			\
	_(HOST_CTR_NOMBUF, host_nombuf, INFO,							\
	  "frames the kernel sent while the host pool was empty: left in the TAP")		\
	_(HOST_CTR_CARRIER, host_carrier_changes, INFO,					\
	  "a host interface's carrier followed its port's link up or down")

PF_CTR_ENUM(host, foreach_host_ctr);
PF_CTR_DESCS(host, foreach_host_ctr);

enum { HOST_EDGE_DROP, HOST_EDGE_OUT, HOST_EDGE_MAX };
static const char *const host_edges[] = { "drop", "out" };
static const uint16_t host_carries[] = { 0, PF_CARRY_ROUTED };
static const char *const host_keys[] = { "namespace", "ports", "names", "rate", NULL };

#define HOST_QUEUE 1024              /* punted frames waiting for the TAP writes */
#define HOST_POOL 2047               /* mbufs for the kernel's frames */
#define HOST_READ_MAX 32             /* frames read from one TAP per emit */
#define HOST_LINK_CHECK_NS 100000000ull
#define HOST_RATE_DEFAULT 10000      /* packets per second per class */
#define HOST_BURST_DEFAULT 1000

struct host_cfg {
	char ns[64];                     /* "" : this process's namespace */
	uint32_t ports;                  /* bit p: port p has a host interface */
	char name[PF_MAX_PORTS][IFNAMSIZ];
	uint32_t rate[HOST_CLASS_MAX];   /* packets per second, 0: none passes */
	uint32_t burst;
};

struct host_bucket {
	uint64_t tokens;                 /* in 1e-9 packets: rate * ns */
	uint64_t last_ns;
};

struct host_priv {
	int fd[PF_MAX_PORTS];            /* the TAP of port p, -1: none */
	uint32_t ports;
	struct rte_mempool *pool;
	struct host_bucket bucket[HOST_CLASS_MAX];
	uint64_t rate[HOST_CLASS_MAX];
	uint64_t cap;                    /* bucket depth, 1e-9 packets */
	/* punted, written to the TAPs at the next emit (owning lcore) */
	struct rte_mbuf *queue[HOST_QUEUE];
	uint16_t n_queued;
	uint16_t next_read;              /* the port whose TAP emit reads first (fairness) */
	uint64_t link_check_ns;
	uint8_t carrier[PF_MAX_PORTS];   /* 1 up, 0 down, as the TAP was told */
	uint64_t delivered;
};

static int
host_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs)
{
	const struct pf_node *n;
	struct host_cfg *cfg;
	char path[PF_CONF_PATH_MAX];
	const char *s;
	uint16_t idx[PF_MAX_PORTS], np = 0, i, c;
	uint32_t k;
	int rc = 0;
	struct stat sb;

	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return -ENOMEM;
	sc->cfg = cfg;
	for (c = 0; c < HOST_CLASS_MAX; c++)
		cfg->rate[c] = HOST_RATE_DEFAULT;
	cfg->burst = HOST_BURST_DEFAULT;
	n = pf_map_get(sc->node, "namespace");
	if (n != NULL) {
		snprintf(path, sizeof(path), "stages.%s.namespace", sc->name);
		if (pf_node_str(n, path, &s, errs) < 0)
			return -EINVAL;
		if (strlen(s) >= sizeof(cfg->ns) || strchr(s, '/') != NULL || s[0] == '.' ||
		    s[0] == '\0')
			return pf_node_err(errs, n, "%s: '%s' is not a namespace name", path, s);
		snprintf(cfg->ns, sizeof(cfg->ns), "%s", s);
		snprintf(path, sizeof(path), "/run/netns/%s", s);
		if (stat(path, &sb) < 0)
			rc = pf_node_err(errs, n, "stages.%s.namespace: no network namespace '%s' "
					 "(make it first: ip netns add %s)", sc->name, s, s);
	}
	n = pf_map_get(sc->node, "ports");
	if (n != NULL) {
		snprintf(path, sizeof(path), "stages.%s.ports", sc->name);
		if (pf_stage_port_list(env, n, path, idx, PF_MAX_PORTS, &np, errs) < 0)
			return -EINVAL;
	} else {
		/* Every port with an address: the ones a daemon routes over. */
		for (i = 0; i < env->n_ports; i++)
			if (env->ports[i].has_ipv4 || env->ports[i].n_ipv6 != 0)
				idx[np++] = i;
	}
	for (i = 0; i < np; i++) {
		const struct pf_port_conf *pc = &env->ports[idx[i]];

		cfg->ports |= 1u << idx[i];
		/* The port's name, unless too long for an interface (names: then). */
		if (strlen(pc->name) < IFNAMSIZ)
			memcpy(cfg->name[idx[i]], pc->name, strlen(pc->name) + 1);
		if (!pc->has_mac)
			rc = pf_node_err(errs, sc->node, "stages.%s: port %s needs a mac: for its "
					 "host interface", sc->name, pc->name);
	}
	n = pf_map_get(sc->node, "names");
	if (n != NULL) {
		snprintf(path, sizeof(path), "stages.%s.names", sc->name);
		if (pf_node_expect(n, PF_NODE_MAP, path, errs) < 0)
			return -EINVAL;
		for (k = 0; k < n->n; k++) {
			int p = pf_stage_port_index(env, n->keys[k]->value);

			if (p < 0 || !(cfg->ports & (1u << p))) {
				rc = pf_node_err(errs, n->keys[k], "%s: '%s' is not a port with a host "
						 "interface", path, n->keys[k]->value);
				continue;
			}
			if (pf_node_str(n->items[k], path, &s, errs) < 0 || s[0] == '\0' ||
			    strlen(s) >= IFNAMSIZ || strchr(s, '/') != NULL) {
				rc = pf_node_err(errs, n->items[k], "%s.%s: an interface name of 1 to "
						 "15 characters", path, n->keys[k]->value);
				continue;
			}
			snprintf(cfg->name[p], IFNAMSIZ, "%s", s);
		}
	}
	for (i = 0; i < env->n_ports; i++)
		if ((cfg->ports & (1u << i)) && cfg->name[i][0] == '\0')
			rc = pf_node_err(errs, sc->node, "stages.%s: port %s: its name is longer than "
					 "an interface name (15): give one in names:", sc->name,
					 env->ports[i].name);
	n = pf_map_get(sc->node, "rate");
	if (n != NULL) {
		snprintf(path, sizeof(path), "stages.%s.rate", sc->name);
		if (pf_node_expect(n, PF_NODE_MAP, path, errs) < 0)
			return -EINVAL;
		for (k = 0; k < n->n; k++) {
			if (strcmp(n->keys[k]->value, "burst") == 0) {
				if (pf_node_u32(n->items[k], path, 1, 1000000, &cfg->burst, errs) < 0)
					rc = -EINVAL;
				continue;
			}
			for (c = 0; c < HOST_CLASS_MAX; c++)
				if (strcmp(n->keys[k]->value, host_class_names[c]) == 0)
					break;
			if (c == HOST_CLASS_MAX) {
				rc = pf_node_err(errs, n->keys[k], "%s: unknown class '%s' (classes: "
						 "arp, nd, icmp, tcp, udp, mcast, other; and burst)", path,
						 n->keys[k]->value);
				continue;
			}
			if (pf_node_u32(n->items[k], path, 0, 10000000, &cfg->rate[c], errs) < 0)
				rc = -EINVAL;
		}
	}
	if (cfg->ports == 0)
		rc = pf_node_err(errs, sc->node, "stages.%s: no port for a host interface (no port "
				 "has an address; name them in ports:)", sc->name);
	return rc;
}

static void
host_cfg_free(void *cfg)
{
	free(cfg);
}

/* A TAP named @p name in this process's namespace; its fd, or -errno. */
static int
host_tap_open(const char *name)
{
	struct ifreq ifr = { 0 };
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

static void
host_set_carrier(struct pf_stage *st, uint16_t p, bool up)
{
	struct host_priv *hp = st->priv;
	int on = up;

	if (ioctl(hp->fd[p], TUNSETCARRIER, &on) == 0)
		hp->carrier[p] = up;
}

/* Make port @p p's host interface: a TAP here, moved to the namespace, configured there. */
static int
host_interface(struct pf_stage *st, uint16_t p, int nl_here, int nl_there, int ns_fd,
	       struct pf_errs *errs)
{
	const struct host_cfg *cfg = st->conf->cfg;
	const struct pf_port_conf *pc = &st->env->ports[p];
	struct host_priv *hp = st->priv;
	const char *name = cfg->name[p];
	uint8_t a4[4];
	int ifx, rc, k;

	hp->fd[p] = host_tap_open(name);
	if (hp->fd[p] < 0)
		return pf_err_add(errs, NULL, 0, 0, "stage %s: port %s: cannot make the TAP %s: %s",
				  st->conf->name, pc->name, name, strerror(-hp->fd[p]));
	ifx = pf_nl_link_index(nl_here, name);
	rc = ifx < 0 ? ifx : 0;
	if (rc == 0 && ns_fd >= 0) {
		rc = pf_nl_link_netns(nl_here, ifx, ns_fd);
		if (rc == 0)
			ifx = pf_nl_link_index(nl_there, name);
		rc = ifx < 0 ? ifx : rc;
	}
	if (rc == 0)
		rc = pf_nl_link_set(nl_there, ifx, pc->mac, pc->mtu, true);
	if (rc == 0 && pc->has_ipv4) {
		uint32_t be = htonl(pc->ipv4);

		memcpy(a4, &be, 4);
		rc = pf_nl_addr_add(nl_there, ifx, AF_INET, a4, pc->ipv4_len);
	}
	for (k = 0; rc == 0 && k < pc->n_ipv6; k++)
		rc = pf_nl_addr_add(nl_there, ifx, AF_INET6, pc->ipv6[k], pc->ipv6_len[k]);
	if (rc < 0)
		return pf_err_add(errs, NULL, 0, 0, "stage %s: port %s: host interface %s%s%s: %s",
				  st->conf->name, pc->name, name, cfg->ns[0] ? " in namespace " : "",
				  cfg->ns, strerror(-rc));
	/* Down until the port's link says up (housekeep follows it). */
	host_set_carrier(st, p, false);
	PF_LOG(INFO, "stage %s: port %s: host interface %s%s%s (ifindex %d)", st->conf->name,
	       pc->name, name, cfg->ns[0] ? " in namespace " : "", cfg->ns, ifx);
	return 0;
}

static int
host_init(struct pf_stage *st, struct pf_errs *errs)
{
	const struct host_cfg *cfg = st->conf->cfg;
	struct host_priv *hp = st->priv;
	char pool[RTE_MEMPOOL_NAMESIZE];
	uint16_t p, c, frame = RTE_ETHER_MAX_LEN;
	int nl_here = -1, nl_there = -1, ns_fd = -1, rc = 0;

	for (p = 0; p < PF_MAX_PORTS; p++)
		hp->fd[p] = -1;
	for (p = 0; p < st->env->n_ports; p++)
		if ((cfg->ports & (1u << p)) && st->env->ports[p].max_frame > frame)
			frame = st->env->ports[p].max_frame;
	snprintf(pool, sizeof(pool), "pf_host_%u", st->id);
	hp->pool = rte_pktmbuf_pool_create(pool, HOST_POOL, 64, 0,
					   RTE_PKTMBUF_HEADROOM + frame, st->socket);
	if (hp->pool == NULL)
		return pf_err_add(errs, NULL, 0, 0, "stage %s: no memory for the host pool (raise "
				  "EAL -m)", st->conf->name);
	for (c = 0; c < HOST_CLASS_MAX; c++) {
		hp->rate[c] = cfg->rate[c];
		hp->bucket[c].tokens = (uint64_t)cfg->burst * 1000000000ull;
	}
	hp->cap = (uint64_t)cfg->burst * 1000000000ull;
	nl_here = pf_nl_open(NULL);
	nl_there = cfg->ns[0] != '\0' ? pf_nl_open(cfg->ns) : nl_here;
	if (cfg->ns[0] != '\0')
		ns_fd = pf_nl_netns_fd(cfg->ns);
	if (nl_here < 0 || nl_there < 0 || (cfg->ns[0] != '\0' && ns_fd < 0)) {
		rc = pf_err_add(errs, NULL, 0, 0, "stage %s: namespace %s: %s", st->conf->name,
				cfg->ns[0] ? cfg->ns : "(own)",
				strerror(nl_here < 0 ? -nl_here : nl_there < 0 ? -nl_there : -ns_fd));
		goto out;
	}
	for (p = 0; p < st->env->n_ports && rc == 0; p++)
		if (cfg->ports & (1u << p)) {
			rc = host_interface(st, p, nl_here, nl_there, ns_fd, errs);
			if (rc == 0)
				hp->ports |= 1u << p;
		}
out:
	if (ns_fd >= 0)
		close(ns_fd);
	if (nl_there != nl_here)
		pf_nl_close(nl_there);
	pf_nl_close(nl_here);
	return rc;
}

static void
host_free(struct pf_stage *st)
{
	struct host_priv *hp = st->priv;
	uint16_t p;

	if (hp == NULL)
		return;
	/* Closing a TAP that is not persistent removes the interface. */
	for (p = 0; p < PF_MAX_PORTS; p++)
		if (hp->fd[p] >= 0) {
			close(hp->fd[p]);
			hp->fd[p] = -1;
		}
	rte_pktmbuf_free_bulk(hp->queue, hp->n_queued);
	hp->n_queued = 0;
	rte_mempool_free(hp->pool);
	hp->pool = NULL;
}

/* ---- punt: to the host ------------------------------------------------------ */

static uint8_t
host_class(const struct rte_mbuf *m, const struct pf_meta *md)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint16_t et = md->l2_len == 18 ?
		((const struct rte_vlan_hdr *)(eth + 1))->eth_proto : eth->ether_type;

	if (et == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP))
		return HOST_CLASS_ARP;
	if (md->l4_proto == IPPROTO_ICMPV6) {
		const uint8_t *l4 = rte_pktmbuf_mtod_offset(m, const uint8_t *,
							    md->l2_len + md->l3_len);

		if (rte_pktmbuf_data_len(m) > (uint32_t)(md->l2_len + md->l3_len) &&
		    l4[0] >= 133 && l4[0] <= 137)
			return HOST_CLASS_ND;
		return HOST_CLASS_ICMP;
	}
	if (rte_is_multicast_ether_addr(&eth->dst_addr))
		return HOST_CLASS_MCAST;
	switch (md->l4_proto) {
	case IPPROTO_TCP:
		return HOST_CLASS_TCP;
	case IPPROTO_UDP:
		return HOST_CLASS_UDP;
	case IPPROTO_ICMP:
		return HOST_CLASS_ICMP;
	default:
		return HOST_CLASS_OTHER;
	}
}

/* A token per packet, refilled at the class's rate up to the burst. */
static bool
host_admit(struct host_priv *hp, uint8_t c, uint64_t now)
{
	struct host_bucket *b = &hp->bucket[c];
	uint64_t t = b->tokens + (now - b->last_ns) * hp->rate[c];

	b->last_ns = now;
	b->tokens = t > hp->cap ? hp->cap : t;
	if (b->tokens < 1000000000ull)
		return false;
	b->tokens -= 1000000000ull;
	return true;
}

static uint16_t
host_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	struct host_priv *hp = st->priv;
	uint64_t now = pf_now_ns();
	uint16_t i;
	uint8_t c;

	for (i = 0; i < n; i++) {
		const struct pf_meta *md = pf_meta(pkts[i]);

		if (md->in_port >= PF_MAX_PORTS || !(hp->ports & (1u << md->in_port))) {
			PF_DROP(edge, i, st->ctrs, HOST_CTR_NO_IF);
			continue;
		}
		c = host_class(pkts[i], md);
		if (unlikely(st->dry_run)) {
			/* trace inject: the same answer from a copy, nothing kept. */
			struct host_bucket b = hp->bucket[c];
			bool ok = host_admit(hp, c, now);

			hp->bucket[c] = b;
			if (!ok)
				PF_DROP(edge, i, st->ctrs, HOST_CTR_RL_ARP + c);
			else if (hp->n_queued == HOST_QUEUE)
				PF_DROP(edge, i, st->ctrs, HOST_CTR_QUEUE_FULL);
			else
				edge[i] = PF_EDGE_HELD;
			continue;
		}
		if (!host_admit(hp, c, now)) {
			PF_DROP(edge, i, st->ctrs, HOST_CTR_RL_ARP + c);
			continue;
		}
		if (hp->n_queued == HOST_QUEUE) {
			PF_DROP(edge, i, st->ctrs, HOST_CTR_QUEUE_FULL);
			continue;
		}
		/* Kept: written to the TAP by emit, right after this burst. */
		hp->queue[hp->n_queued++] = pkts[i];
		edge[i] = PF_EDGE_HELD;
	}
	return PF_EDGE_MIXED;
}

/* Write the queued frames to their ports' TAPs; a refused one is dropped (returned). */
static uint16_t
host_write(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t max, uint16_t *edge)
{
	struct host_priv *hp = st->priv;
	uint8_t buf[RTE_ETHER_MAX_JUMBO_FRAME_LEN];
	uint16_t i, k = 0, out = 0;

	for (i = 0; i < hp->n_queued; i++) {
		struct rte_mbuf *m = hp->queue[i];
		uint32_t len = rte_pktmbuf_pkt_len(m);
		const void *data = rte_pktmbuf_read(m, 0, RTE_MIN(len, (uint32_t)sizeof(buf)), buf);

		if (data != NULL && len <= sizeof(buf) &&
		    write(hp->fd[pf_meta(m)->in_port], data, len) == (ssize_t)len) {
			st->ctrs[HOST_CTR_DELIVERED]++;
			hp->delivered++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (out < max) {
			st->ctrs[HOST_CTR_WRITE_FAILED]++;
			pkts[out] = m;
			edge[out++] = PF_EDGE_DROP;
		} else {
			hp->queue[k++] = m;   /* no room to hand it back now: next time */
		}
	}
	hp->n_queued = k;
	return out;
}

/* ---- inject: from the host --------------------------------------------------- */

static uint16_t
host_read(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t max, uint16_t *edge)
{
	struct host_priv *hp = st->priv;
	uint16_t out = 0, k, p, r;

	for (k = 0; k < PF_MAX_PORTS && out < max; k++) {
		p = (uint16_t)((hp->next_read + k) % PF_MAX_PORTS);
		if (!(hp->ports & (1u << p)))
			continue;
		for (r = 0; r < HOST_READ_MAX && out < max; r++) {
			struct rte_mbuf *m = rte_pktmbuf_alloc(hp->pool);
			uint16_t room = st->env->ports[p].max_frame;
			struct pf_meta *md;
			ssize_t len;

			if (m == NULL) {
				st->ctrs[HOST_CTR_NOMBUF]++;
				return out;
			}
			room = RTE_MIN(room, rte_pktmbuf_tailroom(m));
			len = read(hp->fd[p], rte_pktmbuf_mtod(m, void *), room + 1u);
			if (len <= 0) {
				rte_pktmbuf_free(m);
				break;
			}
			if ((size_t)len > room || len < RTE_ETHER_HDR_LEN) {
				/* Cut or runt: not a frame the port can send. */
				st->ctrs[HOST_CTR_OVERSIZE]++;
				rte_pktmbuf_free(m);
				continue;
			}
			m->data_len = m->pkt_len = (uint32_t)len;
			m->port = pf_env_port_id(st->env, p);
			md = pf_meta(m);
			memset(md, 0, sizeof(*md));
			md->in_port = p;
			md->out_port = p;
			md->l2_len = RTE_ETHER_HDR_LEN;
			st->ctrs[HOST_CTR_INJECTED]++;
			st->replicas++;   /* a packet the router made */
			pkts[out] = m;
			edge[out++] = HOST_EDGE_OUT;
		}
	}
	hp->next_read = (uint16_t)((hp->next_read + 1) % PF_MAX_PORTS);
	return out;
}

static uint16_t
host_emit(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t max, uint16_t *edge,
	  bool draining)
{
	uint16_t n = host_write(st, pkts, max, edge);

	/* Stopping: the kernel's frames are not read any more (rx is stopped). */
	if (draining)
		return n;
	return (uint16_t)(n + host_read(st, pkts + n, (uint16_t)(max - n), edge + n));
}

/* The TAP's carrier follows the port's link (a daemon sees a link go down). */
static void
host_housekeep(struct pf_stage *st, uint64_t now)
{
	struct host_priv *hp = st->priv;
	struct rte_eth_link link;
	uint16_t p;

	if (now < hp->link_check_ns)
		return;
	hp->link_check_ns = now + HOST_LINK_CHECK_NS;
	for (p = 0; p < st->env->n_ports; p++) {
		bool up;

		if (!(hp->ports & (1u << p)))
			continue;
		/* Outside a runtime (unit tests) the port is taken as up. */
		up = !st->runtime_runs ||
		     (rte_eth_link_get_nowait(pf_env_port_id(st->env, p), &link) == 0 &&
		      link.link_status == RTE_ETH_LINK_UP);
		if (up != hp->carrier[p]) {
			host_set_carrier(st, p, up);
			st->ctrs[HOST_CTR_CARRIER]++;
			PF_LOG(INFO, "stage %s: host interface of port %s: carrier %s",
			       st->conf->name, st->env->ports[p].name, up ? "up" : "down");
		}
	}
}

static bool
host_busy(const struct pf_stage *st)
{
	const struct host_priv *hp = st->priv;

	return hp->n_queued != 0;
}

static void
host_gauges(const struct pf_stage *st, struct pf_sink *out)
{
	const struct host_priv *hp = st->priv;

	pf_sink_u64(out, "in_flight", __atomic_load_n(&hp->n_queued, __ATOMIC_RELAXED));
	pf_sink_u64(out, "interfaces", (uint64_t)__builtin_popcount(hp->ports));
}

/* What the accounting counts as sent: frames handed to a host interface. */
static uint64_t
host_delivered(const struct pf_stage *st)
{
	const struct host_priv *hp = st->priv;

	return __atomic_load_n(&hp->delivered, __ATOMIC_RELAXED);
}

static bool
host_iface(const struct pf_stage *st, uint16_t port, char *name, char *ns)
{
	const struct host_cfg *cfg = st->conf->cfg;

	if (port >= PF_MAX_PORTS || !(cfg->ports & (1u << port)))
		return false;
	memcpy(name, cfg->name[port], IFNAMSIZ);
	memcpy(ns, cfg->ns, sizeof(cfg->ns));
	return true;
}

const struct pf_stage_ops pf_host_ops = {
	.type = "host",
	.summary = "host interfaces (kernel TAPs) for routing daemons: punt to them, send what they send",
	.flags = PF_STAGE_PORTS_FIXED,
	.priv_size = sizeof(struct host_priv),
	.n_edges = HOST_EDGE_MAX,
	.edge_names = host_edges,
	.default_edge = HOST_EDGE_OUT,
	.n_ctrs = host_ctr_max,
	.ctrs = host_ctrs,
	.dp = {
		.process_burst = host_process_burst,
		.housekeep = host_housekeep,
		.emit = host_emit,
	},
	.ctl = {
		.param_keys = host_keys,
		.takes = 0,
		.edge_carries = host_carries,
		.parse = host_parse,
		.cfg_free = host_cfg_free,
		.init = host_init,
		.free = host_free,
		.host_iface = host_iface,
	},
	.obs = {
		.gauges = host_gauges,
		.busy = host_busy,
		.delivered = host_delivered,
	},
};
