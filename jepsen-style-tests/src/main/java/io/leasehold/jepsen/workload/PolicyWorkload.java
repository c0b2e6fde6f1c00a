package io.leasehold.jepsen.workload;

import com.google.protobuf.Duration;
import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.run.Pacing;
import io.leasehold.proto.v1.AdminGrpc;
import io.leasehold.proto.v1.Policy;
import io.leasehold.proto.v1.SetPolicyRequest;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Policy changes for the durability checker: the policy of namespace {@value #NAMESPACE} is set
 * again and again with an ever larger max TTL (its "value"); the last acknowledged value must
 * survive every fault and restart.
 */
public final class PolicyWorkload implements Workload {
  public static final String NAMESPACE = "pol";
  private final Threads threads = new Threads();

  @Override
  public String name() {
    return "policy";
  }

  @Override
  public void start(WorkloadContext ctx) {
    threads.spawn(
        "policy",
        () -> {
          long value = 100;
          while (threads.running()) {
            value++;
            int node = ThreadLocalRandom.current().nextInt(ctx.cluster().size());
            Op inv =
                ctx.recorder()
                    .invoke(300, "set-policy", NAMESPACE, Optional.empty(), OptionalLong.empty());
            try {
              AdminGrpc.newBlockingStub(ctx.cluster().channel(node))
                  .withDeadlineAfter(4, TimeUnit.SECONDS)
                  .setPolicy(
                      SetPolicyRequest.newBuilder()
                          .setNamespace(NAMESPACE)
                          .setPolicy(policy(value))
                          .build());
              ctx.recorder()
                  .complete(
                      inv,
                      Op.Type.OK,
                      Optional.empty(),
                      OptionalLong.empty(),
                      Long.toString(value));
            } catch (RuntimeException e) {
              ctx.recorder()
                  .complete(
                      inv,
                      RawCalls.classify(e),
                      Optional.empty(),
                      OptionalLong.empty(),
                      Long.toString(value));
            }
            Pacing.sleep(
                java.time.Duration.ofMillis(500 + ThreadLocalRandom.current().nextInt(500)));
          }
        });
  }

  static Policy policy(long value) {
    return Policy.newBuilder()
        .setMaxTtl(Duration.newBuilder().setSeconds(value))
        .setDefaultTtl(Duration.newBuilder().setSeconds(10))
        .build();
  }

  @Override
  public void stop() {
    threads.stop();
  }
}
