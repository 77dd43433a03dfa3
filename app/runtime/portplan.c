/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port plan: from a device's capabilities and the topology's want, the
 * queue counts, RSS and offloads to configure. Pure (no ethdev calls), so
 * test/unit/test_portplan.c drives it with fake capability sets.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pf_portplan.h"

/* The rx checksum offload rx uses: the IPv4 header verdict (RFC 1812 5.2.2). */
#define PLAN_RX_CKSUM RTE_ETH_RX_OFFLOAD_IPV4_CKSUM

int
pf_port_plan(const struct rte_eth_dev_info *info, const struct pf_port_want *want,
	     struct pf_port_plan *plan)
{
	uint16_t nrx = want->n_rxq > 0 ? want->n_rxq : 1, ntx = want->n_txq > 0 ? want->n_txq : 1;

	memset(plan, 0, sizeof(*plan));
	if (nrx > 1) {
		uint64_t hf = PF_RSS_HF & info->flow_type_rss_offloads;

		if (want->rss == PF_RSS_EXTERNAL) {
			/* The device decides which queue gets what: nothing to hash. */
		} else if (want->rss == PF_RSS_OFF || hf == 0) {
			/* Without a hash the device delivers everything on queue 0. */
			snprintf(plan->note, sizeof(plan->note),
				 "%s: %u rx queues asked, 1 configured (rx stages reading queue 1 and up get nothing from it)",
				 want->rss == PF_RSS_OFF ? "rss: off" : "device offers no RSS",
				 nrx);
			nrx = 1;
		} else {
			plan->rss_hf = hf;
			/* 0x6d5a repeated: Toeplitz gives the same hash with src and dst
			 * swapped, so both directions of a flow reach one queue. */
			if (want->rss == PF_RSS_SYMMETRIC) {
				uint8_t k, len = info->hash_key_size != 0 ? info->hash_key_size : 40;

				if (len > PF_RSS_KEY_MAX)
					len = PF_RSS_KEY_MAX;
				for (k = 0; k < len; k++)
					plan->rss_key[k] = (k & 1) ? 0x5a : 0x6d;
				plan->rss_key_len = len;
			}
			plan->reta_size = info->reta_size;
		}
	}
	if (nrx > info->max_rx_queues || ntx > info->max_tx_queues)
		return -EINVAL;
	plan->n_rxq = nrx;
	plan->n_txq = ntx;
	if (want->offloads) {
		plan->rx_offloads = info->rx_offload_capa & PLAN_RX_CKSUM;
		if (want->fast_free_ok)
			plan->tx_offloads = info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	}
	return 0;
}

void
pf_port_reta_fill(struct rte_eth_rss_reta_entry64 *reta, uint16_t reta_size, uint16_t n_rxq)
{
	uint16_t i;

	for (i = 0; i < reta_size; i++) {
		struct rte_eth_rss_reta_entry64 *g = &reta[i / RTE_ETH_RETA_GROUP_SIZE];

		g->mask |= 1ull << (i % RTE_ETH_RETA_GROUP_SIZE);
		g->reta[i % RTE_ETH_RETA_GROUP_SIZE] = (uint16_t)(i % RTE_MAX(n_rxq, 1));
	}
}

void
pf_port_plan_describe(const struct pf_port_plan *plan, char *buf, size_t len)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} hf[] = {
		{ RTE_ETH_RSS_IPV4, "ipv4" }, { RTE_ETH_RSS_NONFRAG_IPV4_TCP, "ipv4-tcp" },
		{ RTE_ETH_RSS_NONFRAG_IPV4_UDP, "ipv4-udp" }, { RTE_ETH_RSS_IPV6, "ipv6" },
		{ RTE_ETH_RSS_NONFRAG_IPV6_TCP, "ipv6-tcp" },
		{ RTE_ETH_RSS_NONFRAG_IPV6_UDP, "ipv6-udp" },
	};
	size_t k, n = 0;

	buf[0] = '\0';
#define PLAN_ADD(...) (n += (size_t)snprintf(buf + RTE_MIN(n, len), len - RTE_MIN(n, len), \
					      __VA_ARGS__))
	PLAN_ADD("rxq %u txq %u", plan->n_rxq, plan->n_txq);
	if (plan->rss_hf != 0) {
		PLAN_ADD(" rss(");
		for (k = 0; k < RTE_DIM(hf); k++)
			if (plan->rss_hf & hf[k].bit)
				PLAN_ADD("%s ", hf[k].name);
		PLAN_ADD("key %s, reta %u)", plan->rss_key_len != 0 ? "symmetric" : "device",
			 plan->reta_size);
	}
	if (plan->rx_offloads & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM)
		PLAN_ADD(" rx-ipv4-cksum");
	if (plan->tx_offloads & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
		PLAN_ADD(" tx-fast-free");
	if (plan->rx_offloads == 0 && plan->tx_offloads == 0)
		PLAN_ADD(" no offloads");
#undef PLAN_ADD
}
