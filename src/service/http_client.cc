#include "service/http_client.h"

#include <httplib.h>

namespace headroom::service {

void ConfigureHttpClient(httplib::Client& client, core::Duration timeout,
                         const std::string& ca_file) {
  // Small answers on a kept-alive connection otherwise wait for a delayed ACK (see HttpServer).
  client.set_tcp_nodelay(true);
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  client.set_write_timeout(timeout);
  client.enable_server_certificate_verification(true);
  if (!ca_file.empty()) client.set_ca_cert_path(ca_file);
}

}  // namespace headroom::service
