// The one table between error codes and the HTTP statuses of the daemons' APIs, read both ways:
// the agent answers with HttpStatusFor(), the controller's client reads an answer back with
// CodeForHttpStatus(), so that a code survives the wire (a reused request id is
// kFailedPrecondition on both sides). Pure.
#ifndef HEADROOM_SERVICE_HTTP_STATUS_H_
#define HEADROOM_SERVICE_HTTP_STATUS_H_

#include "core/error.h"

namespace headroom::service {

// 400 bad request body, 422 GPU or value out of range, 409 request_id reuse, 503 unavailable,
// 500 otherwise (a device refusing a control for want of permission is the server's problem,
// not the client's credentials).
int HttpStatusFor(core::Code code);
// The inverse for answers that are not 200: also 401/403 -> kPermissionDenied (a bad token);
// kInternal for any other status.
core::Code CodeForHttpStatus(int status);

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_HTTP_STATUS_H_
