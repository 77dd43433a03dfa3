/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ports: probe, configure and start each port of the topology; read and
 * snapshot their stats; stop and close them at shutdown, leaving a kernel
 * interface behind a port as it was found.
 */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_ether.h>

#include "pf_log.h"
#include "pf_portplan.h"
#include "rt_internal.h"

/*
 * Mbuf fast free needs every mbuf sent on the port to come from one pool
 * with refcnt 1. The tx stage sends flooded frames (l2fib) as one mbuf with
 * a reference per port, so any topology with a replicating stage keeps the
 * normal free. Capture copies into its own pool and never sends.
 */
static bool
port_fast_free_ok(const struct pf_runtime *rt, const struct pf_topo *topo)
{
	uint16_t s;

	if (rt->n_pools > 1)
		return false;
	for (s = 0; s < topo->n_stages; s++)
		if (topo->stages[s].ops != NULL && strcmp(topo->stages[s].ops->type, "l2fib") == 0)
			return false;
	return true;
}

/*
 * A driver that keeps the mbufs its rx queues took when the port closes: DPDK 22.11's
 * net_af_xdp (zero-copy UMEM over the pool) puts 2048 a queue in its fill ring at queue
 * set-up, replaces each it receives, and its close deletes the socket without returning
 * them. pipefwd counts them at set-up and leaves them out of the leak check.
 */
static bool
port_keeps_rx_mbufs(const char *driver)
{
	return driver != NULL && strcmp(driver, "net_af_xdp") == 0;
}

static int
kernif_ioctl(unsigned long req, struct ifreq *ifr)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc;

	if (fd < 0)
		return -errno;
	rc = ioctl(fd, req, ifr) < 0 ? -errno : 0;
	close(fd);
	return rc;
}

/* Note the kernel interface behind a port (if any) before setting the port up changes it. */
static void
kernif_save(struct pf_rt_kernif *k, unsigned int ifindex)
{
	struct ifreq ifr;

	memset(k, 0, sizeof(*k));
	RTE_BUILD_BUG_ON(sizeof(k->name) < IF_NAMESIZE);
	if (ifindex == 0 || if_indextoname(ifindex, k->name) == NULL)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", k->name);
	if (kernif_ioctl(SIOCGIFFLAGS, &ifr) < 0)
		return;
	k->promisc = ifr.ifr_flags & IFF_PROMISC;
	if (kernif_ioctl(SIOCGIFHWADDR, &ifr) == 0 && ifr.ifr_hwaddr.sa_family == ARPHRD_ETHER) {
		memcpy(k->mac, ifr.ifr_hwaddr.sa_data, sizeof(k->mac));
		k->has_mac = true;
	}
	k->ifindex = ifindex;
}

/*
 * After the port closed: its interface's promiscuous mode and MAC as kernif_save found them.
 * An interface the driver made (net_tap's) is gone by now, or is another one by that index.
 */
static void
kernif_restore(const struct pf_rt_kernif *k, const char *port)
{
	char name[IF_NAMESIZE];
	struct ifreq ifr;
	int rc;

	if (k->ifindex == 0 || if_indextoname(k->ifindex, name) == NULL ||
	    strcmp(name, k->name) != 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", k->name);
	if (kernif_ioctl(SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags & IFF_PROMISC) != k->promisc) {
		ifr.ifr_flags = (ifr.ifr_flags & ~IFF_PROMISC) | k->promisc;
		rc = kernif_ioctl(SIOCSIFFLAGS, &ifr);
		if (rc < 0)
			PF_LOG(WARNING, "port %s: cannot turn %s's promiscuous mode back %s: %s",
			       port, k->name, k->promisc ? "on" : "off", strerror(-rc));
	}
	if (!k->has_mac || kernif_ioctl(SIOCGIFHWADDR, &ifr) < 0 ||
	    memcmp(ifr.ifr_hwaddr.sa_data, k->mac, sizeof(k->mac)) == 0)
		return;
	ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
	memcpy(ifr.ifr_hwaddr.sa_data, k->mac, sizeof(k->mac));
	rc = kernif_ioctl(SIOCSIFHWADDR, &ifr);
	if (rc < 0)
		PF_LOG(WARNING, "port %s: cannot give %s its MAC " RTE_ETHER_ADDR_PRT_FMT " back: %s",
		       port, k->name, k->mac[0], k->mac[1], k->mac[2], k->mac[3], k->mac[4],
		       k->mac[5], strerror(-rc));
}

/* Spread the hash space evenly over the rx queues (devices default to it, not all do). */
static void
port_reta_set(uint16_t pid, const struct pf_port_conf *pc, const struct pf_port_plan *plan)
{
	struct rte_eth_rss_reta_entry64 reta[RTE_ETH_RSS_RETA_SIZE_512 / RTE_ETH_RETA_GROUP_SIZE];
	int rc;

	if (plan->rss_hf == 0 || plan->n_rxq < 2)
		return;
	if (plan->reta_size == 0 || plan->reta_size > RTE_ETH_RSS_RETA_SIZE_512) {
		PF_LOG(INFO, "port %s: redirection table not settable (size %u): device default",
		       pc->name, plan->reta_size);
		return;
	}
	memset(reta, 0, sizeof(reta));
	pf_port_reta_fill(reta, plan->reta_size, plan->n_rxq);
	rc = rte_eth_dev_rss_reta_update(pid, reta, plan->reta_size);
	if (rc < 0)
		PF_LOG(WARNING, "port %s: redirection table update failed (%s): device default",
		       pc->name, strerror(-rc));
}

/*
 * Create the port's device and find its ethdev; make sure the mbuf pool of
 * its socket exists (pf_rt_pool_for), so every pool is there before any
 * port decides on fast free.
 */
int
pf_rt_port_probe(struct pf_runtime *rt, struct pf_topo *topo, uint16_t p, struct pf_errs *errs)
{
	struct pf_port_conf *pc = &topo->ports[p];
	char name[RTE_ETH_NAME_MAX_LEN];
	const char *comma = strchr(pc->device, ',');
	uint16_t pid;
	int rc;

	size_t name_len = comma != NULL ? (size_t)(comma - pc->device) : strlen(pc->device);

	snprintf(name, sizeof(name), "%.*s", (int)name_len, pc->device);
	/* The vdev bus recognises driver names (net_pcap0...), PCI its addresses. */
	rc = rte_dev_probe(pc->device);
	if (rc < 0 && rc != -EEXIST)
		return pf_node_err(errs, pc->node, "ports.%s: cannot create device '%s': %s",
				   pc->name, pc->device, strerror(-rc));
	if (rte_eth_dev_get_port_by_name(name, &pid) != 0)
		return pf_node_err(errs, pc->node, "ports.%s: no ethdev named '%s'", pc->name, name);
	rt->port_run[p].port_id = pid;
	pf_rt_pool_for(rt, rte_eth_dev_socket_id(pid));
	return 0;
}

int
pf_rt_port_setup(struct pf_runtime *rt, struct pf_topo *topo, uint16_t p, struct pf_errs *errs)
{
	struct pf_port_conf *pc = &topo->ports[p];
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	struct pf_port_plan plan;
	int64_t in_use;
	struct pf_port_want want = { .n_rxq = pc->n_rxq, .n_txq = pc->n_txq, .rss = pc->rss,
				     .offloads = !pc->offloads_off };
	char desc[256];
	uint16_t pid = rt->port_run[p].port_id, q;
	int rc, socket;

	if (rte_eth_dev_info_get(pid, &info) != 0)
		return pf_node_err(errs, pc->node, "ports.%s: cannot read device info", pc->name);
	kernif_save(&rt->port_kernif[p], info.if_index);
	want.fast_free_ok = port_fast_free_ok(rt, topo);
	if (pf_port_plan(&info, &want, &plan) < 0)
		return pf_node_err(errs, pc->node,
				   "ports.%s: needs %u rx / %u tx queues, device has %u / %u",
				   pc->name, RTE_MAX(want.n_rxq, 1), RTE_MAX(want.n_txq, 1),
				   info.max_rx_queues, info.max_tx_queues);
	if (plan.note[0] != '\0')
		PF_LOG(WARNING, "port %s: %s", pc->name, plan.note);
	if (plan.rss_hf != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = plan.rss_hf;
		conf.rx_adv_conf.rss_conf.rss_key = plan.rss_key_len != 0 ? plan.rss_key : NULL;
		conf.rx_adv_conf.rss_conf.rss_key_len = plan.rss_key_len;
	}
	conf.rxmode.offloads = plan.rx_offloads;
	rt->port_run[p].rx_cksum_off =
		(plan.rx_offloads & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM) == 0;
	conf.txmode.offloads = plan.tx_offloads;
	rc = rte_eth_dev_configure(pid, plan.n_rxq, plan.n_txq, &conf);
	if (rc < 0 && plan.n_rxq != plan.n_txq &&
	    RTE_MAX(plan.n_rxq, plan.n_txq) <= RTE_MIN(info.max_rx_queues, info.max_tx_queues)) {
		/* Some devices (net_tap) pair queues: give them as many of each. */
		plan.n_rxq = plan.n_txq = RTE_MAX(plan.n_rxq, plan.n_txq);
		PF_LOG(INFO, "port %s: configuring %u rx and %u tx queues (the device pairs them)",
		       pc->name, plan.n_rxq, plan.n_txq);
		rc = rte_eth_dev_configure(pid, plan.n_rxq, plan.n_txq, &conf);
	}
	if (rc < 0)
		return pf_node_err(errs, pc->node, "ports.%s: configure failed: %s", pc->name,
				   strerror(-rc));
	socket = rte_eth_dev_socket_id(pid);
	in_use = pf_rt_mbufs_in_use(rt);
	for (q = 0; q < plan.n_rxq; q++) {
		/* The pool of the port's socket: rx writes into memory local to the NIC. */
		rc = rte_eth_rx_queue_setup(pid, q, pc->rxd, socket, NULL, pf_rt_pool_for(rt, socket));
		if (rc < 0)
			return pf_node_err(errs, pc->node, "ports.%s: rx queue %u: %s", pc->name, q,
					   strerror(-rc));
	}
	if (port_keeps_rx_mbufs(info.driver_name))
		rt->port_rx_held[p] = pf_rt_mbufs_in_use(rt) - in_use;
	for (q = 0; q < plan.n_txq; q++) {
		rc = rte_eth_tx_queue_setup(pid, q, pc->txd, socket, NULL);
		if (rc < 0)
			return pf_node_err(errs, pc->node, "ports.%s: tx queue %u: %s", pc->name, q,
					   strerror(-rc));
	}
	port_reta_set(pid, pc, &plan);
	/* rx classifies from the header bytes it reads anyway: no PMD ptype parsing. */
	rte_eth_dev_set_ptypes(pid, RTE_PTYPE_UNKNOWN, NULL, 0);
	pf_port_plan_describe(&plan, desc, sizeof(desc));
	PF_LOG(INFO, "port %s (%s, socket %d): %s", pc->name, info.driver_name, socket, desc);
	if (pc->has_mac) {
		memcpy(mac.addr_bytes, pc->mac, 6);
		/* Not every vdev can change its MAC; pipefwd uses pc->mac either way. */
		rte_eth_dev_default_mac_addr_set(pid, &mac);
	} else if (rte_eth_macaddr_get(pid, &mac) == 0) {
		memcpy(pc->mac, mac.addr_bytes, 6);
		pc->has_mac = true;
	}
	rte_eth_promiscuous_enable(pid);
	rc = rte_eth_dev_start(pid);
	if (rc < 0)
		return pf_node_err(errs, pc->node, "ports.%s: start failed: %s", pc->name,
				   strerror(-rc));
	return 0;
}

/*
 * net_af_xdp frees a sent mbuf when it reads the completion ring, at its next send: a burst
 * of none on every queue takes what the last sends left. A NIC in zero-copy mode completes a
 * little later: again until the pools stop changing (100 ms at most).
 */
static void
port_tx_reclaim(struct pf_runtime *rt, uint32_t mask)
{
	struct rte_mbuf *none[1];
	struct rte_eth_dev_info info;
	int64_t last = -1, now;
	uint16_t i, q;
	int round;

	for (round = 0; round < 100; round++) {
		for (i = 0; i < rt->topo->n_ports; i++) {
			uint16_t pid = rt->port_run[i].port_id;

			if (!((mask >> i) & 1) || rt->port_rx_held[i] == 0 ||
			    !rte_eth_dev_is_valid_port(pid) ||
			    rte_eth_dev_info_get(pid, &info) != 0)
				continue;
			for (q = 0; q < info.nb_tx_queues; q++)
				rte_eth_tx_burst(pid, q, none, 0);
		}
		now = pf_rt_mbufs_in_use(rt);
		if (now == last)
			return;
		last = now;
		rte_delay_us_sleep(1000);
	}
}

/*
 * Stop and close port @p i named @p name (at shutdown, or removed live): what
 * its driver kept of the mbufs it took at set-up is counted in mbufs_kept,
 * and its kernel interface is put back as it was found.
 */
static void
port_close(struct pf_runtime *rt, uint16_t i, const char *name)
{
	uint16_t pid = rt->port_run[i].port_id;
	int64_t in_use, kept;

	in_use = pf_rt_mbufs_in_use(rt);
	rte_eth_dev_stop(pid);
	rte_eth_dev_close(pid);
	/* What the driver took at set-up less what its close gave back. */
	kept = (int64_t)rt->port_rx_held[i] - (in_use - pf_rt_mbufs_in_use(rt));
	if (rt->port_rx_held[i] != 0 && kept > 0) {
		PF_LOG(INFO, "port %s: its driver kept the %" PRId64 " mbufs of its fill "
		       "ring at close (not a leak of pipefwd's)", name, kept);
		rt->mbufs_kept += kept;
	}
	rt->port_rx_held[i] = 0;
	kernif_restore(&rt->port_kernif[i], name);
}

void
pf_rt_close_ports(struct pf_runtime *rt)
{
	uint16_t i;

	if (rt->ports_closed)
		return;
	port_tx_reclaim(rt, UINT32_MAX);
	for (i = 0; i < rt->topo->n_ports; i++) {
		uint16_t pid = rt->port_run[i].port_id;

		if (!pf_port_present(&rt->topo->ports[i]) || !rte_eth_dev_is_valid_port(pid))
			continue;
		rte_eth_stats_get(pid, &rt->port_stats[i]);
		port_close(rt, i, rt->topo->ports[i].name);
	}
	rt->ports_closed = true;
}

/* Stop, close and remove port @p p of @p topo (the device too: a tap's interface goes). */
static void
port_remove(struct pf_runtime *rt, const struct pf_topo *topo, uint16_t p)
{
	uint16_t pid = rt->port_run[p].port_id;
	struct rte_eth_dev_info info;
	struct rte_device *dev = NULL;
	int rc;

	if (!rte_eth_dev_is_valid_port(pid))
		return;
	if (rte_eth_dev_info_get(pid, &info) == 0)
		dev = info.device;
	/* No lcore sends on it any more (the runtime waited): what the last sends left. */
	port_tx_reclaim(rt, 1u << p);
	port_close(rt, p, topo->ports[p].name);
	rc = dev != NULL ? rte_dev_remove(dev) : -ENODEV;
	if (rc < 0 && rc != -ENOENT)
		PF_LOG(WARNING, "port %s: closed, but its device '%s' stays: %s",
		       topo->ports[p].name, topo->ports[p].device, strerror(-rc));
	memset(&rt->port_run[p], 0, sizeof(rt->port_run[p]));
	rt->port_run[p].port_id = RTE_MAX_ETHPORTS;
	memset(&rt->port_link[p], 0, sizeof(rt->port_link[p]));
}

int
pf_runtime_ports_add(struct pf_runtime *rt, struct pf_topo *topo, uint32_t mask,
		     struct pf_errs *errs)
{
	uint32_t m, done = 0;
	uint16_t p;

	for (m = mask; m != 0; m &= m - 1) {
		p = (uint16_t)__builtin_ctz(m);
		memset(&rt->port_link[p], 0, sizeof(rt->port_link[p]));
		if (pf_rt_port_probe(rt, topo, p, errs) < 0)
			goto undo;
		done |= 1u << p;
		if (pf_rt_port_setup(rt, topo, p, errs) < 0)
			goto undo;
		pf_rt_port_base(rt, p);
		PF_LOG(INFO, "port %s added (%s)", topo->ports[p].name, topo->ports[p].device);
	}
	return 0;
undo:
	for (m = done; m != 0; m &= m - 1)
		port_remove(rt, topo, (uint16_t)__builtin_ctz(m));
	return -EINVAL;
}

void
pf_runtime_ports_remove(struct pf_runtime *rt, const struct pf_topo *topo, uint32_t mask)
{
	uint32_t m;
	uint16_t p;

	for (m = mask; m != 0; m &= m - 1) {
		p = (uint16_t)__builtin_ctz(m);
		port_remove(rt, topo, p);
		PF_LOG(INFO, "port %s removed (%s)", topo->ports[p].name, topo->ports[p].device);
	}
}

void
pf_runtime_port_stats(const struct pf_runtime *rt, uint16_t port, struct rte_eth_stats *es)
{
	if (rt->ports_closed)
		*es = rt->port_stats[port];
	else if (rte_eth_stats_get(rt->port_run[port].port_id, es) != 0)
		memset(es, 0, sizeof(*es));
}
