// ConfigureHttpClient: the one way the daemons set up an outgoing cpp-httplib client (the
// controller's agent links and its Prometheus meter): bounded timeouts, no Nagle delay, HTTPS
// certificates always verified. Thread-compatible (configure before use).
#ifndef HEADROOM_SERVICE_HTTP_CLIENT_H_
#define HEADROOM_SERVICE_HTTP_CLIENT_H_

#include <string>

#include "core/time.h"

namespace httplib {
class Client;
}

namespace headroom::service {

// Every connect, read and write gives up after `timeout`; HTTPS certificates are checked
// against `ca_file` (PEM), or the system's CAs when it is empty.
void ConfigureHttpClient(httplib::Client& client, core::Duration timeout,
                         const std::string& ca_file);

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_HTTP_CLIENT_H_
