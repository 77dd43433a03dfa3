/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ports: probe, configure and start each port of the topology; read and
 * snapshot their stats; stop and close them at shutdown.
 */
#include <errno.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_ethdev.h>

#include "pf_log.h"
#include "rt_internal.h"

int
pf_rt_port_setup(struct pf_runtime *rt, struct pf_port_conf *pc, struct pf_errs *errs)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	char name[RTE_ETH_NAME_MAX_LEN];
	const char *comma = strchr(pc->device, ',');
	uint16_t pid, q, nrx = RTE_MAX(pc->n_rxq, 1), ntx = RTE_MAX(pc->n_txq, 1);
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
	pc->port_id = pid;
	if (rte_eth_dev_info_get(pid, &info) != 0)
		return pf_node_err(errs, pc->node, "ports.%s: cannot read device info", pc->name);
	if (nrx > info.max_rx_queues || ntx > info.max_tx_queues)
		return pf_node_err(errs, pc->node,
				   "ports.%s: needs %u rx / %u tx queues, device has %u / %u",
				   pc->name, nrx, ntx, info.max_rx_queues, info.max_tx_queues);
	rc = rte_eth_dev_configure(pid, nrx, ntx, &conf);
	if (rc < 0)
		return pf_node_err(errs, pc->node, "ports.%s: configure failed: %s", pc->name,
				   strerror(-rc));
	for (q = 0; q < nrx; q++) {
		rc = rte_eth_rx_queue_setup(pid, q, pc->rxd, rte_eth_dev_socket_id(pid), NULL,
					    rt->pool);
		if (rc < 0)
			return pf_node_err(errs, pc->node, "ports.%s: rx queue %u: %s", pc->name, q,
					   strerror(-rc));
	}
	for (q = 0; q < ntx; q++) {
		rc = rte_eth_tx_queue_setup(pid, q, pc->txd, rte_eth_dev_socket_id(pid), NULL);
		if (rc < 0)
			return pf_node_err(errs, pc->node, "ports.%s: tx queue %u: %s", pc->name, q,
					   strerror(-rc));
	}
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

void
pf_rt_close_ports(struct pf_runtime *rt)
{
	uint16_t i;

	if (rt->ports_closed)
		return;
	for (i = 0; i < rt->topo->n_ports; i++) {
		uint16_t pid = rt->topo->ports[i].port_id;

		if (!rte_eth_dev_is_valid_port(pid))
			continue;
		rte_eth_stats_get(pid, &rt->port_stats[i]);
		rte_eth_dev_stop(pid);
		rte_eth_dev_close(pid);
	}
	rt->ports_closed = true;
}

void
pf_runtime_port_stats(const struct pf_runtime *rt, uint16_t port, struct rte_eth_stats *es)
{
	if (rt->ports_closed)
		*es = rt->port_stats[port];
	else if (rte_eth_stats_get(rt->topo->ports[port].port_id, es) != 0)
		memset(es, 0, sizeof(*es));
}
