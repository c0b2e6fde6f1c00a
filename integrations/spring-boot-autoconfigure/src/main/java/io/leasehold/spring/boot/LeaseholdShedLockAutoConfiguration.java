package io.leasehold.spring.boot;

import io.leasehold.client.LeaseholdClient;
import io.leasehold.shedlock.LeaseholdLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * A ShedLock {@link LockProvider}, a {@link LeaseholdLockProvider} on the context's {@link
 * LeaseholdClient}, when {@code shedlock-provider-leasehold} is on the class path, the context has
 * one client (auto-configured or the application's own) and no lock provider, and {@code
 * leasehold.shedlock.enabled} is not false. Its locks are leases on {@code
 * leasehold.shedlock.prefix} + lock name. It is closed before the client.
 */
@AutoConfiguration(after = LeaseholdAutoConfiguration.class)
@ConditionalOnClass({LockProvider.class, LeaseholdLockProvider.class})
@ConditionalOnSingleCandidate(LeaseholdClient.class)
@ConditionalOnProperty(prefix = "leasehold.shedlock", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(LeaseholdProperties.class)
public class LeaseholdShedLockAutoConfiguration {
  /** Created by Spring. */
  public LeaseholdShedLockAutoConfiguration() {}

  /**
   * The lock provider.
   *
   * @param client the client whose holder identity holds the locks
   * @param properties the {@code leasehold.shedlock.*} properties
   * @return the provider
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean(LockProvider.class)
  public LeaseholdLockProvider leaseholdLockProvider(
      LeaseholdClient client, LeaseholdProperties properties) {
    LeaseholdLockProvider.Builder builder = LeaseholdLockProvider.builder(client);
    LeaseholdProperties.Shedlock shedlock = properties.getShedlock();
    LeaseholdAutoConfiguration.set(
        "leasehold.shedlock.prefix", shedlock.getPrefix(), builder::prefix);
    LeaseholdAutoConfiguration.set(
        "leasehold.shedlock.at-least-holder", shedlock.getAtLeastHolder(), builder::atLeastHolder);
    return builder.build();
  }
}
