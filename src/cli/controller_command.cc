// `headroom controller`: the row controller daemon. Composes the config, one HttpAgentLink per
// agent, the row meter, service::Controller (the logic) and service::ControllerHttpServer, and
// steps once per control period until SIGINT or SIGTERM. On exit it changes nothing: the agents
// keep their caps until their leases run out, then apply their failsafe.

#include "cli/daemon_commands.h"
#include "console/terminal.h"

namespace headroom::cli {

int RunController(const GlobalOptions& global, const ControllerCliOptions& o) {
  UseDaemonLogger("headroom-controller");
  InstallStopHandlers();
  auto done = app::RunController({.catalog_dir = global.catalog_dir,
                                  .config = o.config,
                                  .listen = o.listen,
                                  .audit_log = o.audit_log,
                                  .dry_run = o.dry_run,
                                  .check = o.check,
                                  .tls_cert = o.tls_cert,
                                  .tls_key = o.tls_key,
                                  .stop = &StopRequested(),
                                  .print = PrintLineFlushed});
  if (!done) return ReportError(done.error());
  return kExitOk;
}

}  // namespace headroom::cli
