// spotless:off
// The examples are kept as the documents show them, which is not always the build's style;
// DocExamplesTest compares them with the documents' Java blocks.
package io.leasehold.client.docs;

import io.leasehold.client.AcquireAllResult;
import io.leasehold.client.AcquireResult;
import io.leasehold.client.Conflict;
import io.leasehold.client.ConnectionFailedException;
import io.leasehold.client.FencingGuard;
import io.leasehold.client.Granted;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.Policy;
import io.leasehold.client.Rejected;
import io.leasehold.client.ResolvedService;
import io.leasehold.client.Route;
import io.leasehold.client.RoutingTable;
import io.leasehold.client.ServiceFilter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;

/**
 * The Java examples of README.md and docs/client.md, each verbatim in a method of its own, so the
 * build compiles them; {@link DocExamplesTest} checks that every Java block of those documents is
 * here. The names the examples take as given (an intake, a store, a request) are the parameters
 * and helpers below. Never run.
 */
@SuppressWarnings("unused")
final class DocExamples {
  interface Message {}

  interface Intake {
    void pause();

    void resume();

    Message take();
  }

  interface Worker {
    void stopNow();
  }

  interface Store {
    void append(Message m, long token);
  }

  interface MessageLog {
    long append(String message);
  }

  interface Request {
    String mailbox();

    long token();

    String message();
  }

  private DocExamples() {}

  // README.md, "Use it from Java": a runner holds a mailbox and writes with its fencing token.
  static void runnerHoldsAMailbox(Intake intake, Worker worker, Store store) throws InterruptedException {
    try (LeaseholdClient client = LeaseholdClient.builder()
        .endpoints("10.0.0.1:7400", "10.0.0.2:7400", "10.0.0.3:7400")
        .holder("runner-7")
        .build()) {
      // Waits, through a watch (not polling), until no one else holds the mailbox.
      Lease mailbox = client.blocking().acquire("mailbox/$admin@proxy-01",
          LeaseOptions.defaults().withTtl(Duration.ofSeconds(10)).withAddress("10.0.1.7:9000"));
      mailbox.addListener(t -> {
        switch (t.to()) {
          case JEOPARDY -> intake.pause();   // renewals are failing: take no new work
          case HELD -> intake.resume();      // renewed in time
          case LOST -> worker.stopNow();     // another runner may hold it now
          default -> { }
        }
      });
      while (mailbox.isValid()) {
        Message m = intake.take();
        store.append(m, mailbox.token());    // the store refuses tokens older than one it has seen
      }
    }
  }

  // README.md, "Use it from Java": the store's side refuses a stale writer.
  static void storeRefusesStaleTokens(Request request, MessageLog log) throws Exception {
    FencingGuard guard = new FencingGuard();
    guard.guard(request.mailbox(), request.token(), () -> log.append(request.message()));  // StaleTokenException if stale
  }

  // README.md, "Use it from Java": a proxy routes by the leases.
  static void proxyRoutesByLeases(Request request, String recipient, String userId, Logger log) {
    LeaseholdClient client = LeaseholdClient.connect("10.0.0.1:7400", "10.0.0.2:7400", "10.0.0.3:7400");
    RoutingTable routes = client.blocking().routingTable("mailbox/");   // List + Watch, kept in memory
    routes.addListener(c -> log.info("{} -> {}", c.name(), c.current().map(Route::address).orElse("(gone)")));

    Optional<Route> route = routes.lookup("mailbox/" + recipient);
    route.ifPresentOrElse(r -> forward(request, r.address(), r.token()), () -> reply(503));
    routes.ownerOf(userId).ifPresent(owner -> forward(request, owner.address(), owner.token()));  // partition crc32 % 256
  }

  // docs/client.md, "TLS".
  static LeaseholdClient tls() {
    LeaseholdClient client = LeaseholdClient.builder()
        .endpoints("10.0.0.1:7400", "10.0.0.2:7400", "10.0.0.3:7400")
        .holder("runner-7")
        .tls(Path.of("/etc/leasehold/ca.pem"), Path.of("/etc/leasehold/runner-7.pem"), Path.of("/etc/leasehold/runner-7-key.pem"))
        .build();
    return client;
  }

  // docs/client.md, "Async first, with a blocking facade": the three outcomes of tryAcquire.
  static void tryAcquireOutcomes(LeaseholdClient client, Logger log) {
    AcquireResult result = client.tryAcquire("jobs/nightly").join();
    if (result instanceof Granted granted) {
      runNightly(granted.lease());
    } else if (result instanceof Conflict conflict) {
      log.info("held by {} for {} more", conflict.holder(), conflict.remaining());
    } else if (result instanceof Rejected rejected) {
      log.warn("refused: {} ({})", rejected.rejection().message(), rejected.rejection().reason());
    }
  }

  // docs/client.md, "Connection failures": the reason a caller can test.
  static void connectionFailure(LeaseholdClient client, Logger log) {
    try {
      client.blocking().get("lock/nightly");
    } catch (ConnectionFailedException e) {
      log.error("{} ({}): {}", e.reason(), e.endpoint(), e.getMessage());  // e.failures(): every endpoint and its reason
    }
  }

  // docs/client.md, "Operators' calls": a policy from its builder.
  static Policy setPolicy(LeaseholdClient client) {
    Policy jobs = Policy.builder()
        .maxTtl(Duration.ofMinutes(1))
        .lockDelay(Duration.ofSeconds(15))
        .namePattern("[a-z0-9-]+")
        .build();
    Policy inForce = client.admin().setPolicy("jobs", jobs).join();
    return inForce;
  }

  static void resolveWithAFilter(LeaseholdClient client) {
ResolvedService payments = client.blocking().resolve("payments",
    ServiceFilter.serving()
        .inZones("eu-west-1a", ServiceFilter.ANY_ZONE)  // this zone's instances, else any zone's
        .withMetadata("version", "2.3"));
payments.zone();         // Optional[eu-west-1a], or Optional[*] when that zone had none
payments.instances();    // the SERVING instances of version 2.3 there
  }

  // docs/client.md, "Leases and their validity": many names in one call.
  static void claimMailboxes(LeaseholdClient client, List<String> mailboxes, Logger log) {
    AcquireAllResult claimed = client.acquireAll(mailboxes, LeaseOptions.defaults()).join();
    claimed.granted().forEach((name, lease) -> serve(name, lease));
    claimed.refused().forEach((name, why) -> log.info("{} not taken: {}", name, why));
  }

  private static void serve(String name, Lease lease) {}

  // docs/client.md, "Registry and routing": a routing table with a filter.
  static RoutingTable nearbyPayments(LeaseholdClient client) {
RoutingTable nearby = client.blocking().routingTable("service/payments/",
    ServiceFilter.serving().inZones("eu-west-1a", "eu-west-1b"));
    return nearby;
  }

  private static void forward(Request request, String address, long token) {}

  private static void reply(int status) {}

  private static void runNightly(Lease lease) {}
}
// spotless:on
