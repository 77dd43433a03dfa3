/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Route sources on their own thread (app/control/pf_routing.h): sockets,
 * framing, timers and batches. What the messages mean is rsrc.c's.
 *
 * One epoll loop: an FPM source has a listening socket, at most one
 * connection (a new one replaces it: zebra restarted) and a netlink socket
 * for link changes in its namespace; a netlink source has a subscribed
 * socket (routes, next-hop objects, links) and one for dumps. Everything
 * read in one wake-up is decoded into one batch (at most ROUTING_BATCH
 * operations) applied under the console's lock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <rte_common.h>

#include "pf_learnt.h"
#include "pf_log.h"
#include "pf_nl.h"
#include "pf_routing.h"
#include "pf_runtime.h"

#define ROUTING_BATCH 1024               /* operations applied under the lock at once */
#define ROUTING_RBUF (1u << 20)          /* bytes read at once (FPM stream, netlink) */
#define ROUTING_READS 4                  /* reads of a socket per wake-up (below) */
#define ROUTING_NL_RCVBUF (256u << 20)   /* a table's worth of notifications */
#define ROUTING_TICK_MS 100
#define ROUTING_QUIET_NS 1000000000ull   /* an FPM replay is over after a second of quiet */
#define ROUTING_RETRY_NS 1000000000ull   /* a source that could not open tries again */
#define ROUTING_IFCACHE 64
#define FPM_HDR 4
#define FPM_VERSION 1
#define FPM_NETLINK 1

enum src_state { SRC_STARTING, SRC_DOWN, SRC_LISTENING, SRC_UP, SRC_LOST, SRC_SYNCING };
static const char *const state_names[] = { "starting", "down", "listening", "up", "lost",
					   "syncing" };

/* What an epoll event is: the source index << 8 | one of these. */
enum { EV_WAKE, EV_LISTEN, EV_CONN, EV_NOTIFY, EV_DUMP };

struct ifcache {
	uint32_t ifindex;
	int16_t port;
};

struct source {
	struct pf_routing *r;
	struct pf_source_conf conf;
	char ifname[PF_MAX_PORTS][IFNAMSIZ];      /* host interfaces in conf.ns */
	uint32_t has_iface;
	struct pf_rsrc *rs;
	enum src_state state;
	int listen_fd, conn_fd, notify_fd, dump_fd, ioctl_fd;
	uint8_t *rbuf;                           /* FPM: the stream's unread part */
	size_t rlen;
	uint64_t state_ns, last_msg_ns, retry_ns;
	int dump_phase;                          /* 0 none, 1 next hops, 2 routes */
	bool dump_again;                         /* ENOBUFS during a dump */
	uint32_t dump_seq;
	struct ifcache cache[ROUTING_IFCACHE];
	unsigned int n_cache;
	/* published (under r->lock) */
	struct pf_source_state pub;
	/* the thread's */
	char peer[64];
	char error[128];
	uint64_t connects, resyncs, enobufs, bytes, batches;
	struct pf_route_result res;
};

struct pf_routing {
	pthread_t thread;
	int epfd, wakefd;
	pf_routing_locked_fn *locked;
	pthread_mutex_t lock;                    /* pub, pending */
	bool stop;
	/* a new configuration for the thread */
	bool pending;
	unsigned int n_new;
	struct source *news[PF_MAX_SOURCES];
	/* the thread's */
	unsigned int n;
	struct source *src[PF_MAX_SOURCES];
	uint8_t *buf;
	/* the batch being filled, and whose it is */
	struct source *batch_src;
	unsigned int n_ops;
	struct pf_route_op ops[ROUTING_BATCH];
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
set_state(struct source *s, enum src_state st)
{
	if (s->state != st)
		PF_LOG(INFO, "route source %s: %s -> %s", s->conf.name, state_names[s->state],
		       state_names[st]);
	s->state = st;
	s->state_ns = now_ns();
}

/* ---- batches ---- */

struct apply_arg {
	struct pf_routing *r;
	struct pf_route_result res;
};

static void
apply_locked(struct pf_runtime *rt, void *arg)
{
	struct apply_arg *a = arg;

	pf_learnt_apply(rt, a->r->ops, a->r->n_ops, &a->res);
}

static void
flush(struct pf_routing *r)
{
	struct apply_arg a = { .r = r };
	struct source *s = r->batch_src;

	if (r->n_ops == 0)
		return;
	r->locked(apply_locked, &a);
	s->batches++;
	s->res.added += a.res.added;
	s->res.replaced += a.res.replaced;
	s->res.deleted += a.res.deleted;
	s->res.unchanged += a.res.unchanged;
	s->res.missing += a.res.missing;
	s->res.refused += a.res.refused;
	s->res.shadowed += a.res.shadowed;
	r->n_ops = 0;
}

static void
emit_op(void *arg, const struct pf_route_op *op)
{
	struct source *s = arg;
	struct pf_routing *r = s->r;

	if (r->batch_src != s || r->n_ops == ROUTING_BATCH) {
		flush(r);
		r->batch_src = s;
	}
	r->ops[r->n_ops++] = *op;
}

/* ---- interfaces: a daemon names them by ifindex in its namespace ---- */

static int
port_of(void *arg, uint32_t ifindex)
{
	struct source *s = arg;
	struct ifreq ifr = { .ifr_ifindex = (int)ifindex };
	unsigned int i;
	int port = -1;

	for (i = 0; i < s->n_cache; i++)
		if (s->cache[i].ifindex == ifindex)
			return s->cache[i].port;
	if (s->ioctl_fd >= 0 && ioctl(s->ioctl_fd, SIOCGIFNAME, &ifr) == 0)
		for (i = 0; i < PF_MAX_PORTS; i++)
			if ((s->has_iface & (1u << i)) &&
			    strncmp(s->ifname[i], ifr.ifr_name, IFNAMSIZ) == 0) {
				port = (int)i;
				break;
			}
	if (s->n_cache == ROUTING_IFCACHE)
		s->n_cache = 0;
	s->cache[s->n_cache++] = (struct ifcache){ ifindex, (int16_t)port };
	return port;
}

/* ---- sockets ---- */

static void
close_fd(struct pf_routing *r, int *fd)
{
	if (*fd < 0)
		return;
	epoll_ctl(r->epfd, EPOLL_CTL_DEL, *fd, NULL);
	close(*fd);
	*fd = -1;
}

static int
watch(struct pf_routing *r, int fd, unsigned int idx, int kind)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = ((uint64_t)idx << 8) | kind };

	return epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static int
nl_listener(const char *ns, bool routes, int *out)
{
	const int groups[] = { RTNLGRP_LINK, RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE,
			       RTNLGRP_NEXTHOP };
	int fd = pf_nl_socket_in(ns, AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK, NETLINK_ROUTE);
	int size = (int)ROUTING_NL_RCVBUF;
	unsigned int i;

	if (fd < 0)
		return fd;
	/* Forced past rmem_max (root): a full table's notifications queue up. */
	if (routes && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	for (i = 0; i < (routes ? RTE_DIM(groups) : 1); i++)
		if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &groups[i],
			       sizeof(groups[i])) < 0) {
			int e = -errno;

			close(fd);
			return e;
		}
	*out = fd;
	return 0;
}

static int
fpm_listen(struct source *s)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int one = 1, fd, af = strchr(s->conf.listen, ':') != NULL ? AF_INET6 : AF_INET;

	if (af == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(s->conf.port);
		inet_pton(AF_INET, s->conf.listen, &a->sin_addr);
		len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(s->conf.port);
		inet_pton(AF_INET6, s->conf.listen, &a->sin6_addr);
		len = sizeof(*a);
	}
	fd = pf_nl_socket_in(s->conf.ns, af, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return fd;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 4) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/* Ask a netlink source's kernel for its whole table: next-hop objects first. */
static int
dump_request(struct source *s, uint16_t type)
{
	struct {
		struct nlmsghdr h;
		struct rtmsg rm;
	} req = { 0 };
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };

	req.h.nlmsg_len = NLMSG_LENGTH(type == RTM_GETNEXTHOP ? sizeof(struct nhmsg) :
				       sizeof(struct rtmsg));
	req.h.nlmsg_type = type;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.h.nlmsg_seq = ++s->dump_seq;
	if (sendto(s->dump_fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	return 0;
}

static void
dump_start(struct source *s)
{
	pf_rsrc_mark(s->rs);
	s->resyncs++;
	s->dump_again = false;
	s->dump_phase = 1;
	set_state(s, SRC_SYNCING);
	if (dump_request(s, RTM_GETNEXTHOP) < 0) {
		snprintf(s->error, sizeof(s->error), "dump request: %s", strerror(errno));
		s->dump_phase = 0;
		s->dump_again = true;
	}
}

static int
source_open(struct pf_routing *r, unsigned int idx)
{
	struct source *s = r->src[idx];
	char why[sizeof(s->error)];
	int rc;

	s->retry_ns = 0;
	s->ioctl_fd = pf_nl_socket_in(s->conf.ns, AF_INET, SOCK_DGRAM, 0);
	if (s->ioctl_fd < 0) {
		rc = s->ioctl_fd;
		goto fail;
	}
	rc = nl_listener(s->conf.ns, s->conf.type == PF_SOURCE_NETLINK, &s->notify_fd);
	if (rc < 0 || (rc = watch(r, s->notify_fd, idx, EV_NOTIFY)) < 0)
		goto fail;
	if (s->conf.type == PF_SOURCE_FPM) {
		s->listen_fd = fpm_listen(s);
		if (s->listen_fd < 0) {
			rc = s->listen_fd;
			goto fail;
		}
		if ((rc = watch(r, s->listen_fd, idx, EV_LISTEN)) < 0)
			goto fail;
		set_state(s, SRC_LISTENING);
		PF_LOG(INFO, "route source %s: FPM server on %s port %u%s%s", s->conf.name,
		       s->conf.listen, s->conf.port, s->conf.ns[0] ? " in namespace " : "",
		       s->conf.ns);
		return 0;
	}
	s->dump_fd = pf_nl_socket_in(s->conf.ns, AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK,
				     NETLINK_ROUTE);
	if (s->dump_fd < 0) {
		rc = s->dump_fd;
		goto fail;
	}
	if ((rc = watch(r, s->dump_fd, idx, EV_DUMP)) < 0)
		goto fail;
	dump_start(s);
	return 0;
fail:
	/* Said once; the retries every second are quiet until the reason changes. */
	snprintf(why, sizeof(why), "cannot open: %s", strerror(-rc));
	if (strcmp(why, s->error) != 0)
		PF_LOG(ERR, "route source %s: %s (retrying every second)", s->conf.name, why);
	memcpy(s->error, why, sizeof(why));
	close_fd(r, &s->ioctl_fd);
	close_fd(r, &s->notify_fd);
	close_fd(r, &s->listen_fd);
	close_fd(r, &s->dump_fd);
	set_state(s, SRC_DOWN);
	s->retry_ns = now_ns() + ROUTING_RETRY_NS;
	return rc;
}

static struct source *
source_new(const struct pf_source_conf *c)
{
	struct source *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->conf = *c;
	s->pub.conf = *c;
	s->pub.state = state_names[SRC_STARTING];
	s->pub.last_update_s = -1;
	s->listen_fd = s->conn_fd = s->notify_fd = s->dump_fd = s->ioctl_fd = -1;
	s->state_ns = now_ns();
	return s;
}

/* Routes withdrawn (the source left the configuration), sockets closed. */
static void
source_free(struct pf_routing *r, struct source *s, bool withdraw)
{
	if (s->rs != NULL && withdraw) {
		uint32_t n = pf_rsrc_withdraw_all(s->rs);

		if (n != 0)
			PF_LOG(INFO, "route source %s: removed, %u routes withdrawn", s->conf.name, n);
	}
	if (r->batch_src == s)
		flush(r);
	close_fd(r, &s->conn_fd);
	close_fd(r, &s->listen_fd);
	close_fd(r, &s->notify_fd);
	close_fd(r, &s->dump_fd);
	close_fd(r, &s->ioctl_fd);
	pf_rsrc_free(s->rs);
	free(s->rbuf);
	free(s);
}

/* ---- reading ---- */

/* One FPM frame or one netlink read (a notification: links and routes never share one). */
static void
take_msgs(struct source *s, const uint8_t *p, size_t len)
{
	int rc = pf_rsrc_msgs(s->rs, p, len);

	if (rc & PF_RSRC_LINKS)
		s->n_cache = 0;         /* an interface came, went or changed its name */
	if ((rc & PF_RSRC_DUMP) && s->conf.type == PF_SOURCE_NETLINK)
		s->dump_again = true;
}

static void
fpm_lost(struct source *s, const char *why)
{
	PF_LOG(INFO, "route source %s: %s %s; its routes stay for %u s", s->conf.name, s->peer,
	       why, s->conf.grace_ms / 1000);
	snprintf(s->error, sizeof(s->error), "%s %s", s->peer, why);
	set_state(s, SRC_LOST);
}

/*
 * At most ROUTING_READS reads per wake-up (epoll is level-triggered: the rest
 * comes at the next one). A daemon that never pauses (zebra sending a full
 * table, or a feed churning) would otherwise keep the thread here: no
 * published state, no timers, the other sources starved.
 */
static void
fpm_read(struct pf_routing *r, struct source *s)
{
	ssize_t got;
	size_t off;
	int n;

	for (n = 0; n < ROUTING_READS; n++) {
		got = recv(s->conn_fd, s->rbuf + s->rlen, ROUTING_RBUF - s->rlen, MSG_DONTWAIT);
		if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
			close_fd(r, &s->conn_fd);
			fpm_lost(s, got == 0 ? "closed the connection" : strerror(errno));
			s->rlen = 0;
			return;
		}
		if (got < 0)
			return;
		s->bytes += (uint64_t)got;
		s->rlen += (size_t)got;
		s->last_msg_ns = now_ns();
		for (off = 0; s->rlen - off >= FPM_HDR;) {
			const uint8_t *f = s->rbuf + off;
			size_t flen = ((size_t)f[2] << 8) | f[3];

			if (f[0] != FPM_VERSION || flen < FPM_HDR) {
				close_fd(r, &s->conn_fd);
				fpm_lost(s, "sent a frame that is not FPM version 1");
				s->rlen = 0;
				return;
			}
			if (s->rlen - off < flen)
				break;
			if (f[1] == FPM_NETLINK)
				take_msgs(s, f + FPM_HDR, flen - FPM_HDR);
			off += flen;
		}
		memmove(s->rbuf, s->rbuf + off, s->rlen - off);
		s->rlen -= off;
	}
}

static void
fpm_accept(struct pf_routing *r, unsigned int idx)
{
	struct source *s = r->src[idx];
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char addr[INET6_ADDRSTRLEN] = "?";
	int fd = accept4(s->listen_fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	bool had_routes;

	if (fd < 0)
		return;
	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr, sizeof(addr));
	else if (ss.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr, sizeof(addr));
	if (s->conn_fd >= 0) {
		/* A daemon that restarted without closing: the newcomer is the one. */
		close_fd(r, &s->conn_fd);
		PF_LOG(INFO, "route source %s: %s replaced by a new connection", s->conf.name,
		       s->peer);
	}
	if (s->rbuf == NULL && (s->rbuf = malloc(ROUTING_RBUF)) == NULL) {
		close(fd);
		return;
	}
	s->rlen = 0;
	s->conn_fd = fd;
	if (watch(r, fd, idx, EV_CONN) < 0) {
		close_fd(r, &s->conn_fd);
		return;
	}
	snprintf(s->peer, sizeof(s->peer), "%s", addr);
	s->connects++;
	s->last_msg_ns = now_ns();
	had_routes = s->rs != NULL && (pf_rsrc_stats(s->rs)->routes4 +
				       pf_rsrc_stats(s->rs)->routes6) != 0;
	if (had_routes) {
		/* zebra replays its whole table and says nothing when done. */
		pf_rsrc_mark(s->rs);
		s->resyncs++;
		set_state(s, SRC_SYNCING);
	} else {
		set_state(s, SRC_UP);
	}
	s->error[0] = '\0';
}

static void
nl_read(struct pf_routing *r, struct source *s, int kind)
{
	int fd = kind == EV_DUMP ? s->dump_fd : s->notify_fd;
	ssize_t got;
	int n;

	for (n = 0; n < ROUTING_READS; n++) {   /* as fpm_read */
		got = recv(fd, r->buf, ROUTING_RBUF, MSG_DONTWAIT);
		if (got < 0 && errno == ENOBUFS) {
			/* The kernel dropped notifications: only a dump says what we missed. */
			s->enobufs++;
			PF_LOG(WARNING, "route source %s: netlink notifications lost (ENOBUFS): "
			       "reading the table again", s->conf.name);
			if (s->conf.type == PF_SOURCE_NETLINK)
				s->dump_again = true;
			continue;
		}
		if (got <= 0)
			return;
		s->bytes += (uint64_t)got;
		if (kind == EV_NOTIFY && s->conf.type == PF_SOURCE_FPM) {
			take_msgs(s, r->buf, (size_t)got);   /* links only */
			continue;
		}
		s->last_msg_ns = now_ns();
		if (kind == EV_DUMP) {
			const struct nlmsghdr *h = (const struct nlmsghdr *)r->buf;
			int left = (int)got;

			for (; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
				if (h->nlmsg_type != NLMSG_DONE && h->nlmsg_type != NLMSG_ERROR) {
					if (pf_rsrc_msg(s->rs, h) == 1)
						s->dump_again = true;
					continue;
				}
				/* A kernel without next-hop objects answers the first with an error. */
				if (s->dump_phase == 1) {
					s->dump_phase = 2;
					dump_request(s, RTM_GETROUTE);
				} else if (s->dump_phase == 2) {
					uint32_t swept;

					s->dump_phase = 0;
					swept = pf_rsrc_sweep(s->rs);
					if (swept != 0)
						PF_LOG(INFO, "route source %s: %u stale routes swept",
						       s->conf.name, swept);
					set_state(s, SRC_UP);
				}
			}
			continue;
		}
		take_msgs(s, r->buf, (size_t)got);
	}
}

/* ---- timers ---- */

static void
tick(struct pf_routing *r, unsigned int idx, uint64_t now)
{
	struct source *s = r->src[idx];
	uint32_t n;

	if (s->state == SRC_DOWN) {
		if (now >= s->retry_ns)
			source_open(r, idx);
		return;
	}
	if (s->conf.type == PF_SOURCE_NETLINK) {
		if (s->dump_again && s->dump_phase == 0)
			dump_start(s);
		return;
	}
	if (s->state == SRC_LOST && now - s->state_ns >= (uint64_t)s->conf.grace_ms * 1000000) {
		n = pf_rsrc_withdraw_all(s->rs);
		PF_LOG(INFO, "route source %s: not back within %u s: %u routes withdrawn",
		       s->conf.name, s->conf.grace_ms / 1000, n);
		set_state(s, SRC_LISTENING);
	} else if (s->state == SRC_SYNCING &&
		   now - s->state_ns >= (uint64_t)s->conf.resync_ms * 1000000 &&
		   now - s->last_msg_ns >= ROUTING_QUIET_NS) {
		n = pf_rsrc_sweep(s->rs);
		PF_LOG(INFO, "route source %s: resynchronised, %u stale routes swept",
		       s->conf.name, n);
		set_state(s, SRC_UP);
	}
}

/* ---- configuration ---- */

static void
take_config(struct pf_routing *r)
{
	struct source *old[PF_MAX_SOURCES], *news[PF_MAX_SOURCES];
	unsigned int n_old = r->n, n_new, i, j;

	flush(r);
	memcpy(old, r->src, sizeof(old));
	pthread_mutex_lock(&r->lock);
	n_new = r->n_new;
	memcpy(news, r->news, sizeof(news));
	r->pending = false;
	r->n_new = 0;
	for (i = 0; i < n_new; i++) {
		struct source *keep = NULL;

		for (j = 0; j < n_old; j++)
			if (old[j] != NULL && pf_source_conf_same(&old[j]->conf, &news[i]->conf)) {
				keep = old[j];
				old[j] = NULL;
				break;
			}
		if (keep != NULL) {
			/* Same source: its routes and connection stay; new timers and
			 * host interfaces. */
			keep->conf.grace_ms = news[i]->conf.grace_ms;
			keep->conf.resync_ms = news[i]->conf.resync_ms;
			memcpy(keep->ifname, news[i]->ifname, sizeof(keep->ifname));
			keep->has_iface = news[i]->has_iface;
			keep->n_cache = 0;
			free(news[i]);
			news[i] = keep;
		}
		r->src[i] = news[i];
	}
	r->n = n_new;
	pthread_mutex_unlock(&r->lock);
	for (j = 0; j < n_old; j++)
		if (old[j] != NULL)
			source_free(r, old[j], true);
	flush(r);
	/* Events name a source by index: watch every socket again under its new one. */
	for (i = 0; i < r->n; i++) {
		struct source *s = r->src[i];
		int *fds[] = { &s->listen_fd, &s->conn_fd, &s->notify_fd, &s->dump_fd };
		const int kinds[] = { EV_LISTEN, EV_CONN, EV_NOTIFY, EV_DUMP };

		if (s->rs == NULL) {
			struct pf_rsrc_conf rc = {
				.src = s->conf.id, .table = s->conf.table,
				.metrics = s->conf.type == PF_SOURCE_NETLINK,
				.port_of = port_of, .port_arg = s, .emit = emit_op, .emit_arg = s,
			};

			s->r = r;
			s->rs = pf_rsrc_create(&rc);
			if (s->rs == NULL) {
				snprintf(s->error, sizeof(s->error), "out of memory");
				set_state(s, SRC_DOWN);
				s->retry_ns = UINT64_MAX;
				continue;
			}
			source_open(r, i);
			continue;
		}
		for (j = 0; j < RTE_DIM(fds); j++)
			if (*fds[j] >= 0) {
				struct epoll_event ev = { .events = EPOLLIN,
							  .data.u64 = ((uint64_t)i << 8) | kinds[j] };

				epoll_ctl(r->epfd, EPOLL_CTL_MOD, *fds[j], &ev);
			}
	}
}

static void
publish(struct pf_routing *r, uint64_t now)
{
	unsigned int i;

	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->n; i++) {
		struct source *s = r->src[i];
		struct pf_source_state *p = &s->pub;

		p->conf = s->conf;
		p->state = state_names[s->state];
		p->state_s = (double)(now - s->state_ns) / 1e9;
		p->last_update_s = s->last_msg_ns != 0 ? (double)(now - s->last_msg_ns) / 1e9 : -1;
		memcpy(p->peer, s->peer, sizeof(p->peer));
		memcpy(p->error, s->error, sizeof(p->error));
		p->connects = s->connects;
		p->resyncs = s->resyncs;
		p->enobufs = s->enobufs;
		p->bytes = s->bytes;
		p->batches = s->batches;
		p->res = s->res;
		if (s->rs != NULL)
			p->rs = *pf_rsrc_stats(s->rs);
	}
	pthread_mutex_unlock(&r->lock);
}

static void *
routing_thread(void *arg)
{
	struct pf_routing *r = arg;
	struct epoll_event evs[32];
	uint64_t now, next_tick = 0;
	bool stop, pending;
	int n, i;

	for (;;) {
		n = epoll_wait(r->epfd, evs, RTE_DIM(evs), ROUTING_TICK_MS);
		for (i = 0; i < n; i++) {
			unsigned int idx = (unsigned int)(evs[i].data.u64 >> 8);
			int kind = (int)(evs[i].data.u64 & 0xff);
			uint64_t v;

			if (kind == EV_WAKE) {
				if (read(r->wakefd, &v, sizeof(v)) < 0)
					continue;
				continue;
			}
			if (idx >= r->n)
				continue;
			if (kind == EV_LISTEN)
				fpm_accept(r, idx);
			else if (kind == EV_CONN && r->src[idx]->conn_fd >= 0)
				fpm_read(r, r->src[idx]);
			else
				nl_read(r, r->src[idx], kind);
		}
		flush(r);
		pthread_mutex_lock(&r->lock);
		stop = r->stop;
		pending = r->pending;
		pthread_mutex_unlock(&r->lock);
		if (stop)
			break;
		if (pending)
			take_config(r);
		now = now_ns();
		if (now >= next_tick) {
			for (i = 0; i < (int)r->n; i++)
				tick(r, (unsigned int)i, now);
			flush(r);
			publish(r, now);
			next_tick = now + (uint64_t)ROUTING_TICK_MS * 1000000 / 2;
		}
	}
	return NULL;
}

/* ---- the main thread's side ---- */

/* The sources of @p rt's topology, with the host interfaces in their namespaces. */
static unsigned int
sources_of(struct pf_runtime *rt, struct source **out)
{
	const struct pf_topo *t = rt->topo;
	unsigned int n = 0, i;
	uint16_t k, p;

	for (i = 0; i < t->n_sources; i++) {
		struct source *s = source_new(&t->sources[i]);
		char name[IFNAMSIZ], ns[64];

		if (s == NULL)
			continue;
		for (k = 0; k < rt->n_stages; k++) {
			const struct pf_stage *st = rt->stages[k];

			if (st->ops->ctl.host_iface == NULL)
				continue;
			for (p = 0; p < t->n_ports; p++)
				if (st->ops->ctl.host_iface(st, p, name, ns) &&
				    strcmp(ns, s->conf.ns) == 0) {
					memcpy(s->ifname[p], name, IFNAMSIZ);
					s->has_iface |= 1u << p;
				}
		}
		out[n++] = s;
	}
	return n;
}

void
pf_routing_configure(struct pf_routing *r, struct pf_runtime *rt)
{
	struct source *news[PF_MAX_SOURCES];
	unsigned int n = sources_of(rt, news), i;
	uint64_t one = 1;

	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->n_new; i++)          /* a configuration the thread never took */
		free(r->news[i]);
	memcpy(r->news, news, sizeof(news));
	r->n_new = n;
	r->pending = true;
	pthread_mutex_unlock(&r->lock);
	if (write(r->wakefd, &one, sizeof(one)) < 0)
		PF_LOG(WARNING, "route sources: cannot wake their thread: %s", strerror(errno));
}

int
pf_routing_start(struct pf_routing **out, struct pf_runtime *rt, pf_routing_locked_fn *locked)
{
	struct pf_routing *r = calloc(1, sizeof(*r));
	int rc;

	*out = NULL;
	if (r == NULL)
		return -ENOMEM;
	r->locked = locked;
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	r->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	r->buf = malloc(ROUTING_RBUF);
	pthread_mutex_init(&r->lock, NULL);
	if (r->epfd < 0 || r->wakefd < 0 || r->buf == NULL ||
	    epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->wakefd,
		      &(struct epoll_event){ .events = EPOLLIN, .data.u64 = EV_WAKE }) < 0) {
		rc = -errno;
		goto fail;
	}
	pf_routing_configure(r, rt);
	rc = pthread_create(&r->thread, NULL, routing_thread, r);
	if (rc != 0) {
		rc = -rc;
		goto fail;
	}
	pthread_setname_np(r->thread, "pf-routes");
	*out = r;
	return 0;
fail:
	if (r->epfd >= 0)
		close(r->epfd);
	if (r->wakefd >= 0)
		close(r->wakefd);
	for (unsigned int i = 0; i < r->n_new; i++)
		free(r->news[i]);
	free(r->buf);
	free(r);
	return rc != 0 ? rc : -ENOMEM;
}

void
pf_routing_stop(struct pf_routing *r)
{
	uint64_t one = 1;
	unsigned int i;

	if (r == NULL)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_mutex_unlock(&r->lock);
	if (write(r->wakefd, &one, sizeof(one)) < 0)
		PF_LOG(WARNING, "route sources: cannot wake their thread: %s", strerror(errno));
	pthread_join(r->thread, NULL);
	for (i = 0; i < r->n; i++)
		source_free(r, r->src[i], false);
	for (i = 0; i < r->n_new; i++)
		free(r->news[i]);
	close(r->epfd);
	close(r->wakefd);
	free(r->buf);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

unsigned int
pf_routing_sources(struct pf_routing *r, struct pf_source_state *out, unsigned int max)
{
	unsigned int i, n = 0;

	if (r == NULL)
		return 0;
	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->n && n < max; i++)
		out[n++] = r->src[i]->pub;
	pthread_mutex_unlock(&r->lock);
	return n;
}

int
pf_routing_source_id(struct pf_routing *r, const char *name)
{
	struct pf_source_state st[PF_MAX_SOURCES];
	unsigned int n = pf_routing_sources(r, st, PF_MAX_SOURCES), i;

	for (i = 0; i < n; i++)
		if (strcmp(st[i].conf.name, name) == 0)
			return st[i].conf.id;
	return -1;
}
