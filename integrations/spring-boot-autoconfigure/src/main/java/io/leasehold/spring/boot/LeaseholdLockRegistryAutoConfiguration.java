package io.leasehold.spring.boot;

import io.leasehold.client.LeaseholdClient;
import io.leasehold.spring.integration.LeaseholdLockRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * A Spring Integration {@link LockRegistry}, a {@link LeaseholdLockRegistry} on the context's
 * {@link LeaseholdClient}, when {@code leasehold-spring-integration} is on the class path, the
 * context has one client (auto-configured or the application's own) and no lock registry, and
 * {@code leasehold.lock-registry.enabled} is not false. Its locks are leases on {@code
 * leasehold.lock-registry.prefix} + key, with the client's session or, if {@code
 * leasehold.lock-registry.ttl} is set, that TTL of their own.
 */
@AutoConfiguration(after = LeaseholdAutoConfiguration.class)
@ConditionalOnClass({LockRegistry.class, LeaseholdLockRegistry.class})
@ConditionalOnSingleCandidate(LeaseholdClient.class)
@ConditionalOnProperty(prefix = "leasehold.lock-registry", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(LeaseholdProperties.class)
public class LeaseholdLockRegistryAutoConfiguration {
  /** Created by Spring. */
  public LeaseholdLockRegistryAutoConfiguration() {}

  /**
   * The lock registry.
   *
   * @param client the client whose holder identity holds the locks
   * @param properties the {@code leasehold.lock-registry.*} properties
   * @return the registry
   */
  @Bean
  @ConditionalOnMissingBean(LockRegistry.class)
  public LeaseholdLockRegistry leaseholdLockRegistry(
      LeaseholdClient client, LeaseholdProperties properties) {
    LeaseholdLockRegistry.Builder builder = LeaseholdLockRegistry.builder(client);
    LeaseholdProperties.LockRegistry registry = properties.getLockRegistry();
    LeaseholdAutoConfiguration.set(
        "leasehold.lock-registry.prefix", registry.getPrefix(), builder::prefix);
    LeaseholdAutoConfiguration.set("leasehold.lock-registry.ttl", registry.getTtl(), builder::ttl);
    return builder.build();
  }
}
