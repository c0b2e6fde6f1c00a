package io.leasehold.server.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.WatchRequest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The live path filters the unpacked fields of a WireEvent; it must agree with the event itself.
 */
class WatchFilterTest {
  @Test
  void wireEventsAndEventsAreFilteredAlike() {
    List<Event> events = new ArrayList<>();
    for (Event.Type type :
        List.of(Event.Type.ACQUIRED, Event.Type.UPDATED, Event.Type.RENEWED, Event.Type.EXPIRED)) {
      for (String name : List.of("svc/a", "svc-b", "routes/x", "")) {
        for (String address : List.of("", "10.0.0.1:80")) {
          for (String zone : List.of("a", "b")) {
            Attributes attributes =
                Attributes.newBuilder()
                    .setAddress(address)
                    .putMetadata("zone", zone)
                    .setStatus(zone.equals("a") ? "SERVING" : "")
                    .build();
            Event e =
                Event.newBuilder()
                    .setType(type)
                    .setName(name)
                    .setRevision(3)
                    .setLease(Lease.newBuilder().setName(name).setAttributes(attributes))
                    .build();
            events.add(e);
            if (type == Event.Type.UPDATED) {
              events.add(
                  e.toBuilder()
                      .setPreviousAttributes(
                          Attributes.newBuilder().putMetadata("zone", "a").setStatus("SERVING"))
                      .build());
              events.add(
                  e.toBuilder()
                      .setPreviousAttributes(Attributes.newBuilder().putMetadata("zone", "c"))
                      .build());
            }
          }
        }
      }
    }
    List<WatchRequest> requests =
        List.of(
            WatchRequest.getDefaultInstance(),
            WatchRequest.newBuilder().setPrefix("svc/").build(),
            WatchRequest.newBuilder().setPrefix("routes/").setRoutesOnly(true).build(),
            WatchRequest.newBuilder().addTypes(Event.Type.EXPIRED).build(),
            WatchRequest.newBuilder().setIncludeRenewals(true).setPrefix("svc").build(),
            WatchRequest.newBuilder().addZones("a").build(),
            WatchRequest.newBuilder().addZones("b").addZones("*").build(),
            WatchRequest.newBuilder().addStatuses("SERVING").setRoutesOnly(true).build(),
            WatchRequest.newBuilder().putMetadata("zone", "b").build());
    int matched = 0;
    for (WatchRequest r : requests) {
      WatchFilter f = WatchFilter.of(r);
      for (Event e : events) {
        boolean expected = f.matches(e);
        assertEquals(expected, f.matches(WireEvent.of(e)), r + " / " + e);
        matched += expected ? 1 : 0;
      }
    }
    assertTrue(
        matched > 0 && matched < requests.size() * events.size(),
        "the cases tell matching from not: " + matched);
    Event noAddress = events.get(0);
    assertEquals("", noAddress.getLease().getAttributes().getAddress());
    assertFalse(
        WatchFilter.of(requests.get(2))
            .matches(WireEvent.of(noAddress.toBuilder().setName("routes/x").build())),
        "a route filter drops a lease without an address");
  }

  private static Event updated(Attributes after, Attributes before) {
    Event.Builder b =
        Event.newBuilder()
            .setType(Event.Type.UPDATED)
            .setName("service/pay/i")
            .setLease(Lease.newBuilder().setAttributes(after));
    if (before != null) {
      b.setPreviousAttributes(before);
    }
    return b.build();
  }

  private static Attributes at(String zone, String status) {
    return Attributes.newBuilder()
        .setAddress("10.0.0.1:80")
        .putMetadata("zone", zone)
        .setStatus(status)
        .build();
  }

  @Test
  void anUpdateIsSentWhenItsLeasePassesBeforeOrAfterIt() {
    WatchFilter f =
        WatchFilter.of(WatchRequest.newBuilder().addZones("a").addStatuses("SERVING").build());
    assertTrue(f.matches(updated(at("a", "SERVING"), at("b", "SERVING"))), "enters");
    assertTrue(f.matches(updated(at("a", "DRAINING"), at("a", "SERVING"))), "leaves");
    assertTrue(f.matches(updated(at("a", "SERVING"), at("a", "SERVING"))), "stays");
    assertFalse(f.matches(updated(at("b", "SERVING"), at("a", "DRAINING"))), "never in it");
    assertTrue(
        f.matches(updated(at("b", "SERVING"), null)),
        "history without the attributes before: it may have left");
    Event ended =
        Event.newBuilder()
            .setType(Event.Type.RELEASED)
            .setName("service/pay/i")
            .setLease(Lease.newBuilder().setAttributes(at("b", "SERVING")))
            .build();
    assertFalse(f.matches(ended), "an ending outside the filter");
    assertTrue(
        f.matches(
            ended.toBuilder()
                .setLease(Lease.newBuilder().setAttributes(at("a", "SERVING")))
                .build()));
    Event policy =
        Event.newBuilder().setType(Event.Type.POLICY_CHANGED).setName("service/").build();
    assertTrue(
        WatchFilter.of(
                WatchRequest.newBuilder().addZones("a").addTypes(Event.Type.POLICY_CHANGED).build())
            .matches(policy),
        "an event about no lease passes the attribute filters");
    assertFalse(
        WatchFilter.of(WatchRequest.newBuilder().addZones("*").putMetadata("v", "2").build())
            .matches(updated(at("a", "SERVING"), at("b", "SERVING"))),
        "metadata must match; * is every zone");
  }
}
