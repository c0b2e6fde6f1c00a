package io.leasehold.jepsen.workload;

import io.leasehold.client.LeaseState;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.RegisterOptions;
import io.leasehold.client.Registration;
import io.leasehold.client.ServiceInstance;
import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.history.Recorder;
import io.leasehold.jepsen.history.Validity;
import io.leasehold.jepsen.run.Pacing;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * Registry: registrants register and deregister instances of one service (each owns its own
 * instances), and sometimes crash, leaving their registrations to expire; a resolver keeps
 * resolving the service. Each registration's client-side validity is recorded, so the checker can
 * tell which instances a resolve had to return and which it must not have.
 */
public final class RegistryWorkload implements Workload {
  public static final String SERVICE = "svc";
  private static final Duration TTL = Duration.ofSeconds(3);
  private final int registrants;
  private final int instancesEach;
  private final Threads threads = new Threads();

  public RegistryWorkload(int registrants, int instancesEach) {
    this.registrants = registrants;
    this.instancesEach = instancesEach;
  }

  @Override
  public String name() {
    return "registry";
  }

  @Override
  public void start(WorkloadContext ctx) {
    for (int i = 0; i < registrants; i++) {
      int process = 200 + i;
      threads.spawn("registrant-" + i, () -> register(ctx, process));
    }
    threads.spawn("resolver", () -> resolve(ctx, 299));
  }

  private final class Held {
    final Registration registration;
    final long from;
    long until;

    Held(Registration registration, long from) {
      this.registration = registration;
      this.from = from;
      this.until = from;
    }

    void observe() {
      if (registration.lease().isValid()) {
        long remaining = registration.lease().remaining().toNanos();
        long now = System.nanoTime();
        if (remaining > 0) {
          until = Math.max(until, now + remaining);
        }
      }
    }

    Validity end(String holder, long at) {
      return new Validity(
          holder,
          "service/" + SERVICE + "/" + registration.instance(),
          registration.token(),
          from,
          Math.min(until, at));
    }
  }

  private void register(WorkloadContext ctx, int process) {
    Recorder rec = ctx.recorder();
    int generation = 0;
    String holder = "reg-" + process + "-" + generation;
    LeaseholdClient client = ctx.client(holder);
    Map<String, Held> held = new HashMap<>();
    try {
      while (threads.running()) {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        held.values().forEach(Held::observe);
        String instance = "i" + (process - 200) + "-" + rnd.nextInt(instancesEach);
        String name = "service/" + SERVICE + "/" + instance;
        Held h = held.get(instance);
        if (h != null && !h.registration.lease().isValid()) {
          rec.validity(h.end(holder, System.nanoTime()));
          held.remove(instance);
          h = null;
        }
        int dice = rnd.nextInt(20);
        if (h == null && dice < 8) {
          Op inv = rec.invoke(process, "register", name, Optional.of(holder), OptionalLong.empty());
          try {
            Registration r =
                client
                    .register(
                        SERVICE,
                        instance,
                        "10.0.0." + process + ":80",
                        Map.of(),
                        RegisterOptions.DEFAULTS.withTtl(TTL).withReRegister(false))
                    .get(10, TimeUnit.SECONDS);
            long from = System.nanoTime();
            rec.complete(
                inv, Op.Type.OK, Optional.of(holder), OptionalLong.of(r.token()), "REGISTERED");
            Held n = new Held(r, from);
            n.observe();
            held.put(instance, n);
          } catch (ExecutionException | TimeoutException e) {
            rec.complete(
                inv,
                Op.Type.INFO,
                Optional.of(holder),
                OptionalLong.empty(),
                FencedLockWorkload.cause(e));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        } else if (h != null && dice < 3) {
          long t = System.nanoTime();
          rec.validity(h.end(holder, t));
          held.remove(instance);
          Op inv =
              rec.invoke(
                  process,
                  "deregister",
                  name,
                  Optional.of(holder),
                  OptionalLong.of(h.registration.token()));
          try {
            h.registration.deregister().get(10, TimeUnit.SECONDS);
            if (h.registration.lease().state() == LeaseState.LOST) {
              // The SDK releases only a lease it still holds: a lost one (client-side validity
              // over) may live on the server until it expires, so the deregistration's effect is
              // unknown, not acknowledged.
              rec.complete(
                  inv,
                  Op.Type.INFO,
                  Optional.of(holder),
                  OptionalLong.of(h.registration.token()),
                  "LOST");
            } else {
              rec.complete(
                  inv,
                  Op.Type.OK,
                  Optional.of(holder),
                  OptionalLong.of(h.registration.token()),
                  "DEREGISTERED");
            }
          } catch (ExecutionException | TimeoutException e) {
            rec.complete(
                inv,
                Op.Type.INFO,
                Optional.of(holder),
                OptionalLong.of(h.registration.token()),
                FencedLockWorkload.cause(e));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        } else if (!held.isEmpty() && dice == 19 && rnd.nextInt(4) == 0) {
          long t = System.nanoTime();
          for (Held x : held.values()) {
            rec.validity(x.end(holder, t));
          }
          held.clear();
          Op crash =
              rec.invoke(process, "crash", holder, Optional.of(holder), OptionalLong.empty());
          client.close();
          rec.complete(crash, Op.Type.OK, Optional.of(holder), OptionalLong.empty(), "");
          holder = "reg-" + process + "-" + ++generation;
          client = ctx.client(holder);
        }
        Pacing.sleep(Duration.ofMillis(50 + rnd.nextInt(100)));
      }
      long t = System.nanoTime();
      for (Held x : held.values()) {
        x.observe();
        rec.validity(x.end(holder, t));
      }
    } finally {
      client.close();
    }
  }

  private void resolve(WorkloadContext ctx, int process) {
    Recorder rec = ctx.recorder();
    try (LeaseholdClient client = ctx.client("resolver")) {
      while (threads.running()) {
        Op inv = rec.invoke(process, "resolve", SERVICE, Optional.empty(), OptionalLong.empty());
        try {
          List<ServiceInstance> found = client.resolve(SERVICE).get(10, TimeUnit.SECONDS);
          rec.complete(
              inv,
              Op.Type.OK,
              Optional.empty(),
              OptionalLong.empty(),
              found.stream()
                  .map(ServiceInstance::instance)
                  .sorted()
                  .collect(Collectors.joining(",")));
        } catch (ExecutionException | TimeoutException e) {
          rec.complete(
              inv,
              Op.Type.FAIL,
              Optional.empty(),
              OptionalLong.empty(),
              FencedLockWorkload.cause(e));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        Pacing.sleep(Duration.ofMillis(80 + ThreadLocalRandom.current().nextInt(80)));
      }
    }
  }

  @Override
  public void stop() {
    threads.stop();
  }
}
