/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rate limit of the ICMP error stages (icmp, icmp6): the `rate_pps` and
 * `rate_burst` parameters and a token bucket in nanoseconds of credit on
 * the packet clock (RFC 1812 4.3.2.8, RFC 4443 2.4 (f)).
 */
#ifndef PF_ICMP_RL_H
#define PF_ICMP_RL_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "pf_stage.h"

/** The stages' parsed parameters (their whole cfg). */
struct icmp_rl_cfg {
	uint32_t rate_pps;      /**< errors per second; 0: no limit */
	uint32_t burst;         /**< errors the bucket holds */
};

struct icmp_rl {
	bool pcap_clock;        /**< replay: the packet's capture time, not the newest */
	int ts_offset;
	uint64_t ts_flag;
	uint64_t cost_ns, cap_ns, credit_ns, last_ns;   /**< one error costs cost_ns */
};

/**
 * The stage's parse op for `rate_pps` (0..10000000, default 1000) and
 * `rate_burst` (1..1000000, default 50), Linux's icmp_msgs_per_sec and
 * icmp_msgs_burst: a new struct icmp_rl_cfg in sc->cfg.
 */
int icmp_rl_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs);
void icmp_rl_cfg_free(void *cfg);
/** A full bucket for @p cfg (init, EAL up: looks up the timestamp dynfield). */
void icmp_rl_init(struct icmp_rl *rl, const struct icmp_rl_cfg *cfg, bool pcap_clock);

/** Refill by the time passed, then spend one error's cost if there. */
static inline bool
icmp_rl_take(struct icmp_rl *rl, const struct rte_mbuf *m, uint64_t now)
{
	/* Replay: each packet carries its capture time (us); use it, not the newest. */
	if (rl->pcap_clock && (m->ol_flags & rl->ts_flag))
		now = *RTE_MBUF_DYNFIELD(m, rl->ts_offset, const uint64_t *) * 1000;
	if (rl->cost_ns == 0)
		return true;
	if (now > rl->last_ns) {
		rl->credit_ns = RTE_MIN(rl->cap_ns, rl->credit_ns + (now - rl->last_ns));
		rl->last_ns = now;
	}
	if (rl->credit_ns < rl->cost_ns)
		return false;
	rl->credit_ns -= rl->cost_ns;
	return true;
}

/*
 * icmp_rl_take, or in a dry run (@p dry: pf_stage.dry_run, trace inject)
 * the same answer from a copy of the bucket: nothing spent.
 */
static inline bool
icmp_rl_admit(struct icmp_rl *rl, const struct rte_mbuf *m, uint64_t now, bool dry)
{
	struct icmp_rl copy;

	if (!dry)
		return icmp_rl_take(rl, m, now);
	copy = *rl;
	return icmp_rl_take(&copy, m, now);
}

#endif /* PF_ICMP_RL_H */
