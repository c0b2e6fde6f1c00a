package io.leasehold.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.testkit.LeaseholdExtension;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ShedLock's own provider suite (with the extension tests) against a three-node cluster, under the
 * built-in policy: no TTL below the cluster's 2 s floor is asked for, so none needs allowing.
 * Locked and unlocked are read from the cluster (a linearizable read of the lease).
 */
class LeaseholdLockProviderIntegrationTest extends AbstractExtensibleLockProviderIntegrationTest {
  @RegisterExtension static final LeaseholdExtension leasehold = LeaseholdExtension.cluster(3);
  static LeaseholdClient client;
  static LeaseholdLockProvider provider;

  @BeforeAll
  static void start() {
    client = leasehold.client();
    provider = new LeaseholdLockProvider(client);
  }

  @AfterAll
  static void stop() {
    provider.close();
  }

  @Override
  protected ExtensibleLockProvider getLockProvider() {
    return provider;
  }

  @Override
  protected void assertLocked(String lockName) {
    assertThat(lease(lockName)).describedAs("lease of lock " + lockName).isPresent();
  }

  @Override
  protected void assertUnlocked(String lockName) {
    assertThat(lease(lockName)).describedAs("lease of lock " + lockName).isEmpty();
  }

  private static Optional<LeaseInfo> lease(String lockName) {
    return client.get(provider.leaseName(lockName)).join();
  }
}
