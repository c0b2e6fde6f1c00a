package io.leasehold.spring.boot;

import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdClientBuilder;
import io.leasehold.client.RetryPolicy;
import java.util.List;
import java.util.function.Consumer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * A {@link LeaseholdClient} bean from the {@code leasehold.*} properties, when {@code
 * leasehold.endpoints} is set and the application defines no client of its own. The client is
 * closed with the context: its held leases are released then (unless {@code
 * leasehold.release-on-close=false}).
 *
 * <p>The properties are applied to {@link LeaseholdClient#builder()}, then every {@link
 * LeaseholdClientBuilderCustomizer} bean.
 */
@AutoConfiguration
@ConditionalOnClass(LeaseholdClient.class)
@Conditional(OnEndpointsCondition.class)
@EnableConfigurationProperties(LeaseholdProperties.class)
public class LeaseholdAutoConfiguration {
  /** Created by Spring. */
  public LeaseholdAutoConfiguration() {}

  /**
   * The client.
   *
   * @param properties the {@code leasehold.*} properties
   * @param customizers applied to the builder after the properties, in order
   * @return the client, connecting on its first call
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public LeaseholdClient leaseholdClient(
      LeaseholdProperties properties,
      ObjectProvider<LeaseholdClientBuilderCustomizer> customizers) {
    LeaseholdClientBuilder builder = builder(properties);
    customizers.orderedStream().forEach(c -> c.customize(builder));
    return builder.build();
  }

  /** A builder with the properties applied; a value the SDK refuses fails naming its property. */
  static LeaseholdClientBuilder builder(LeaseholdProperties p) {
    LeaseholdClientBuilder b = LeaseholdClient.builder();
    List<String> endpoints = p.getEndpoints();
    if (endpoints == null || endpoints.isEmpty()) {
      throw new InvalidConfigurationPropertyValueException(
          OnEndpointsCondition.PROPERTY,
          "",
          "at least one node's client address (host:port) is required");
    }
    set("leasehold.endpoints", endpoints, b::endpoints);
    set("leasehold.holder", p.getHolder(), b::holder);
    set("leasehold.token", p.getToken(), b::bearerToken);
    LeaseholdProperties.Tls tls = p.getTls();
    if (tls.getCa() != null) {
      String files =
          tls.getCert() == null
              ? tls.getCa().toString()
              : tls.getCa() + ", " + tls.getCert() + ", " + tls.getKey();
      set(
          "leasehold.tls",
          files,
          f -> {
            if (tls.getCert() == null) {
              b.tls(tls.getCa());
            } else {
              b.tls(tls.getCa(), tls.getCert(), tls.getKey());
            }
          });
    }
    set("leasehold.request-timeout", p.getRequestTimeout(), b::requestTimeout);
    set("leasehold.attempt-timeout", p.getAttemptTimeout(), b::attemptTimeout);
    LeaseholdProperties.Retry r = p.getRetry();
    if (r.isSet()) {
      RetryPolicy d = RetryPolicy.DEFAULT;
      set(
          "leasehold.retry",
          r,
          x ->
              b.retry(
                  new RetryPolicy(
                      r.getInitialBackoff() != null ? r.getInitialBackoff() : d.initialBackoff(),
                      r.getMaxBackoff() != null ? r.getMaxBackoff() : d.maxBackoff(),
                      r.getMultiplier() != null ? r.getMultiplier() : d.multiplier(),
                      r.getJitter() != null ? r.getJitter() : d.jitter())));
    }
    set("leasehold.session.enabled", p.getSession().getEnabled(), b::sessions);
    set("leasehold.session.ttl", p.getSession().getTtl(), b::sessionTtl);
    set("leasehold.prefer-leader", p.getPreferLeader(), b::preferLeader);
    set("leasehold.discover-members", p.getDiscoverMembers(), b::discoverMembers);
    set("leasehold.release-on-close", p.getReleaseOnClose(), b::releaseOnClose);
    set("leasehold.watch-silence-timeout", p.getWatchSilenceTimeout(), b::watchSilenceTimeout);
    return b;
  }

  /**
   * Applies {@code value} unless it is null, turning the SDK's refusal into one naming {@code
   * property}.
   */
  static <T> void set(String property, T value, Consumer<T> setter) {
    if (value == null) {
      return;
    }
    try {
      setter.accept(value);
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigurationPropertyValueException(property, value, e.getMessage());
    }
  }
}
