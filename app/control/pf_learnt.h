/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Learnt routes into the running stages (app/control/learnt.c): a batch of
 * a routing daemon's updates (include/pf_route.h) handed to every stage that
 * takes them (ctl.learn: lpm for IPv4, lpm6 for IPv6; every instance), and
 * their upkeep. One writer: the main thread, under the console's lock
 * (replies never read a table being changed), between reloads.
 */
#ifndef PF_LEARNT_H
#define PF_LEARNT_H

#include <stdint.h>

#include "pf_route.h"
#include "pf_runtime.h"

/**
 * Apply @p ops[0..n) to every stage with ctl.learn; outcomes added to @p res.
 * Returns how many stages took some of it (0: none takes the batch's family).
 */
unsigned int pf_learnt_apply(struct pf_runtime *rt, const struct pf_route_op *ops, unsigned int n,
			     struct pf_route_result *res);

/** Every stage's ctl.upkeep (about every 100 ms). */
void pf_learnt_upkeep(struct pf_runtime *rt, uint64_t now_ns);

/**
 * Read one operation from text (the stats socket's /pipefwd/learn):
 * "add|del,SRC,PREFIX[,TARGET...]" with TARGET "GW@PORT" (a next hop; several:
 * ECMP, "GW@PORT*W" for weight W), "@PORT" (connected), "blackhole",
 * "unreachable" or "prohibit". IPv4 and IPv6. Returns NULL, or what is wrong.
 */
const char *pf_learnt_parse(const struct pf_runtime *rt, const char *text,
			    struct pf_route_op *op);

#endif /* PF_LEARNT_H */
