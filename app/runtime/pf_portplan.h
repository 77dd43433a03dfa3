/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * What to configure on a port, decided from what the device offers
 * (struct rte_eth_dev_info) and what the topology asks: rx/tx queue counts,
 * RSS (hash types, key, redirection table) and offloads. A pure function of
 * its inputs, so unit tests drive it with fake capability sets; app/runtime/port.c
 * applies the plan.
 */
#ifndef PF_PORTPLAN_H
#define PF_PORTPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ethdev.h>

/** ports.<p>.rss: how a multi-queue port hashes flows onto its rx queues. */
enum pf_rss_mode {
	PF_RSS_SYMMETRIC = 0,  /**< default: 0x6d5a key, both directions of a flow on one queue */
	PF_RSS_DEVICE,         /**< the device's own key (not symmetric) */
	PF_RSS_OFF,            /**< no RSS: one rx queue */
	PF_RSS_EXTERNAL,       /**< no hash, keep the queues: the device fills them itself
				    (net_pcap: one rx_pcap per queue; test devices) */
};

/** The hash types pipefwd asks for: IPv4/IPv6, TCP/UDP ports included. */
#define PF_RSS_HF (RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_TCP |			\
		   RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_IPV6 |				\
		   RTE_ETH_RSS_NONFRAG_IPV6_TCP | RTE_ETH_RSS_NONFRAG_IPV6_UDP)

#define PF_RSS_KEY_MAX 64

/** What the topology wants from one port. */
struct pf_port_want {
	uint16_t n_rxq;            /**< rx queues the rx stages poll (>= 1) */
	uint16_t n_txq;            /**< tx queues: one per tx stage (instance) sending on it */
	enum pf_rss_mode rss;
	bool offloads;             /**< ports.<p>.offloads: auto (true) or off */
	bool fast_free_ok;         /**< every mbuf sent here has refcnt 1 and one pool */
};

/** The decision: what app/runtime/port.c configures. */
struct pf_port_plan {
	uint16_t n_rxq, n_txq;
	uint64_t rss_hf;           /**< 0: no RSS */
	uint8_t rss_key[PF_RSS_KEY_MAX];
	uint8_t rss_key_len;       /**< 0: the device's key */
	uint16_t reta_size;        /**< > 0: fill the redirection table evenly */
	uint64_t rx_offloads;      /**< RTE_ETH_RX_OFFLOAD_* */
	uint64_t tx_offloads;      /**< RTE_ETH_TX_OFFLOAD_* */
	char note[192];            /**< why the plan differs from the want ("" when it does not) */
};

/**
 * Decide the configuration of a port.
 *
 * @param info
 *   The device's capabilities (rte_eth_dev_info_get, or a fake in tests).
 * @param want
 *   What the topology asks.
 * @param plan
 *   Filled in. A device without RSS gets one rx queue and plan->note says
 *   so; more queues than the device has is an error.
 * @return
 *   0, or -EINVAL when the device has fewer queues than asked (the caller
 *   reports it with the numbers).
 */
int pf_port_plan(const struct rte_eth_dev_info *info, const struct pf_port_want *want,
		 struct pf_port_plan *plan);

/**
 * Fill @p reta (reta_size / RTE_ETH_RETA_GROUP_SIZE groups) so that entry i
 * points to queue i % n_rxq: every queue gets the same share of the hash space.
 */
void pf_port_reta_fill(struct rte_eth_rss_reta_entry64 *reta, uint16_t reta_size,
		       uint16_t n_rxq);

/** "rss(ipv4 tcp udp ipv6, symmetric) rx-ipv4-cksum ..." for the startup log. */
void pf_port_plan_describe(const struct pf_port_plan *plan, char *buf, size_t len);

#endif /* PF_PORTPLAN_H */
