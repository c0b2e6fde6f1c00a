package io.leasehold.client.api;

import com.google.protobuf.Duration;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.Lease;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A class whose API leaks wire types in every way {@link WireTypeLeaks} must notice; only {@link
 * PublicApiTest} uses it.
 */
public class LeakyApi extends java.util.ArrayList<Event> implements Supplier<Lease> {
  /** Leaks through a public field. */
  public Duration field;

  /** Leaks through a constructor parameter. */
  public LeakyApi(Event e) {}

  LeakyApi() {}

  /** Leaks through a return type. */
  public Event event() {
    return null;
  }

  /** Leaks through a generic argument. */
  protected Map<String, List<Event>> events() {
    return Map.of();
  }

  /** Leaks through a wildcard bound. */
  public void wildcard(List<? extends Lease> leases) {}

  /** Leaks through a type parameter's bound. */
  public <T extends Event> void bounded(T t) {}

  /** Leaks through an array. */
  public Event[] array() {
    return new Event[0];
  }

  @Override
  public Lease get() {
    return null;
  }

  private Event hidden() {
    return null;
  }

  Event hiddenToo() {
    return null;
  }

  /** Leaks through a record component. */
  public record Component(Duration duration) {}
}
