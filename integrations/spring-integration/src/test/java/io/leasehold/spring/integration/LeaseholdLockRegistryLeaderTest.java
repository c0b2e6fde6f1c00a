package io.leasehold.spring.integration;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.LeaseholdClient;
import io.leasehold.testkit.LeaseholdCluster;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Test;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.leader.event.LeaderEventPublisher;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;

/** Spring's lock-based leader election over two registries on two clients. */
class LeaseholdLockRegistryLeaderTest {

  @Test
  void oneOfTwoInitiatorsLeadsAndTheOtherTakesOverWhenItStops() throws Exception {
    try (LeaseholdCluster cluster = LeaseholdCluster.start(3)) {
      List<String> endpoints = cluster.addresses();
      try (LeaseholdClient one = LeaseholdClient.connect(endpoints);
          LeaseholdClient two = LeaseholdClient.connect(endpoints)) {
        AtomicInteger firstBeats = new AtomicInteger();
        AtomicInteger secondBeats = new AtomicInteger();
        LockRegistryLeaderInitiator first =
            new LockRegistryLeaderInitiator(
                new CountingRegistry(new LeaseholdLockRegistry(one), firstBeats),
                new DefaultCandidate("one", "orders"));
        LockRegistryLeaderInitiator second =
            new LockRegistryLeaderInitiator(
                new CountingRegistry(new LeaseholdLockRegistry(two), secondBeats),
                new DefaultCandidate("two", "orders"));
        List<String> events = new CopyOnWriteArrayList<>();
        first.setLeaderEventPublisher(new Recorder(events, "one"));
        second.setLeaderEventPublisher(new Recorder(events, "two"));
        first.start();
        second.start();
        try {
          await("a leader")
              .atMost(Duration.ofSeconds(20))
              .pollInSameThread()
              .ignoreExceptions()
              .until(() -> first.getContext().isLeader() || second.getContext().isLeader());
          LockRegistryLeaderInitiator leader = first.getContext().isLeader() ? first : second;
          LockRegistryLeaderInitiator follower = leader == first ? second : first;
          // Leadership holds still across several heartbeats, each re-entering the held lock.
          AtomicInteger beats = leader == first ? firstBeats : secondBeats;
          int before = beats.get();
          await("five more heartbeats of the leader")
              .atMost(Duration.ofSeconds(20))
              .pollInSameThread()
              .ignoreExceptions()
              .until(() -> beats.get() >= before + 5);
          assertEquals(
              List.of("granted " + (leader == first ? "one" : "two")),
              events,
              "one grant, no revocation");
          assertTrue(
              leader.getContext().isLeader() && !follower.getContext().isLeader(),
              "exactly one leader");
          String holder = one.get("spring-lock/orders").join().orElseThrow().holder();
          assertEquals(leader == first ? one.holder() : two.holder(), holder);

          leader.stop();
          await("the other initiator leads")
              .atMost(Duration.ofSeconds(20))
              .pollInSameThread()
              .ignoreExceptions()
              .until(() -> follower.getContext().isLeader());
          assertEquals(
              leader == first ? two.holder() : one.holder(),
              one.get("spring-lock/orders").join().orElseThrow().holder());
        } finally {
          first.stop();
          second.stop();
        }
      }
    }
  }

  /** A registry whose locks count the timed tryLock calls: the initiator's heartbeats. */
  private record CountingRegistry(LeaseholdLockRegistry registry, AtomicInteger tries)
      implements LockRegistry<Lock> {
    @Override
    public Lock obtain(Object key) {
      Lock lock = registry.obtain(key);
      return new Lock() {
        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
          tries.incrementAndGet();
          return lock.tryLock(time, unit);
        }

        @Override
        public void lock() {
          lock.lock();
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
          lock.lockInterruptibly();
        }

        @Override
        public boolean tryLock() {
          return lock.tryLock();
        }

        @Override
        public void unlock() {
          lock.unlock();
        }

        @Override
        public Condition newCondition() {
          return lock.newCondition();
        }
      };
    }
  }

  /** Records each grant and revocation as "granted NAME" or "revoked NAME". */
  private record Recorder(List<String> events, String name) implements LeaderEventPublisher {
    @Override
    public void publishOnGranted(Object source, Context context, String role) {
      events.add("granted " + name);
    }

    @Override
    public void publishOnRevoked(Object source, Context context, String role) {
      events.add("revoked " + name);
    }

    @Override
    public void publishOnFailedToAcquire(Object source, Context context, String role) {
      // The follower's failed tries, every heartbeat: not a change of leadership.
    }
  }
}
