package io.leasehold.spring.boot;

import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when {@code leasehold.endpoints} is set in any form: a comma-separated value, indexed
 * entries ({@code leasehold.endpoints[0]}, as YAML lists give), or the variable {@code
 * LEASEHOLD_ENDPOINTS}. A plain property condition sees only the first.
 */
final class OnEndpointsCondition extends SpringBootCondition {
  static final String PROPERTY = "leasehold.endpoints";

  @Override
  public ConditionOutcome getMatchOutcome(
      ConditionContext context, AnnotatedTypeMetadata metadata) {
    ConditionMessage.Builder message = ConditionMessage.forCondition("Leasehold endpoints");
    boolean set =
        Binder.get(context.getEnvironment())
            .bind(PROPERTY, Bindable.listOf(String.class))
            .isBound();
    return set
        ? ConditionOutcome.match(message.found("property").items(PROPERTY))
        : ConditionOutcome.noMatch(message.didNotFind("property").items(PROPERTY));
  }
}
