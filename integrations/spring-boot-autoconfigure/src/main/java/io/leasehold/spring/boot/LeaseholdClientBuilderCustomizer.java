package io.leasehold.spring.boot;

import io.leasehold.client.LeaseholdClientBuilder;

/**
 * Changes the builder of the auto-configured {@code LeaseholdClient} after the {@code leasehold.*}
 * properties are applied: for what properties cannot say, such as channel credentials of one's own,
 * interceptors, a callback executor or the clock-drift margin. Every bean of this type is applied,
 * in their {@code @Order}.
 *
 * <pre>{@code
 * @Bean
 * LeaseholdClientBuilderCustomizer tracing(ClientInterceptor tracingInterceptor) {
 *   return builder -> builder.interceptor(tracingInterceptor);
 * }
 * }</pre>
 */
@FunctionalInterface
public interface LeaseholdClientBuilderCustomizer {
  /**
   * Changes the builder.
   *
   * @param builder the builder, with the properties applied
   */
  void customize(LeaseholdClientBuilder builder);
}
