package io.leasehold.spring.boot;

import io.leasehold.client.LeaseholdClient;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * A {@link LeaseholdHealthIndicator}, the health contributor {@code leasehold}, when Spring Boot's
 * health support ({@code spring-boot-health}, which the actuator brings) is on the class path, the
 * context has one {@link LeaseholdClient}, and {@code management.health.leasehold.enabled} is not
 * false.
 */
@AutoConfiguration(after = LeaseholdAutoConfiguration.class)
@ConditionalOnClass({HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class})
@ConditionalOnSingleCandidate(LeaseholdClient.class)
@ConditionalOnEnabledHealthIndicator("leasehold")
public class LeaseholdHealthContributorAutoConfiguration {
  /** Created by Spring. */
  public LeaseholdHealthContributorAutoConfiguration() {}

  /**
   * The health indicator.
   *
   * @param client the client whose cluster is checked
   * @return the indicator
   */
  @Bean
  @ConditionalOnMissingBean(name = "leaseholdHealthIndicator")
  public LeaseholdHealthIndicator leaseholdHealthIndicator(LeaseholdClient client) {
    return new LeaseholdHealthIndicator(client);
  }
}
