package io.leasehold.jepsen.workload;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.jepsen.history.Op;
import java.net.ConnectException;

/** How a raw gRPC failure is recorded: certainly not applied (FAIL), or maybe applied (INFO). */
final class RawCalls {
  private RawCalls() {}

  static Op.Type classify(Throwable e) {
    if (e instanceof StatusRuntimeException s) {
      Status.Code code = s.getStatus().getCode();
      if (code == Status.Code.INVALID_ARGUMENT || code == Status.Code.RESOURCE_EXHAUSTED || code == Status.Code.PERMISSION_DENIED) {
        return Op.Type.FAIL; // refused before anything was proposed
      }
      for (Throwable c = s.getCause(); c != null; c = c.getCause()) {
        if (c instanceof ConnectException) {
          return Op.Type.FAIL; // never reached a node
        }
      }
    }
    return Op.Type.INFO;
  }

  static String describe(Throwable e) {
    return e instanceof StatusRuntimeException s ? s.getStatus().getCode().name() : e.getClass().getSimpleName();
  }
}
