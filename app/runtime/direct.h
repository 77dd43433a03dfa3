/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Direct or ring: the protocol that decides, per burst, whether a producer
 * hands a burst straight to its consumer (same lcore, run there and then)
 * or enqueues it on the edge's ring. Every rule is here (direct.c has the
 * control thread's half); edge.c, worker.c, handover.c and runtime.c call it.
 *
 * The state is one 64-bit word per stage, pf_rt_stage.direct_key: the
 * stage's owner (the lcore allowed to run it, -1 mid hand-over) and
 * rings_maybe (non-zero: an input ring may hold packets). Then:
 *
 *   producer   goes direct iff the consumer's word reads pf_rt_direct_key(me):
 *              owned by this lcore and no ring to drain (pf_rt_direct_ok),
 *              or, with rings to poll, the consumer is owned by this lcore
 *              and the producer's own ring to it is empty
 *              (pf_rt_edge_direct_ok: the local half of a fan-out);
 *   owner      (the worker of that lcore) runs a stage whose word is its key
 *              each pass without a look at its rings (pf_rt_settled_here);
 *              otherwise, while it owns it (pf_rt_owns), runs it, polls its
 *              rings and clears rings_maybe once they are empty and every
 *              producer runs on its lcore (pf_rt_ring_settled,
 *              pf_rt_rings_settle), after which those producers only hand over
 *              directly and the rings stay empty;
 *   control    sets rings_maybe at start for a stage fed from another lcore
 *              (pf_rt_rings_maybe_start); a hand-over takes the owner of each
 *              moving stage (pf_rt_owner_take, -1: nobody runs it once the old
 *              owner's pass ends), then sets rings_maybe for every stage
 *              that moved or whose producer moved or runs elsewhere, after the
 *              old lcores' passes and before any moved stage runs on its new
 *              lcore (pf_rt_rings_maybe_mark), so no clear decided before the
 *              move lands after it and nothing overtakes what was queued,
 *              and only then gives each its new owner (pf_rt_owner_give).
 */
#ifndef PF_RT_DIRECT_H
#define PF_RT_DIRECT_H

#include <stdbool.h>
#include <stddef.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ring.h>

#include "pf_runtime.h"

/*
 * pf_rt_stage.direct_key of a stage that lcore @p me owns and whose input
 * rings need no polling: what a producer on @p me compares it with.
 */
static inline uint64_t
pf_rt_direct_key(int me)
{
	RTE_BUILD_BUG_ON(offsetof(struct pf_rt_stage, owner) !=
			 offsetof(struct pf_rt_stage, direct_key));
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
	return (uint32_t)me;
#else
	return (uint64_t)(uint32_t)me << 32;
#endif
}

/*
 * Producer on @p me: may a burst go straight to @p to? Only while its owner
 * is this lcore and none of its input rings may hold packets (one compare):
 * a stage that just moved here first drains its rings through its own
 * polling. A direct call begun before the owner was cleared finishes within
 * the pass the hand-over waits for.
 */
static __rte_always_inline bool
pf_rt_direct_ok(const struct pf_rt_stage *to, int me)
{
	return __atomic_load_n(&to->direct_key, __ATOMIC_ACQUIRE) == pf_rt_direct_key(me);
}

/*
 * Worker on @p me, whose key is @p key (pf_rt_direct_key(me)): does it own
 * @p rs with no ring to poll (one compare, the common case of a pass)?
 */
static __rte_always_inline bool
pf_rt_settled_here(const struct pf_rt_stage *rs, uint64_t key)
{
	return __atomic_load_n(&rs->direct_key, __ATOMIC_ACQUIRE) == key;
}

/* Does lcore @p me own @p rs (may run it), rings or not? @p acq: with acquire. */
static __rte_always_inline bool
pf_rt_owns(const struct pf_rt_stage *rs, int me, bool acq)
{
	return (acq ? __atomic_load_n(&rs->owner, __ATOMIC_ACQUIRE) :
		      __atomic_load_n(&rs->owner, __ATOMIC_RELAXED)) == me;
}

/*
 * Producer on @p me, sending over its ring @p r to @p to: may this burst go
 * straight to @p to? When pf_rt_direct_ok() says so (one compare, the fused
 * case); else when this lcore owns @p to and @p r itself is empty, although
 * another input ring of @p to may fill (rings_maybe stays set while a
 * producer of @p to runs on another lcore: a fan-out, where every instance
 * is fed from every lcore). @p r has one producer, this stage, so when it
 * is empty nothing this stage sent before is queued for a direct burst to
 * overtake; and @p to runs on this thread, between bursts here. The owner
 * alone does not do: a ring that still drains after a move must keep its
 * order (test_rings_maybe). Packets of other producers keep their order
 * on their own rings (test_direct_beside_ring).
 */
static __rte_always_inline bool
pf_rt_edge_direct_ok(const struct pf_rt_ring *r, const struct pf_rt_stage *to, int me)
{
	if (likely(pf_rt_direct_ok(to, me)))
		return true;
	return pf_rt_owns(to, me, true) && rte_ring_empty(r->ring);
}

/*
 * Control thread, a hand-over: @p rs has no owner (-1) from here until
 * pf_rt_owner_give; its old owner's pass finishes what it began.
 */
static inline void
pf_rt_owner_take(struct pf_rt_stage *rs)
{
	__atomic_store_n(&rs->owner, -1, __ATOMIC_RELEASE);
}

/* Control thread, after pf_rt_rings_maybe_mark: @p rs runs on lcore @p lcore now. */
static inline void
pf_rt_owner_give(struct pf_rt_stage *rs, int lcore)
{
	__atomic_store_n(&rs->owner, lcore, __ATOMIC_RELEASE);
}

/*
 * Owner on @p me, polling its rings: does input ring @p r's producer run on
 * this lcore (a condition of pf_rt_rings_settle, with every ring empty)?
 */
static __rte_always_inline bool
pf_rt_ring_settled(const struct pf_rt_ring *r, int me)
{
	return __atomic_load_n(&r->from->owner, __ATOMIC_ACQUIRE) == me;
}

/*
 * Owner, after a pass over @p rs's rings that found every one empty
 * (@p settled) with every producer on this lcore: from now on they hand
 * over directly and the rings stay empty; a hand-over that moves one sets
 * rings_maybe again before it runs anywhere else (and waits for this
 * lcore's pass first, so a clear decided here cannot land after it).
 */
static __rte_always_inline void
pf_rt_rings_settle(struct pf_rt_stage *rs, bool settled)
{
	if (settled)
		__atomic_store_n(&rs->rings_maybe, 0, __ATOMIC_RELAXED);
}

/* Control thread, at start (every ring empty): only a stage fed from another lcore polls. */
void pf_rt_rings_maybe_start(struct pf_runtime *rt);
/*
 * Control thread, in a hand-over (after the old owners' passes, before any
 * moved stage gets its new owner): set rings_maybe of every stage whose
 * rings may fill from another lcore or hold what was sent while it moved.
 */
void pf_rt_rings_maybe_mark(struct pf_runtime *rt, const int *want);
/*
 * Control thread, at start and in a hand-over: which lcores exchange packets
 * with another (pf_rt_lcore.recycled) once every stage s runs on @p want[s].
 * Not part of the direct-or-ring protocol: a late or early flag costs a few
 * prefetches or misses them, never a packet.
 */
void pf_rt_recycle_mark(struct pf_runtime *rt, const int *want);
/* The same at start, from the stages' owners (after the lcores are set up). */
void pf_rt_recycle_start(struct pf_runtime *rt);

#endif /* PF_RT_DIRECT_H */
