/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rtnetlink requests for kernel interfaces (stages/lib/pf_nl.h). A socket
 * belongs to the namespace it was created in, so a socket for another
 * namespace is made by a short thread that enters it (setns changes only
 * the calling thread) and leaves with the socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include "pf_nl.h"

#define NL_BUF 1024

int
pf_nl_netns_fd(const char *ns)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* A socket of this namespace; a netlink one is bound (the kernel picks its port id). */
static int
ns_socket(int domain, int type, int proto)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(domain, type | SOCK_CLOEXEC, proto);

	if (fd < 0)
		return -errno;
	if (domain == AF_NETLINK && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

struct nl_in_ns {
	int ns_fd;
	int domain, type, proto;
	int rc;
};

static void *
socket_in(void *arg)
{
	struct nl_in_ns *a = arg;

	a->rc = setns(a->ns_fd, CLONE_NEWNET) < 0 ? -errno : ns_socket(a->domain, a->type, a->proto);
	return NULL;
}

int
pf_nl_socket_in(const char *ns, int domain, int type, int proto)
{
	struct nl_in_ns a = { .domain = domain, .type = type, .proto = proto };
	pthread_t t;
	int rc;

	if (ns == NULL || ns[0] == '\0')
		return ns_socket(domain, type, proto);
	a.ns_fd = pf_nl_netns_fd(ns);
	if (a.ns_fd < 0)
		return a.ns_fd;
	a.rc = -EAGAIN;
	rc = pthread_create(&t, NULL, socket_in, &a);
	if (rc == 0)
		pthread_join(t, NULL);
	close(a.ns_fd);
	return rc != 0 ? -rc : a.rc;
}

int
pf_nl_open(const char *ns)
{
	return pf_nl_socket_in(ns, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
}

void
pf_nl_close(int nl)
{
	if (nl >= 0)
		close(nl);
}

/* Append attribute @p type of @p len bytes to @p h (NL_BUF bytes of room). */
static void
nl_attr(struct nlmsghdr *h, uint16_t type, const void *data, uint16_t len)
{
	struct rtattr *a = (struct rtattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));

	a->rta_type = type;
	a->rta_len = (uint16_t)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* Send @p h and wait for its acknowledgement: 0 or the kernel's -errno. */
static int
nl_talk(int nl, struct nlmsghdr *h)
{
	static uint32_t seq;
	char buf[NL_BUF];
	struct nlmsghdr *r;
	ssize_t n;

	h->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	h->nlmsg_seq = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
	if (send(nl, h, h->nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		n = recv(nl, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (r = (struct nlmsghdr *)buf; NLMSG_OK(r, (uint32_t)n); r = NLMSG_NEXT(r, n)) {
			if (r->nlmsg_seq != h->nlmsg_seq)
				continue;
			if (r->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(r))->error;
		}
	}
}

int
pf_nl_link_netns(int nl, int ifindex, int ns_fd)
{
	char buf[NL_BUF] __attribute__((aligned(8))) = { 0 };
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct ifinfomsg *ifi = NLMSG_DATA(h);
	uint32_t fd = (uint32_t)ns_fd;

	h->nlmsg_len = NLMSG_LENGTH(sizeof(*ifi));
	h->nlmsg_type = RTM_NEWLINK;
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	nl_attr(h, IFLA_NET_NS_FD, &fd, sizeof(fd));
	return nl_talk(nl, h);
}

int
pf_nl_link_set(int nl, int ifindex, const uint8_t *mac, uint32_t mtu, bool up)
{
	char buf[NL_BUF] __attribute__((aligned(8))) = { 0 };
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct ifinfomsg *ifi = NLMSG_DATA(h);

	h->nlmsg_len = NLMSG_LENGTH(sizeof(*ifi));
	h->nlmsg_type = RTM_NEWLINK;
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	ifi->ifi_change = IFF_UP;
	ifi->ifi_flags = up ? IFF_UP : 0;
	if (mac != NULL)
		nl_attr(h, IFLA_ADDRESS, mac, 6);
	if (mtu != 0)
		nl_attr(h, IFLA_MTU, &mtu, sizeof(mtu));
	return nl_talk(nl, h);
}

int
pf_nl_link_index(int nl, const char *name)
{
	char buf[NL_BUF] __attribute__((aligned(8))) = { 0 };
	struct nlmsghdr *h = (struct nlmsghdr *)buf, *r;
	struct ifinfomsg *ifi = NLMSG_DATA(h);
	char rbuf[8192];
	ssize_t n;

	h->nlmsg_len = NLMSG_LENGTH(sizeof(*ifi));
	h->nlmsg_type = RTM_GETLINK;
	h->nlmsg_flags = NLM_F_REQUEST;
	h->nlmsg_seq = 1;
	ifi->ifi_family = AF_UNSPEC;
	nl_attr(h, IFLA_IFNAME, name, (uint16_t)(strlen(name) + 1));
	if (send(nl, h, h->nlmsg_len, 0) < 0)
		return -errno;
	n = recv(nl, rbuf, sizeof(rbuf), 0);
	if (n < 0)
		return -errno;
	for (r = (struct nlmsghdr *)rbuf; NLMSG_OK(r, (uint32_t)n); r = NLMSG_NEXT(r, n)) {
		if (r->nlmsg_type == NLMSG_ERROR)
			return ((struct nlmsgerr *)NLMSG_DATA(r))->error ?: -ENODEV;
		if (r->nlmsg_type == RTM_NEWLINK)
			return ((struct ifinfomsg *)NLMSG_DATA(r))->ifi_index;
	}
	return -ENODEV;
}

int
pf_nl_addr_add(int nl, int ifindex, int af, const uint8_t *addr, uint8_t plen)
{
	char buf[NL_BUF] __attribute__((aligned(8))) = { 0 };
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct ifaddrmsg *ifa = NLMSG_DATA(h);
	uint16_t alen = af == AF_INET ? 4 : 16;

	h->nlmsg_len = NLMSG_LENGTH(sizeof(*ifa));
	h->nlmsg_type = RTM_NEWADDR;
	h->nlmsg_flags = NLM_F_CREATE | NLM_F_REPLACE;
	ifa->ifa_family = (uint8_t)af;
	ifa->ifa_prefixlen = plen;
	ifa->ifa_index = (uint32_t)ifindex;
	ifa->ifa_flags = af == AF_INET6 ? IFA_F_NODAD : 0;
	nl_attr(h, IFA_LOCAL, addr, alen);
	nl_attr(h, IFA_ADDRESS, addr, alen);
	if (af == AF_INET && plen < 31) {
		uint32_t a, b;

		memcpy(&a, addr, 4);
		b = a | htonl(plen == 0 ? ~0u : ~0u >> plen);
		nl_attr(h, IFA_BROADCAST, &b, 4);
	}
	return nl_talk(nl, h);
}
