// What a client sees when libmicrohttpd enforces the limits that service/http_connections.h's
// front enforces today: the measurement behind docs/architecture.md "The HTTP front" (issue 46).
// One process: a libmicrohttpd daemon on 127.0.0.1 (its own epoll thread, the limits below),
// then one hostile client per case, each printing one line of what came back.
//
// Not part of `make test` or CI: it needs libmicrohttpd-dev, which neither installs.
// Built and run by scripts/measure-libmicrohttpd.sh.
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

// The front's defaults (HttpLimits), in libmicrohttpd's units where it has the limit at all.
enum {
  kTimeoutS = 2,         // MHD_OPTION_CONNECTION_TIMEOUT; the front: idle 2 s, head within 5 s
  kConnections = 8,      // MHD_OPTION_CONNECTION_LIMIT; small so that the probe reaches it
  kPerIp = 4,            // MHD_OPTION_PER_IP_CONNECTION_LIMIT
  kMemory = 16 * 1024,   // MHD_OPTION_CONNECTION_MEMORY_LIMIT; the front: a 16 KiB head
  kMaxBody = 64 * 1024,  // the application's limit; the front: 413 beyond 64 KiB
};

static _Atomic int queue_result = -1;  // MHD_queue_response's answer to a mid-body 413

struct Upload {
  size_t bytes;
};

static enum MHD_Result Answer(struct MHD_Connection* conn, unsigned int status, const char* body) {
  struct MHD_Response* res =
      MHD_create_response_from_buffer(strlen(body), (void*)body, MHD_RESPMEM_PERSISTENT);
  const enum MHD_Result r = MHD_queue_response(conn, status, res);
  MHD_destroy_response(res);
  return r;
}

// GET: 200. POST: a Content-Length over kMaxBody is refused at once; a chunked body is counted
// as it arrives and refused with 413 once past kMaxBody, if libmicrohttpd lets a response be
// queued then (queue_result says), otherwise the connection is dropped (MHD_NO).
static enum MHD_Result Handle(void* cls, struct MHD_Connection* conn, const char* url,
                              const char* method, const char* version, const char* upload_data,
                              size_t* upload_data_size, void** req_cls) {
  (void)cls, (void)url, (void)version, (void)upload_data;
  if (strcmp(method, "POST") != 0) return Answer(conn, 200, "ok\n");
  struct Upload* up = *req_cls;
  if (up == NULL) {
    const char* length =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (length != NULL && strtoull(length, NULL, 10) > kMaxBody) {
      return Answer(conn, 413, "too large\n");
    }
    *req_cls = up = calloc(1, sizeof *up);
    return MHD_YES;
  }
  if (*upload_data_size > 0) {
    up->bytes += *upload_data_size;
    *upload_data_size = 0;
    if (up->bytes > kMaxBody) {
      const enum MHD_Result r = Answer(conn, 413, "too large\n");
      atomic_store(&queue_result, r == MHD_YES);
      return r;
    }
    return MHD_YES;
  }
  return Answer(conn, 200, "ok\n");
}

static void Completed(void* cls, struct MHD_Connection* conn, void** req_cls,
                      enum MHD_RequestTerminationCode toe) {
  (void)cls, (void)conn, (void)toe;
  free(*req_cls);
  *req_cls = NULL;
}

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

// A connection to the daemon from 127.0.0.`host` (distinct loopback addresses are distinct
// peers to libmicrohttpd's per-IP count).
static int Connect(int port, int host) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in from = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000000 | host)};
  struct sockaddr_in to = {.sin_family = AF_INET,
                           .sin_port = htons((uint16_t)port),
                           .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(fd, (struct sockaddr*)&from, sizeof from) != 0 ||
      connect(fd, (struct sockaddr*)&to, sizeof to) != 0) {
    perror("connect");
    exit(1);
  }
  return fd;
}

// What the client sees within `wait_s`: the status line, a close, a reset, or nothing.
static void Observe(int fd, double wait_s, char* out, size_t out_size) {
  const double start = Now();
  char buf[256];
  const int ms = (int)(wait_s * 1000);
  struct pollfd p = {.fd = fd, .events = POLLIN};
  if (poll(&p, 1, ms) <= 0) {
    snprintf(out, out_size, "nothing within %.1f s, connection still open", wait_s);
    return;
  }
  const ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
  const double after = Now() - start;
  if (n > 0) {
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    snprintf(out, out_size, "'%s' after %.1f s", buf, after);
  } else if (n == 0) {
    snprintf(out, out_size, "closed (EOF, no status line) after %.1f s", after);
  } else {
    snprintf(out, out_size, "%s (no status line) after %.1f s", strerror(errno), after);
  }
}

static void Send(int fd, const char* text) { send(fd, text, strlen(text), MSG_NOSIGNAL); }

// (a) A header trickled one byte a second for three timeouts, then silence.
static void TrickledHead(int port) {
  const int fd = Connect(port, 1);
  Send(fd, "GET / HTTP/1.1\r\nHost: probe\r\nX-Trickle: ");
  char seen[160] = "nothing, connection still open";
  const int trickle_s = 3 * kTimeoutS;
  for (int i = 0; i < trickle_s; ++i) {
    sleep(1);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 0) > 0) {
      Observe(fd, 0, seen, sizeof seen);
      break;
    }
    Send(fd, "x");
  }
  char after[160];
  Observe(fd, 3 * kTimeoutS, after, sizeof after);
  printf(
      "(a) head trickled 1 byte/s for %d s (MHD_OPTION_CONNECTION_TIMEOUT %d s): %s; "
      "then silent: %s\n",
      trickle_s, kTimeoutS, seen, after);
  close(fd);
}

// (b) One connection past the per-address limit; (b2) one past the total limit, from a third
// address while two others hold all the slots.
static void PastConnectionLimits(int port) {
  int held[kConnections];
  for (int i = 0; i < kPerIp; ++i) held[i] = Connect(port, 1);
  usleep(200 * 1000);
  int extra = Connect(port, 1);
  char seen[160];
  Observe(extra, 1.0, seen, sizeof seen);
  printf("(b) connection %d from one address (MHD_OPTION_PER_IP_CONNECTION_LIMIT %d): %s\n",
         kPerIp + 1, kPerIp, seen);
  close(extra);
  for (int i = kPerIp; i < kConnections; ++i) held[i] = Connect(port, 2);
  usleep(200 * 1000);
  extra = Connect(port, 3);
  Send(extra, "GET / HTTP/1.1\r\nHost: probe\r\n\r\n");
  // Held past the timeout, the other connections close and free a slot for this one.
  Observe(extra, 2.0 * kTimeoutS, seen, sizeof seen);
  printf(
      "(b2) connection %d in all, from a new address, request sent (MHD_OPTION_CONNECTION_LIMIT "
      "%d; the %d others idle, closed by the %d s timeout): %s\n",
      kConnections + 1, kConnections, kConnections, kTimeoutS, seen);
  close(extra);
  for (int i = 0; i < kConnections; ++i) close(held[i]);
  sleep(1);  // the daemon notices the closes before the next case connects
}

// (c) A head larger than the connection's memory: in a header, then in the request line.
static void OversizedHead(int port, const char* label, const char* before, const char* after) {
  const size_t filler = 20 * 1024;
  char* head = malloc(filler + 256);
  const size_t prefix = strlen(before);
  memcpy(head, before, prefix);
  memset(head + prefix, 'a', filler);
  strcpy(head + prefix + filler, after);
  const int fd = Connect(port, 1);
  Send(fd, head);
  char seen[160];
  Observe(fd, 2.0, seen, sizeof seen);
  printf("(c) %s of 20 KiB (MHD_OPTION_CONNECTION_MEMORY_LIMIT %d KiB): %s\n", label,
         kMemory / 1024, seen);
  close(fd);
  free(head);
}

// (d) A chunked body that passes the application's limit, its last chunk never sent.
static void OversizedChunkedBody(int port) {
  const int fd = Connect(port, 1);
  Send(fd, "POST /upload HTTP/1.1\r\nHost: probe\r\nTransfer-Encoding: chunked\r\n\r\n");
  char chunk[4096 + 16];
  const int header = snprintf(chunk, sizeof chunk, "1000\r\n");
  memset(chunk + header, 'b', 4096);
  memcpy(chunk + header + 4096, "\r\n", 2);
  size_t sent = 0;
  while (sent < kMaxBody + 16 * 1024) {
    if (send(fd, chunk, (size_t)header + 4096 + 2, MSG_NOSIGNAL) < 0) break;
    sent += 4096;
  }
  char seen[160];
  Observe(fd, 2.0, seen, sizeof seen);
  const int queued = atomic_load(&queue_result);
  printf(
      "(d) chunked body, %zu KiB sent of an unfinished body (application limit %d KiB): %s; "
      "MHD_queue_response(413) mid-body returned %s\n",
      sent / 1024, kMaxBody / 1024, seen,
      queued < 0 ? "(never called)" : (queued ? "MHD_YES" : "MHD_NO"));
  close(fd);
}

// (d2) The same limit with the length announced: refused before the body is read.
static void OversizedLengthBody(int port) {
  const int fd = Connect(port, 1);
  Send(fd, "POST /upload HTTP/1.1\r\nHost: probe\r\nContent-Length: 100000\r\n\r\n");
  char seen[160];
  Observe(fd, 2.0, seen, sizeof seen);
  printf("(d2) Content-Length 100000, no body sent (application limit %d KiB): %s\n",
         kMaxBody / 1024, seen);
  close(fd);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  struct sockaddr_in listen_on = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  struct MHD_Daemon* d = MHD_start_daemon(
      MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, &Handle, NULL,
      MHD_OPTION_SOCK_ADDR, (struct sockaddr*)&listen_on, MHD_OPTION_CONNECTION_LIMIT,
      (unsigned int)kConnections, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)kPerIp,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)kTimeoutS, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      (size_t)kMemory, MHD_OPTION_NOTIFY_COMPLETED, &Completed, NULL, MHD_OPTION_END);
  if (d == NULL) {
    fprintf(stderr, "mhd-probe: MHD_start_daemon failed\n");
    return 1;
  }
  const int port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
  printf("libmicrohttpd %s, epoll thread, 127.0.0.1:%d\n", MHD_get_version(), port);
  TrickledHead(port);
  PastConnectionLimits(port);
  OversizedHead(port, "header line", "GET / HTTP/1.1\r\nHost: probe\r\nX-Big: ", "\r\n\r\n");
  OversizedHead(port, "request line", "GET /", " HTTP/1.1\r\nHost: probe\r\n\r\n");
  OversizedChunkedBody(port);
  OversizedLengthBody(port);
  MHD_stop_daemon(d);
  return 0;
}
