// kdns_udp: a UDP socket for the DNS hot path that moves datagrams in batches.
//
// Why this exists: on loopback a Node dgram socket costs about 3 µs of user CPU per query
// before the server does any work (a Buffer, an rinfo object and an address string per
// datagram, an EventEmitter call, argument checks and a send request per reply), on top of
// the kernel's ~5 µs. This socket reads up to BATCH datagrams with one recvmmsg into memory
// shared with JavaScript, calls JavaScript once per batch, and sends the batch's replies with
// one sendmmsg. Everything else about a query stays in JavaScript.
//
// Shared memory, set up by JavaScript (see src/server/nativeudp.ts for the other side):
//   rx:   BATCH slots of SLOT bytes, datagram i in slot i
//   meta: BATCH records of META bytes: int32 length (-1: truncated, drop), int32 address
//         length, then the sender's sockaddr (at most 28 bytes)
//   tx:   BATCH slots of SLOT bytes for replies
//   txmeta: int32 pairs (rx index the reply goes to, reply length)
// Replies that complete after their batch (forwarded queries) are gathered by JavaScript into
// its own slots and meta records and leave in one sendmmsg too (sendBatch). Replies too large
// for a slot go through sendTo.
//
// The same socket, bound to an ephemeral port and connected, is kdns's UDP client to an
// upstream (src/lib/dnsclient/nativeudp.ts): queries leave in batches through sendBatch, replies
// arrive in batches through onBatch. A connected socket learns of ICMP errors (port
// unreachable): onBatch then gets minus the errno instead of a count.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <linux/filter.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <node_api.h>
#include <uv.h>

#ifndef SO_ATTACH_REUSEPORT_CBPF
#define SO_ATTACH_REUSEPORT_CBPF 51
#endif
#ifndef SO_DETACH_REUSEPORT_BPF
#define SO_DETACH_REUSEPORT_BPF 68
#endif

#define BATCH 64
#define SLOT 4096
#define META 40
// Batches read per readable event before yielding to the event loop (timers, TCP, ...).
#define MAX_BATCHES_PER_WAKEUP 8

typedef struct {
  napi_env env;
  int fd;
  uv_poll_t poll;
  int polling;
  napi_ref on_batch;
  napi_ref rx_ref, meta_ref, tx_ref, txmeta_ref;
  napi_async_context async;
  unsigned char *rx, *meta, *tx;
  int32_t *txmeta;
  struct mmsghdr rmsg[BATCH];
  struct iovec riov[BATCH];
  struct sockaddr_storage raddr[BATCH];
  struct mmsghdr smsg[BATCH];
  struct iovec siov[BATCH];
} udp_socket;

#define CHECK(call)                                                     \
  do {                                                                  \
    if ((call) != napi_ok) {                                            \
      napi_throw_error(env, NULL, "kdns_udp: N-API call failed: " #call); \
      return NULL;                                                      \
    }                                                                   \
  } while (0)

static napi_value throw_errno(napi_env env, const char *what, int err) {
  char msg[160];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  napi_value code, text, error;
  napi_create_string_utf8(env, err == EADDRINUSE ? "EADDRINUSE" : err == EACCES ? "EACCES" : err == EADDRNOTAVAIL ? "EADDRNOTAVAIL" : "ESYSCALL", NAPI_AUTO_LENGTH, &code);
  napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &text);
  napi_create_error(env, code, text, &error);
  napi_throw(env, error);
  return NULL;
}

static void fill_meta(udp_socket *s, int i, int len, int flags) {
  unsigned char *m = s->meta + (size_t)i * META;
  int32_t stored_len = (flags & MSG_TRUNC) ? -1 : len;
  int32_t alen = (int32_t)s->rmsg[i].msg_hdr.msg_namelen;
  if (alen > META - 8) alen = META - 8;
  memcpy(m, &stored_len, 4);
  memcpy(m + 4, &alen, 4);
  memcpy(m + 8, &s->raddr[i], (size_t)alen);
}

static void reset_rx(udp_socket *s) {
  for (int i = 0; i < BATCH; i++) {
    s->riov[i].iov_base = s->rx + (size_t)i * SLOT;
    s->riov[i].iov_len = SLOT;
    memset(&s->rmsg[i].msg_hdr, 0, sizeof s->rmsg[i].msg_hdr);
    s->rmsg[i].msg_hdr.msg_name = &s->raddr[i];
    s->rmsg[i].msg_hdr.msg_namelen = sizeof s->raddr[i];
    s->rmsg[i].msg_hdr.msg_iov = &s->riov[i];
    s->rmsg[i].msg_hdr.msg_iovlen = 1;
  }
}

// Calls JavaScript's onBatch(count) inside a callback scope, so promise jobs and nextTicks
// queued by the handlers run when it returns, as after any other I/O callback.
static int deliver(udp_socket *s, int count) {
  napi_env env = s->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return -1;
  napi_value fn, recv, arg, result;
  napi_get_reference_value(env, s->on_batch, &fn);
  napi_get_global(env, &recv);  // MakeCallback needs an object receiver
  napi_create_int32(env, count, &arg);
  napi_status st = napi_make_callback(env, s->async, recv, fn, 1, &arg, &result);
  if (st == napi_pending_exception) {
    napi_value err;
    napi_get_and_clear_last_exception(env, &err);
    napi_fatal_exception(env, err);
  }
  napi_close_handle_scope(env, scope);
  return 0;
}

static void on_readable(uv_poll_t *handle, int status, int events);

// A pending socket error (ICMP unreachable on a connected socket): libuv stops polling a
// descriptor that reports POLLERR, so take the error, tell JavaScript, and poll again.
static void report_socket_error(udp_socket *s) {
  int err = 0;
  socklen_t len = sizeof err;
  if (s->fd >= 0 && getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err != 0) deliver(s, -err);
  if (s->fd >= 0 && !uv_is_closing((uv_handle_t *)&s->poll)) uv_poll_start(&s->poll, UV_READABLE, on_readable);
}

static void on_readable(uv_poll_t *handle, int status, int events) {
  udp_socket *s = (udp_socket *)handle->data;
  if (status < 0) {
    report_socket_error(s);
    return;
  }
  if (!(events & UV_READABLE)) return;
  for (int round = 0; round < MAX_BATCHES_PER_WAKEUP; round++) {
    if (s->fd < 0 || uv_is_closing((uv_handle_t *)&s->poll)) return;  // closed by a handler
    reset_rx(s);
    int n = recvmmsg(s->fd, s->rmsg, BATCH, MSG_DONTWAIT, NULL);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      deliver(s, -errno);  // a connected socket's ICMP error (ECONNREFUSED, ...)
      continue;
    }
    if (n <= 0) return;
    for (int i = 0; i < n; i++) fill_meta(s, i, (int)s->rmsg[i].msg_len, s->rmsg[i].msg_hdr.msg_flags);
    deliver(s, n);
    if (n < BATCH) return;
  }
}

static void on_closed(uv_handle_t *handle);

// Drops our hold on the JavaScript side (callback and buffers): once closed, the socket object
// and its buffers can be collected, which ends in finalize_socket.
static void release_references(napi_env env, udp_socket *s) {
  napi_ref *refs[] = {&s->on_batch, &s->rx_ref, &s->meta_ref, &s->tx_ref, &s->txmeta_ref};
  for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
    if (*refs[i]) napi_delete_reference(env, *refs[i]);
    *refs[i] = NULL;
  }
}

// The JavaScript object was collected. Normally close() ran first; if not, stop reading now.
static void finalize_socket(napi_env env, void *data, void *hint) {
  (void)hint;
  udp_socket *s = (udp_socket *)data;
  release_references(env, s);
  napi_async_destroy(env, s->async);
  if (s->polling) {
    s->env = NULL;  // on_closed frees the memory once libuv is done with the poll handle
    if (!uv_is_closing((uv_handle_t *)&s->poll)) {
      uv_poll_stop(&s->poll);
      uv_close((uv_handle_t *)&s->poll, on_closed);
    }
  } else {
    free(s);
  }
}

static int buffer_arg(napi_env env, napi_value v, size_t min, unsigned char **out, napi_ref *ref) {
  void *data;
  size_t len;
  bool is_buffer = false;
  napi_is_buffer(env, v, &is_buffer);
  if (!is_buffer) return -1;
  if (napi_get_buffer_info(env, v, &data, &len) != napi_ok || len < min) return -1;
  *out = data;
  if (ref) napi_create_reference(env, v, 1, ref);
  return 0;
}

// Fills *sa for address:port of the family; returns its length, or 0 if address is not one.
static socklen_t socket_address(int family, const char *address, int port, struct sockaddr_storage *sa) {
  memset(sa, 0, sizeof *sa);
  if (family == AF_INET6) {
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)sa;
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)port);
    return inet_pton(AF_INET6, address, &a6->sin6_addr) == 1 ? sizeof *a6 : 0;
  }
  struct sockaddr_in *a4 = (struct sockaddr_in *)sa;
  a4->sin_family = AF_INET;
  a4->sin_port = htons((uint16_t)port);
  return inet_pton(AF_INET, address, &a4->sin_addr) == 1 ? sizeof *a4 : 0;
}

// Reads a call's arguments into argv; false (with a TypeError thrown) when fewer than `want`.
static bool take_args(napi_env env, napi_callback_info info, size_t want, napi_value *argv, const char *what) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < want) {
    char msg[80];
    snprintf(msg, sizeof msg, "kdns_udp.%s: %zu arguments expected", what, want);
    napi_throw_type_error(env, NULL, msg);
    return false;
  }
  return true;
}

// Checks and takes the shared buffers of argv[first..first+3]; NULL (with a JavaScript error
// thrown) when one is missing or too small.
static udp_socket *new_socket(napi_env env, napi_value *argv, const char *what) {
  udp_socket *s = calloc(1, sizeof *s);
  if (!s) {
    throw_errno(env, what, ENOMEM);
    return NULL;
  }
  s->env = env;
  s->fd = -1;
  unsigned char *txmeta;
  if (buffer_arg(env, argv[0], (size_t)BATCH * SLOT, &s->rx, NULL) || buffer_arg(env, argv[1], (size_t)BATCH * META, &s->meta, NULL) ||
      buffer_arg(env, argv[2], (size_t)BATCH * SLOT, &s->tx, NULL) || buffer_arg(env, argv[3], (size_t)BATCH * 8, &txmeta, NULL)) {
    free(s);
    napi_throw_type_error(env, NULL, "kdns_udp: rx/meta/tx/txmeta buffers too small");
    return NULL;
  }
  s->txmeta = (int32_t *)txmeta;
  return s;
}

// Starts reading the bound descriptor fd into s and returns the JavaScript socket object, with
// a "port" property (the bound port). argv holds rx, meta, tx, txmeta and onBatch.
static napi_value start_socket(napi_env env, udp_socket *s, int fd, napi_value *argv) {
  struct sockaddr_storage bound;
  socklen_t blen = sizeof bound;
  memset(&bound, 0, sizeof bound);
  getsockname(fd, (struct sockaddr *)&bound, &blen);
  int bound_port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port : ((struct sockaddr_in *)&bound)->sin_port);

  s->fd = fd;
  napi_create_reference(env, argv[0], 1, &s->rx_ref);
  napi_create_reference(env, argv[1], 1, &s->meta_ref);
  napi_create_reference(env, argv[2], 1, &s->tx_ref);
  napi_create_reference(env, argv[3], 1, &s->txmeta_ref);
  napi_create_reference(env, argv[4], 1, &s->on_batch);
  napi_value resource, resource_name;
  napi_create_object(env, &resource);
  napi_create_string_utf8(env, "kdns_udp", NAPI_AUTO_LENGTH, &resource_name);
  napi_async_init(env, resource, resource_name, &s->async);

  uv_loop_t *loop;
  napi_get_uv_event_loop(env, &loop);
  uv_poll_init(loop, &s->poll, fd);
  s->poll.data = s;
  uv_poll_start(&s->poll, UV_READABLE, on_readable);
  s->polling = 1;

  napi_value obj, port_value;
  CHECK(napi_create_object(env, &obj));
  CHECK(napi_wrap(env, obj, s, finalize_socket, NULL, NULL));
  napi_create_int32(env, bound_port, &port_value);
  napi_set_named_property(env, obj, "port", port_value);
  return obj;
}

// A socket of `type` for address:port, bound, with the options every kdns listener has:
// SO_REUSEPORT (a successor — a restarted worker's parent, the next node-cache pod — binds the
// same address while this one still serves, as CoreDNS's listeners allow) and dual-stack for
// IPv6. With `freebind` the address need not exist yet (the node cache's parent binds its
// link-local address before the worker brings up the interface that carries it). Port 0 (an
// upstream client's ephemeral port) gets no sharing. A `dormant` socket does not take queries
// yet (see bindListener): a UDP socket is left unbound, a TCP socket bound but not listening.
// Returns the descriptor or minus the errno; *what names the call that failed.
static int bound_socket(int type, int family, const char *address, int port, int freebind, int dormant, const char **what) {
  struct sockaddr_storage sa;
  socklen_t salen = socket_address(family == 6 ? AF_INET6 : AF_INET, address, port, &sa);
  *what = "address";
  if (salen == 0) return -EINVAL;
  *what = "socket";
  int fd = socket(sa.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  int on = 1, off = 0;
  if (family == 6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
  if (port != 0) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on);
  if (freebind && family == 6) setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &on, sizeof on);
  if (freebind && family != 6) setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &on, sizeof on);
  if (type == SOCK_STREAM) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  // A UDP socket joins the address's SO_REUSEPORT group when it is bound, and takes its share of
  // the queries from then on: a dormant one is bound by the worker that serves it (openListener).
  // (Connecting it to itself instead, which also keeps queries away, marks the whole group as
  // having connected sockets, and the kernel then stops spreading queries over the group: seen
  // on 6.18 as every query of a two-worker multisocket going to one worker.)
  if (dormant && type == SOCK_DGRAM) return fd;
  *what = "bind";
  if (bind(fd, (struct sockaddr *)&sa, salen) != 0) {
    int err = errno;
    close(fd);
    return -err;
  }
  if (dormant) return fd;
  // As Go (and so CoreDNS) does: the kernel's maximum (net.core.somaxconn clamps it).
  *what = "listen";
  if (type == SOCK_STREAM && listen(fd, 65535) != 0) {
    int err = errno;
    close(fd);
    return -err;
  }
  return fd;
}

// open(family 4|6, address string, port, rx, meta, tx, txmeta, onBatch) -> socket object
// with a "port" property (the bound port). Throws with code EADDRINUSE etc. on bind errors.
static napi_value udp_open(napi_env env, napi_callback_info info) {
  napi_value argv[8];
  if (!take_args(env, info, 8, argv, "open")) return NULL;
  int32_t family, port;
  char address[64];
  size_t alen;
  CHECK(napi_get_value_int32(env, argv[0], &family));
  CHECK(napi_get_value_string_utf8(env, argv[1], address, sizeof address, &alen));
  CHECK(napi_get_value_int32(env, argv[2], &port));
  udp_socket *s = new_socket(env, argv + 3, "kdns_udp.open");
  if (!s) return NULL;
  const char *what;
  int fd = bound_socket(SOCK_DGRAM, family, address, port, 0, 0, &what);
  if (fd == -EINVAL && what[0] == 'a') {
    free(s);
    napi_throw_type_error(env, NULL, family == 6 ? "kdns_udp.open: not an IPv6 address" : "kdns_udp.open: not an IPv4 address");
    return NULL;
  }
  if (fd < 0) {
    free(s);
    return throw_errno(env, what, -fd);
  }
  return start_socket(env, s, fd, argv + 3);
}

// adopt(fd, rx, meta, tx, txmeta, onBatch) -> socket object: serves a UDP descriptor this
// process was given already bound (by the parent that keeps the listening sockets across a
// worker's restarts). Throws EINVAL when fd is not a datagram socket.
static napi_value udp_adopt(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  if (!take_args(env, info, 6, argv, "adopt")) return NULL;
  int32_t fd;
  CHECK(napi_get_value_int32(env, argv[0], &fd));
  int type = 0;
  socklen_t len = sizeof type;
  if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_DGRAM) return throw_errno(env, "kdns_udp.adopt", EINVAL);
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return throw_errno(env, "fcntl", errno);
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  udp_socket *s = new_socket(env, argv + 1, "kdns_udp.adopt");
  if (!s) return NULL;
  return start_socket(env, s, fd, argv + 1);
}

// bindListener(kind "udp"|"tcp", family 4|6, address, port, freebind) -> descriptor: a socket
// (see bound_socket) that this process holds without reading, for a child to serve. It takes no
// queries yet (a UDP socket not bound, a TCP socket bound but not listening): on a shared address
// the kernel would otherwise hand it queries while nobody reads them. The child opens it
// (openListener, or listen on adopting) once it serves; from then on it stays bound in this
// process's hands, and queries wait in it while no child runs. Throws with the errno's code
// (EADDRINUSE, EADDRNOTAVAIL, ...).
static napi_value udp_bind_listener(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  if (!take_args(env, info, 5, argv, "bindListener")) return NULL;
  char kind[8], address[64];
  size_t klen, alen;
  int32_t family, port;
  CHECK(napi_get_value_string_utf8(env, argv[0], kind, sizeof kind, &klen));
  CHECK(napi_get_value_int32(env, argv[1], &family));
  CHECK(napi_get_value_string_utf8(env, argv[2], address, sizeof address, &alen));
  CHECK(napi_get_value_int32(env, argv[3], &port));
  bool freebind = false;
  CHECK(napi_get_value_bool(env, argv[4], &freebind));
  const char *what;
  int fd = bound_socket(strcmp(kind, "tcp") == 0 ? SOCK_STREAM : SOCK_DGRAM, family, address, port, freebind, 1, &what);
  if (fd < 0) return throw_errno(env, what, -fd);
  napi_value out;
  napi_create_int32(env, fd, &out);
  return out;
}

// openListener(fd, address, port): lets a socket bindListener made take queries: a UDP socket is
// bound to address:port (once: a socket a previous child bound stays bound), a TCP socket
// listens. Returns 0 or the errno.
static napi_value udp_open_listener(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (!take_args(env, info, 3, argv, "openListener")) return NULL;
  int32_t fd, port;
  char address[64];
  size_t alen;
  CHECK(napi_get_value_int32(env, argv[0], &fd));
  CHECK(napi_get_value_string_utf8(env, argv[1], address, sizeof address, &alen));
  CHECK(napi_get_value_int32(env, argv[2], &port));
  int type = 0, rc = 0;
  socklen_t len = sizeof type;
  struct sockaddr_storage self;
  socklen_t selflen = sizeof self;
  if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || getsockname(fd, (struct sockaddr *)&self, &selflen) != 0) rc = EBADF;
  else if (type == SOCK_STREAM) rc = listen(fd, 65535) == 0 ? 0 : errno;
  else if ((self.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&self)->sin6_port : ((struct sockaddr_in *)&self)->sin_port) == 0) {
    struct sockaddr_storage sa;
    socklen_t salen = socket_address(self.ss_family, address, port, &sa);
    if (salen == 0) rc = EINVAL;
    else rc = bind(fd, (struct sockaddr *)&sa, salen) == 0 ? 0 : errno;
  }
  napi_value out;
  napi_create_int32(env, rc, &out);
  return out;
}

// closeDescriptor(fd): closes a descriptor bindListener returned.
static napi_value udp_close_descriptor(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t fd = -1;
  if (argc >= 1) napi_get_value_int32(env, argv[0], &fd);
  if (fd > 2) close(fd);
  return NULL;
}

// A descriptor argument, or -1 (with a TypeError thrown) when it is missing or not a number.
static int32_t fd_arg(napi_env env, napi_callback_info info, size_t want, napi_value *argv, const char *what) {
  if (!take_args(env, info, want, argv, what)) return -1;
  int32_t fd = -1;
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) {
    napi_throw_type_error(env, NULL, "kdns_udp: a descriptor expected");
    return -1;
  }
  return fd;
}

// steerReusePort(fd, skip, spread): sets the program by which the kernel picks a socket of the
// SO_REUSEPORT group that the listening TCP socket fd belongs to (it is the group's program,
// shared by every member, whoever set it) for each new connection: index skip + a random number
// below spread. The group holds its sockets in the order they joined, so a node cache leaving
// to a successor, whose sockets joined after its own, sends every new connection to the
// successor (src/server/steer.ts says why and when). An index the group does not have makes the
// kernel pick by its hash, as without a program. Returns 0 or the errno.
static napi_value udp_steer_reuseport(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  int32_t fd = fd_arg(env, info, 3, argv, "steerReusePort");
  if (fd < 0) return NULL;
  uint32_t skip, spread;
  CHECK(napi_get_value_uint32(env, argv[1], &skip));
  CHECK(napi_get_value_uint32(env, argv[2], &spread));
  int rc = 0;
  if (spread == 0) rc = EINVAL;  // the program would divide by zero: the kernel refuses it
  else {
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(SKF_AD_OFF + SKF_AD_RANDOM)),
        BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, spread),
        BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, skip),
        BPF_STMT(BPF_RET | BPF_A, 0),
    };
    struct sock_fprog prog = {.len = sizeof code / sizeof code[0], .filter = code};
    if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog) != 0) rc = errno;
  }
  napi_value out;
  napi_create_int32(env, rc, &out);
  return out;
}

// clearReusePortSteering(fd): removes the program of fd's SO_REUSEPORT group (one a
// predecessor left); the kernel picks by its hash again. Returns 0, or the errno (ENOENT: there
// was none).
static napi_value udp_clear_reuseport_steering(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int32_t fd = fd_arg(env, info, 1, argv, "clearReusePortSteering");
  if (fd < 0) return NULL;
  int zero = 0;
  int rc = setsockopt(fd, SOL_SOCKET, SO_DETACH_REUSEPORT_BPF, &zero, sizeof zero) == 0 ? 0 : errno;
  napi_value out;
  napi_create_int32(env, rc, &out);
  return out;
}

// acceptQueue(fd): how many connections wait in the listening TCP socket fd's accept queue
// (handshake done, not yet accepted), or minus the errno.
static napi_value udp_accept_queue(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int32_t fd = fd_arg(env, info, 1, argv, "acceptQueue");
  if (fd < 0) return NULL;
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  memset(&ti, 0, sizeof ti);
  // For a listener the kernel reports its accept queue's length in tcpi_unacked.
  int32_t n = getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 ? (int32_t)ti.tcpi_unacked : -errno;
  napi_value out;
  napi_create_int32(env, n, &out);
  return out;
}

static udp_socket *unwrap(napi_env env, napi_value obj) {
  void *p = NULL;
  if (napi_unwrap(env, obj, &p) != napi_ok || p == NULL) {
    napi_throw_type_error(env, NULL, "kdns_udp: not a socket");
    return NULL;
  }
  return (udp_socket *)p;
}

// The arguments of a call whose first argument is a socket; NULL (with an exception) if not.
static udp_socket *socket_call(napi_env env, napi_callback_info info, size_t want, napi_value *argv) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < want) {
    napi_throw_type_error(env, NULL, "kdns_udp: missing arguments");
    return NULL;
  }
  return unwrap(env, argv[0]);
}

// Sends smsg[0..count) with as few sendmmsg calls as the kernel allows. Adds the datagrams
// that did not leave to *failed; returns the errno of the first failure, or 0.
static int send_prepared(udp_socket *s, int count, int *failed) {
  int first_error = 0, sent = 0;
  while (sent < count) {
    int n = sendmmsg(s->fd, s->smsg + sent, (unsigned)(count - sent), MSG_DONTWAIT);
    if (n > 0) {
      sent += n;
      continue;
    }
    int err = errno ? errno : EIO;
    if (first_error == 0) first_error = err;
    if (err == EAGAIN || err == EWOULDBLOCK) {
      *failed += count - sent;  // the send buffer is full: UDP drops, the client retries
      break;
    }
    (*failed)++;  // this datagram was refused (e.g. an ICMP error pending); go on with the next
    sent++;
  }
  return first_error;
}

// flush(socket, count): sends the count replies described by txmeta in one sendmmsg.
// Returns how many could not be sent (send buffer full, or the kernel refused one).
static napi_value udp_flush(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  udp_socket *s = socket_call(env, info, 2, argv);
  if (!s) return NULL;
  int32_t count;
  CHECK(napi_get_value_int32(env, argv[1], &count));
  if (count > BATCH) count = BATCH;
  int failed = 0;
  if (s->fd >= 0 && count > 0) {
    for (int i = 0; i < count; i++) {
      int32_t rx = s->txmeta[2 * i], len = s->txmeta[2 * i + 1];
      if (rx < 0 || rx >= BATCH || len < 0 || len > SLOT) len = 0;
      s->siov[i].iov_base = s->tx + (size_t)i * SLOT;
      s->siov[i].iov_len = (size_t)len;
      memset(&s->smsg[i].msg_hdr, 0, sizeof s->smsg[i].msg_hdr);
      s->smsg[i].msg_hdr.msg_name = &s->raddr[rx < 0 || rx >= BATCH ? 0 : rx];
      s->smsg[i].msg_hdr.msg_namelen = s->rmsg[rx < 0 || rx >= BATCH ? 0 : rx].msg_hdr.msg_namelen;
      s->smsg[i].msg_hdr.msg_iov = &s->siov[i];
      s->smsg[i].msg_hdr.msg_iovlen = 1;
    }
    send_prepared(s, count, &failed);
  }
  napi_value out;
  napi_create_int32(env, failed, &out);
  return out;
}

// sendBatch(socket, slots, meta, count): sends datagram i (slots at i * SLOT, length and
// address in meta record i, as onBatch's meta; address length 0 on a connected socket) for
// i < count with sendmmsg. Returns 0 when all left, else the errno of the first that did not.
static napi_value udp_send_batch(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  udp_socket *s = socket_call(env, info, 4, argv);
  if (!s) return NULL;
  unsigned char *slots, *meta;
  int32_t count;
  if (buffer_arg(env, argv[1], (size_t)BATCH * SLOT, &slots, NULL) || buffer_arg(env, argv[2], (size_t)BATCH * META, &meta, NULL)) {
    napi_throw_type_error(env, NULL, "kdns_udp.sendBatch: slots/meta buffers too small");
    return NULL;
  }
  CHECK(napi_get_value_int32(env, argv[3], &count));
  if (count > BATCH) count = BATCH;
  int first_error = 0;
  if (s->fd < 0) first_error = EBADF;
  else if (count > 0) {
    for (int i = 0; i < count; i++) {
      unsigned char *m = meta + (size_t)i * META;
      int32_t len, alen;
      memcpy(&len, m, 4);
      memcpy(&alen, m + 4, 4);
      if (len < 0 || len > SLOT) len = 0;
      if (alen < 0 || alen > META - 8) alen = 0;
      s->siov[i].iov_base = slots + (size_t)i * SLOT;
      s->siov[i].iov_len = (size_t)len;
      memset(&s->smsg[i].msg_hdr, 0, sizeof s->smsg[i].msg_hdr);
      s->smsg[i].msg_hdr.msg_name = alen > 0 ? m + 8 : NULL;
      s->smsg[i].msg_hdr.msg_namelen = (socklen_t)alen;
      s->smsg[i].msg_hdr.msg_iov = &s->siov[i];
      s->smsg[i].msg_hdr.msg_iovlen = 1;
    }
    int failed = 0;
    first_error = send_prepared(s, count, &failed);
  }
  napi_value out;
  napi_create_int32(env, first_error, &out);
  return out;
}

// connect(socket, address, port): connects the socket to address:port (its family). Returns 0
// or the errno (ENETUNREACH when there is no route, EAFNOSUPPORT, ...).
static napi_value udp_connect(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  udp_socket *s = socket_call(env, info, 3, argv);
  if (!s) return NULL;
  char address[64];
  size_t alen;
  int32_t port;
  CHECK(napi_get_value_string_utf8(env, argv[1], address, sizeof address, &alen));
  CHECK(napi_get_value_int32(env, argv[2], &port));
  struct sockaddr_storage sa;
  socklen_t salen = socket_address(strchr(address, ':') ? AF_INET6 : AF_INET, address, port, &sa);
  int rc = 0;
  if (salen == 0) rc = EINVAL;
  else if (s->fd < 0) rc = EBADF;
  else if (connect(s->fd, (struct sockaddr *)&sa, salen) != 0) rc = errno;
  napi_value out;
  napi_create_int32(env, rc, &out);
  return out;
}

// waiting(socket): 1 when a datagram waits in the socket's receive queue, 0 when none does, or
// minus the errno. A draining listener asks before it closes: its quiet spell is measured by the
// event loop, which runs due timers before it polls, so after the process was kept off the CPU
// the timer can find "nothing read for a while" with datagrams queued that were never polled.
static napi_value udp_waiting(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  udp_socket *s = socket_call(env, info, 1, argv);
  if (!s) return NULL;
  int rc;
  char byte;
  if (s->fd < 0) rc = -EBADF;
  else if (recv(s->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC) >= 0) rc = 1;  // a zero-length datagram counts
  else rc = (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -errno;
  napi_value out;
  napi_create_int32(env, rc, &out);
  return out;
}

// setReceiveBuffer(socket, bytes): asks the kernel for a receive buffer of `bytes` (what
// getsockopt reports, the kernel's doubled figure) and returns what the socket has afterwards.
// SO_RCVBUF is capped by net.core.rmem_max; where that cap leaves less than asked, SO_RCVBUFFORCE
// is tried, which the kernel grants only with CAP_NET_ADMIN (the node cache has it) — as
// unbound's so-rcvbuf does. Never shrinks a buffer.
static napi_value udp_set_receive_buffer(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  udp_socket *s = socket_call(env, info, 2, argv);
  if (!s) return NULL;
  int32_t want;
  CHECK(napi_get_value_int32(env, argv[1], &want));
  int have = 0;
  socklen_t len = sizeof have;
  if (s->fd >= 0) {
    getsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &have, &len);
    if (want > have) {
      int half = want / 2;  // the kernel doubles what it is given (room for its bookkeeping)
      setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &half, sizeof half);
      len = sizeof have;
      getsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &have, &len);
      if (have < want && setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &half, sizeof half) == 0) {
        len = sizeof have;
        getsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &have, &len);
      }
    }
  }
  napi_value out;
  napi_create_int32(env, have, &out);
  return out;
}

// sendTo(socket, buffer, address): one datagram to the sockaddr bytes address (from meta).
// Returns 0, or an errno when it could not be sent.
static napi_value udp_send_to(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  udp_socket *s = socket_call(env, info, 3, argv);
  if (!s) return NULL;
  void *data, *addr;
  size_t len, addrlen;
  CHECK(napi_get_buffer_info(env, argv[1], &data, &len));
  CHECK(napi_get_buffer_info(env, argv[2], &addr, &addrlen));
  int rc = 0;
  if (s->fd < 0) rc = EBADF;
  else if (sendto(s->fd, data, len, MSG_DONTWAIT, (struct sockaddr *)addr, (socklen_t)addrlen) < 0) rc = errno;
  napi_value out;
  napi_create_int32(env, rc, &out);
  return out;
}

static void on_closed(uv_handle_t *handle) {
  udp_socket *s = (udp_socket *)handle->data;
  s->polling = 0;
  if (s->fd >= 0) close(s->fd);
  s->fd = -1;
  if (s->env == NULL) {
    free(s);  // finalized while closing
    return;
  }
  release_references(s->env, s);
}

// close(socket): stops reading and closes the descriptor (once the event loop lets go of it).
static napi_value udp_close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  udp_socket *s = socket_call(env, info, 1, argv);
  if (!s) return NULL;
  if (s->polling && !uv_is_closing((uv_handle_t *)&s->poll)) {
    uv_poll_stop(&s->poll);
    uv_close((uv_handle_t *)&s->poll, on_closed);
  }
  return NULL;
}

// glibc raises its mmap threshold to the size of the largest mmapped block freed so far (up to
// 32 MiB) and its trim threshold to twice that. A server that reads a multi-megabyte manifest
// or API list once at start would from then on serve every block below that size from the
// brk heap and hand nothing back to the kernel until that much is free at the top: the freed
// parse and compile buffers stay resident (~1 MiB of settled RSS at 10,000 Services). Fixed
// thresholds at glibc's own defaults keep large blocks mmapped and the heap trimmed. Set when
// the socket module loads, early in `kdns serve` and `kdns nodecache`; other C libraries are
// left alone.
static void keep_allocator_thresholds(void) {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  mallopt(M_TRIM_THRESHOLD, 128 * 1024);
#endif
}

static napi_value init(napi_env env, napi_value exports) {
  keep_allocator_thresholds();
  napi_property_descriptor props[] = {
      {"open", NULL, udp_open, NULL, NULL, NULL, napi_default, NULL},
      {"flush", NULL, udp_flush, NULL, NULL, NULL, napi_default, NULL},
      {"sendTo", NULL, udp_send_to, NULL, NULL, NULL, napi_default, NULL},
      {"sendBatch", NULL, udp_send_batch, NULL, NULL, NULL, napi_default, NULL},
      {"connect", NULL, udp_connect, NULL, NULL, NULL, napi_default, NULL},
      {"waiting", NULL, udp_waiting, NULL, NULL, NULL, napi_default, NULL},
      {"setReceiveBuffer", NULL, udp_set_receive_buffer, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, udp_close, NULL, NULL, NULL, napi_default, NULL},
      {"adopt", NULL, udp_adopt, NULL, NULL, NULL, napi_default, NULL},
      {"bindListener", NULL, udp_bind_listener, NULL, NULL, NULL, napi_default, NULL},
      {"closeDescriptor", NULL, udp_close_descriptor, NULL, NULL, NULL, napi_default, NULL},
      {"openListener", NULL, udp_open_listener, NULL, NULL, NULL, napi_default, NULL},
      {"steerReusePort", NULL, udp_steer_reuseport, NULL, NULL, NULL, napi_default, NULL},
      {"clearReusePortSteering", NULL, udp_clear_reuseport_steering, NULL, NULL, NULL, napi_default, NULL},
      {"acceptQueue", NULL, udp_accept_queue, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_value batch, slot, meta;
  napi_create_int32(env, BATCH, &batch);
  napi_create_int32(env, SLOT, &slot);
  napi_create_int32(env, META, &meta);
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  napi_set_named_property(env, exports, "BATCH", batch);
  napi_set_named_property(env, exports, "SLOT", slot);
  napi_set_named_property(env, exports, "META", meta);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
