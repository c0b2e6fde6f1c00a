package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.T0;
import static io.leasehold.statemachine.core.Cmds.acquire;
import static io.leasehold.statemachine.core.Cmds.expire;
import static io.leasehold.statemachine.core.Cmds.formatSessions;
import static io.leasehold.statemachine.core.Cmds.release;
import static io.leasehold.statemachine.core.Cmds.renew;
import static io.leasehold.statemachine.core.Cmds.secs;
import static io.leasehold.statemachine.core.Cmds.update;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ServiceQuery;
import io.leasehold.proto.v1.ServiceReply;
import io.leasehold.proto.v1.SetLogFormat;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * A service's version (log format 5): the revision of the last change to its instances, read with
 * them from one view. Run on every store.
 */
public abstract class ServiceVersionContract extends CoreFixture {

  private ServiceReply service(String service) {
    return query(
            ReadQuery.newBuilder().setService(ServiceQuery.newBuilder().setService(service)), T0)
        .getService();
  }

  private static LogCommand.Builder formatMany() {
    return LogCommand.newBuilder()
        .setSetLogFormat(SetLogFormat.newBuilder().setFormat(LogFormat.MANY));
  }

  @Test
  void servicesLiveAtTheSwitchStartAtItsIndex() throws IOException {
    apply(1, T0, formatSessions());
    long token =
        granted(apply(2, T0, acquire("service/pay/i-1", "i-1", secs(30)))).getLease().getToken();
    assertEquals(0, service("pay").getVersion(), "no version before format 5");
    apply(3, T0, formatMany());
    assertEquals(3, service("pay").getVersion());
    assertEquals(1, service("pay").getList().getLeasesCount());
    assertEquals(token, service("pay").getList().getLeases(0).getToken());
    assertEquals(0, service("orders").getVersion(), "a service never seen");
  }

  @Test
  void everyChangeToTheInstancesButARenewalSetsTheVersion() throws IOException {
    apply(1, T0, formatMany());
    long t1 =
        granted(apply(2, T0, acquire("service/pay/i-1", "i-1", secs(30)))).getLease().getToken();
    assertEquals(2, service("pay").getVersion(), "registered");
    apply(3, T0, renew("service/pay/i-1", t1));
    assertEquals(2, service("pay").getVersion(), "a renewal changes nothing");
    apply(4, T0, update("service/pay/i-1", t1, A2));
    assertEquals(4, service("pay").getVersion(), "updated");
    long t2 =
        granted(apply(5, T0, acquire("service/pay/i-2", "i-2", secs(30)))).getLease().getToken();
    assertEquals(5, service("pay").getVersion());
    apply(6, T0, acquire("service/pay/i-1/extra", "x", secs(30)));
    apply(7, T0, acquire("service/orders/i-1", "o", secs(30)));
    apply(8, T0, acquire("lock/pay", "o", secs(30)));
    assertEquals(5, service("pay").getVersion(), "other names are not instances of pay");
    assertEquals(7, service("orders").getVersion());
    apply(9, T0, release("service/pay/i-2", t2));
    assertEquals(9, service("pay").getVersion(), "deregistered");
    apply(10, T0, expire("service/pay/i-1", t1, 4));
    assertEquals(10, service("pay").getVersion(), "expired");
    assertEquals(
        1,
        service("pay").getList().getLeasesCount(),
        "only the deeper name, not an instance, is left");
    assertEquals(
        10,
        new LeaseCore(store)
            .query(
                ReadQuery.newBuilder()
                    .setService(ServiceQuery.newBuilder().setService("pay"))
                    .build(),
                T0)
            .getService()
            .getVersion(),
        "kept in the store");
  }

  @Test
  void theServiceOfANameIsItsSecondPart() {
    assertEquals("pay", ServiceVersions.serviceOf("service/pay/i-1"));
    assertNull(ServiceVersions.serviceOf("service/pay/i-1/x"));
    assertNull(ServiceVersions.serviceOf("service/pay/"));
    assertNull(ServiceVersions.serviceOf("service//i-1"));
    assertNull(ServiceVersions.serviceOf("lock/pay/i-1"));
  }
}
